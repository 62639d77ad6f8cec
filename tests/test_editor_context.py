"""Editor state goes into <userContext> on its own budget and can never make a turn fail."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from agentls.context.editor_context import (
    EDITOR_BUDGET_CHARS,
    LineIndex,
    editor_parts,
    slice_range,
)
from agentls.session.manager import SessionManager
from agentls.wire import json_sink
from agentls.workspace.view import EditorState, OpenDocument, Position, Range, WorkspaceView

TEN_MB = 10 * 1024 * 1024


def huge_editor_state(tmp_path: Path) -> tuple[dict[Path, OpenDocument], EditorState]:
    """A 10 MB unsaved active buffer selected whole, 1,000 more selections, 5,000 documents."""
    documents: dict[Path, OpenDocument] = {}
    for n in range(5_000):
        path = tmp_path / f"pkg{n % 50}" / f"module_{n}.py"
        documents[path] = OpenDocument(path, f"x = {n}\n", n + 1, "python")
    big = tmp_path / "big.txt"
    big.write_text("saved\n", encoding="utf-8")
    line = "é" * 99 + "\n"
    documents[big] = OpenDocument(big, line * (TEN_MB // 100), 7, "plaintext")
    whole = Range(Position(0, 0), Position(TEN_MB // 100, 0))
    many = [Range(Position(n, 0), Position(n + 5_000, 3)) for n in range(0, 100_000, 100)]
    return documents, EditorState(big, [whole, *many], [whole])


def test_a_huge_editor_state_fits_its_budget_most_relevant_first(tmp_path: Path) -> None:
    documents, editor = huge_editor_state(tmp_path)
    view = WorkspaceView([tmp_path], documents=documents, editor=editor)
    parts = editor_parts(view, tmp_path)
    text = "\n".join(parts)
    assert len(text) <= EDITOR_BUDGET_CHARS
    active = parts[-1]
    assert active.startswith('<activeFile path="big.txt" cursorLine="1">')
    assert "selection cut to fit" in active
    assert "more selections not shown" in active
    editors = parts[0]
    assert editors.startswith('<openEditors count="5001">')
    # The active (and unsaved) file leads the list; the cut says how many were left out.
    assert editors.splitlines()[1].startswith('<editor path="big.txt" version="7" unsaved="true"')
    assert "more open editors not listed" in editors


def test_buffers_with_unsaved_changes_are_listed_before_saved_ones(tmp_path: Path) -> None:
    saved, changed = tmp_path / "saved.py", tmp_path / "changed.py"
    saved.write_text("a = 1\n", encoding="utf-8")
    changed.write_text("b = 1\n", encoding="utf-8")
    documents = {
        changed: OpenDocument(changed, "b = 2\n", 3),
        saved: OpenDocument(saved, "a = 1\n", 2),
    }
    view = WorkspaceView([tmp_path], documents=documents)
    (editors,) = editor_parts(view, tmp_path)
    assert editors.splitlines()[1:3] == [
        '<editor path="changed.py" version="3" unsaved="true"/>',
        '<editor path="saved.py" version="2"/>',
    ]


def test_lines_start_where_lsp_counts_them() -> None:
    text = "a\r\nb\rc\nd\u2028e\x0cf"
    index = LineIndex(text)
    assert [index.start(n) for n in range(5)] == [0, 3, 5, 7, None]
    assert index.offset(Position(0, 99)) == 1
    assert index.offset(Position(3, 2)) == 9
    assert index.offset(Position(9, 0)) == len(text)


def test_a_selection_is_sliced_by_code_points() -> None:
    text = "a😀bc\nδεζ\n"
    rng = Range(Position(0, 1), Position(1, 2))
    assert slice_range(text, rng, 100) == ("😀bc\nδε", False)
    assert slice_range(text, rng, 3) == ("😀bc", True)


@given(
    text=st.text(alphabet="ab\r\n😀é", max_size=40),
    a=st.tuples(st.integers(0, 12), st.integers(0, 12)),
    b=st.tuples(st.integers(0, 12), st.integers(0, 12)),
)
def test_slices_agree_with_a_line_by_line_reading(
    text: str, a: tuple[int, int], b: tuple[int, int]
) -> None:
    start, end = sorted([a, b])
    lines = re.findall(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$", text) or [""]

    def offset(line: int, char: int) -> int:
        if line >= len(lines):
            return len(text)
        content = lines[line].rstrip("\r\n")
        return sum(len(x) for x in lines[:line]) + min(char, len(content))

    expected = text[offset(*start) : max(offset(*start), offset(*end))]
    rng = Range(Position(*start), Position(*end))
    assert slice_range(text, rng, 1_000) == (expected, False)


async def test_a_turn_with_a_huge_editor_state_runs_normally(tmp_path: Path) -> None:
    documents, editor = huge_editor_state(tmp_path)
    events: list[dict[str, Any]] = []
    done = asyncio.Event()

    def sink(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "turn_completed":
            done.set()

    requests = tmp_path / "requests.jsonl"
    manager = SessionManager(
        json_sink(sink),
        env={"AGENTLS_HOME": str(tmp_path / "home")},
        documents=documents,
        editor=editor,
    )
    session = await manager.create(
        tmp_path,
        {
            "provider": "scripted",
            "script": [{"text": "fine"}],
            "requestLog": str(requests),
            "contextWindow": 32_000,
        },
    )
    session.submit("what is selected?")
    await asyncio.wait_for(done.wait(), 60)
    end = events[-1]
    assert end["stopReason"] == "end_turn", end
    assert not [e for e in events if e["type"] == "compaction"]
    first = json.loads(requests.read_text(encoding="utf-8").splitlines()[0])
    context = first["messages"][0]["content"][0]["text"]
    assert len(context) < EDITOR_BUDGET_CHARS + 2_000


def test_buffers_of_another_project_are_not_shown(tmp_path: Path) -> None:
    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    ours.mkdir()
    theirs.mkdir()
    mine, other = ours / "a.py", theirs / "secret_plan.py"
    documents = {mine: OpenDocument(mine, "a\n", 1), other: OpenDocument(other, "b\n", 1)}
    editor = EditorState(other, [Range(Position(0, 0), Position(0, 1))])
    view = WorkspaceView([ours], documents=documents, editor=editor)
    text = "\n".join(editor_parts(view, ours))
    assert "a.py" in text
    assert "secret_plan" not in text
    assert "activeFile" not in text
