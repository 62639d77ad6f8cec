"""`agentls run`: process start → first model request, cold (in-process, `--no-daemon`)
and warm (a thin client of the per-user daemon), a whole 3-call task both ways, what each
extra model call costs, how long the process stays after the last one, and memory.

The model requests are seen when the scripted provider appends them to its request log:
the bench polls that file every millisecond from the moment it starts the command. Each
extra model call is (20-call task − 3-call task) / 17, from the medians. "Last model
request → exit" is from the moment the last request is in the log (the scripted model
answers at once) to the process's exit. Peak RSS is the child's own ru_maxrss (wait4);
"each extra model call, CPU" is the same difference in the CPU time (/proc schedstat) the
working process (the CLI in process, the daemon when warm) used between the first and the
last model request: waits on a loaded machine's run queue do not count there. When warm,
the daemon's CPU over each whole run (spawn to exit) gives a steadier row beside it. The warm
daemon's RSS is read from /proc when it is idle (no connection), right after its
start and again after all the runs. The warm daemon is started once before the warm
samples (its own first start is the cold cost of the daemon, printed too), and stopped at
the end. All of it is measured with the scripted model, then again with the real Anthropic
SDK and the real OpenAI SDK (Chat Completions) against tests/replay_server.py in this
process (the requests counted there), which answers the same task.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import (
    PYTHON,
    TESTS_DIR,
    Row,
    daemon_env,
    mb,
    proc_status_kb,
    scratch,
    timing_rows,
)

sys.path.insert(0, TESTS_DIR)

from replay_server import (  # type: ignore[import-not-found, unused-ignore]
    ReplayServer,
    ScriptedResponse,
    ToolCall,
    anthropic_text_turn,
    anthropic_tool_turn,
    openai_text_turn,
    openai_tool_turn,
)

SECTION = "10 cli"
PACKAGE = Path(__file__).resolve().parent.parent / "server" / "agentls"
READ = {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]}
GREP = {"tool_calls": [{"name": "Grep", "input": {"pattern": "port", "-i": True}}]}
ANSWER = {"text": "The port is 8000."}
TASK = [READ, GREP, ANSWER]
# The same task with 17 more model calls (each a Read or a Grep).
LONG_TASK = [READ, GREP] * 9 + [READ, ANSWER]
EXTRA_CALLS = len(LONG_TASK) - len(TASK)


@dataclass(frozen=True, slots=True)
class Sample:
    """One `agentls run`: seconds from spawn, and the process's peak RSS (kB)."""

    first: float
    last: float
    total: float
    peak_kb: int
    # CPU seconds (user + system) the process doing the work (the CLI in process, the
    # daemon when warm) had used when the first and the last model request arrived.
    cpu_first: float = 0.0
    cpu_last: float = 0.0
    # The daemon's CPU seconds from before the client's spawn to after its exit (warm runs
    # only): no polling lag at either end, the whole run's fixed costs cancel between lengths.
    cpu_run: float = 0.0


class Fake:
    """A model at zero latency that `agentls run` talks to, and how many requests it saw."""

    label = "scripted"

    def __init__(self, home: Path) -> None:
        self.home = home
        self.log = home.parent / "requests.jsonl"

    def prepare(self, task: list[dict[str, Any]]) -> dict[str, str]:
        """Ready for one run of `task`: the run's environment."""
        script = self.home.parent / f"task{len(task)}.jsonl"
        script.write_text("".join(json.dumps(e) + "\n" for e in task), encoding="utf-8")
        self.log.unlink(missing_ok=True)
        return self.env(task)

    def env(self, task: list[dict[str, Any]]) -> dict[str, str]:
        """The environment of a run of `task`."""
        return daemon_env(
            self.home,
            AGENTLS_SCRIPT=str(self.home.parent / f"task{len(task)}.jsonl"),
            AGENTLS_REQUEST_LOG=str(self.log),
            AGENTLS_DAEMON_IDLE="60",
        )

    def requests(self) -> int:
        try:
            with self.log.open("rb") as handle:
                return handle.read().count(b"\n")
        except FileNotFoundError:
            return 0


class SdkFake(Fake):
    """A real provider SDK (`anthropic`, or `openai`'s Chat Completions) against
    tests/replay_server.py, answering the same task."""

    def __init__(self, home: Path, server: ReplayServer, provider: str) -> None:
        super().__init__(home)
        self.server = server
        self.provider = provider
        self.label = f"{provider} (replay)"
        self.seen = 0

    def prepare(self, task: list[dict[str, Any]]) -> dict[str, str]:
        self.seen = len(self.server.requests)
        for n, entry in enumerate(task):
            self.server.enqueue(_sdk_reply(self.provider, entry, n))
        return self.env(task)

    def env(self, task: list[dict[str, Any]]) -> dict[str, str]:
        if self.provider == "anthropic":
            sdk = {"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": self.server.base_url}
        else:
            sdk = {"OPENAI_API_KEY": "test", "OPENAI_BASE_URL": self.server.openai_base_url}
        return daemon_env(
            self.home,
            AGENTLS_PROVIDER=self.provider,
            NO_PROXY="127.0.0.1,localhost",
            AGENTLS_DAEMON_IDLE="60",
            **sdk,
        )

    def requests(self) -> int:
        return len(self.server.requests) - self.seen


def _sdk_reply(provider: str, entry: dict[str, Any], n: int) -> ScriptedResponse:
    text_turn, tool_turn = (
        (anthropic_text_turn, anthropic_tool_turn)
        if provider == "anthropic"
        else (openai_text_turn, openai_tool_turn)
    )
    calls = entry.get("tool_calls")
    if not calls:
        return text_turn(str(entry["text"]))
    return tool_turn(ToolCall(f"toolu_{n:04d}", calls[0]["name"], calls[0]["input"]))


def _cpu_seconds(pid: int) -> float:
    """CPU seconds of a live process's threads, in nanoseconds from /proc's schedstat (the
    clock ticks of /proc/<pid>/stat are 10 ms, as much as a model call costs)."""
    total = 0
    for task in os.listdir(f"/proc/{pid}/task"):
        with (
            contextlib.suppress(OSError),
            open(f"/proc/{pid}/task/{task}/schedstat", encoding="ascii") as handle,
        ):
            total += int(handle.read().split()[0])
    return total / 1e9


def _sample(
    command: list[str],
    cwd: Path,
    fake: Fake,
    task: list[dict[str, Any]],
    cpu_pid: int | None = None,
) -> Sample:
    """Run `command` once on `task`; times of its first and last model request, and of its
    exit, its peak RSS, and the CPU used by then by `cpu_pid` (default: the command).

    The peak is the process's VmHWM, read as it runs (every millisecond, until it exits):
    wait4's ru_maxrss starts from the RSS of the process that forked it, here the bench
    with its replay server, which hid a small client's own peak."""
    env = fake.prepare(task)
    cpu_before = _cpu_or_zero(cpu_pid) if cpu_pid else 0.0
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = last = None
    cpu_first = cpu_last = 0.0
    peak_kb = 0
    while True:
        ended, status, _usage = os.wait4(process.pid, os.WNOHANG)
        now = time.perf_counter() - start
        if not ended:
            peak_kb = max(peak_kb, proc_status_kb(process.pid).get("VmHWM", 0))
        seen = fake.requests()
        if seen and first is None:
            first = now
            cpu_first = _cpu_or_zero(cpu_pid or process.pid)
        if seen >= len(task) and last is None:
            last = now
            cpu_last = _cpu_or_zero(cpu_pid or process.pid)
        if ended:
            break
        time.sleep(0.001)
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0 or first is None or last is None:
        raise RuntimeError(f"{command} exited {process.returncode} after {seen} requests")
    cpu_run = _cpu_or_zero(cpu_pid) - cpu_before if cpu_pid else 0.0
    return Sample(first, last, now, peak_kb, cpu_first, cpu_last, cpu_run)


def _cpu_or_zero(pid: int) -> float:
    try:
        return _cpu_seconds(pid)
    except (OSError, ValueError, IndexError):
        return 0.0


def _daemon_pid(socket: Path) -> int | None:
    """The pid of the daemon serving `socket` (its command line names it)."""
    wanted = str(socket).encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as handle:
                    if wanted in handle.read().split(b"\0"):
                        return int(entry)
            except OSError:
                continue
    return None


Runs = dict[str, list[Sample]]
BASE = [PYTHON, "-m", "agentls", "run", "--permission-mode", "acceptEdits", "find the port"]
TASKS = {"short": TASK, "long": LONG_TASK}


def measure(fake: Fake, workspace: Path, samples: int) -> list[Row]:
    """Every row for one fake model: in process, then through a warm daemon."""
    # Interleaved, so a busy spell of the machine hits both lengths alike.
    cold: Runs = {"short": [], "long": []}
    for _ in range(samples):
        for name, task in TASKS.items():
            cold[name].append(_sample([*BASE, "--no-daemon"], workspace, fake, task))
    # The daemon's own first start (it imports the core and the SDK once). The scripted
    # task is part of the daemon's environment, so there each length has its own daemon.
    daemon_start = _sample(BASE, workspace, fake, TASK)
    _sample(BASE, workspace, fake, LONG_TASK)
    daemons = {name: _daemon_pid(_socket(fake.env(task))) for name, task in TASKS.items()}
    fresh = {name: proc_status_kb(pid) for name, pid in daemons.items() if pid}
    warm: Runs = {"short": [], "long": []}
    for _ in range(samples):
        for name, task in TASKS.items():
            warm[name].append(_sample(BASE, workspace, fake, task, daemons.get(name)))
    idle = {name: proc_status_kb(pid) for name, pid in daemons.items() if pid}
    for pid in set(daemons.values()):
        if pid:
            os.kill(pid, signal.SIGTERM)
    section = f"{SECTION}, {fake.label}"
    return [
        *_timing(section, cold, warm),
        *_per_call_rows(section, cold, warm),
        Row(
            section, "run, first use: daemon start → first request", daemon_start.first * 1000, "ms"
        ),
        *_memory_rows(section, cold, warm, fresh, idle),
    ]


def run(quick: bool) -> list[Row]:
    samples = 5 if quick else 15
    # As `pip install` leaves it: bytecode compiled (an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise compile agentls's modules at every start).
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(PACKAGE)], check=True)
    rows: list[Row] = []
    with scratch() as (home, workspace):
        rows += measure(Fake(home), workspace, samples)
    for provider in ("anthropic", "openai"):
        with scratch() as (home, workspace), ReplayServer() as server:
            rows += measure(SdkFake(home, server, provider), workspace, samples)
    return rows


def _timing(section: str, cold: Runs, warm: Runs) -> list[Row]:
    rows: list[Row] = []
    for label, runs in (("in process", cold), ("warm daemon", warm)):
        short, long = runs["short"], runs["long"]
        rows += [
            *timing_rows(section, f"{label}: start → first model request", _of(short, "first")),
            *timing_rows(section, f"{label}: 3-call task, start → exit", _of(short, "total")),
            *timing_rows(section, f"{label}: 20-call task, start → exit", _of(long, "total")),
            *timing_rows(
                section,
                f"{label}: last model request → exit",
                [s.total - s.last for s in short + long],
                "both task lengths",
            ),
        ]
    return rows


def _median(values: list[float]) -> float:
    return float(statistics.median(values))


def _of(samples: list[Sample], field: str) -> list[float]:
    return [float(getattr(s, field)) for s in samples]


def _per_call_rows(section: str, cold: Runs, warm: Runs) -> list[Row]:
    rows: list[Row] = []
    costs = {}
    for label, runs in (("in process", cold), ("warm daemon", warm)):
        long, short = runs["long"], runs["short"]
        per_call = (_median(_of(long, "total")) - _median(_of(short, "total"))) / EXTRA_CALLS
        # The same difference between the first and the last request alone (no start, no exit).
        spans = [[s.last - s.first for s in runs[name]] for name in ("long", "short")]
        between = (_median(spans[0]) - _median(spans[1])) / EXTRA_CALLS
        costs[label] = per_call
        note = f"(20-call − 3-call) / {EXTRA_CALLS}; first → last request {between * 1000:.2f} ms"
        rows.append(Row(section, f"{label}: each extra model call", per_call * 1000, "ms", note))
        # CPU, from the first to the last model request of the process doing the work (the
        # daemon when warm): what a loaded machine's waits do not inflate.
        cpu = [[s.cpu_last - s.cpu_first for s in runs[name]] for name in ("long", "short")]
        cpu_per_call = (_median(cpu[0]) - _median(cpu[1])) / EXTRA_CALLS
        rows.append(
            Row(
                section,
                f"{label}: each extra model call, CPU",
                cpu_per_call * 1000,
                "ms",
                "first → last request, the threads' schedstat",
            )
        )
    # The daemon's CPU over whole runs: steadier than first → last, which the bench reads
    # when its 1 ms poll sees each request.
    runs = [[s.cpu_run for s in warm[name]] for name in ("long", "short")]
    rows.append(
        Row(
            section,
            "warm daemon: each extra model call, CPU of whole runs",
            (_median(runs[0]) - _median(runs[1])) / EXTRA_CALLS * 1000,
            "ms",
            "the daemon's schedstat from spawn to exit, (20-call − 3-call) / 17",
        )
    )
    ratio = costs["warm daemon"] / costs["in process"] if costs["in process"] > 0 else 0.0
    rows.append(Row(section, "each extra model call: warm / in process", ratio, "x"))
    return rows


def _memory_rows(
    section: str,
    cold: Runs,
    warm: Runs,
    fresh: dict[str, dict[str, int]],
    idle: dict[str, dict[str, int]],
) -> list[Row]:
    rows = [
        Row(
            section,
            "in process: peak RSS (20-call task)",
            mb(_median(_of(cold["long"], "peak_kb"))),
            "MB",
        ),
        Row(
            section,
            "warm client: peak RSS (20-call task)",
            mb(_median(_of(warm["long"], "peak_kb"))),
            "MB",
        ),
    ]
    # The short task's daemon (with the scripted model the long one has its own).
    if "short" in fresh and "short" in idle:
        rows += [
            Row(
                section,
                "warm daemon: RSS idle after its first run",
                mb(fresh["short"]["VmRSS"]),
                "MB",
            ),
            Row(
                section,
                f"warm daemon: RSS idle after {len(warm['short'])} more runs",
                mb(idle["short"]["VmRSS"]),
                "MB",
                f"peak {mb(idle['short']['VmHWM']):.1f} MB",
            ),
        ]
    return rows


def _socket(env: dict[str, str]) -> Path:
    from agentls.warm import socket_path

    return Path(socket_path(env))


if __name__ == "__main__":
    for row in run(quick=False):
        print(f"{row.name:<55} {row.value:>8.1f} {row.unit}  {row.note}")
