"""Positions in the negotiated encoding and the smallest edits: applying the edits to the old
text, counting columns as the client does, gives exactly the new text."""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.lsp.positions import (
    Edit,
    Encoding,
    column_to_index,
    encoding_of,
    lsp_lines,
    smallest_edits,
    units,
)

ENCODINGS: list[Encoding] = ["utf-8", "utf-16", "utf-32"]


def apply_edits(old: str, edits: Sequence[Edit], encoding: Encoding) -> str:
    """What an editor does with the edits: positions counted in `encoding`, all against `old`."""
    lines = lsp_lines(old)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(position: tuple[int, int]) -> int:
        line, column = position
        if line >= len(lines):
            return len(old)
        content = lines[line].rstrip("\r\n")
        return starts[line] + column_to_index(content, column, encoding)

    text = old
    for edit in sorted(edits, key=lambda e: e.start, reverse=True):
        text = text[: offset(edit.start)] + edit.new_text + text[offset(edit.end) :]
    return text


def test_columns_are_counted_in_each_encoding() -> None:
    line = "a😀é"
    assert [units(line, e) for e in ENCODINGS] == [1 + 4 + 2, 1 + 2 + 1, 3]
    assert column_to_index(line, 5, "utf-8") == 2
    assert column_to_index(line, 3, "utf-16") == 2
    assert encoding_of(None) == "utf-16"
    assert encoding_of("utf-8") == "utf-8"


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_an_edit_on_a_non_ascii_last_line_without_a_newline(encoding: Encoding) -> None:
    old = "x = 1\ncafé = '😀'"
    new = "x = 1\ncafé = '😀!'"
    edits = smallest_edits(old, new, encoding)
    assert apply_edits(old, edits, encoding) == new
    (edit,) = edits
    assert edit.new_text == "!"
    assert edit.start == (1, units("café = '😀", encoding))


def test_only_the_changed_lines_are_sent() -> None:
    old = "".join(f"line {n}\n" for n in range(1000))
    new = old.replace("line 500\n", "line five hundred\n").replace("line 10\n", "")
    edits = smallest_edits(old, new, "utf-16")
    assert len(edits) == 2
    assert sum(len(e.new_text) for e in edits) < 20
    assert apply_edits(old, edits, "utf-16") == new


TEXT = st.text(alphabet="ab \n\r\té😀", max_size=60)


@given(old=TEXT, new=TEXT, encoding=st.sampled_from(ENCODINGS))
def test_the_edits_turn_the_old_text_into_the_new(old: str, new: str, encoding: Encoding) -> None:
    edits = smallest_edits(old, new, encoding)
    assert apply_edits(old, edits, encoding) == new
    spans = sorted((e.start, e.end) for e in edits)
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(spans)), "edits overlap"


@given(old=TEXT, encoding=st.sampled_from(ENCODINGS))
def test_an_unchanged_text_needs_no_edit(old: str, encoding: Encoding) -> None:
    assert smallest_edits(old, old, encoding) == []
