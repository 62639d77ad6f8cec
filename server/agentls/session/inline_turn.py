"""An agent/inlineEdit turn: the user's instruction for a region of one file, run as a turn
of the session like any other (history, transcript, checkpoints, rewind).

What differs from a message turn is gathered here: the user message carries the region as
an attachment and the file, marked, in its context (the file counts as read, so Edit works
at once); the turn may call only reading tools and Edit, MultiEdit and Write (the tool
specs the model is shown stay the session's, so the prompt cache's prefix holds); and
every file change asks, its `permission_request` marked `inlineEdit` so the client
reviews it in the editor.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from pathlib import Path
from xml.sax.saxutils import quoteattr

from agentls.context.inline_edit import InlineEdit, inline_edit_block
from agentls.context.prompt import Attachment
from agentls.events import LoopEvent, PermissionRequest
from agentls.permissions.inline_edit import INLINE_EDIT_TOOLS
from agentls.session.turn import Submission, Turn
from agentls.textfile import BinaryContent
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry
from agentls.workspace.view import WorkspaceView


def inline_submission(instruction: str, edit: InlineEdit) -> Submission:
    """The inline edit as a message for the session's turn queue (queued, never steered
    into a running turn: it is a turn of its own), the region as its attachment."""
    return Submission(
        instruction, attachments=(Attachment(edit.path, edit.range),), inline_edit=edit
    )


def inline_registry(registry: ToolRegistry) -> ToolRegistry:
    """The session's tools an inline edit may call, shown to the model as the session's."""
    tools = [tool for name in INLINE_EDIT_TOOLS if (tool := registry.get(name)) is not None]
    return ToolRegistry(tools, shown=registry.specs())


def marked_for_review(event: LoopEvent, turn: Turn) -> LoopEvent:
    """An inline edit's file change request, marked so the client reviews it in the editor."""
    if turn.inline_edit is None or not isinstance(event, PermissionRequest):
        return event
    if event.diff is None and not event.diffs:
        return event
    return replace(event, inline_edit=True)


async def inline_context(
    workspace: WorkspaceView,
    read_cache: FileReadCache,
    edit: InlineEdit,
    cwd: Path,
    tools: ToolRegistry,
) -> str:
    """The `<inlineEdit>` block of the turn's user message; the file, as shown, is now read
    (the editor's buffer first, as Read would see it)."""
    await workspace.sync_buffers([edit.path])
    try:
        text = await asyncio.to_thread(workspace.read_text, edit.path)
    except (OSError, BinaryContent) as exc:
        why = exc.strerror if isinstance(exc, OSError) else f"binary file ({exc})"
        return f"<inlineEdit error={quoteattr(f'the file cannot be read: {why}')}/>"
    read_cache.record(edit.path, text)
    names = ", ".join(name for name in INLINE_EDIT_TOOLS if tools.get(name) is not None)
    return inline_edit_block(edit, text, cwd, names)
