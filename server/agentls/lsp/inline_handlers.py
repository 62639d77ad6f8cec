"""agent/inlineEdit: check the file and region a client names, then queue the turn.

A mixin of AgentHandlers (whose dispatch table finds the handler by name), kept apart so
the handlers module stays small. The region arrives in the connection's position
encoding and is checked against the file's text as the editor has it (its buffer when
open, else the disk), then converted to the core's code point columns.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agentls import api
from agentls.context.inline_edit import InlineEdit
from agentls.errors import InvalidParams
from agentls.events import InlineEditTarget, TextPosition, TextRange
from agentls.lsp.editor_link import editor_link
from agentls.lsp.hub import Hub
from agentls.lsp.paths import uri_path
from agentls.lsp.positions import Encoding, column_to_index, encoding_of, lsp_lines, units
from agentls.lsp.server import AgentServer
from agentls.session.inline_turn import inline_submission
from agentls.session.manager import SessionManager
from agentls.textfile import BinaryContent, read_text_file
from agentls.workspace.view import Position, Range


class InlineEditHandlers:
    manager: SessionManager
    hub: Hub

    async def inline_edit(
        self, p: api.InlineEditParams, client: AgentServer
    ) -> api.SubmitMessageResult:
        if not p.instruction.strip():
            raise InvalidParams("the instruction is empty", {"field": "instruction"})
        session = self.manager.get(p.session_id)
        path = _file_path(p.uri, session.workspace.policy.contains)
        text = _editor_text(path, client)
        encoding = encoding_of(client.workspace.position_encoding)
        region = _core_range(text, p.range, encoding)
        # The window the user edits in is the one the session reads and edits through.
        session = self.manager.attach(p.session_id, editor_link(client))
        self.hub.attach(session.id, client)
        target = InlineEditTarget(p.uri, _echoed(p.range))
        edit = InlineEdit(path, region, target)
        turn_id, queued = session.intake.send(inline_submission(p.instruction, edit))
        return api.SubmitMessageResult(turn_id=turn_id, queued=queued)


def _file_path(uri: str, in_workspace: Callable[[Path], bool]) -> Path:
    """The file a `file://` URI names: in the session's workspace, and a file."""
    try:
        path = uri_path(uri)
    except InvalidParams as exc:
        raise InvalidParams(exc.message, {"field": "uri"}) from None
    if not in_workspace(path):
        raise InvalidParams(f"{path} is outside the session's workspace", {"field": "uri"})
    return path


def _editor_text(path: Path, client: AgentServer) -> str:
    """The file's text as the editor has it: its buffer when open, else the disk's."""
    doc = client.documents.get(path)
    if doc is not None:
        return doc.text
    if not path.is_file():
        raise InvalidParams(f"{path} is not an existing file", {"field": "uri"})
    try:
        return read_text_file(path).text
    except OSError as exc:
        raise InvalidParams(f"{path} cannot be read: {exc.strerror}", {"field": "uri"}) from None
    except BinaryContent as exc:
        raise InvalidParams(f"{path} is a binary file ({exc})", {"field": "uri"}) from None


def _core_range(text: str, wire: api.WireRange, encoding: Encoding) -> Range:
    """The region in code point columns; InvalidParams (`range`) when it is not inside the
    text or ends before it starts."""
    lines = [line.rstrip("\r\n") for line in lsp_lines(text)]

    def position(at: api.WirePosition) -> Position:
        if at.line < len(lines) and at.character <= units(lines[at.line], encoding):
            return Position(at.line, column_to_index(lines[at.line], at.character, encoding))
        if at.line == len(lines) and at.character == 0:
            return Position(at.line, 0)
        raise InvalidParams(
            f"position {at.line}:{at.character} is outside the file ({len(lines)} lines)",
            {"field": "range"},
        )

    start, end = position(wire.start), position(wire.end)
    if (end.line, end.character) < (start.line, start.character):
        raise InvalidParams("the range ends before it starts", {"field": "range"})
    return Range(start, end)


def _echoed(wire: api.WireRange) -> TextRange:
    start, end = wire.start, wire.end
    return TextRange(
        TextPosition(start.line, start.character), TextPosition(end.line, end.character)
    )
