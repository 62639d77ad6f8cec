"""Images for models that can see them: type by magic bytes, size from the header, API limits.

An image read as text is mojibake that costs tokens and shows the model nothing, so image
files become base64 image blocks instead. The type comes from the first bytes (a `.png`
may be a JPEG), and the pixel size from the header alone, without an imaging library:
Anthropic refuses an image over 5 MB of base64 or 8000 px a side, and a refusal here, up
front, says what to do instead of failing the whole request. Models that cannot see
images get a note in the image's place (never its bytes), decided by the `vision` setting
or, by default, by the model table below.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agentls.messages import ContentBlock, ImageBlock, Message, TextBlock, ToolResultBlock
from agentls.model_table import by_model

Render = Callable[[ImageBlock], str]

# Anthropic's documented limits; OpenAI's (20 MB, no side limit) are looser.
MAX_BASE64_BYTES = 5 * 1024 * 1024
MAX_SIDE = 8000
# What one image costs in context: Anthropic scales images to about 1.15 megapixels,
# (w*h)/750 tokens, so about 1,600 at most; OpenAI's high detail is in the same range.
IMAGE_TOKENS = 1_600

# First matching prefix wins, on the lower-cased name after the last "/".
_VISION: tuple[tuple[tuple[str, ...], bool], ...] = (
    (("claude-2", "claude-instant"), False),
    (("claude", "scripted"), True),
    (("gpt-4o", "gpt-4.1", "gpt-4-turbo", "gpt-4-vision", "gpt-5", "chatgpt-4o"), True),
    (("o1-mini", "o3-mini"), False),
    (("o1", "o3", "o4"), True),
    (("gemini", "pixtral", "llava", "qwen-vl", "qwen2-vl", "qwen2.5-vl", "llama-4"), True),
    (("llama-3.2-11b-vision", "llama-3.2-90b-vision", "mistral-small-3", "gemma-3"), True),
)


@dataclass(frozen=True, slots=True)
class ImageInfo:
    media_type: str
    width: int
    height: int

    @property
    def format(self) -> str:
        """The short format name: png, jpeg, gif, webp."""
        return self.media_type.removeprefix("image/")

    def describe(self) -> str:
        """`png 640x480`."""
        return f"{self.format} {self.width}x{self.height}"


class ImageRefused(ValueError):
    """The image cannot be sent; the message says why and what to do instead."""


def sniff_image(data: bytes) -> ImageInfo | None:
    """The image type and pixel size of `data`, or None when it is not a PNG/JPEG/GIF/WebP.

    Magic bytes with a header too short or broken to give a size are no image we can
    send: such a file is text that happens to start that way, or binary junk, and the
    text decoder tells which.
    """
    media_type = _media_type(data)
    if media_type is None:
        return None
    try:
        size = _SIZE_READERS[media_type](data)
    except (struct.error, IndexError, ValueError):
        return None
    if size is None or min(size) <= 0:
        return None
    return ImageInfo(media_type, *size)


def _media_type(data: bytes) -> str | None:
    if data.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if data.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if data.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def _png_size(data: bytes) -> tuple[int, int] | None:
    if data[12:16] != b"IHDR":
        return None
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def _gif_size(data: bytes) -> tuple[int, int] | None:
    width, height = struct.unpack("<HH", data[6:10])
    return width, height


# Start-of-frame markers carry the size; C4 (DHT), C8 (JPG) and CC (DAC) do not.
_JPEG_SOF = frozenset({0xC0, 0xC1, 0xC2, 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE})
_JPEG_STANDALONE = frozenset({0x01, *range(0xD0, 0xDA)})


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    at = 2
    while at + 4 <= len(data):
        if data[at] != 0xFF:
            return None
        marker = data[at + 1]
        if marker == 0xFF:  # fill byte before a marker
            at += 1
            continue
        if marker in _JPEG_STANDALONE:
            at += 2
            continue
        if marker in _JPEG_SOF:
            height, width = struct.unpack(">HH", data[at + 5 : at + 9])
            return width, height
        if marker == 0xDA:  # entropy-coded data follows; no frame header came first
            return None
        (length,) = struct.unpack(">H", data[at + 2 : at + 4])
        at += 2 + length
    return None


def _webp_size(data: bytes) -> tuple[int, int] | None:
    chunk = data[12:16]
    if chunk == b"VP8X":
        width = int.from_bytes(data[24:27], "little") + 1
        height = int.from_bytes(data[27:30], "little") + 1
        return width, height
    if chunk == b"VP8L" and data[20] == 0x2F:
        bits = int.from_bytes(data[21:25], "little")
        return (bits & 0x3FFF) + 1, ((bits >> 14) & 0x3FFF) + 1
    if chunk == b"VP8 " and data[23:26] == b"\x9d\x01\x2a":
        width, height = struct.unpack("<HH", data[26:30])
        return width & 0x3FFF, height & 0x3FFF
    return None


_SIZE_READERS = {
    "image/png": _png_size,
    "image/jpeg": _jpeg_size,
    "image/gif": _gif_size,
    "image/webp": _webp_size,
}


def image_block(data: bytes, info: ImageInfo, name: str | None = None) -> ImageBlock:
    """`data` as an image block, or ImageRefused when it is over the API's limits."""
    encoded = base64.b64encode(data).decode("ascii")
    if len(encoded) > MAX_BASE64_BYTES:
        raise ImageRefused(
            f"the image is {len(data) / 1_048_576:.1f} MB ({len(encoded) / 1_048_576:.1f} MB "
            f"as base64); models accept at most {MAX_BASE64_BYTES // 1_048_576} MB of base64. "
            "Make a smaller copy (e.g. with ImageMagick `convert` or macOS `sips`) and read that"
        )
    if max(info.width, info.height) > MAX_SIDE:
        raise ImageRefused(
            f"the image is {info.width}x{info.height} px; models accept at most {MAX_SIDE} px "
            "a side. Make a scaled-down copy (e.g. with ImageMagick `convert -resize` or macOS "
            "`sips -Z`) and read that"
        )
    return ImageBlock(info.media_type, encoded, name, info.width, info.height)


def supports_vision(model: str, configured: bool | None) -> bool:
    """Whether `model` takes images: the `vision` setting if given, else the model table.

    Unknown models count as blind: a blind model sent an image fails the whole request,
    while a note in its place only costs the model a look it could not have had.
    """
    if configured is not None:
        return configured
    return by_model(model, _VISION, False)


def label(block: ImageBlock) -> str:
    """`png 640x480`, or `png` when the size is not known."""
    size = f" {block.width}x{block.height}" if block.width and block.height else ""
    return block.media_type.removeprefix("image/") + size


def describe(block: ImageBlock) -> str:
    """`[image: shot.png, png 640x480]`, the text that stands for an image in summaries."""
    details = [block.name, label(block)] if block.name else [label(block)]
    return f"[image: {', '.join(details)}]"


def blind_note(block: ImageBlock, model: str) -> str:
    """What a model without vision reads in place of an image."""
    return (
        f"{describe(block)} Not shown: the model {model} does not take images (set the "
        "`vision` setting to true if it does). Tell the user you cannot see it."
    )


def replace_images(messages: Sequence[Message], render: Render) -> list[Message]:
    """`messages` with every image, tool results' included, replaced by `render(image)` text."""
    return [
        Message(m.role, tuple(_replaced(b, render) for b in m.content), m.id) if m.images() else m
        for m in messages
    ]


def _replaced(block: ContentBlock, render: Render) -> ContentBlock:
    if isinstance(block, ImageBlock):
        return TextBlock(render(block))
    if isinstance(block, ToolResultBlock) and not isinstance(block.content, str):
        parts = tuple(
            TextBlock(render(p)) if isinstance(p, ImageBlock) else p for p in block.content
        )
        return ToolResultBlock(block.tool_use_id, parts, block.is_error)
    return block


def without_images(messages: Sequence[Message], model: str) -> list[Message]:
    """`messages` with every image replaced by a note saying `model` cannot see it."""
    return replace_images(messages, lambda block: blind_note(block, model))
