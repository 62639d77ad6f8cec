"""`agentls --socket PATH`: the warm daemon's start, from its lock to serving.

The daemon holds the socket's lock before it imports anything heavy (of two started at
once, the loser leaves at once), binds the socket, and answers `initialize` itself
(agentls.lsp.early) while the server loads in a thread; then the server (agentls.lsp.unix)
takes over every connection. Nothing here imports pygls: this runs first.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from pathlib import Path

from agentls.daemon_socket import claim
from agentls.lsp import early


def serve_socket(path: str, idle_timeout: float) -> int:
    """Serve on the socket at `path` until idle; 1 when another daemon already has it."""
    try:
        lock = claim(path)
    except OSError as exc:
        sys.stderr.write(f"agentls: cannot lock {path}: {exc}\n")
        return 1
    if lock is None:
        sys.stderr.write(f"agentls: a daemon already serves {path}\n")
        return 1
    try:
        return _serve_locked(path, idle_timeout)
    finally:
        os.close(lock)


def _serve_locked(path: str, idle_timeout: float) -> int:
    listener = early.bind(path)
    if listener is None:
        sys.stderr.write(f"agentls: a daemon already serves {path}\n")
        return 1
    loading = threading.Thread(target=importlib.import_module, args=("agentls.lsp.unix",))
    loading.start()
    accepted = early.serve_until_loaded(listener, loading)
    from agentls.lsp.gc_settle import daemon_process
    from agentls.lsp.unix import serve_unix

    daemon_process()
    return serve_unix(Path(path), idle_timeout, listener, accepted)
