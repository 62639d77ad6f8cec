"""A real `agentls --tcp` for the editor clients' join tests, found as they find it.

Synchronous (the Neovim and VS Code tests drive editors from plain threads); the
asyncio variant for raw wire tests is tests/tcp_daemon.py.

The daemon runs with its own XDG_RUNTIME_DIR, so its discovery file lands in a private
folder of the test's (`<runtime>/agentls-<uid>/tcp-<pid>.json`). The address comes from its
stderr lines `agentls: listening on HOST:PORT` and `agentls: discovery file PATH`.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

READY_TIMEOUT = 30


@dataclass(frozen=True)
class TcpDaemon:
    process: subprocess.Popen[str]
    host: str
    port: int
    discovery: Path
    env: dict[str, str]

    def discovered(self) -> dict[str, Any]:
        """The discovery file's content (the token included: for assertions only)."""
        parsed: dict[str, Any] = json.loads(self.discovery.read_text(encoding="utf-8"))
        return parsed


def _read_address(process: subprocess.Popen[str]) -> tuple[str, int, Path]:
    """The listening and discovery lines, read until both came (or the daemon ended)."""
    assert process.stderr is not None
    listening: tuple[str, int] | None = None
    discovery: Path | None = None
    seen: list[str] = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith("agentls: listening on "):
            host, port = line.removeprefix("agentls: listening on ").strip().rsplit(":", 1)
            listening = (host, int(port))
        elif line.startswith("agentls: discovery file "):
            discovery = Path(line.removeprefix("agentls: discovery file ").strip())
        if listening and discovery:
            return listening[0], listening[1], discovery
    raise AssertionError("the daemon ended before naming its discovery file:\n" + "".join(seen))


@contextlib.contextmanager
def tcp_daemon(tmp: Path, extra_env: dict[str, str] | None = None) -> Iterator[TcpDaemon]:
    """Start `agentls --tcp --port 0` in `tmp`'s runtime folder; stop it on exit."""
    runtime = tmp / "runtime"
    runtime.mkdir(exist_ok=True)
    env = {
        **os.environ,
        "XDG_RUNTIME_DIR": str(runtime),
        "AGENTLS_HOME": str(tmp / "agentls-home"),
        **(extra_env or {}),
    }
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "--tcp", "--port", "0"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    timer = threading.Timer(READY_TIMEOUT, process.kill)
    timer.start()
    try:
        host, port, discovery = _read_address(process)
    finally:
        timer.cancel()
    # The rest of stderr is drained, so a chatty daemon never blocks on a full pipe.
    assert process.stderr is not None
    drain = threading.Thread(target=process.stderr.read, daemon=True)
    drain.start()
    try:
        yield TcpDaemon(process, host, port, discovery, env)
    finally:
        process.terminate()
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
