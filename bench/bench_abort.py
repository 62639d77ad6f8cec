"""9 abort: from agent/abort to turn_completed while Bash runs a command with children.

Three commands: a plain `sleep`, one that backgrounds children (`sleep 100 & sleep 100 &
wait`), and one whose child ignores SIGTERM. Each run starts a turn whose only tool call
is the command, aborts it once the command is running, and times abort → turn_completed.
Also checks that no process of the command's group outlives the turn.
"""

from __future__ import annotations

import asyncio
import os
import tempfile
import time
from pathlib import Path
from typing import Any

from agentls.session.manager import SessionManager
from agentls.wire import json_sink
from harness import Row, summarize

SECTION = "9 abort while Bash runs"
COMMANDS = {
    "sleep": "sleep 100",
    "background children": "sleep 100 & sleep 100 & wait",
    "child ignoring SIGTERM": "bash -c 'trap \"\" TERM; sleep 100' & wait",
}


async def _one(manager: SessionManager, root: Path, command: str) -> tuple[float, bool]:
    events: list[dict[str, Any]] = []
    running = asyncio.Event()
    done = asyncio.Event()

    def sink(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "tool_call_update" and event["status"] == "in_progress":
            running.set()
        if event["type"] == "turn_completed":
            done.set()

    manager._sink = json_sink(sink)
    call = {"id": "b1", "name": "Bash", "input": {"command": command}}
    script = [{"tool_calls": [call]}]
    overrides = {"provider": "scripted", "script": script, "permissionMode": "bypassPermissions"}
    session = await manager.create(root, overrides)
    session.submit("run it")
    await asyncio.wait_for(running.wait(), 10)
    await asyncio.sleep(0.2)
    start = time.perf_counter()
    session.abort()
    await asyncio.wait_for(done.wait(), 30)
    elapsed = time.perf_counter() - start
    await manager.close(session.id)
    return elapsed, _leftovers()


def _leftovers() -> bool:
    """Whether a `sleep 100` of ours is still alive (not a zombie)."""
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            state = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if cmdline.startswith(b"sleep\x00100") and state not in ("Z", "X"):
            return True
    return False


async def _measure(runs: int) -> list[Row]:
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-abort-") as tmp:
        root = Path(tmp)
        manager = SessionManager(json_sink(lambda _e: None), env={"AGENTLS_HOME": str(root / "h")})
        for name, command in COMMANDS.items():
            samples, leaks = [], 0
            for _ in range(runs):
                elapsed, leaked = await _one(manager, root, command)
                samples.append(elapsed)
                leaks += leaked
            ordered = sorted(samples)
            p99 = ordered[min(len(ordered) - 1, round(0.99 * len(ordered) + 0.5) - 1)]
            s = summarize(samples)
            note = f"p99 {p99 * 1000:.0f} ms, n={s.n}, processes left behind: {leaks}"
            rows.append(
                Row(SECTION, f"abort → turn_completed, {name}", s.median * 1000, "ms", note)
            )
    return rows


def run(quick: bool) -> list[Row]:
    return asyncio.run(_measure(5 if quick else 20))
