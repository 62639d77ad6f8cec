"""What the model reads when the user revised its proposed file change before applying it."""

from __future__ import annotations

import difflib

from agentls.tool_values import FileDiff

# A longer revision is cut: the model can Read the file for the rest.
MAX_NOTE_LINES = 200


def revision_note(diff: FileDiff, accepted: str) -> str:
    """A unified diff from the model's proposal to the text the user accepted."""
    lines = list(
        difflib.unified_diff(
            diff.new_text.splitlines(keepends=True),
            accepted.splitlines(keepends=True),
            "proposed",
            "applied",
            n=2,
        )
    )
    cut = len(lines) > MAX_NOTE_LINES
    shown = "".join(line if line.endswith("\n") else line + "\n" for line in lines[:MAX_NOTE_LINES])
    more = f"… {len(lines) - MAX_NOTE_LINES} more diff lines; Read the file for all of it.\n"
    return (
        "The user reviewed your change and applied it with revisions (hunks left out or "
        "edited), so the file differs from what you proposed. From your proposal to what "
        f"was applied:\n```diff\n{shown}{more if cut else ''}```\n"
        "Take the file as it is now; do not redo what the user left out unless asked."
    )
