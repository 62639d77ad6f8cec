"""The paths a client may send: ones the OS could name, refused up front otherwise (the
OS would answer OSError deep in a handler). The wire models of agentls.api use them."""

from __future__ import annotations

from typing import Annotated

from pydantic import AfterValidator, Field

# The longest path and file name the OS can name (Linux's PATH_MAX and NAME_MAX, in bytes).
PATH_MAX_BYTES = 4096
NAME_MAX_BYTES = 255


def unnameable(path: str) -> str | None:
    """Why `path` names no file on any system (a NUL, a path or a name too long), else
    None: refused up front, since the OS would answer OSError deep in a handler."""
    if "\x00" in path:
        return "a path holds no NUL"
    encoded = path.encode("utf-8", "surrogatepass")
    if len(encoded) >= PATH_MAX_BYTES:
        return f"a path is under {PATH_MAX_BYTES} bytes"
    if any(len(part) > NAME_MAX_BYTES for part in encoded.split(b"/")):
        return f"a file name is at most {NAME_MAX_BYTES} bytes"
    return None


def _nameable(path: str) -> str:
    problem = unnameable(path)
    if problem is not None:
        raise ValueError(problem)
    return path


# A directory sent by a client: one the OS could name (the pattern says it in the schema).
PathText = Annotated[str, Field(pattern=r"^[^\x00]*$"), AfterValidator(_nameable)]
