"""Read, Write and Edit against a real temp workspace and a real WorkspaceView."""

from __future__ import annotations

import codecs
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from agentls.images import sniff_image
from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.files import (
    EditInput,
    EditStep,
    EditTool,
    MultiEditInput,
    MultiEditTool,
    ReadInput,
    ReadTool,
    WriteTool,
)
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import EditRejected, FileEdit, OpenDocument, WorkspaceView


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace.resolve()


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(WorkspaceView([root]), FileReadCache(), root)


async def call(tool: Tool[Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await tool.run(tool.input_model.model_validate(raw), ctx)


async def test_read_numbers_lines_like_cat_n(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("first\n\tsecond\nthird\n")
    out = await call(ReadTool(), ctx, file_path="a.py")
    assert out.content == "     1\tfirst\n     2\t\tsecond\n     3\tthird"
    assert not out.is_error and not out.truncated


async def test_read_offset_and_limit_show_a_window_and_say_what_is_left(
    ctx: ToolContext, root: Path
) -> None:
    (root / "a.txt").write_text("".join(f"line {n}\n" for n in range(1, 11)))
    out = await call(ReadTool(), ctx, file_path="a.txt", offset=3, limit=2)
    lines = out.content.splitlines()
    assert lines[:2] == ["     3\tline 3", "     4\tline 4"]
    assert "Showing lines 3-4 of 10" in out.content and "offset=5" in out.content
    assert out.truncated


async def test_read_shows_at_most_2000_lines_by_default(ctx: ToolContext, root: Path) -> None:
    (root / "big.txt").write_text("x\n" * 2500)
    out = await call(ReadTool(), ctx, file_path="big.txt")
    assert "  2000\tx" in out.content and "  2001\t" not in out.content
    assert out.truncated


async def test_read_truncates_lines_longer_than_2000_characters(
    ctx: ToolContext, root: Path
) -> None:
    (root / "wide.txt").write_text("y" * 5000 + "\nshort\n")
    out = await call(ReadTool(), ctx, file_path="wide.txt")
    first = out.content.splitlines()[0]
    assert first.startswith("     1\t" + "y" * 2000) and "y" * 2001 not in first
    assert "line truncated" in first


async def test_read_offset_past_the_end_says_how_long_the_file_is(
    ctx: ToolContext, root: Path
) -> None:
    (root / "a.txt").write_text("one\ntwo\n")
    out = await call(ReadTool(), ctx, file_path="a.txt", offset=10)
    assert "2 lines" in out.content and not out.is_error


async def test_read_shows_the_unsaved_buffer_instead_of_the_disk(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "app.py"
    path.write_text("on disk\n")
    ctx.workspace.set_document(OpenDocument(path, "unsaved\n", version=3))
    out = await call(ReadTool(), ctx, file_path=str(path))
    assert out.content == "     1\tunsaved"


async def test_read_of_a_missing_file_suggests_similar_names(ctx: ToolContext, root: Path) -> None:
    (root / "config.yaml").write_text("a: 1\n")
    with pytest.raises(ToolError, match=r"does not exist.*Did you mean config\.yaml"):
        await call(ReadTool(), ctx, file_path="config.yml")


async def test_read_of_a_directory_says_it_is_a_directory(ctx: ToolContext, root: Path) -> None:
    (root / "src").mkdir()
    with pytest.raises(ToolError, match="is a directory"):
        await call(ReadTool(), ctx, file_path="src")


async def test_read_of_a_binary_file_is_refused(ctx: ToolContext, root: Path) -> None:
    (root / "blob.bin").write_bytes(b"\x89PNG\x00\x00\x01")
    with pytest.raises(ToolError, match="binary"):
        await call(ReadTool(), ctx, file_path="blob.bin")


async def test_read_of_an_empty_file_says_it_is_empty(ctx: ToolContext, root: Path) -> None:
    (root / "empty.txt").write_text("")
    out = await call(ReadTool(), ctx, file_path="empty.txt")
    assert "exists but is empty" in out.content and not out.is_error


async def test_read_outside_the_workspace_is_refused(ctx: ToolContext, root: Path) -> None:
    (root.parent / "secret.txt").write_text("s3cret\n")
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(ReadTool(), ctx, file_path="../secret.txt")


async def test_edit_without_a_prior_read_is_refused(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    with pytest.raises(ToolError, match="has not been read yet"):
        await call(EditTool(), ctx, file_path="a.py", old_string="1", new_string="2")
    assert (root / "a.py").read_text() == "x = 1\n"


async def test_edit_after_an_external_change_asks_to_read_again(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    await call(ReadTool(), ctx, file_path="a.py")
    path.write_text("x = 1\ny = 2\n")
    with pytest.raises(ToolError, match="Read it again"):
        await call(EditTool(), ctx, file_path="a.py", old_string="x = 1", new_string="x = 3")
    assert path.read_text() == "x = 1\ny = 2\n"


async def test_edit_after_the_user_types_in_the_buffer_asks_to_read_again(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\n")
    await call(ReadTool(), ctx, file_path="a.py")
    ctx.workspace.set_document(OpenDocument(path, "x = 1\n# typing\n", version=2))
    with pytest.raises(ToolError, match="Read it again"):
        await call(EditTool(), ctx, file_path="a.py", old_string="x = 1", new_string="x = 3")


async def test_edit_after_read_replaces_the_text_and_returns_a_diff(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "a.py"
    path.write_text("x = 1\ny = 2\n")
    await call(ReadTool(), ctx, file_path="a.py")
    out = await call(EditTool(), ctx, file_path="a.py", old_string="y = 2", new_string="y = 3")
    assert path.read_text() == "x = 1\ny = 3\n"
    assert "1 replacement" in out.content and not out.is_error
    assert out.diff is not None
    assert (out.diff.path, out.diff.old_text, out.diff.new_text) == (
        str(path),
        "x = 1\ny = 2\n",
        "x = 1\ny = 3\n",
    )


async def test_consecutive_edits_need_no_reread(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("a\nb\n")
    await call(ReadTool(), ctx, file_path="a.py")
    await call(EditTool(), ctx, file_path="a.py", old_string="a", new_string="A")
    await call(EditTool(), ctx, file_path="a.py", old_string="b", new_string="B")
    assert (root / "a.py").read_text() == "A\nB\n"


async def test_edit_with_an_ambiguous_old_string_says_how_many_matches(
    ctx: ToolContext, root: Path
) -> None:
    (root / "a.py").write_text("x = 0\nx = 0\nx = 0\n")
    await call(ReadTool(), ctx, file_path="a.py")
    with pytest.raises(ToolError, match=r"Found 3 matches.*more surrounding context.*replace_all"):
        await call(EditTool(), ctx, file_path="a.py", old_string="x = 0", new_string="x = 1")


async def test_edit_replace_all_replaces_every_occurrence_and_counts_them(
    ctx: ToolContext, root: Path
) -> None:
    (root / "a.py").write_text("x = 0\nx = 0\nx = 0\n")
    await call(ReadTool(), ctx, file_path="a.py")
    out = await call(
        EditTool(), ctx, file_path="a.py", old_string="x = 0", new_string="y", replace_all=True
    )
    assert (root / "a.py").read_text() == "y\ny\ny\n"
    assert "3 replacements" in out.content


async def test_edit_with_an_old_string_not_in_the_file_says_not_found(
    ctx: ToolContext, root: Path
) -> None:
    (root / "a.py").write_text("x = 0\n")
    await call(ReadTool(), ctx, file_path="a.py")
    with pytest.raises(ToolError, match="was not found"):
        await call(EditTool(), ctx, file_path="a.py", old_string="z = 9", new_string="y")


async def test_edit_with_identical_strings_is_refused(ctx: ToolContext, root: Path) -> None:
    (root / "a.py").write_text("x\n")
    await call(ReadTool(), ctx, file_path="a.py")
    with pytest.raises(ToolError, match="exactly the same"):
        await call(EditTool(), ctx, file_path="a.py", old_string="x", new_string="x")


async def test_edit_keeps_crlf_line_endings_when_old_string_uses_lf(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "win.txt"
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    ctx.workspace.set_document(OpenDocument(path, "one\r\ntwo\r\nthree\r\n", version=1))
    await call(ReadTool(), ctx, file_path="win.txt")
    await call(EditTool(), ctx, file_path="win.txt", old_string="one\ntwo", new_string="1\n2")
    assert ctx.workspace.read_text(path) == "1\r\n2\r\nthree\r\n"


async def test_edit_of_an_open_buffer_edits_the_buffer_text(ctx: ToolContext, root: Path) -> None:
    path = root / "app.py"
    path.write_text("saved = True\n")
    ctx.workspace.set_document(OpenDocument(path, "unsaved = True\n", version=5))
    await call(ReadTool(), ctx, file_path="app.py")
    out = await call(EditTool(), ctx, file_path="app.py", old_string="unsaved", new_string="edited")
    assert out.diff is not None and out.diff.old_text == "unsaved = True\n"
    assert ctx.workspace.read_text(path) == "edited = True\n"


async def test_edit_with_an_empty_old_string_creates_a_new_file(
    ctx: ToolContext, root: Path
) -> None:
    out = await call(EditTool(), ctx, file_path="new/mod.py", old_string="", new_string="x\n")
    assert (root / "new" / "mod.py").read_text() == "x\n"
    assert out.diff is not None and out.diff.old_text is None


async def test_edit_of_a_missing_file_says_it_does_not_exist(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="does not exist"):
        await call(EditTool(), ctx, file_path="nope.py", old_string="a", new_string="b")


async def test_write_of_a_new_file_needs_no_prior_read(ctx: ToolContext, root: Path) -> None:
    out = await call(WriteTool(), ctx, file_path="pkg/new.py", content="print(1)\n")
    assert (root / "pkg" / "new.py").read_text() == "print(1)\n"
    assert out.diff is not None and out.diff.old_text is None
    assert out.diff.new_text == "print(1)\n"


async def test_write_over_an_unread_file_is_refused(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("precious\n")
    with pytest.raises(ToolError, match="has not been read yet"):
        await call(WriteTool(), ctx, file_path="a.txt", content="gone\n")
    assert (root / "a.txt").read_text() == "precious\n"


async def test_write_after_read_overwrites_and_counts_as_seen(ctx: ToolContext, root: Path) -> None:
    (root / "a.txt").write_text("old\n")
    await call(ReadTool(), ctx, file_path="a.txt")
    out = await call(WriteTool(), ctx, file_path="a.txt", content="new\n")
    assert out.diff is not None and out.diff.old_text == "old\n"
    await call(EditTool(), ctx, file_path="a.txt", old_string="new", new_string="newer")
    assert (root / "a.txt").read_text() == "newer\n"


async def test_write_outside_the_workspace_is_refused(ctx: ToolContext, root: Path) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(WriteTool(), ctx, file_path=str(root.parent / "evil.txt"), content="x")
    assert not (root.parent / "evil.txt").exists()


class RejectingSink:
    async def apply(self, edit: FileEdit) -> None:
        raise EditRejected("buffer version moved on")


async def test_an_edit_the_editor_rejects_becomes_a_tool_error(root: Path) -> None:
    ctx = ToolContext(WorkspaceView([root], RejectingSink()), FileReadCache(), root)
    with pytest.raises(ToolError, match=r"rejected.*buffer version moved on"):
        await call(WriteTool(), ctx, file_path="a.txt", content="x")


def test_titles_locations_and_rules_use_paths_relative_to_cwd(root: Path) -> None:
    read = ReadTool()
    args = ReadInput.model_validate({"file_path": "src/app.py", "offset": 7})
    assert read.title(args) == "Read src/app.py"
    assert read.rule_content(args, root) == "src/app.py"
    [location] = read.locations(args, root)
    # Line 7 of the file is line 6 counted from 0, as LSP and ACP locations count.
    assert (location.path, location.line) == (str(root / "src" / "app.py"), 6)
    outside = EditInput.model_validate(
        {"file_path": "/etc/hosts", "old_string": "a", "new_string": "b"}
    )
    assert EditTool().rule_content(outside, root) == "/etc/hosts"


def test_only_read_is_read_only() -> None:
    tools: list[Tool] = [ReadTool(), WriteTool(), EditTool()]
    assert [tool.is_read_only(None) for tool in tools] == [True, False, False]
    assert [tool.kind for tool in tools] == ["read", "edit", "edit"]


# --- encodings: an edit keeps every byte it does not change ---------------------------


async def read_then_edit(ctx: ToolContext, name: str, old: str, new: str) -> ToolOutput:
    await call(ReadTool(), ctx, file_path=name)
    return await call(EditTool(), ctx, file_path=name, old_string=old, new_string=new)


async def test_read_of_a_latin1_file_shows_its_accents(ctx: ToolContext, root: Path) -> None:
    (root / "notes.py").write_bytes("# café crème\n".encode("latin-1"))
    out = await call(ReadTool(), ctx, file_path="notes.py")
    assert out.content == "     1\t# café crème"


async def test_edit_of_a_latin1_file_keeps_its_other_bytes(ctx: ToolContext, root: Path) -> None:
    path = root / "notes.py"
    path.write_bytes("# café crème\nx = 1\n".encode("latin-1"))
    await read_then_edit(ctx, "notes.py", "x = 1", "x = 2")
    assert path.read_bytes() == "# café crème\nx = 2\n".encode("latin-1")


async def test_edit_writes_new_accents_in_the_files_own_encoding(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "notes.txt"
    path.write_bytes("prix: 5 €\r\n".encode("cp1252"))
    await read_then_edit(ctx, "notes.txt", "5 €", "6 € (été)")
    assert path.read_bytes() == "prix: 6 € (été)\r\n".encode("cp1252")


async def test_edit_keeps_a_utf8_bom_and_crlf(ctx: ToolContext, root: Path) -> None:
    path = root / "a.cs"
    path.write_bytes(b"\xef\xbb\xbfclass A {}\r\n// \xc3\xa9\r\n")
    await read_then_edit(ctx, "a.cs", "class A", "class B")
    assert path.read_bytes() == b"\xef\xbb\xbfclass B {}\r\n// \xc3\xa9\r\n"


async def test_utf16_file_reads_as_text_and_is_written_back_as_utf16(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "log.txt"
    path.write_bytes(codecs.BOM_UTF16_LE + "naïve\r\nend\r\n".encode("utf-16-le"))
    out = await call(ReadTool(), ctx, file_path="log.txt")
    assert out.content == "     1\tnaïve\n     2\tend"
    await call(EditTool(), ctx, file_path="log.txt", old_string="end", new_string="fin")
    assert path.read_bytes() == codecs.BOM_UTF16_LE + "naïve\r\nfin\r\n".encode("utf-16-le")


async def test_a_character_the_encoding_lacks_is_refused_and_nothing_is_written(
    ctx: ToolContext, root: Path
) -> None:
    path = root / "notes.txt"
    original = "café\n".encode("latin-1")
    path.write_bytes(original)
    with pytest.raises(ToolError, match=r"windows-1252.*U\+2192"):
        await read_then_edit(ctx, "notes.txt", "café", "café → thé")
    assert path.read_bytes() == original


async def test_write_over_a_latin1_file_keeps_its_encoding(ctx: ToolContext, root: Path) -> None:
    path = root / "notes.txt"
    path.write_bytes("vieux café\n".encode("latin-1"))
    await call(ReadTool(), ctx, file_path="notes.txt")
    await call(WriteTool(), ctx, file_path="notes.txt", content="nouveau café\n")
    assert path.read_bytes() == "nouveau café\n".encode("latin-1")


async def test_new_files_are_written_as_utf8(ctx: ToolContext, root: Path) -> None:
    await call(WriteTool(), ctx, file_path="new.txt", content="café\n")
    assert (root / "new.txt").read_bytes() == "café\n".encode()


@pytest.mark.parametrize("tool", ["Edit", "Write"])
async def test_write_and_edit_of_a_file_with_nul_bytes_are_refused(
    ctx: ToolContext, root: Path, tool: str
) -> None:
    path = root / "data.bin"
    original = b"header\x00\x01\x02 x = 1\n"
    path.write_bytes(original)
    ctx.read_cache.record(path, original.decode("latin-1"))
    with pytest.raises(ToolError, match=r"binary file .*NUL.*text files only"):
        if tool == "Edit":
            await call(EditTool(), ctx, file_path="data.bin", old_string="x = 1", new_string="2")
        else:
            await call(WriteTool(), ctx, file_path="data.bin", content="text\n")
    assert path.read_bytes() == original


async def test_read_of_a_control_byte_file_is_refused(ctx: ToolContext, root: Path) -> None:
    (root / "blob.dat").write_bytes(bytes(range(1, 32)) * 20)
    with pytest.raises(ToolError, match=r"binary file .*control bytes"):
        await call(ReadTool(), ctx, file_path="blob.dat")


async def test_write_of_text_with_nul_characters_is_refused(ctx: ToolContext, root: Path) -> None:
    with pytest.raises(ToolError, match="NUL"):
        await call(WriteTool(), ctx, file_path="new.txt", content="a\x00b")
    assert not (root / "new.txt").exists()


_MARKER = "@@MARK@@"
_NEW = "new-text"
# Text-like bytes: anything but NUL and the control bytes text does not have.
_TEXT_BYTES = st.binary(max_size=200).map(
    lambda raw: bytes(b for b in raw if b >= 0x20 or b in b"\t\n\r")
)
_TEXT = st.text(st.sampled_from("ab XY\t\r\n\u00e9\u00fc\u00df\u20ac\u00ff\u4e2d"), max_size=80)
_ENCODINGS = {
    "utf-8": b"",
    "utf-8-bom": codecs.BOM_UTF8,
    "utf-16-le": codecs.BOM_UTF16_LE,
    "utf-16-be": codecs.BOM_UTF16_BE,
    "latin-1": b"",
    "cp1252": b"",
}
EditCase = tuple[bytes, bytes, bytes, bytes]  # head, marker, tail, and the new text, as bytes


@st.composite
def raw_bytes_case(draw: st.DrawFn) -> EditCase:
    """Arbitrary text-like bytes around the marker, with or without a UTF-8 BOM."""
    bom = draw(st.sampled_from([b"", codecs.BOM_UTF8]))
    head, tail = bom + draw(_TEXT_BYTES), draw(_TEXT_BYTES)
    assume(not head.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE)))
    data = head + _MARKER.encode() + tail
    # Text that starts like an image with a valid header is an image; not this property.
    assume(data.count(_MARKER.encode()) == 1 and sniff_image(data) is None)
    return head, _MARKER.encode(), tail, _NEW.encode()


@st.composite
def encoded_text_case(draw: st.DrawFn) -> EditCase:
    """Text around the marker in one of the encodings, LF/CRLF/CR line endings mixed."""
    label = draw(st.sampled_from(sorted(_ENCODINGS)))
    codec = label.removesuffix("-bom")
    head, tail = ("".join(c for c in draw(_TEXT) if c.encode(codec, "ignore")) for _ in range(2))
    assume(_MARKER not in head + tail)
    bom = _ENCODINGS[label]
    return bom + head.encode(codec), _MARKER.encode(codec), tail.encode(codec), _NEW.encode(codec)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=st.one_of(raw_bytes_case(), encoded_text_case()))
async def test_an_edit_of_an_ascii_marker_changes_exactly_its_bytes(
    root: Path, case: EditCase
) -> None:
    head, marker, tail, new = case
    path = root / "case.txt"
    path.write_bytes(head + marker + tail)
    ctx = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    await read_then_edit(ctx, "case.txt", _MARKER, _NEW)
    assert path.read_bytes() == head + new + tail


# --- MultiEdit ---------------------------------------------------------------------------------


async def test_multi_edit_applies_every_edit_in_order(ctx: ToolContext, root: Path) -> None:
    (root / "conf.py").write_text("host = 'a'\nport = 1\nport_name = 'port'\n")
    await call(ReadTool(), ctx, file_path="conf.py")
    out = await call(
        MultiEditTool(),
        ctx,
        file_path="conf.py",
        edits=[
            {"old_string": "host = 'a'", "new_string": "host = 'b'"},
            # The second edit sees the first's result.
            {"old_string": "host = 'b'\nport = 1", "new_string": "host = 'c'\nport = 2"},
            {"old_string": "port", "new_string": "PORT", "replace_all": True},
        ],
    )
    assert not out.is_error, out.content
    assert (root / "conf.py").read_text() == "host = 'c'\nPORT = 2\nPORT_name = 'PORT'\n"
    assert "3 edits, 5 replacements" in out.content
    assert out.diff is not None and out.diff.new_text.startswith("host = 'c'")


async def test_multi_edit_is_all_or_nothing(ctx: ToolContext, root: Path) -> None:
    (root / "conf.py").write_text("a = 1\nb = 2\n")
    await call(ReadTool(), ctx, file_path="conf.py")
    with pytest.raises(ToolError) as failed:
        await call(
            MultiEditTool(),
            ctx,
            file_path="conf.py",
            edits=[
                {"old_string": "a = 1", "new_string": "a = 10"},
                {"old_string": "c = 3", "new_string": "c = 30"},
            ],
        )
    assert str(failed.value).startswith("Edit 2 of 2: old_string was not found")
    assert "Nothing was changed." in str(failed.value)
    assert (root / "conf.py").read_text() == "a = 1\nb = 2\n"


async def test_multi_edit_creates_a_file_from_an_empty_first_edit(
    ctx: ToolContext, root: Path
) -> None:
    edits = [
        {"old_string": "", "new_string": "x = 1\n"},
        {"old_string": "x = 1", "new_string": "x = 2"},
    ]
    out = await call(MultiEditTool(), ctx, file_path="new.py", edits=edits)
    assert not out.is_error
    assert (root / "new.py").read_text() == "x = 2\n"
    with pytest.raises(ToolError):
        await call(MultiEditTool(), ctx, file_path="absent.py", edits=edits[1:])


def test_multi_edit_proposes_the_whole_change_for_review(ctx: ToolContext, root: Path) -> None:
    (root / "conf.py").write_text("a = 1\nb = 2\n")
    tool = MultiEditTool()
    args = MultiEditInput(
        file_path="conf.py",
        edits=[
            EditStep(old_string="a = 1", new_string="a = 10"),
            EditStep(old_string="b = 2", new_string="b = 20"),
        ],
    )
    diff = tool.proposed_change(args, ctx)
    assert diff is not None and diff.new_text == "a = 10\nb = 20\n"
    revised = tool.revised_input(args, diff.old_text, "a = 10\nb = 2\n")
    assert [(e.old_string, e.new_string) for e in revised.edits] == [
        ("a = 1\nb = 2\n", "a = 10\nb = 2\n")
    ]
