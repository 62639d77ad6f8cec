"""What an editor may do for the agent beyond applying edits: give the text it has of a
file (its unsaved buffer) on request, and run a command in a terminal the user watches.

The LSP adapter needs neither: LSP editors push their buffers (didOpen/didChange), and
Bash runs here. An ACP client offers both by request (`fs/read_text_file`,
`terminal/*`); its adapter implements these seams, and the core asks through them.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Protocol


class EditorBuffers(Protocol):
    async def read(self, path: Path) -> str | None:
        """The editor's text of `path` (its buffer when open, else the file), or None when
        the editor cannot give it."""


@dataclass(frozen=True, slots=True)
class CommandResult:
    """How a command run in the editor's terminal ended, and what it printed."""

    output: str
    # None with `signal` set when a signal ended it; both None when it was killed for
    # running too long.
    exit_code: int | None
    signal: str | None = None
    # The editor kept only the end of a long output.
    truncated: bool = False
    timed_out: bool = False


class EditorTerminal(Protocol):
    async def run(
        self, argv: list[str], cwd: Path, timeout_s: float, tool_call_id: str
    ) -> CommandResult:
        """Run `argv` in a terminal the user sees (tied to the tool call), wait for it
        (killing it after `timeout_s`), and return its output. A cancel kills it."""
