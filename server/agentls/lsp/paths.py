"""file:// URIs to the absolute, symlink-free paths the core works with."""

from __future__ import annotations

import os
from pathlib import Path

from pygls.uris import to_fs_path

from agentls.errors import InvalidParams


def uri_path(uri: str) -> Path:
    """The path of a file:// URI, or InvalidParams."""
    fs_path = to_fs_path(uri) if uri.startswith("file:") else None
    if fs_path is None:
        raise InvalidParams(f"{uri!r} is not a file:// URI")
    return Path(os.path.realpath(fs_path))
