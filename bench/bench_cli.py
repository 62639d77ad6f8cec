"""`agentls run`: process start → first model request, cold (in-process, `--no-daemon`)
and warm (a thin client of the per-user daemon), and a whole 3-call task both ways; and
warm with the Anthropic SDK against the local replay server (what a real provider adds:
its client, HTTP pool and TLS set-up, per session or shared by the daemon).

The first model request is when the scripted provider (or the replay server) appends it
to its request log: the bench polls that file every millisecond from the moment it starts
the command. The warm daemon is started once before the warm samples (its own first start
is the cold cost of the daemon, printed too), and stopped at the end.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from harness import PYTHON, TESTS_DIR, Row, daemon_env, scratch, timing_rows

SECTION = "10 cli"
PACKAGE = Path(__file__).resolve().parent.parent / "server" / "agentls"
TASK = [
    {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]},
    {"tool_calls": [{"name": "Grep", "input": {"pattern": "port", "-i": True}}]},
    {"text": "The port is 8000."},
]


def _first_request(
    command: list[str], cwd: Path, env: dict[str, str], log: Path
) -> tuple[float, float]:
    """Seconds from spawn to the first request in `log`, and to the process's exit (the
    scripted provider logs its model requests; the replay server logs every request, and
    `agentls run` sends it none but its model requests)."""
    log.unlink(missing_ok=True)
    start = time.perf_counter()
    process = subprocess.Popen(
        command,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    first = None
    while first is None:
        if log.exists() and log.stat().st_size > 0:
            first = time.perf_counter() - start
        elif process.poll() is not None:
            raise RuntimeError(f"{command} exited {process.returncode} before any request")
        else:
            time.sleep(0.001)
    process.wait(timeout=60)
    return first, time.perf_counter() - start


def run(quick: bool) -> list[Row]:
    samples = 5 if quick else 15
    rows: list[Row] = []
    # As `pip install` leaves it: bytecode compiled (an editable checkout under
    # PYTHONDONTWRITEBYTECODE would otherwise compile agentls's modules at every start).
    subprocess.run([PYTHON, "-m", "compileall", "-q", str(PACKAGE)], check=True)
    with scratch() as (home, workspace):
        script = home.parent / "task.jsonl"
        script.write_text("".join(json.dumps(e) + "\n" for e in TASK), encoding="utf-8")
        log = home.parent / "requests.jsonl"
        env = daemon_env(
            home, AGENTLS_SCRIPT=str(script), AGENTLS_REQUEST_LOG=str(log), AGENTLS_DAEMON_IDLE="60"
        )
        base = [PYTHON, "-m", "agentls", "run", "--permission-mode", "acceptEdits", "find the port"]
        cold = [_first_request([*base, "--no-daemon"], workspace, env, log) for _ in range(samples)]
        # The daemon's own first start (it imports the core and the SDK once).
        daemon_start = _first_request(base, workspace, env, log)
        warm = [_first_request(base, workspace, env, log) for _ in range(samples)]
        _stop_daemon(env)
    sdk_start, sdk_warm, sdk_cpu = _anthropic_warm(samples)
    rows += timing_rows(
        SECTION, "run, in process: start → first model request", [c[0] for c in cold]
    )
    rows += timing_rows(
        SECTION, "run, warm daemon: start → first model request", [w[0] for w in warm]
    )
    rows += timing_rows(SECTION, "run, in process: 3-call task, start → exit", [c[1] for c in cold])
    rows += timing_rows(
        SECTION, "run, warm daemon: 3-call task, start → exit", [w[1] for w in warm]
    )
    rows.append(
        Row(SECTION, "run, first use: daemon start → first request", daemon_start[0] * 1000, "ms")
    )
    rows += timing_rows(SECTION, "run, warm daemon, anthropic SDK: start → first request", sdk_warm)
    rows += timing_rows(SECTION, "run, warm daemon, anthropic SDK: daemon CPU per run", sdk_cpu)
    rows.append(
        Row(SECTION, "run, anthropic SDK, daemon start → first request", sdk_start * 1000, "ms")
    )
    return rows


def _anthropic_warm(samples: int) -> tuple[float, list[float], list[float]]:
    """The daemon's first start and each warm run → first request, on the Anthropic SDK
    against the replay server (one text answer per run), and the daemon's CPU seconds for
    each whole run (less at the mercy of a loaded machine than wall-clock time)."""
    sys.path.insert(0, TESTS_DIR)
    from replay_server import ReplayServer, anthropic_text_turn

    with scratch() as (home, workspace):
        log = home.parent / "requests.jsonl"
        answers = [anthropic_text_turn("The port is 8000.") for _ in range(samples + 1)]
        with ReplayServer(answers, log_path=log) as server:
            env = daemon_env(
                home,
                AGENTLS_PROVIDER="anthropic",
                ANTHROPIC_API_KEY="test",
                ANTHROPIC_BASE_URL=server.base_url,
                NO_PROXY="127.0.0.1,localhost",
                AGENTLS_DAEMON_IDLE="60",
            )
            command = [PYTHON, "-m", "agentls", "run", "find the port"]
            start = _first_request(command, workspace, env, log)[0]
            pid = _daemon_pid(env)
            warm, cpu = [], []
            for _ in range(samples):
                before = _cpu_seconds(pid)
                warm.append(_first_request(command, workspace, env, log)[0])
                cpu.append(_cpu_seconds(pid) - before)
            _stop_daemon(env)
    return start, warm, cpu


def _cpu_seconds(pid: int) -> float:
    """User and system CPU time a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _daemon_pid(env: dict[str, str]) -> int:
    from agentls.warm import socket_path
    from agentls.warm_stop import daemon_pid

    pid = daemon_pid(socket_path(env))
    if pid is None:
        raise RuntimeError("no warm daemon after the first run")
    return pid


def _stop_daemon(env: dict[str, str]) -> None:
    """SIGTERM the warm daemon this bench started (found by its socket), by its pid."""
    with contextlib.suppress(RuntimeError):
        os.kill(_daemon_pid(env), signal.SIGTERM)


if __name__ == "__main__":
    for row in run(quick=False):
        print(f"{row.name:<55} {row.value:>8.1f} {row.unit}  {row.note}")
