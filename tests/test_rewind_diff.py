"""Turn diffs, the Bash watch and the checkpoint seam, unit by unit: line endings kept,
binary files named, only the files a command changed found in a real git work tree, and
a checkpoint that cannot be kept never failing the agent's write."""

from __future__ import annotations

import subprocess
from pathlib import Path

from agentls.session.checkpoints import CheckpointStore
from agentls.session.git_watch import GitWatch, changed_files
from agentls.session.rewind import file_change
from agentls.tools.base import ToolContext
from agentls.tools.files import WriteInput, WriteTool
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import WorkspaceView


def test_a_diff_keeps_crlf_and_marks_a_missing_final_newline() -> None:
    change = file_change(Path("/w/a.txt"), b"one\r\ntwo\r\n", b"one\r\n2", "a.txt")
    assert change.diff == (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\r\n-two\r\n+2\n"
        "\\ No newline at end of file\n"
    )
    assert (change.added, change.removed, change.created, change.deleted) == (1, 1, False, False)


def test_a_deleted_file_diffs_against_dev_null() -> None:
    change = file_change(Path("/w/a.txt"), b"x\ny\n", None, "a.txt")
    assert change.diff == "--- a/a.txt\n+++ /dev/null\n@@ -1,2 +0,0 @@\n-x\n-y\n"
    assert (change.added, change.removed, change.deleted) == (0, 2, True)


def test_a_binary_file_is_named_not_shown() -> None:
    change = file_change(Path("/w/b.bin"), b"\x00\x01", b"\x00\x02", "b.bin")
    assert change.diff == "Binary files a/b.bin and b/b.bin differ\n"
    assert (change.added, change.removed) == (0, 0)


async def test_the_watch_finds_what_changed_and_keeps_the_old_bytes(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / ".gitattributes").write_text("* text=auto\n", encoding="utf-8")
    (tree / ".gitignore").write_text("*.log\n", encoding="utf-8")
    (tree / "crlf.txt").write_bytes(b"a\r\nb\r\n")
    (tree / "same.txt").write_bytes(b"same\n")
    subprocess.run(["git", "init", "-q"], cwd=tree, check=True)
    watch = await GitWatch.find(tree, tmp_path / "objects", tmp_path / "home")
    assert watch is not None
    before = await watch.snapshot()
    (tree / "crlf.txt").write_bytes(b"changed\n")
    (tree / "new.txt").write_bytes(b"new\n")
    (tree / "ignored.log").write_bytes(b"log\n")
    (tree / "same.txt").write_bytes(b"same\n")
    after = await watch.snapshot()
    assert changed_files(before, after) == ["crlf.txt", "new.txt"]
    # The bytes as they were, not as git's line-ending filter would store them.
    old = await watch.contents([before["crlf.txt"], before["same.txt"]])
    assert old == {before["crlf.txt"]: b"a\r\nb\r\n", before["same.txt"]: b"same\n"}
    assert not (tree / ".git" / "index").exists()


async def test_no_watch_outside_a_git_work_tree(tmp_path: Path) -> None:
    assert await GitWatch.find(tmp_path, tmp_path / "objects", tmp_path / "home") is None


async def test_a_checkpoint_that_cannot_be_kept_never_fails_the_write(tmp_path: Path) -> None:
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("", encoding="utf-8")
    store = CheckpointStore(blocked / "checkpoints", tmp_path)
    view = WorkspaceView([tmp_path])
    turn = store.for_turn("turn_1", view, tmp_path)
    context = ToolContext(view, FileReadCache(), tmp_path, checkpoints=turn)
    output = await WriteTool().run(WriteInput(file_path="a.txt", content="x\n"), context)
    assert not output.is_error
    assert (tmp_path / "a.txt").read_text(encoding="utf-8") == "x\n"
    assert store.entries() == []


def test_an_index_line_torn_by_a_crash_does_not_swallow_the_next_entry(tmp_path: Path) -> None:
    first = CheckpointStore(tmp_path / "cp", tmp_path)
    first.keep_before("t1", tmp_path / "a.txt", lambda: b"a")
    with first.index_path.open("a", encoding="utf-8") as handle:
        handle.write('{"kind": "after", "pa')  # the daemon died mid-write
    second = CheckpointStore(tmp_path / "cp", tmp_path)
    second.left("t2", tmp_path / "b.txt", b"b")
    entries = second.entries()
    assert [(e.kind, e.path.name, e.turn_id) for e in entries] == [
        ("before", "a.txt", "t1"),
        ("after", "b.txt", "t2"),
    ]
