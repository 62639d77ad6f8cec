"""`# note`: the user adds a standing instruction to a memory file, in a turn of its own.

The note goes to the project's memory file (`AGENTS.md`, or `CLAUDE.md` when only that
exists; `AGENTS.md` is created when neither does), or, when the user has a memory file of
their own too, to the one they choose when asked. The system prompt is not rebuilt (it must
stay byte-stable for the prompt cache): the file carries the note into the next session's
prompt, and this session's model hears of it with the next user message.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agentls.context.memory import MEMORY_NAMES
from agentls.events import AskUserRequest, AskUserResolved
from agentls.messages import new_id
from agentls.session.session import AgentSession
from agentls.session.turn import LocalAction

NOTE_PREFIXES = ("# ", "#\t")


def memory_note(text: str) -> str | None:
    """The note of a `# note` message (one line, `#` then a space); None when the message is
    not one (a markdown document, `#123`, `## heading`)."""
    if not text.startswith(NOTE_PREFIXES) or "\n" in text.strip():
        return None
    note = text[1:].strip()
    return note or None


def memory_file_in(directory: Path) -> Path | None:
    """The memory file a directory has (AGENTS.md first), or None."""
    for name in MEMORY_NAMES:
        if (directory / name).is_file():
            return directory / name
    return None


def note_action(session: AgentSession, note: str) -> LocalAction:
    """The local turn's work: choose the file, append the note, tell the model later."""

    async def run(turn_id: str) -> str:
        project = memory_file_in(session.project_root)
        user = memory_file_in(session.settings.home)
        target = project or session.project_root / MEMORY_NAMES[0]
        if project is not None and user is not None:
            target = await _which_file(session, turn_id, project, user)
        created = not target.exists()
        append_note(target, note)
        session.inbox.note_user_action(f"The user added to the memory file {target}: {note}")
        made = " (created)" if created else ""
        return (
            f"Noted in {target}{made}. The model is told with your next message; new "
            "sessions read it with the rest of the file."
        )

    return run


def append_note(path: Path, note: str) -> None:
    """Append `- note` as a line of its own."""
    before = path.read_bytes() if path.exists() else b""
    gap = b"\n" if before and not before.endswith(b"\n") else b""
    with path.open("ab") as handle:
        handle.write(gap + f"- {note}\n".encode())


async def _which_file(session: AgentSession, turn_id: str, project: Path, user: Path) -> Path:
    """Ask whether the note is the project's or the user's (every project's)."""
    choices = (f"project: {project}", f"user: {user}")
    question = "Add the note to which memory file?"
    request = AskUserRequest(new_id("ask"), new_id("memory"), question, choices)
    session.events.emit(request, turn_id)
    try:
        answer = await session.answers.wait_for_user_answer(request)
    except asyncio.CancelledError:
        session.events.emit(AskUserResolved(request.request_id, "cancelled"), turn_id)
        raise
    session.events.emit(AskUserResolved(request.request_id, "answered", answer), turn_id)
    return user if answer.strip().casefold().startswith("user") else project
