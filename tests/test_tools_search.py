"""Glob and Grep on a real corpus; ripgrep and the Python fallback must agree exactly."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.filters import glob_regex, split_glob
from agentls.tools.read_cache import FileReadCache
from agentls.tools.search import GlobInput, GlobTool, GrepInput, GrepTool
from agentls.workspace.view import OpenDocument, WorkspaceView

HAVE_RG = shutil.which("rg") is not None
needs_rg = pytest.mark.skipif(not HAVE_RG, reason="ripgrep is not installed")

CORPUS: dict[str, str | bytes] = {
    ".gitignore": "build/\nignored.py\n*.log\n",
    "src/app.py": "import os\n\ndef foo():\n    return Foo()\n\nclass Foo:\n    pass\n",
    "src/util.py": "def helper():\n    return 'foo_bar'\n# FOO in caps\n",
    "src/nested/deep.py": "x = 1\ny = 2\nfoo = x + y\nz = 3\nw = 4\nfoo()\n",
    "src/notes.md": "# Notes\nfoo is documented here\n",
    "docs/readme.txt": "Read me.\nNothing to see.\nfoo once\n",
    "docs/.gitignore": "*.tmp\n",
    "docs/scratch.tmp": "foo in an ignored temp file\n",
    "sub/.gitignore": "!keep.log\n",
    "sub/keep.log": "foo kept despite *.log\n",
    "sub/drop.log": "foo dropped\n",
    "build/gen.py": "foo generated\n",
    "ignored.py": "foo ignored\n",
    "debug.log": "foo log\n",
    ".hidden.py": "foo hidden\n",
    ".hiddendir/x.py": "foo in hidden dir\n",
    "bin.dat": b"foo\x00\x01\x02binary",
    "crlf.txt": b"foo\r\nbar\r\nfoo bar\r\n",
    "unicode.txt": "Føo bär\nfoo\n",
    "weird name.py": "def foo_with_space(): pass\n",
}


def build(root: Path, files: dict[str, str | bytes]) -> None:
    for name, content in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    build(workspace, CORPUS)
    (workspace / "link.py").symlink_to(workspace / "src" / "app.py")
    return workspace


@pytest.fixture
def ctx(root: Path) -> ToolContext:
    return ToolContext(WorkspaceView([root]), FileReadCache(), root)


async def call(tool: Tool[Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await tool.run(tool.input_model.model_validate(raw), ctx)


BACKENDS = [
    pytest.param(True, id="ripgrep", marks=needs_rg),
    pytest.param(False, id="python"),
]


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_skips_ignored_hidden_binary_and_symlinked_files(
    ctx: ToolContext, use_ripgrep: bool
) -> None:
    out = await call(GrepTool(use_ripgrep), ctx, pattern="foo")
    assert out.content.splitlines() == [
        "Found 9 files",
        "crlf.txt",
        "docs/readme.txt",
        "src/app.py",
        "src/nested/deep.py",
        "src/notes.md",
        "src/util.py",
        "sub/keep.log",
        "unicode.txt",
        "weird name.py",
    ]


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_content_mode_shows_path_line_and_text(
    ctx: ToolContext, use_ripgrep: bool
) -> None:
    out = await call(
        GrepTool(use_ripgrep), ctx, pattern=r"^class \w+", path="src", output_mode="content"
    )
    assert out.content == "src/app.py:6:class Foo:"


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_context_lines_are_marked_and_groups_separated(
    ctx: ToolContext, use_ripgrep: bool
) -> None:
    out = await call(
        GrepTool(use_ripgrep),
        ctx,
        pattern="^foo",
        path="src/nested/deep.py",
        output_mode="content",
        **{"-B": 1},
    )
    assert out.content.splitlines() == [
        "src/nested/deep.py-2-y = 2",
        "src/nested/deep.py:3:foo = x + y",
        "--",
        "src/nested/deep.py-5-w = 4",
        "src/nested/deep.py:6:foo()",
    ]


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_line_numbers_can_be_turned_off(ctx: ToolContext, use_ripgrep: bool) -> None:
    out = await call(
        GrepTool(use_ripgrep), ctx, pattern="once", output_mode="content", **{"-n": False}
    )
    assert out.content == "docs/readme.txt:foo once"


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_count_mode_counts_matching_lines_per_file(
    ctx: ToolContext, use_ripgrep: bool
) -> None:
    out = await call(GrepTool(use_ripgrep), ctx, pattern="foo", path="src", output_mode="count")
    assert out.content.splitlines() == [
        "Found 5 matching lines in 4 files",
        "src/app.py:1",
        "src/nested/deep.py:2",
        "src/notes.md:1",
        "src/util.py:1",
    ]


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_sees_unsaved_buffer_text_instead_of_the_disk(
    ctx: ToolContext, root: Path, use_ripgrep: bool
) -> None:
    app = root / "src" / "app.py"
    ctx.workspace.set_document(OpenDocument(app, "zebra = 1\n", version=2))
    ctx.workspace.set_document(OpenDocument(root / "src" / "draft.py", "zebra()\n", version=1))
    grep = GrepTool(use_ripgrep)
    found = await call(grep, ctx, pattern="zebra", output_mode="content")
    assert found.content.splitlines() == ["src/app.py:1:zebra = 1", "src/draft.py:1:zebra()"]
    gone = await call(grep, ctx, pattern="class Foo")
    assert gone.content == "No matches found"


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_ignores_buffers_of_files_the_search_would_skip(
    ctx: ToolContext, root: Path, use_ripgrep: bool
) -> None:
    ctx.workspace.set_document(OpenDocument(root / "build" / "gen.py", "zebra\n", version=1))
    ctx.workspace.set_document(OpenDocument(root / "src" / "notes.md", "zebra\n", version=1))
    out = await call(GrepTool(use_ripgrep), ctx, pattern="zebra", glob="*.py")
    assert out.content == "No matches found"


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_caps_output_with_an_explicit_marker(
    ctx: ToolContext, root: Path, use_ripgrep: bool
) -> None:
    (root / "many.txt").write_text("hit\n" * 400)
    out = await call(GrepTool(use_ripgrep), ctx, pattern="hit", output_mode="content")
    lines = out.content.splitlines()
    assert out.truncated and len(lines) == 251
    assert re.fullmatch(r"\[\.\.\. 150 more result lines truncated.*\]", lines[-1])


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_head_limit_keeps_the_first_results(ctx: ToolContext, use_ripgrep: bool) -> None:
    out = await call(GrepTool(use_ripgrep), ctx, pattern="foo", head_limit=2)
    assert out.content.splitlines()[:3] == ["Found 9 files", "crlf.txt", "docs/readme.txt"]
    assert "7 more result lines truncated" in out.content and out.truncated


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_reports_an_invalid_regex_as_a_tool_error(
    ctx: ToolContext, use_ripgrep: bool
) -> None:
    with pytest.raises(ToolError, match=r"(?i)unclosed|missing"):
        await call(GrepTool(use_ripgrep), ctx, pattern="(foo")


async def test_grep_outside_the_workspace_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(GrepTool(False), ctx, pattern="x", path="..")


PATTERNS = ["foo", r"^def \w+", "[[:upper:]]oo", r"pass\z", "f.o", r"(?P<word>Foo)\b"]
GLOBS = [None, "*.py", "src/*.py", "*.{md,txt}", "!*.py", "**/nested/*"]
MODES = ["content", "files_with_matches", "count"]


@needs_rg
@pytest.mark.parametrize("pattern", PATTERNS)
@pytest.mark.parametrize("glob", GLOBS)
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("ignore_case", [False, True])
async def test_ripgrep_and_python_backends_agree(
    ctx: ToolContext, pattern: str, glob: str | None, mode: str, ignore_case: bool
) -> None:
    raw: dict[str, Any] = {"pattern": pattern, "output_mode": mode, "-i": ignore_case}
    if glob is not None:
        raw["glob"] = glob
    fast = await call(GrepTool(use_ripgrep=True), ctx, **raw)
    slow = await call(GrepTool(use_ripgrep=False), ctx, **raw)
    assert fast == slow


@needs_rg
@pytest.mark.parametrize(
    "extra",
    [{"-C": 1}, {"-A": 2}, {"-B": 2, "-A": 0}, {"-C": 3, "-A": 0}, {"path": "src"}],
)
async def test_ripgrep_and_python_backends_agree_on_context_and_scope(
    ctx: ToolContext, extra: dict[str, Any]
) -> None:
    raw = {"pattern": "foo", "output_mode": "content", **extra}
    fast = await call(GrepTool(use_ripgrep=True), ctx, **raw)
    slow = await call(GrepTool(use_ripgrep=False), ctx, **raw)
    assert fast == slow


def test_grep_input_accepts_dash_aliases_and_field_names() -> None:
    model = GrepTool().input_model
    by_alias = model.model_validate({"pattern": "x", "-i": True, "-C": 2, "unknown": 1})
    by_name = model.model_validate({"pattern": "x", "case_insensitive": True, "context": 2})
    assert by_alias == by_name


@pytest.mark.parametrize(
    ("pattern", "matches", "misses"),
    [
        ("*.py", ["a.py", ".x.py"], ["src/a.py", "a.pyc"]),
        ("**/*.py", ["a.py", "src/a.py", "a/b/c.py"], ["a.pyc"]),
        ("src/**", ["src/a", "src/a/b"], ["src", "lib/src/a"]),
        ("a/**/b", ["a/b", "a/x/b", "a/x/y/b"], ["a/xb"]),
        ("*.{ts,tsx}", ["a.ts", "a.tsx"], ["a.js"]),
        ("file?.[ch]", ["file1.c", "fileA.h"], ["file10.c", "file1.o"]),
        ("[!a]*", ["b", "c.txt"], ["a", "a.txt"]),
    ],
)
def test_glob_regex_follows_glob_rules(pattern: str, matches: list[str], misses: list[str]) -> None:
    regex = re.compile(glob_regex(pattern))
    assert all(regex.fullmatch(m) for m in matches)
    assert not any(regex.fullmatch(m) for m in misses)


def test_split_glob_separates_the_literal_directory() -> None:
    assert split_glob("src/app/**/*.py") == ("src/app", "**/*.py")
    assert split_glob("*.py") == ("", "*.py")
    assert split_glob("/abs/dir/*.py") == ("/abs/dir", "*.py")


def set_mtimes(root: Path, names: list[str]) -> None:
    """Give `names` increasing modification times, so the last is the newest."""
    for age, name in enumerate(names):
        os.utime(root / name, (1_000_000 + age, 1_000_000 + age))


async def test_glob_lists_matches_newest_first(ctx: ToolContext, root: Path) -> None:
    set_mtimes(root, ["src/util.py", "src/nested/deep.py", "src/app.py"])
    out = await call(GlobTool(), ctx, pattern="src/**/*.py")
    assert out.content.splitlines() == ["src/app.py", "src/nested/deep.py", "src/util.py"]


async def test_glob_star_stays_in_the_search_directory(ctx: ToolContext) -> None:
    out = await call(GlobTool(), ctx, pattern="*.py", path="src")
    assert sorted(out.content.splitlines()) == ["src/app.py", "src/util.py"]


async def test_glob_includes_hidden_and_ignored_files_but_never_vcs_dirs(
    ctx: ToolContext, root: Path
) -> None:
    (root / ".git").mkdir()
    (root / ".git" / "hook.py").write_text("x\n")
    out = await call(GlobTool(), ctx, pattern="**/*.py")
    found = set(out.content.splitlines())
    assert {".hidden.py", "build/gen.py", "ignored.py", "weird name.py"} <= found
    assert not any(path.startswith(".git/") for path in found)


async def test_glob_accepts_an_absolute_pattern_inside_the_workspace(
    ctx: ToolContext, root: Path
) -> None:
    out = await call(GlobTool(), ctx, pattern=f"{root}/docs/*.txt")
    assert out.content == "docs/readme.txt"


async def test_glob_caps_results_at_100_with_a_note(ctx: ToolContext, root: Path) -> None:
    for n in range(130):
        (root / "gen" / f"f{n}.txt").parent.mkdir(exist_ok=True)
        (root / "gen" / f"f{n}.txt").write_text("")
    out = await call(GlobTool(), ctx, pattern="gen/*.txt")
    lines = out.content.splitlines()
    assert len(lines) == 101 and out.truncated
    assert "showing 100 of 130" in lines[-1]


async def test_glob_with_no_match_says_so(ctx: ToolContext) -> None:
    out = await call(GlobTool(), ctx, pattern="**/*.rs")
    assert out.content == "No files found"


async def test_glob_outside_the_workspace_is_refused(ctx: ToolContext) -> None:
    with pytest.raises(ToolError, match="outside the workspace"):
        await call(GlobTool(), ctx, pattern="../*")


def test_search_tools_are_read_only_and_match_rules_on_the_search_path(root: Path) -> None:
    grep = GrepTool()
    args = GrepInput.model_validate({"pattern": "x", "path": "src"})
    assert grep.is_read_only(args) and grep.kind == "search"
    assert grep.rule_content(args, root) == "src"
    glob_args = GlobInput.model_validate({"pattern": "*.py"})
    assert GlobTool().rule_content(glob_args, root) == "."


@pytest.mark.parametrize("use_ripgrep", BACKENDS)
async def test_grep_shows_a_latin1_line_as_read_shows_it(
    ctx: ToolContext, root: Path, use_ripgrep: bool
) -> None:
    (root / "latin.py").write_bytes("# café crème\n".encode("latin-1"))
    out = await call(
        GrepTool(use_ripgrep), ctx, pattern="caf", path="latin.py", output_mode="content"
    )
    assert out.content == "latin.py:1:# café crème"


@needs_rg
@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd on this platform")
async def test_grep_with_ripgrep_starts_no_thread(
    ctx: ToolContext, thread_starts: list[str]
) -> None:
    # asyncio's child watcher (Python 3.11) started a thread for every rg: about half of a
    # Grep's CPU. The event loop now reads rg's pipes and its exit itself.
    out = await call(GrepTool(True), ctx, pattern="foo", path="src", output_mode="count")
    assert "app.py" in out.content
    assert thread_starts == []
