"""17 apply_patch: one patch against the same changes made with Edit, and what the tool
adds to a session's first request.

A patch of 20 files of 2,000 lines, 3 hunks each (every hunk located, every text computed,
then written as one change on disk), against the same 60 changes as 60 Edit calls through
the same WorkspaceView. And the tool specs a session sends with every request, with and
without apply_patch (an OpenAI session's first request grows by the difference).
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from agentls.messages import ToolSpec
from agentls.tools.apply_patch import ApplyPatchInput, ApplyPatchTool
from agentls.tools.base import ToolContext
from agentls.tools.files import EditInput, EditTool
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import default_tools, tool_spec
from agentls.workspace.view import WorkspaceView
from harness import Row, timing_rows

SECTION = "17 apply_patch"
FILES, LINES, HUNKS = 20, 2_000, 3


def _workspace(root: Path) -> None:
    for n in range(FILES):
        lines = [f"def f{i}(x):\n    return x + {i}\n" for i in range(LINES // 2)]
        (root / f"m{n}.py").write_text("".join(lines), encoding="utf-8")


def _spots() -> list[int]:
    return [LINES // 2 * (h + 1) // (HUNKS + 1) for h in range(HUNKS)]


def _patch() -> str:
    out = ["*** Begin Patch"]
    for n in range(FILES):
        out.append(f"*** Update File: m{n}.py")
        for i in _spots():
            out += [f"@@ def f{i}(x):", f"-    return x + {i}", f"+    return x - {i}"]
    return "\n".join([*out, "*** End Patch"])


def _edits() -> list[EditInput]:
    return [
        EditInput(
            file_path=f"m{n}.py",
            old_string=f"def f{i}(x):\n    return x + {i}\n",
            new_string=f"def f{i}(x):\n    return x - {i}\n",
        )
        for n in range(FILES)
        for i in _spots()
    ]


def _context(root: Path) -> ToolContext:
    ctx = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    for path in root.glob("*.py"):
        ctx.read_cache.record(path.resolve(), path.read_text(encoding="utf-8"))
    return ctx


async def _time_patch(runs: int) -> list[float]:
    samples = []
    args = ApplyPatchInput(input=_patch())
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="agentls-bench-patch-") as tmp:
            root = Path(tmp).resolve()
            _workspace(root)
            ctx = _context(root)
            start = time.perf_counter()
            await ApplyPatchTool().run(args, ctx)
            samples.append(time.perf_counter() - start)
    return samples


async def _time_edits(runs: int) -> list[float]:
    samples = []
    edits = _edits()
    for _ in range(runs):
        with tempfile.TemporaryDirectory(prefix="agentls-bench-patch-") as tmp:
            root = Path(tmp).resolve()
            _workspace(root)
            ctx = _context(root)
            start = time.perf_counter()
            for edit in edits:
                await EditTool().run(edit, ctx)
            samples.append(time.perf_counter() - start)
    return samples


def _spec_bytes(specs: list[ToolSpec]) -> int:
    wire = [
        {"name": s.name, "description": s.description, "input_schema": s.input_schema}
        for s in specs
    ]
    return len(json.dumps(wire).encode("utf-8"))


def run(quick: bool) -> list[Row]:
    runs = 3 if quick else 10
    patch = asyncio.run(_time_patch(runs))
    edits = asyncio.run(_time_edits(runs))
    without = _spec_bytes([tool_spec(t) for t in default_tools()])
    with_patch = _spec_bytes([tool_spec(t) for t in default_tools(apply_patch=True)])
    ratio = sorted(edits)[len(edits) // 2] / sorted(patch)[len(patch) // 2]
    grown = with_patch - without
    return [
        *timing_rows(
            SECTION, f"one patch: {FILES} files × {LINES:,} lines, {HUNKS} hunks each", patch
        ),
        *timing_rows(
            SECTION,
            f"the same {FILES * HUNKS} changes as Edit calls",
            edits,
            f"{ratio:.1f}× the patch",
        ),
        Row(SECTION, "built-in tool specs, without apply_patch", float(without), "bytes"),
        Row(
            SECTION,
            "built-in tool specs, with apply_patch",
            float(with_patch),
            "bytes",
            f"+{grown:,} bytes (+{grown / without:.1%}) on each request of a session that has it",
        ),
    ]
