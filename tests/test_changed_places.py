"""Where a completed change starts, for the `locations` of its `tool_call_update`: the
file and the 0-based line of its first changed line, so an editor can follow to it."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from agentls.tool_values import FileDiff, Location, changed_places

# Text made of the pieces where str.splitlines and "\n" disagree.
TEXT = st.lists(st.sampled_from(["a", "b", "\n", "\r", "\r\n", "\x0b", "\u2028"])).map("".join)


def test_an_edit_is_located_at_its_first_changed_line() -> None:
    diff = FileDiff("/w/app.py", "a\nb\nc\nd\n", "a\nb\nC\nD\n")
    assert changed_places((diff,)) == (Location("/w/app.py", 2),)


def test_a_new_file_is_located_at_its_start() -> None:
    assert changed_places((FileDiff("/w/new.py", None, "x\ny\n"),)) == (Location("/w/new.py", 0),)


def test_lines_added_at_the_end_are_located_at_the_first_added_one() -> None:
    diff = FileDiff("/w/app.py", "a\nb\n", "a\nb\nc\n")
    assert changed_places((diff,)) == (Location("/w/app.py", 2),)


def test_lines_cut_from_the_end_are_located_at_the_new_last_line() -> None:
    diff = FileDiff("/w/app.py", "a\nb\nc\n", "a\n")
    assert changed_places((diff,)) == (Location("/w/app.py", 0),)
    emptied = FileDiff("/w/app.py", "a\n", "")
    assert changed_places((emptied,)) == (Location("/w/app.py", 0),)


def test_every_file_of_a_patch_but_a_deleted_one() -> None:
    diffs = (
        FileDiff("/w/a.py", "1\n2\n", "1\n3\n", kind="update"),
        FileDiff("/w/gone.py", "x\n", "", kind="delete"),
        FileDiff("/w/b.py", None, "new\n", kind="add"),
        FileDiff("/w/c.py", "k\n", "k\n", kind="move", moved_from="/w/old.py"),
    )
    assert changed_places(diffs) == (
        Location("/w/a.py", 1),
        Location("/w/b.py", 0),
        Location("/w/c.py", 0),
    )


def _line_by_line(old: str, new: str) -> int:
    """The rule read plainly: the first differing line, else the first line past the
    shorter side, never past the end of `new`."""
    before, after = old.splitlines(), new.splitlines()
    pairs = enumerate(zip(before, after, strict=False))
    line = next((n for n, (a, b) in pairs if a != b), len(before))
    return min(line, max(len(after) - 1, 0))


@given(TEXT, TEXT, TEXT)
def test_the_line_is_the_one_a_line_by_line_comparison_finds(head: str, old: str, new: str) -> None:
    # A shared head, as an edit leaves it: the part skipped without comparing lines.
    before, after = head + old, head + new
    expected = Location("/w/app.py", _line_by_line(before, after))
    assert changed_places((FileDiff("/w/app.py", before, after),)) == (expected,)


def test_a_long_shared_head_spans_blocks() -> None:
    head = "".join(f"line {n}\n" for n in range(5000))
    diff = FileDiff("/w/app.py", head + "x = 1\n", head + "x = 2\n")
    assert changed_places((diff,)) == (Location("/w/app.py", 5000),)
