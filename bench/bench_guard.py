"""14 the process watchdog: what guarding a command's group costs, and how soon a killed
daemon's commands go.

A Bash call (`true`, in process through BashTool) with its group registered with the
watchdog and without, alternating; a registration alone; starting the watchdog (once per
daemon, at its first command); and SIGKILL of a process that guarded a `sleep` → the
sleep gone. Then the sandbox, on by default where bubblewrap works: a Bash call in its
workspace-write box against one unconfined, its probe (once per daemon), and the bytes its
note and parameters add to Bash's spec (so to every request).
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import agentls.tools.process as process_module
from agentls.sandbox import Sandbox, SandboxSettings, bwrap_command, prepare_sandbox
from agentls.tools.base import ToolContext
from agentls.tools.bash import BashInput, BashTool
from agentls.tools.process_guard import ProcessGuard, guard_group
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import tool_spec
from agentls.workspace.view import WorkspaceView
from harness import Row, summarize, timing_rows

SECTION = "14 the process watchdog"
# A daemon in miniature: it guards a sleep's group, says so, and waits to be killed.
GUARDED_SLEEP = """
import subprocess, sys, time
from agentls.tools.process_guard import guard_group
sleep = subprocess.Popen(["sleep", "60"], start_new_session=True)
guard_group(sleep.pid)
print(sleep.pid, flush=True)
time.sleep(60)
"""


async def _bash_calls(runs: int) -> tuple[list[float], list[float]]:
    """Seconds per `true` call, guarded and not, interleaved so load hits both alike."""
    guarded: list[float] = []
    bare: list[float] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-guard-") as tmp:
        root = Path(tmp)
        ctx = ToolContext(WorkspaceView([root]), FileReadCache(), root, progress=lambda _t: None)
        args = BashInput(command="true")
        tool = BashTool()
        await tool.run(args, ctx)  # the watchdog starts here, outside the samples
        for _ in range(runs):
            for guard, samples in ((guard_group, guarded), (lambda _pgid: None, bare)):
                process_module.guard_group = guard
                start = time.perf_counter()
                await tool.run(args, ctx)
                samples.append(time.perf_counter() - start)
        process_module.guard_group = guard_group
    return guarded, bare


def _registration_and_start(runs: int) -> tuple[list[float], list[float]]:
    """Seconds per registration with a running watchdog; seconds to start one."""
    starts, registrations = [], []
    for _ in range(max(3, runs // 20)):
        guard = ProcessGuard()
        # A real group to register (the watchdog ends it when its pipe closes below).
        sleep = subprocess.Popen(["sleep", "60"], start_new_session=True)
        start = time.perf_counter()
        guard.guard(sleep.pid)
        starts.append(time.perf_counter() - start)
        for _ in range(runs):
            start = time.perf_counter()
            guard.guard(sleep.pid)
            registrations.append(time.perf_counter() - start)
        guard.reset_after_fork()  # closes the pipe: this watchdog kills the sleep and ends
        sleep.wait()
    return registrations, starts


def _gone(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return True
    return state in ("Z", "X")


def _kill_to_gone() -> float:
    """Seconds from SIGKILL of a guarding process to its guarded sleep's end."""
    daemon = subprocess.Popen(
        [sys.executable, "-c", GUARDED_SLEEP], stdout=subprocess.PIPE, text=True
    )
    assert daemon.stdout is not None
    sleep_pid = int(daemon.stdout.readline())
    time.sleep(0.3)  # the watchdog is up and has read the registration
    start = time.perf_counter()
    daemon.send_signal(signal.SIGKILL)
    daemon.wait()
    while not _gone(sleep_pid) and time.perf_counter() - start < 10:
        time.sleep(0.002)
    return time.perf_counter() - start


async def _boxed_calls(runs: int, sandbox: Sandbox) -> tuple[list[float], list[float]]:
    """Seconds per `true` call in the box and unconfined, interleaved."""
    boxed: list[float] = []
    bare: list[float] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-sandbox-") as tmp:
        root = Path(tmp)
        ctx = ToolContext(WorkspaceView([root]), FileReadCache(), root, progress=lambda _t: None)
        args = BashInput(command="true")
        await BashTool().run(args, ctx)
        for _ in range(runs):
            for tool, samples in ((BashTool(sandbox), boxed), (BashTool(), bare)):
                start = time.perf_counter()
                await tool.run(args, ctx)
                samples.append(time.perf_counter() - start)
    return boxed, bare


def _probes(runs: int, bwrap: str) -> list[float]:
    """Seconds per `bwrap … true`, the probe a daemon runs once."""
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(bwrap_command(bwrap, False, ["true"], Path("/"), []), check=True)
        samples.append(time.perf_counter() - start)
    return samples


def _sandbox_rows(quick: bool) -> list[Row]:
    sandbox = prepare_sandbox(SandboxSettings())
    if not sandbox.confines or sandbox.bwrap is None:
        return [Row(SECTION, "the sandbox", "n/a", "", sandbox.note or "no box")]
    boxed_spec, plain_spec = _spec_bytes(BashTool(sandbox)), _spec_bytes(BashTool())
    boxed, bare = asyncio.run(_boxed_calls(20 if quick else 100, sandbox))
    cost = summarize(boxed).median - summarize(bare).median
    return [
        *timing_rows(SECTION, "Bash `true` in the workspace-write box", boxed),
        *timing_rows(SECTION, "Bash `true` unconfined", bare),
        Row(SECTION, "the box's cost per command (median difference)", cost * 1000, "ms"),
        *timing_rows(SECTION, "the bwrap probe (once per daemon)", _probes(5, sandbox.bwrap)),
        Row(
            SECTION,
            "Bash's spec in a boxed session",
            float(boxed_spec),
            "bytes",
            f"+{boxed_spec - plain_spec:,} bytes (the note, outside_sandbox, justification) "
            "on every request",
        ),
    ]


def _spec_bytes(tool: BashTool) -> int:
    spec = tool_spec(tool)
    body = {"name": spec.name, "description": spec.description, "schema": spec.input_schema}
    return len(json.dumps(body, separators=(",", ":")))


def run(quick: bool) -> list[Row]:
    runs = 40 if quick else 200
    guarded, bare = asyncio.run(_bash_calls(runs))
    registrations, starts = _registration_and_start(runs)
    kills = [_kill_to_gone() for _ in range(3 if quick else 10)]
    cost = summarize(guarded).median - summarize(bare).median
    return [
        *timing_rows(SECTION, "Bash `true`, group guarded", guarded),
        *timing_rows(SECTION, "Bash `true`, not guarded", bare),
        Row(SECTION, "median difference", cost * 1000, "ms", "noise dominates"),
        Row(
            SECTION,
            "one registration (a pipe write)",
            summarize(registrations).median * 1e6,
            "µs",
            f"p90 {summarize(registrations).p90 * 1e6:.1f} µs, n={len(registrations)}",
        ),
        *timing_rows(SECTION, "starting the watchdog (first command only)", starts),
        *timing_rows(SECTION, "SIGKILL of the daemon → its sleep gone", kills),
        *_sandbox_rows(quick),
    ]
