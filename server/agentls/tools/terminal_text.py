"""What a program wrote on a terminal, as the model should read it: plain lines.

A background shell runs on a pseudo-terminal (tools/pty_process.py), so its output comes
with what a terminal understands: `\\r\\n` line ends, carriage returns that redraw a line
(progress bars), backspaces, colour and cursor escape sequences, window titles. The model
reads text, not a screen: the sequences go, a line redrawn with `\\r` keeps its last state,
a backspace takes back the character before it. Output arrives in chunks that may cut a
sequence in two, so the unfinished end of a chunk waits for the next one.
"""

from __future__ import annotations

import re

# CSI (`ESC [` … final byte), OSC (`ESC ]` … BEL or `ESC \`), and the two-byte escapes
# (with intermediates, such as `ESC ( B`).
_ESCAPE = re.compile(r"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(?:\x07|\x1b\\)|[ -/]*[0-~])")
# The end of a chunk that may be the start of a sequence, or of a `\r\n`.
_UNFINISHED = re.compile(r"(?:\x1b(?:\[[0-?]*[ -/]*|\][^\x07\x1b]*\x1b?|[ -/]*)|\r)\Z")
# Text a carriage return sends the cursor back over, to be written over.
_REDRAWN = re.compile(r"[^\n\r]*\r(?!\n)")
_ERASED = re.compile(r"[^\n\x08]\x08")
# Control characters but tab and line feed, and the C1 controls.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")
# An unfinished sequence longer than this is not one: it is let through (and cleaned).
MAX_HELD_CHARS = 4096


def plain_text(text: str) -> str:
    """`text` without terminal sequences and controls, `\\r\\n` as `\\n`, redrawn lines
    as they were left."""
    text = _ESCAPE.sub("", text).replace("\r\n", "\n")
    text = _REDRAWN.sub("", text)
    while "\x08" in text:
        erased = _ERASED.sub("", text)
        if erased == text:
            break
        text = erased
    return _CONTROL.sub("", text)


class TerminalText:
    """Cleans a terminal's output chunk by chunk (see plain_text), holding back an
    unfinished sequence at a chunk's end until the next chunk completes it."""

    def __init__(self) -> None:
        self._held = ""

    def feed(self, text: str) -> str:
        """The plain text of what came so far (an unfinished end is kept for later)."""
        text = self._held + text
        self._held = ""
        unfinished = _UNFINISHED.search(text)
        if text and unfinished is not None and len(text) - unfinished.start() <= MAX_HELD_CHARS:
            self._held = text[unfinished.start() :]
            text = text[: unfinished.start()]
        return plain_text(text)

    def flush(self) -> str:
        """What was held back, cleaned (the output has ended)."""
        held, self._held = self._held, ""
        return plain_text(held)
