"""Images: sniffed by magic bytes, sized from the header, sent as blocks, counted as images."""

from __future__ import annotations

import base64
import struct
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.config import Settings, apply_layer
from agentls.context.budget import estimate_message_tokens
from agentls.context.compaction_steps import microcompact, snip_old_tool_results, summary_request
from agentls.context.prompt import Attachment, attachment_images, user_context
from agentls.context.results import ResultBudget, apply_result_budget
from agentls.events import LoopEvent, MessageCompleted
from agentls.images import (
    IMAGE_TOKENS,
    ImageInfo,
    ImageRefused,
    image_block,
    sniff_image,
    supports_vision,
    without_images,
)
from agentls.loop.assemble import ToolCallReady
from agentls.loop.executor import ToolExecutor
from agentls.messages import (
    ImageBlock,
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    message_from_dict,
    message_to_dict,
    user_text,
)
from agentls.permissions.gate import PermissionGate
from agentls.tools.base import ToolContext, ToolError
from agentls.tools.files import ReadTool
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry
from agentls.wire import to_wire
from agentls.workspace.view import WorkspaceView


def _chunk(kind: bytes, body: bytes) -> bytes:
    crc = zlib.crc32(kind + body)
    return struct.pack(">I", len(body)) + kind + body + struct.pack(">I", crc)


def png(width: int, height: int, pixels: bool = True) -> bytes:
    """A valid PNG (grey, 8 bit); with `pixels` false only its header chunks."""
    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height)) if pixels else b""
    body = _chunk(b"IDAT", zlib.compress(rows)) if pixels else b""
    return b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header) + body + _chunk(b"IEND", b"")


def gif(width: int, height: int) -> bytes:
    return b"GIF89a" + struct.pack("<HH", width, height) + b"\x00\x00\x00;"


def jpeg(width: int, height: int) -> bytes:
    app0 = b"\xff\xe0" + struct.pack(">H", 16) + b"JFIF\x00\x01\x01\x00\x00\x01\x00\x01\x00\x00"
    quant = b"\xff\xdb" + struct.pack(">H", 67) + b"\x00" + bytes(range(64))
    sof = b"\xff\xc0" + struct.pack(">HBHHB", 11, 8, height, width, 1) + b"\x01\x11\x00"
    return b"\xff\xd8" + app0 + b"\xff" + quant + sof + b"\xff\xda\x00\x08" + b"\x00" * 8


def webp(chunk: bytes, body: bytes) -> bytes:
    payload = b"WEBP" + chunk + struct.pack("<I", len(body)) + body
    return b"RIFF" + struct.pack("<I", len(payload)) + payload


def webp_vp8x(width: int, height: int) -> bytes:
    size = (width - 1).to_bytes(3, "little") + (height - 1).to_bytes(3, "little")
    return webp(b"VP8X", b"\x00\x00\x00\x00" + size)


def webp_vp8l(width: int, height: int) -> bytes:
    bits = (width - 1) | ((height - 1) << 14)
    return webp(b"VP8L", b"\x2f" + bits.to_bytes(4, "little") + b"\x00" * 8)


def webp_vp8(width: int, height: int) -> bytes:
    frame = b"\x10\x02\x00\x9d\x01\x2a" + struct.pack("<HH", width, height)
    return webp(b"VP8 ", frame + b"\x00" * 8)


# --- sniffing and limits -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "media_type"),
    [
        (png(3, 2), "image/png"),
        (gif(3, 2), "image/gif"),
        (jpeg(3, 2), "image/jpeg"),
        (webp_vp8x(3, 2), "image/webp"),
        (webp_vp8l(3, 2), "image/webp"),
        (webp_vp8(3, 2), "image/webp"),
    ],
)
def test_type_and_size_come_from_the_header(data: bytes, media_type: str) -> None:
    assert sniff_image(data) == ImageInfo(media_type, 3, 2)


def test_text_and_other_binaries_are_not_images() -> None:
    assert sniff_image(b"plain text") is None
    assert sniff_image(b"\x7fELF\x02\x01") is None
    assert sniff_image(b"") is None


@pytest.mark.parametrize("data", [png(3, 2)[:20], b"\xff\xd8\xff\xe0\x00", b"GIF89a\x01"])
def test_magic_bytes_with_a_broken_header_are_no_image(data: bytes) -> None:
    assert sniff_image(data) is None


@given(st.binary(max_size=64))
def test_sniffing_any_bytes_after_magic_bytes_never_raises(tail: bytes) -> None:
    for head in (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"RIFF\x00\x00\x00\x00WEBP"):
        info = sniff_image(head + tail)
        assert info is None or (info.width > 0 and info.height > 0)


async def test_a_text_file_that_starts_like_a_jpeg_reads_as_text(root: Path) -> None:
    (root / "notes.txt").write_bytes("ÿØÿ is how it starts\n".encode("latin-1"))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    args: Any = ReadTool.input_model.model_validate({"file_path": "notes.txt"})
    out = await ReadTool().run(args, context)
    assert out.content == "     1\tÿØÿ is how it starts" and out.images == ()


def test_image_block_holds_the_base64_bytes_and_the_size() -> None:
    data = png(3, 2)
    block = image_block(data, ImageInfo("image/png", 3, 2), "shot.png")
    assert block == ImageBlock("image/png", base64.b64encode(data).decode(), "shot.png", 3, 2)


def test_an_image_over_8000_px_a_side_is_refused_with_what_to_do() -> None:
    data = png(8001, 10, pixels=False)
    info = sniff_image(data)
    assert info is not None
    with pytest.raises(ImageRefused, match=r"8001x10 px.*at most 8000 px.*scaled-down copy"):
        image_block(data, info)


def test_an_image_over_5_mb_of_base64_is_refused() -> None:
    data = png(100, 100, pixels=False) + b"\x00" * (4 * 1024 * 1024)
    with pytest.raises(ImageRefused, match=r"at most 5 MB of base64.*smaller copy"):
        image_block(data, ImageInfo("image/png", 100, 100))


@pytest.mark.parametrize(
    ("model", "configured", "expected"),
    [
        ("claude-sonnet-4-5", None, True),
        ("claude-2.1", None, False),
        ("gpt-4o-mini", None, True),
        ("openai/gpt-4.1", None, True),
        ("o3-mini", None, False),
        ("deepseek-chat", None, False),
        ("Qwen/Qwen2.5-VL-72B-Instruct", None, True),
        ("some-local-model", None, False),
        ("some-local-model", True, True),
        ("claude-sonnet-4-5", False, False),
    ],
)
def test_vision_comes_from_the_setting_else_the_model_table(
    model: str, configured: bool | None, expected: bool
) -> None:
    assert supports_vision(model, configured) is expected


def test_the_vision_setting_takes_a_boolean_and_reports_anything_else() -> None:
    problems: list[str] = []
    assert apply_layer(Settings(), {"vision": True}, "test", problems).vision is True
    assert apply_layer(Settings(), {"vision": "yes"}, "test", problems).vision is None
    assert problems == ["test: vision must be true or false; the default is used"]


# --- the message model -------------------------------------------------------------------

IMAGE = ImageBlock("image/png", base64.b64encode(png(3, 2)).decode(), "shot.png", 3, 2)


def image_history() -> list[Message]:
    read = ToolUseBlock("toolu_1", "Read", {"file_path": "shot.png"})
    result = ToolResultBlock("toolu_1", (TextBlock("Image shot.png (png 3x2)."), IMAGE))
    return [
        Message("user", (TextBlock("What is this?"), IMAGE)),
        Message("assistant", (read,)),
        Message("user", (result,)),
    ]


def test_images_round_trip_through_transcript_dicts() -> None:
    for message in image_history():
        assert message_from_dict(message_to_dict(message)) == message


def test_a_transcript_image_is_anthropic_shaped() -> None:
    stored = message_to_dict(image_history()[0])["content"][1]
    assert stored == {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": IMAGE.data},
        "name": "shot.png",
        "width": 3,
        "height": 2,
    }


def test_plain_string_tool_results_from_old_transcripts_still_load() -> None:
    stored = {
        "id": "msg_1",
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "t", "content": "ok", "is_error": False}
        ],
    }
    (result,) = message_from_dict(stored).tool_results()
    assert result.content == "ok" and result.text() == "ok" and result.images() == ()


def test_images_reach_the_wire_as_typed_blocks() -> None:
    message = image_history()[2]
    (block,) = to_wire(MessageCompleted(message.id, "user", message.content))["content"]
    assert block["content"][1] == {
        "mediaType": "image/png",
        "data": IMAGE.data,
        "name": "shot.png",
        "width": 3,
        "height": 2,
        "type": "image",
    }


def test_a_model_without_vision_reads_a_note_instead_of_the_image() -> None:
    blind = without_images(image_history(), "deepseek-chat")
    assert [m.images() for m in blind] == [[], [], []]
    note = blind[0].content[1]
    assert isinstance(note, TextBlock)
    assert note.text.startswith("[image: shot.png, png 3x2] Not shown: the model deepseek-chat")
    assert "`vision`" in note.text
    assert IMAGE.data not in str(blind)


# --- context accounting and compaction -----------------------------------------------------


def test_an_image_costs_a_fixed_estimate_not_its_base64_length() -> None:
    big = ImageBlock("image/png", "A" * 4_000_000, "big.png", 4000, 3000)
    small = ImageBlock("image/png", "A" * 400, "small.png", 10, 10)
    cost = estimate_message_tokens(Message("user", (big,)))
    assert cost == estimate_message_tokens(Message("user", (small,)))
    assert IMAGE_TOKENS <= cost < IMAGE_TOKENS + 10
    result = ToolResultBlock("t", (TextBlock("seen"), big))
    assert estimate_message_tokens(Message("user", (result,))) < IMAGE_TOKENS + 10 + len("seen")


def test_a_summary_request_shows_images_as_descriptions() -> None:
    request = summary_request([*image_history(), Message("assistant", (TextBlock("A chart."),))])
    rendered = str([message_to_dict(m) for m in request])
    assert IMAGE.data not in rendered
    assert rendered.count("[image: shot.png, png 3x2]") == 2


def test_snip_replaces_an_old_image_result_with_a_stub_naming_it() -> None:
    history = [*image_history(), Message("assistant", (TextBlock("Done."),)), user_text("next")]
    snipped, stats = snip_old_tool_results(history, keep_recent_turns=1)
    (result,) = snipped[2].tool_results()
    assert result.images() == () and "[image: shot.png, png 3x2]" in result.text()
    assert stats.results_snipped == 1 and stats.chars_removed > 0


def test_microcompact_shrinks_the_text_of_an_image_result_and_keeps_the_image() -> None:
    result = ToolResultBlock("toolu_1", (TextBlock("x" * 5_000), IMAGE))
    (message,), removed = microcompact([Message("user", (result,))], 1_000)
    (short,) = message.tool_results()
    assert removed > 0 and len(short.text()) <= 1_000 and short.images() == (IMAGE,)


def test_the_result_budget_spills_text_and_keeps_the_images(tmp_path: Path) -> None:
    result = ToolResultBlock("toolu_1", (TextBlock("y" * 60_000), IMAGE))
    spilled: dict[str, str] = {}

    def spill(tool_use_id: str, content: str) -> Path:
        spilled[tool_use_id] = content
        return tmp_path / f"{tool_use_id}.txt"

    (out,) = apply_result_budget([result], ResultBudget(), spill)
    assert spilled == {"toolu_1": "y" * 60_000}
    assert out.images() == (IMAGE,) and "<persisted-output>" in out.text()


# --- Read and attachments --------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


async def test_read_of_an_image_returns_an_image_block_whatever_its_extension(
    root: Path,
) -> None:
    (root / "shot.txt").write_bytes(png(3, 2))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    events: list[LoopEvent] = []
    executor = ToolExecutor(
        ToolRegistry([ReadTool()]),
        context,
        PermissionGate("bypassPermissions"),
        prompter=None,  # type: ignore[arg-type]
        emit=events.append,
    )
    executor.submit(ToolCallReady(ToolUseBlock("toolu_1", "Read", {"file_path": "shot.txt"})))
    (result,) = await executor.results()
    assert not result.is_error
    assert result.text().startswith("Image shot.txt (png 3x2, ")
    assert result.images() == (
        ImageBlock("image/png", base64.b64encode(png(3, 2)).decode(), "shot.txt", 3, 2),
    )


async def test_read_of_an_image_over_the_limits_is_refused(root: Path) -> None:
    (root / "wide.png").write_bytes(png(9000, 2, pixels=False))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    args: Any = ReadTool.input_model.model_validate({"file_path": "wide.png"})
    with pytest.raises(ToolError, match=r"Cannot show wide\.png: the image is 9000x2 px"):
        await ReadTool().run(args, context)


def context_for(root: Path, *names: str) -> str:
    attachments = [Attachment(root / name) for name in names]
    return user_context(WorkspaceView([root]), root, first=False, attachments=attachments)


def test_an_image_attachment_is_named_in_the_context_not_inlined(root: Path) -> None:
    (root / "shot.png").write_bytes(png(3, 2))
    rendered = context_for(root, "shot.png")
    assert '<attachment path="shot.png" image="png 3x2"/>' in rendered
    assert "PNG" not in rendered and "IHDR" not in rendered


def test_a_binary_attachment_is_an_error_line_never_its_bytes(root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x7fELF\x00\x01garbage")
    rendered = context_for(root, "blob.bin")
    assert '<attachment path="blob.bin" error="binary file not shown: it contains NUL' in rendered
    assert "garbage" not in rendered


def test_a_latin1_attachment_is_shown_as_text(root: Path) -> None:
    (root / "notes.txt").write_bytes("café".encode("latin-1"))
    assert "café" in context_for(root, "notes.txt")


def test_an_oversized_image_attachment_says_why_it_was_not_sent(root: Path) -> None:
    (root / "wide.png").write_bytes(png(9000, 2, pixels=False))
    assert 'error="image not sent: the image is 9000x2 px' in context_for(root, "wide.png")
    assert attachment_images(WorkspaceView([root]), root, [Attachment(root / "wide.png")]) == ()


def test_attachment_images_gives_the_image_blocks_in_order(root: Path) -> None:
    (root / "a.gif").write_bytes(gif(1, 1))
    (root / "notes.txt").write_text("text")
    (root / "b.png").write_bytes(png(3, 2))
    view = WorkspaceView([root])
    images = attachment_images(
        view, root, [Attachment(root / n) for n in ("a.gif", "notes.txt", "b.png", "gone.png")]
    )
    assert [(i.name, i.media_type, i.width, i.height) for i in images] == [
        ("a.gif", "image/gif", 1, 1),
        ("b.png", "image/png", 3, 2),
    ]
