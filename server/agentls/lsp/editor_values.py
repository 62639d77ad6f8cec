"""What an editor sends, in the core's values: attachments (files, their lines, folders,
pasted images, `agentls:` mentions) and ranges (columns in the connection's negotiated
position encoding)."""

from __future__ import annotations

import base64
import binascii
from pathlib import Path
from urllib.parse import unquote

from agentls import api
from agentls.context.prompt import (
    Attachment,
    DiagnosticsMention,
    InlineImage,
    SessionMention,
    SubmittedAttachment,
)
from agentls.errors import InvalidParams
from agentls.lsp.paths import uri_path
from agentls.lsp.positions import column_to_index, encoding_of, lsp_lines
from agentls.lsp.server import AgentServer
from agentls.messages import is_id
from agentls.workspace.view import Position, Range


def attachment(wire: api.AttachmentParam, index: int, client: AgentServer) -> SubmittedAttachment:
    """A file (or some of its lines) or a folder, an image pasted into the client as a
    data: URI, or an `agentls:` mention (the editor's problems, another session)."""
    if wire.uri.startswith("data:"):
        return InlineImage(
            wire.name or f"pasted image {index + 1}", _data_uri_bytes(wire.uri, index)
        )
    if wire.uri.startswith("agentls:"):
        return _mention(wire.uri, index)
    path = uri_path(wire.uri)
    shown = editor_range(wire.range, client, path) if wire.range else None
    return Attachment(path, shown, wire.name)


def _mention(uri: str, index: int) -> DiagnosticsMention | SessionMention:
    """`agentls:diagnostics`, `agentls:diagnostics?uri=<file URI, percent-encoded>` or
    `agentls:session/<id>`; InvalidParams for any other `agentls:` URI."""
    field = {"field": f"attachments.{index}.uri"}
    rest = uri.removeprefix("agentls:")
    if rest == "diagnostics":
        return DiagnosticsMention()
    if rest.startswith("diagnostics?uri="):
        target = unquote(rest.removeprefix("diagnostics?uri="))
        if target.startswith("file:"):
            try:
                return DiagnosticsMention(uri_path(target))
            except InvalidParams:
                pass
        raise InvalidParams("agentls:diagnostics?uri= takes a percent-encoded file:// URI", field)
    session_id = rest.removeprefix("session/")
    if rest.startswith("session/") and is_id(session_id, "sess"):
        return SessionMention(session_id)
    raise InvalidParams(
        f"{uri[:80]!r} is not an agentls: URI this server knows (agentls:diagnostics, "
        "agentls:diagnostics?uri=<file URI>, agentls:session/<sessionId>)",
        field,
    )


def _data_uri_bytes(uri: str, index: int) -> bytes:
    """The bytes of a base64 `data:image/…;base64,…` URI, or InvalidParams."""
    head, _, payload = uri.partition(",")
    if not head.startswith("data:image/") or not head.endswith(";base64"):
        raise InvalidParams(
            "an inline attachment must be a base64 image: data:image/<type>;base64,<data>",
            {"field": f"attachments.{index}.uri"},
        )
    try:
        return base64.b64decode(payload, validate=True)
    except binascii.Error:
        raise InvalidParams(
            "the attachment's data: URI is not valid base64", {"field": f"attachments.{index}.uri"}
        ) from None


def editor_range(r: api.WireRange, client: AgentServer, path: Path | None) -> Range:
    """A client range (columns in the negotiated encoding) in the core's code point columns."""
    encoding = encoding_of(client.workspace.position_encoding)
    doc = client.documents.get(path) if path is not None else None
    lines = lsp_lines(doc.text) if doc is not None and encoding != "utf-32" else []

    def position(line: int, column: int) -> Position:
        if line < len(lines):
            column = column_to_index(lines[line].rstrip("\r\n"), column, encoding)
        return Position(line, column)

    return Range(position(r.start.line, r.start.character), position(r.end.line, r.end.character))
