"""apply_patch: Codex's patch format parsed, located and applied, all or nothing, against a
real temp workspace and a real WorkspaceView (disk sink)."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.config import Settings, apply_layer
from agentls.permissions.gate import PermissionGate
from agentls.permissions.rules import rules_from
from agentls.tools.apply_patch import ApplyPatchInput, ApplyPatchTool
from agentls.tools.base import ToolContext, ToolError
from agentls.tools.patch_apply import HunkFailed, apply_hunks
from agentls.tools.patch_format import (
    AddFile,
    DeleteFile,
    PatchSyntaxError,
    UpdateFile,
    parse_patch,
)
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import default_tools
from agentls.workspace.view import WorkspaceView


def patch(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch"]) + "\n"


def hunks_of(text: str) -> UpdateFile:
    (section,) = parse_patch(text)
    assert isinstance(section, UpdateFile)
    return section


# --- the parser ----------------------------------------------------------------------------


def test_parse_reads_every_kind_of_section_in_order() -> None:
    sections = parse_patch(
        patch(
            "*** Add File: new.txt",
            "+one",
            "+",
            "*** Delete File: old.txt",
            "*** Update File: src/a.py",
            "*** Move to: src/b.py",
            "@@ def f():",
            "-    return 1",
            "+    return 2",
        )
    )
    add, delete, update = sections
    assert add == AddFile("new.txt", "one\n\n", 2)
    assert delete == DeleteFile("old.txt", 5)
    assert isinstance(update, UpdateFile)
    assert (update.path, update.move_to) == ("src/a.py", "src/b.py")
    (hunk,) = update.hunks
    assert hunk.headers == ("def f():",)
    assert (hunk.old, hunk.new) == (["    return 1"], ["    return 2"])


def test_parse_is_lenient_where_models_slip() -> None:
    text = "<<'EOF'\n  *** Begin Patch \n*** Update File: a.txt\n x\n-y\n+z\n*** End Patch  \nEOF\n"
    (update,) = parse_patch(text)
    assert isinstance(update, UpdateFile) and update.hunks[0].old == ["x", "y"]


def test_several_at_at_headers_in_a_row_narrow_one_hunk() -> None:
    update = hunks_of(patch("*** Update File: a.py", "@@ class B:", "@@ def f(self):", "-x", "+y"))
    assert update.hunks[0].headers == ("class B:", "def f(self):")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("*** Update File: a\n-x\n*** End Patch", "first line of the patch must be"),
        ("*** Begin Patch\n*** Update File: a\n-x\n", "last line of the patch must be"),
        (patch(), "changes no file"),
        (patch("*** Frobnicate File: a"), "Line 2: '*** Frobnicate File: a' is not a file header"),
        (patch("*** Update File: a.py"), "Line 2: Update File a.py has no hunks"),
        (patch("*** Update File: a.py", "@@"), "hunk 1 has no lines"),
        (patch("*** Update File: a.py", "@@", "?x"), "Line 4: unexpected line '?x' in hunk 1"),
        (patch("*** Add File: "), "Line 2: '*** Add File:' names no file"),
    ],
)
def test_malformed_patches_say_which_line_and_why(text: str, message: str) -> None:
    with pytest.raises(PatchSyntaxError) as raised:
        parse_patch(text)
    assert message in str(raised.value)


# --- locating and applying hunks ----------------------------------------------------------

FILE = "def a():\n    return 1\n\ndef b():\n    return 1\n\nx = 1\ny = 2\n"


def test_several_hunks_apply_in_order_with_headers_narrowing() -> None:
    update = hunks_of(
        patch(
            "*** Update File: f.py",
            "@@ def b():",
            "-    return 1",
            "+    return 2",
            "@@",
            " x = 1",
            "-y = 2",
            "+y = 3",
        )
    )
    assert apply_hunks(FILE, update.hunks) == FILE.replace(
        "b():\n    return 1", "b():\n    return 2"
    ).replace("y = 2", "y = 3")


def test_an_ambiguous_hunk_without_a_header_is_refused_naming_the_lines() -> None:
    update = hunks_of(patch("*** Update File: f.py", "@@", "-    return 1", "+    return 2"))
    with pytest.raises(HunkFailed, match=r"hunk 1 .*match 2 places \(lines 2, 5\)"):
        apply_hunks(FILE, update.hunks)


def test_a_hunk_not_found_says_where_it_looked() -> None:
    update = hunks_of(
        patch("*** Update File: f.py", "@@", " x = 1", "-y = 2", "+y = 3", "@@", "-x = 1", "+x")
    )
    with pytest.raises(
        HunkFailed, match=r"hunk 2 \(patch line 7, '-x = 1' / '\+x'\): .*not found after line 8"
    ):
        apply_hunks(FILE, update.hunks)


def test_a_header_not_found_is_named() -> None:
    update = hunks_of(patch("*** Update File: f.py", "@@ def c():", "-x", "+y"))
    with pytest.raises(HunkFailed, match=r"@@ line 'def c\(\):' was not found in the file"):
        apply_hunks(FILE, update.hunks)


def test_whitespace_is_forgiven_in_order_and_context_keeps_the_files_text() -> None:
    text = "if x:   \n\tcall()\n    done()\n"
    update = hunks_of(
        patch("*** Update File: f.py", "@@", " if x:", "-  call()", "+\tcalled()", "     done()")
    )
    # The context line keeps its trailing spaces; only the changed line is new.
    assert apply_hunks(text, update.hunks) == "if x:   \n\tcalled()\n    done()\n"


def test_end_of_file_anchors_the_hunk_at_the_end() -> None:
    text = "x\nend\nx\nend\n"
    update = hunks_of(patch("*** Update File: f", "@@", " x", "-end", "+END", "*** End of File"))
    assert apply_hunks(text, update.hunks) == "x\nend\nx\nEND\n"
    not_last = hunks_of(patch("*** Update File: f", "@@", "-x", "+y", "*** End of File"))
    with pytest.raises(HunkFailed, match="not the last lines"):
        apply_hunks(text, not_last.hunks)


def test_added_lines_only_go_after_the_header_or_at_the_end() -> None:
    after = hunks_of(patch("*** Update File: f", "@@ def b():", "+    '''Doc.'''"))
    assert "def b():\n    '''Doc.'''\n    return 1" in apply_hunks(FILE, after.hunks)
    at_end = hunks_of(patch("*** Update File: f", "@@", "+z = 3"))
    assert apply_hunks(FILE, at_end.hunks) == FILE + "z = 3\n"


def test_crlf_files_keep_crlf_and_a_touched_last_line_gets_an_ending() -> None:
    update = hunks_of(patch("*** Update File: f", "@@", " a", "-b", "+B", "+C"))
    assert apply_hunks("a\r\nb", update.hunks) == "a\r\nB\r\nC\r\n"
    untouched = hunks_of(patch("*** Update File: f", "@@", "-a", "+A", " b"))
    assert apply_hunks("a\nb\nc", untouched.hunks) == "A\nb\nc"


@given(st.lists(st.text(alphabet="ab \t", max_size=6), min_size=1, max_size=12), st.data())
def test_replacing_a_unique_line_changes_only_that_line(
    lines: list[str], data: st.DataObject
) -> None:
    marked = [f"{n}:{line}" for n, line in enumerate(lines)]
    index = data.draw(st.integers(0, len(marked) - 1))
    update = hunks_of(patch("*** Update File: f", "@@", f"-{marked[index]}", "+NEW"))
    text = "\n".join(marked) + "\n"
    expected = [*marked[:index], "NEW", *marked[index + 1 :]]
    assert apply_hunks(text, update.hunks) == "\n".join(expected) + "\n"


# --- the tool, on disk --------------------------------------------------------------------


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "src").mkdir()
    (workspace / "src" / "app.py").write_text(FILE)
    (workspace / "old.txt").write_text("obsolete\n")
    (workspace / "move.py").write_text("a = 1\n")
    return workspace.resolve()


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(WorkspaceView([root]), FileReadCache(), root)


def snapshot(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): p.read_text() for p in root.rglob("*") if p.is_file()}


ALL_KINDS = patch(
    "*** Add File: docs/new.md",
    "+# New",
    "*** Update File: src/app.py",
    "@@ def b():",
    "-    return 1",
    "+    return 2",
    "*** Delete File: old.txt",
    "*** Update File: move.py",
    "*** Move to: pkg/moved.py",
    "@@",
    "-a = 1",
    "+a = 2",
)


async def test_one_call_adds_changes_deletes_and_moves(ctx: ToolContext, root: Path) -> None:
    out = await ApplyPatchTool().run(ApplyPatchInput(input=ALL_KINDS), ctx)
    assert snapshot(root) == {
        "docs/new.md": "# New\n",
        "src/app.py": FILE.replace("b():\n    return 1", "b():\n    return 2"),
        "pkg/moved.py": "a = 2\n",
    }
    assert out.content.splitlines() == [
        "Applied the patch: 4 files changed.",
        "A docs/new.md",
        "M src/app.py",
        "D old.txt",
        "R move.py → pkg/moved.py",
    ]
    assert out.diffs is not None and [d.kind for d in out.diffs] == [
        "add",
        "update",
        "delete",
        "move",
    ]
    assert out.diffs[3].moved_from == str(root / "move.py")


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        (["*** Add File: old.txt", "+x"], r"old.txt \(patch line 8\): the file already exists"),
        (["*** Delete File: nope.txt"], r"nope.txt \(patch line 8\): the file does not exist"),
        (["*** Update File: nope.py", "@@", "-x", "+y"], "nope.py .*does not exist"),
        (["*** Update File: ../evil.py", "@@", "-x", "+y"], "outside the workspace"),
        (["*** Add File: /etc/evil", "+x"], "outside the workspace"),
        (["*** Update File: src/app.py", "@@", "-nothing like it", "+y"], "hunk 1 .*not found"),
        (["*** Delete File: src/app.py"], "src/app.py appears twice"),
        (
            ["*** Update File: old.txt", "*** Move to: src/app.py", "@@", "-obsolete", "+x"],
            "Move to: src/app.py already exists",
        ),
        (["*** Delete File: src"], "directory"),
    ],
)
async def test_a_patch_that_does_not_apply_changes_nothing_and_says_why(
    ctx: ToolContext, root: Path, bad: list[str], message: str
) -> None:
    before = snapshot(root)
    text = patch(*ALL_KINDS.splitlines()[1:7], *bad)
    with pytest.raises(
        ToolError, match=f"The patch was not applied; no file was changed. .*{message}"
    ):
        await ApplyPatchTool().run(ApplyPatchInput(input=text), ctx)
    assert snapshot(root) == before
    tool = ApplyPatchTool()
    assert tool.refusal_before_asking(ApplyPatchInput(input=text), ctx) is not None


async def test_deleting_a_file_changed_since_the_model_read_it_is_refused(
    ctx: ToolContext, root: Path
) -> None:
    ctx.read_cache.record(root / "old.txt", "what the model saw\n")
    with pytest.raises(ToolError, match="modified since it was last read"):
        await ApplyPatchTool().run(ApplyPatchInput(input=patch("*** Delete File: old.txt")), ctx)
    assert (root / "old.txt").exists()


def test_rules_title_and_locations_cover_every_path(root: Path) -> None:
    tool, args = ApplyPatchTool(), ApplyPatchInput(input=ALL_KINDS)
    assert tool.rule_contents(args, root) == (
        "docs/new.md",
        "src/app.py",
        "old.txt",
        "move.py",
        "pkg/moved.py",
    )
    assert tool.title(args) == "Patch docs/new.md, src/app.py, old.txt and 2 more files"
    assert len(tool.locations(args, root)) == 5


def test_offered_to_openai_models_by_default_and_to_others_by_setting() -> None:
    def names(settings: Settings) -> list[str]:
        tools = default_tools(apply_patch=settings.offers_apply_patch())
        return [t.name for t in tools]

    assert "apply_patch" in names(Settings(provider="openai"))
    assert "apply_patch" in names(Settings(provider="azure"))
    assert "apply_patch" not in names(Settings(provider="anthropic"))
    assert "apply_patch" in names(Settings(provider="anthropic", apply_patch_tool=True))
    assert "apply_patch" not in names(Settings(provider="openai", apply_patch_tool=False))


def test_a_bad_apply_patch_tool_setting_is_reported_and_the_default_kept() -> None:
    problems: list[str] = []
    settings = apply_layer(Settings(), {"applyPatchTool": "always"}, "settings.json", problems)
    assert settings.apply_patch_tool == "auto"
    assert problems and "applyPatchTool" in problems[0] and '"auto", true or false' in problems[0]
    assert apply_layer(Settings(), {"applyPatchTool": False}, "x", []).apply_patch_tool is False


async def test_a_move_without_hunks_renames_the_file_as_it_is(ctx: ToolContext, root: Path) -> None:
    text = patch("*** Update File: move.py", "*** Move to: lib/move.py")
    out = await ApplyPatchTool().run(ApplyPatchInput(input=text), ctx)
    assert (root / "lib" / "move.py").read_text() == "a = 1\n"
    assert not (root / "move.py").exists()
    assert out.content.endswith("R move.py → lib/move.py")


def test_a_call_on_several_paths_runs_unasked_only_when_every_path_is_allowed() -> None:
    gate = PermissionGate(
        "default", rules_from(deny=["Edit(secret/**)"], ask=[], allow=["Edit(src/**)"])
    )
    both = ("src/a.py", "src/b.py")
    assert gate.decide_all("apply_patch", "edit", False, both).behavior == "allow"
    assert (
        gate.decide_all("apply_patch", "edit", False, ("src/a.py", "docs/x.md")).behavior == "ask"
    )
    denied = gate.decide_all("apply_patch", "edit", False, ("src/a.py", "secret/k", "docs/x"))
    assert (denied.behavior, denied.reason) == ("deny", "Denied by rule Edit(secret/**).")
