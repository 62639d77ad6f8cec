"""The executor's lanes: reads together, writes alone and in order, results in call order."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from agentls.events import LoopEvent, ToolCallUpdate
from agentls.loop.assemble import ToolCallReady
from agentls.loop.executor import ToolExecutor
from agentls.messages import ToolUseBlock
from agentls.permissions.gate import PermissionGate
from agentls.tool_values import Location
from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry
from agentls.workspace.view import WorkspaceView


class Args(BaseModel):
    label: str
    delay: float = 0.0
    fail: bool = False
    # Wait for the timeline's `release` before finishing.
    hold: bool = False


class Timeline:
    def __init__(self) -> None:
        self.entries: list[tuple[str, str]] = []
        self.running = 0
        self.peak = 0
        self.release = asyncio.Event()


class FakeTool(Tool[Args]):
    """A tool that sleeps and records when it starts and ends."""

    description = "fake"
    input_model = Args

    def __init__(self, name: str, read_only: bool, timeline: Timeline) -> None:
        self.name = name
        self.kind = "read" if read_only else "edit"
        self._read_only = read_only
        self._timeline = timeline

    def is_read_only(self, args: Any) -> bool:
        return self._read_only

    def title(self, args: Any) -> str:
        return f"{self.name} {args.label}"

    def locations(self, args: Any, cwd: Path) -> list[Location]:
        return []

    def rule_content(self, args: Any, cwd: Path) -> str | None:
        return None

    async def run(self, args: Any, ctx: ToolContext) -> ToolOutput:
        timeline = self._timeline
        timeline.entries.append(("start", args.label))
        timeline.running += 1
        timeline.peak = max(timeline.peak, timeline.running)
        try:
            await asyncio.sleep(args.delay)
            if args.hold:
                await timeline.release.wait()
            if args.fail:
                raise ToolError(f"{args.label} failed")
            return ToolOutput(f"{args.label} done")
        finally:
            timeline.running -= 1
            timeline.entries.append(("end", args.label))


def make_executor(tmp_path: Path, timeline: Timeline, events: list[LoopEvent], limit: int = 10):
    registry = ToolRegistry([FakeTool("R", True, timeline), FakeTool("W", False, timeline)])
    context = ToolContext(WorkspaceView([tmp_path]), FileReadCache(), tmp_path)
    gate = PermissionGate("bypassPermissions")
    return ToolExecutor(
        registry, context, gate, prompter=None, emit=events.append, read_concurrency=limit
    )  # type: ignore[arg-type]


def call(name: str, label: str, **args: Any) -> ToolCallReady:
    return ToolCallReady(ToolUseBlock(label, name, {"label": label, **args}))


async def test_reads_run_concurrently_and_results_keep_call_order(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events)
    for label, delay in (("a", 0.15), ("b", 0.05), ("c", 0.1)):
        executor.submit(call("R", label, delay=delay))
    results = await executor.results()
    assert [r.tool_use_id for r in results] == ["a", "b", "c"]
    assert timeline.peak == 3
    finished = [label for kind, label in timeline.entries if kind == "end"]
    assert finished == ["b", "c", "a"]


async def test_read_concurrency_is_bounded(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events, limit=2)
    for label in "abcde":
        executor.submit(call("R", label, delay=0.02))
    await executor.results()
    assert timeline.peak == 2


async def test_a_read_is_shown_in_progress_only_once_it_holds_a_slot(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events, limit=10)
    for number in range(12):
        executor.submit(call("R", f"r{number}", hold=True))
    while timeline.running < 10:
        await asyncio.sleep(0)
    for _ in range(20):  # let anything that would wrongly start or show itself do so
        await asyncio.sleep(0)
    shown = [e for e in events if isinstance(e, ToolCallUpdate) and e.status == "in_progress"]
    assert timeline.running == 10 and len(shown) == 10
    timeline.release.set()
    await executor.results()
    # Each call in progress once, and never more shown running than run.
    updates = [e for e in events if isinstance(e, ToolCallUpdate)]
    assert [e.status for e in updates].count("in_progress") == 12
    showing = peak = 0
    for update in updates:
        showing += 1 if update.status == "in_progress" else -1
        peak = max(peak, showing)
    assert peak == 10


async def test_a_write_waits_for_earlier_calls_and_blocks_later_ones(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events)
    executor.submit(call("R", "r1", delay=0.05))
    executor.submit(call("W", "w1", delay=0.02))
    executor.submit(call("R", "r2"))
    executor.submit(call("W", "w2"))
    results = await executor.results()
    assert [r.tool_use_id for r in results] == ["r1", "w1", "r2", "w2"]
    assert timeline.entries == [
        ("start", "r1"),
        ("end", "r1"),
        ("start", "w1"),
        ("end", "w1"),
        ("start", "r2"),
        ("end", "r2"),
        ("start", "w2"),
        ("end", "w2"),
    ]


async def test_a_failing_call_does_not_cancel_its_siblings(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events)
    executor.submit(call("R", "bad", fail=True))
    executor.submit(call("R", "good", delay=0.02))
    results = await executor.results()
    assert [(r.tool_use_id, r.is_error) for r in results] == [("bad", True), ("good", False)]


async def test_progress_events_arrive_as_calls_finish(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events)
    executor.submit(call("R", "slow", delay=0.1))
    executor.submit(call("R", "fast"))
    await executor.results()
    done = [
        e.tool_call_id for e in events if isinstance(e, ToolCallUpdate) and e.status == "completed"
    ]
    assert done == ["fast", "slow"]


async def test_interrupt_gives_unfinished_calls_an_interrupted_result(tmp_path: Path) -> None:
    timeline, events = Timeline(), []
    executor = make_executor(tmp_path, timeline, events)
    executor.submit(call("R", "quick"))
    executor.submit(call("W", "stuck", delay=30))
    executor.submit(call("R", "queued"))
    await asyncio.sleep(0.05)
    results = await executor.interrupt()
    assert [(r.tool_use_id, r.is_error) for r in results] == [
        ("quick", False),
        ("stuck", True),
        ("queued", True),
    ]
    cancelled = [
        e.tool_call_id for e in events if isinstance(e, ToolCallUpdate) and e.status == "cancelled"
    ]
    assert cancelled == ["stuck", "queued"]
