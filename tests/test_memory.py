"""Memory files: discovery order, deduplication, limits, and a byte-stable rendering."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agentls.context.memory import (
    MAX_CHARS,
    PREAMBLE,
    find_memory_files,
    memory_prompt,
    read_memory,
)


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path, Path]:
    """A home, a workspace root and a nested cwd `root/a/b`, all without memory files."""
    home, root = tmp_path / "home", tmp_path / "ws"
    cwd = root / "a" / "b"
    home.mkdir()
    cwd.mkdir(parents=True)
    return home, root, cwd


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def test_files_come_user_first_then_root_down_to_cwd(layout: tuple[Path, Path, Path]) -> None:
    home, root, cwd = layout
    expected = [
        write(home / "AGENTS.md", "user"),
        write(home / "CLAUDE.md", "user claude"),
        write(root / "CLAUDE.md", "root"),
        write(root / "a" / "AGENTS.md", "a"),
        write(cwd / "AGENTS.md", "b"),
        write(cwd / "CLAUDE.md", "b claude"),
    ]
    write(cwd / "c" / "AGENTS.md", "below cwd")
    write(root / ".agentls" / "AGENTS.md", "other name")
    assert find_memory_files(root, cwd, home) == expected


def test_cwd_equal_to_root_reads_only_the_root(layout: tuple[Path, Path, Path]) -> None:
    home, root, _ = layout
    top = write(root / "AGENTS.md", "root")
    write(root / "a" / "AGENTS.md", "a")
    assert find_memory_files(root, root, home) == [top]


def test_cwd_outside_the_root_reads_only_cwd(layout: tuple[Path, Path, Path]) -> None:
    home, root, _ = layout
    elsewhere = root.parent / "elsewhere" / "deep"
    write(root / "AGENTS.md", "root")
    write(elsewhere.parent / "AGENTS.md", "parent of cwd")
    own = write(elsewhere / "AGENTS.md", "cwd")
    assert find_memory_files(root, elsewhere, home) == [own]


def test_a_symlinked_duplicate_counts_once(layout: tuple[Path, Path, Path]) -> None:
    home, root, cwd = layout
    original = write(root / "AGENTS.md", "shared")
    (root / "CLAUDE.md").symlink_to(original)
    (cwd / "AGENTS.md").symlink_to(original)
    assert find_memory_files(root, cwd, home) == [original]


def test_a_symlinked_workspace_root_is_walked(tmp_path: Path) -> None:
    real = tmp_path / "real"
    write(real / "AGENTS.md", "root")
    nested = write(real / "sub" / "AGENTS.md", "sub")
    link = tmp_path / "link"
    link.symlink_to(real)
    found = find_memory_files(link, real / "sub", tmp_path / "home")
    assert [p.resolve() for p in found] == [(real / "AGENTS.md").resolve(), nested.resolve()]


def test_binary_non_utf8_blank_and_directory_files_are_skipped(
    layout: tuple[Path, Path, Path],
) -> None:
    home, root, cwd = layout
    (root / "AGENTS.md").write_bytes(b"rules\0\x01\x02")
    (root / "CLAUDE.md").write_bytes(b"caf\xe9")
    write(root / "a" / "AGENTS.md", "  \n\n")
    (cwd / "AGENTS.md").mkdir()
    kept = write(cwd / "CLAUDE.md", "kept")
    assert find_memory_files(root, cwd, home) == [kept]


def test_a_dangling_symlink_and_a_fifo_are_skipped(layout: tuple[Path, Path, Path]) -> None:
    home, root, cwd = layout
    (root / "AGENTS.md").symlink_to(root / "gone.md")
    os.mkfifo(cwd / "AGENTS.md")
    assert find_memory_files(root, cwd, home) == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_an_unreadable_file_is_skipped(layout: tuple[Path, Path, Path]) -> None:
    home, root, cwd = layout
    locked = write(root / "AGENTS.md", "secret")
    locked.chmod(0)
    try:
        assert find_memory_files(root, cwd, home) == []
    finally:
        locked.chmod(0o600)


def test_a_huge_file_is_truncated_with_a_note(tmp_path: Path) -> None:
    path = write(tmp_path / "AGENTS.md", "x" * (MAX_CHARS * 10))
    text = read_memory(path)
    assert text is not None
    assert text.startswith("x" * MAX_CHARS)
    assert not text.startswith("x" * (MAX_CHARS + 1))
    assert text.endswith(f"(truncated: only the first {MAX_CHARS} characters shown)")


def test_truncation_never_splits_a_multibyte_character(tmp_path: Path) -> None:
    path = write(tmp_path / "AGENTS.md", "规则" * MAX_CHARS)
    text = read_memory(path)
    assert text is not None
    assert text.startswith(("规则" * MAX_CHARS)[:MAX_CHARS] + "\n…")


def test_a_file_exactly_at_the_cap_is_not_truncated(tmp_path: Path) -> None:
    path = write(tmp_path / "AGENTS.md", "é" * MAX_CHARS)
    assert read_memory(path) == "é" * MAX_CHARS


def test_no_files_render_an_empty_prompt(layout: tuple[Path, Path, Path]) -> None:
    home, root, cwd = layout
    assert find_memory_files(root, cwd, home) == []
    assert memory_prompt([]) == ""
    assert memory_prompt([root / "missing.md"]) == ""


def test_the_prompt_names_each_file_after_one_preamble(tmp_path: Path) -> None:
    user = write(tmp_path / "home" / "AGENTS.md", "Answer in English.")
    project = write(tmp_path / "ws" / "AGENTS.md", "Use <tabs> & spaces.\n")
    assert memory_prompt([user, project]) == (
        f"{PREAMBLE}\n\n"
        f'<memory path="{user}">\nAnswer in English.\n</memory>\n\n'
        f'<memory path="{project}">\nUse &lt;tabs&gt; &amp; spaces.\n</memory>'
    )


def test_the_prompt_bytes_are_stable_for_the_same_files(
    layout: tuple[Path, Path, Path],
) -> None:
    home, root, cwd = layout
    write(home / "AGENTS.md", "user")
    write(root / "AGENTS.md", "root ✓")
    write(cwd / "CLAUDE.md", "cwd")
    first = memory_prompt(find_memory_files(root, cwd, home)).encode()
    second = memory_prompt(find_memory_files(root, cwd, home)).encode()
    assert first == second
    assert first.index(b"user") < first.index(b"root") < first.index(b"cwd")
