"""A `session/prompt`'s content blocks as the core's message: its text and attachments.

Text blocks are the message. A file mention (a `resource_link`, or an embedded `resource`
with the editor's text of it) stays in the text as `@path` and is attached, so the model
gets the file; Zed's `file:///a.py#L10:20` mentions attach those lines. Images are
attached as pasted images. Links to anything but a file stay in the text as links.
"""

from __future__ import annotations

import base64
import binascii
import os
import re
from collections.abc import Sequence
from pathlib import Path
from urllib.parse import unquote, urlparse

from acp import schema as acp

from agentls.context.editor_context import display_path
from agentls.context.prompt import Attachment, InlineImage, InlineText, UserAttachment
from agentls.errors import InvalidParams
from agentls.workspace.view import Position, Range

PromptBlock = (
    acp.TextContentBlock
    | acp.ImageContentBlock
    | acp.AudioContentBlock
    | acp.ResourceContentBlock
    | acp.EmbeddedResourceContentBlock
)
_LINES = re.compile(r"^L(\d+)(?::(\d+))?$")


def message_of(blocks: Sequence[PromptBlock], cwd: Path) -> tuple[str, list[UserAttachment]]:
    """The message text and its attachments; InvalidParams for what cannot be sent."""
    parts: list[str] = []
    attachments: list[UserAttachment] = []
    for index, block in enumerate(blocks):
        if isinstance(block, acp.TextContentBlock):
            parts.append(block.text)
        elif isinstance(block, acp.ImageContentBlock):
            name = block.uri or f"pasted image {index + 1}"
            attachments.append(InlineImage(name, _base64(block.data, index)))
        elif isinstance(block, acp.ResourceContentBlock):
            parts.append(_link(block.uri, block.name, cwd, attachments))
        elif isinstance(block, acp.EmbeddedResourceContentBlock):
            parts.append(_embedded(block.resource, index, cwd, attachments))
        else:
            raise InvalidParams(
                "audio prompts are not supported (promptCapabilities.audio is false)",
                {"field": f"prompt.{index}"},
            )
    text = "".join(parts).strip()
    if not text and not attachments:
        raise InvalidParams("the prompt is empty", {"field": "prompt"})
    return text or "(see the attachments)", attachments


def _link(uri: str, name: str, cwd: Path, attachments: list[UserAttachment]) -> str:
    located = file_location(uri)
    if located is None:
        return f"[{name}]({uri})"
    path, lines = located
    attachments.append(Attachment(path, lines))
    return _mention(path, lines, cwd)


def _embedded(
    resource: acp.TextResourceContents | acp.BlobResourceContents,
    index: int,
    cwd: Path,
    attachments: list[UserAttachment],
) -> str:
    located = file_location(resource.uri)
    shown = _mention(*located, cwd) if located is not None else resource.uri
    if isinstance(resource, acp.TextResourceContents):
        attachments.append(InlineText(shown.removeprefix("@"), resource.text))
        return shown
    if (resource.mime_type or "").startswith("image/"):
        attachments.append(InlineImage(shown.removeprefix("@"), _base64(resource.blob, index)))
        return shown
    if located is not None:
        # A binary file the client sent whole: the model reads it from disk if it can.
        attachments.append(Attachment(located[0]))
    return shown


def file_location(uri: str) -> tuple[Path, Range | None] | None:
    """The file (symlink-free) and lines a file:// URI names, or None for other URIs."""
    parsed = urlparse(uri)
    if parsed.scheme != "file" or not parsed.path:
        return None
    path = Path(os.path.realpath(unquote(parsed.path)))
    match = _LINES.match(parsed.fragment)
    if match is None:
        return path, None
    first = int(match.group(1))
    last = int(match.group(2) or first)
    start, end = min(first, last), max(first, last)
    # Lines are 1-based and inclusive; a range ends where the next line starts.
    return path, Range(Position(max(start - 1, 0), 0), Position(end, 0))


def _mention(path: Path, lines: Range | None, cwd: Path) -> str:
    shown = f"@{display_path(path, cwd)}"
    if lines is not None:
        shown += f"#L{lines.start.line + 1}-{lines.end.line}"
    return shown


def _base64(data: str, index: int) -> bytes:
    try:
        return base64.b64decode(data, validate=True)
    except binascii.Error:
        raise InvalidParams(
            "the image's data is not valid base64", {"field": f"prompt.{index}.data"}
        ) from None
