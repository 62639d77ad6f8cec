"""20 interactive shells: what a pseudo-terminal costs a background shell, and a WriteStdin
round trip.

Spawning `sleep 60` until it runs, on a pipe (as a foreground Bash call is) and on a
terminal (the helper that claims it, then the wait until it has), alternating; starting a
background shell through BashTool (spawn → id); a WriteStdin round trip to a Python REPL
(`1 + 1` → `2` and the next prompt, with `wait_for`); and the bytes WriteStdin adds to
every request.
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from pathlib import Path

from agentls.tools.background import BackgroundShells
from agentls.tools.base import ToolContext
from agentls.tools.bash import BashInput, BashTool
from agentls.tools.process import kill_process_group, spawn_in_terminal, spawn_shell
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import default_tools, tool_spec
from agentls.tools.write_stdin import WriteStdinInput, WriteStdinTool
from agentls.workspace.view import WorkspaceView
from harness import Row, timing_rows

SECTION = "20 interactive shells"
SLEEP = ["/bin/bash", "-c", "sleep 60"]


async def _spawns(runs: int, root: Path) -> tuple[list[float], list[float]]:
    """Seconds from spawn to a running command, on a pipe and on a terminal, interleaved."""
    pipe: list[float] = []
    terminal: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        async with spawn_shell(SLEEP, root) as (process, _reader):
            pipe.append(time.perf_counter() - start)
            await kill_process_group(process.pid)
            await process.wait()
        start = time.perf_counter()
        async with spawn_in_terminal(SLEEP, root) as (process, _reader, _input):
            terminal.append(time.perf_counter() - start)
            await kill_process_group(process.pid)
            await process.wait()
    return pipe, terminal


async def _shell_and_repl(runs: int, root: Path) -> tuple[list[float], list[float]]:
    """Seconds per background start (BashTool → id) and per REPL round trip."""
    shells = BackgroundShells()
    ctx = ToolContext(WorkspaceView([root]), FileReadCache(), root, shells=shells)
    bash, write = BashTool(), WriteStdinTool()
    starts: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        await bash.run(BashInput(command="sleep 60", run_in_background=True), ctx)
        starts.append(time.perf_counter() - start)
    await bash.run(BashInput(command="python3 -i -q", run_in_background=True), ctx)
    repl = f"shell_{runs + 1}"
    await write.run(WriteStdinInput(shell_id=repl, input="", wait_ms=30_000, wait_for=">>> $"), ctx)
    trips: list[float] = []
    for _ in range(runs):
        start = time.perf_counter()
        ask = WriteStdinInput(shell_id=repl, input="1 + 1\n", wait_ms=30_000, wait_for="2\n>>> $")
        await write.run(ask, ctx)
        trips.append(time.perf_counter() - start)
    await shells.kill_all()
    return starts, trips


def _spec_bytes() -> tuple[int, int]:
    """The built-in tool specs as a request carries them, and WriteStdin's share."""
    specs = [tool_spec(t) for t in default_tools()]
    wire = [
        {"name": s.name, "description": s.description, "input_schema": s.input_schema}
        for s in specs
    ]
    ours = [w for w in wire if w["name"] == "WriteStdin"]
    return len(json.dumps(wire).encode()), len(json.dumps(ours).encode())


def run(quick: bool) -> list[Row]:
    runs = 5 if quick else 20
    with tempfile.TemporaryDirectory(prefix="agentls-bench-shells-") as tmp:
        root = Path(tmp)
        pipe, terminal = asyncio.run(_spawns(runs, root))
        starts, trips = asyncio.run(_shell_and_repl(runs, root))
    total, ours = _spec_bytes()
    pipe_median = sorted(pipe)[len(pipe) // 2]
    terminal_median = sorted(terminal)[len(terminal) // 2]
    return [
        *timing_rows(SECTION, "spawn → running, on a pipe", pipe),
        *timing_rows(
            SECTION,
            "spawn → running, on a terminal (claimed)",
            terminal,
            f"{terminal_median / pipe_median:.1f}× the pipe",
        ),
        *timing_rows(SECTION, "Bash run_in_background → shell id", starts),
        *timing_rows(SECTION, "WriteStdin `1 + 1` to python3 -i → `2`", trips),
        Row(SECTION, "built-in tool specs", float(total), "bytes"),
        Row(
            SECTION,
            "of which WriteStdin",
            float(ours),
            "bytes",
            f"{ours / total:.1%} of the specs, on every request",
        ),
    ]
