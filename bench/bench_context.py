"""8 editor state: the cost of <userContext> when the client sends an enormous editor state.

A 10 MB unsaved active buffer selected whole (plus 1,000 more selections) and 5,000 open
documents: how long building the user context takes, and how large it is, against the
same call with no editor state at all. The editor part is capped by its budget, so its size
stays flat however much the client sends.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

from agentls.context.editor_context import EDITOR_BUDGET_CHARS
from agentls.context.prompt import user_context
from agentls.workspace.view import EditorState, OpenDocument, Position, Range, WorkspaceView
from harness import Row, timing_rows

SECTION = "8 editor state in <userContext>"
TEN_MB = 10 * 1024 * 1024


def _huge_view(root: Path) -> WorkspaceView:
    documents: dict[Path, OpenDocument] = {}
    for n in range(5_000):
        path = root / f"pkg{n % 50}" / f"module_{n}.py"
        documents[path] = OpenDocument(path, f"x = {n}\n", n + 1, "python")
    big = root / "big.txt"
    big.write_text("saved\n", encoding="utf-8")
    documents[big] = OpenDocument(big, ("é" * 99 + "\n") * (TEN_MB // 100), 7)
    whole = Range(Position(0, 0), Position(TEN_MB // 100, 0))
    many = [Range(Position(n, 0), Position(n + 5_000, 3)) for n in range(0, 100_000, 100)]
    return WorkspaceView([root], documents=documents, editor=EditorState(big, [whole, *many]))


def _time(view: WorkspaceView, root: Path, runs: int) -> tuple[list[float], int]:
    samples = []
    size = 0
    for _ in range(runs):
        start = time.perf_counter()
        size = len(user_context(view, root, first=False))
        samples.append(time.perf_counter() - start)
    return samples, size


def run(quick: bool) -> list[Row]:
    runs = 5 if quick else 20
    with tempfile.TemporaryDirectory(prefix="agentls-bench-context-") as tmp:
        root = Path(tmp)
        empty, empty_size = _time(WorkspaceView([root]), root, runs)
        huge, huge_size = _time(_huge_view(root), root, runs)
    return [
        *timing_rows(SECTION, "user context, no editor state", empty),
        *timing_rows(SECTION, "user context, 10 MB buffer + 5,000 documents", huge),
        Row(SECTION, "its size, no editor state", float(empty_size), "chars"),
        Row(
            SECTION,
            "its size, 10 MB buffer + 5,000 documents",
            float(huge_size),
            "chars",
            f"editor budget {EDITOR_BUDGET_CHARS:,}",
        ),
    ]
