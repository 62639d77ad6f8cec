"""The peers on the same fake server as `agentls run` (bench_cli.py): process start → the
first HTTP request, → the first model call, a 3-call task (read app.py, search for "port",
answer) and a 20-call one start → exit, each extra model call ((20-call − 3-call) / 17),
last model request → exit, and peak RSS (the VmHWM of the peer's largest process, as
bench_cli reads agentls's; the sum over its process tree beside it: Codex is a node wrapper
around its native binary), for Claude Code (`claude -p`) and Codex (`codex exec`).

The peers come from the npm registry into ~/.cache/agentls-bench/peers on first use (never
from the tests); without npm or the network the section prints why and moves on. Each
runs in a scratch HOME against tests/replay_server.py's server, which answers its model
calls with the task in the peer's own API (Anthropic Messages, OpenAI Responses) and its
own tool names, read from the tools the request offers. Anything else a peer sends (a quota
check, a title, a token count) gets a short answer and is listed apart. Each run checks
that the tools really ran: the next model call must carry their output.

    python bench/bench_peers.py [--quick]
"""

from __future__ import annotations

import argparse
import contextlib
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from harness import TESTS_DIR, Row, mb, proc_status_kb, timing_rows

sys.path.insert(0, TESTS_DIR)
from peers.install import CACHE, CLAUDE, CODEX, Peer, install
from peers.responses import responses_call, responses_text
from peers.server import Arrival, PeerServer, Reply
from replay_server import (
    RecordedRequest,
    ScriptedResponse,
    ToolCall,
    anthropic_text_turn,
    anthropic_tool_turn,
    compact_json,
)

SECTION = "11 peers"
PROMPT = "find the port"
ANSWER = "The port is 8000."
# What the next model call carries once the read, then the search, have run.
MARKERS = ("PORT = 8000", "port is configurable")
# Settings that keep the peers off the network (there is none to reach): no telemetry,
# update checks or error reports.
QUIET = {
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


@dataclass(frozen=True, slots=True)
class Setup:
    """How one peer runs: its command, environment and what the fake server answers."""

    name: str
    peer: Peer
    command: list[str]
    env: Callable[[str, Path], dict[str, str]]
    # The replies to a task of that many model calls (the last one answers).
    replies: Callable[[Path, int], list[Reply]]
    is_model_call: Callable[[RecordedRequest], bool]
    other: Reply


@dataclass(frozen=True, slots=True)
class Sample:
    first_request: float
    first_model_call: float
    last_model_call: float
    total: float
    # The largest sum of the VmRSS of the peer's processes (a wrapper and its native binary)
    # seen while it ran, in kB, and the largest single process's VmHWM.
    tree_peak_kb: int
    process_peak_kb: int
    arrivals: list[Arrival]


def _task(calls: int, read: Callable[[int], Reply], search: Callable[[int], Reply]) -> list[Reply]:
    """The tool-calling replies of a task of `calls` model calls: read, search, read, ..."""
    return [(read if n % 2 else search)(n) for n in range(1, calls)]


def _body(request: RecordedRequest) -> dict[str, Any]:
    return request.body if isinstance(request.body, dict) else {}


def _tool_names(request: RecordedRequest) -> set[str]:
    tools = _body(request).get("tools") or []
    return {str(t.get("name")) for t in tools if isinstance(t, dict)}


def _base_env(home: Path) -> dict[str, str]:
    return {"PATH": os.environ["PATH"], "HOME": str(home), "LANG": "C.UTF-8"}


# --- Claude Code: Anthropic Messages ----------------------------------------------------


def _claude_search(request: RecordedRequest, call_id: str) -> ScriptedResponse:
    """Grep when offered; this version's native build offers none, and searches with Bash."""
    if "Grep" in _tool_names(request):
        call = ToolCall(call_id, "Grep", {"pattern": "port", "-i": True, "output_mode": "content"})
    else:
        call = ToolCall(call_id, "Bash", {"command": "grep -rni port .", "description": "Find"})
    return anthropic_tool_turn(call)


def _claude_replies(workspace: Path, calls: int) -> list[Reply]:
    def read(n: int) -> Reply:
        call = ToolCall(f"toolu_{n}", "Read", {"file_path": str(workspace / "app.py")})
        return lambda _: anthropic_tool_turn(call)

    def search(n: int) -> Reply:
        return lambda request: _claude_search(request, f"toolu_{n}")

    return [*_task(calls, read, search), lambda _: anthropic_text_turn(ANSWER)]


def _claude_model_call(request: RecordedRequest) -> bool:
    body = _body(request)
    path = request.path.partition("?")[0]
    return path == "/v1/messages" and bool(body.get("stream")) and bool(body.get("tools"))


def _claude_other(request: RecordedRequest) -> ScriptedResponse:
    """A token count, or a short message (streamed if asked for)."""
    if "count_tokens" in request.path:
        payload: dict[str, Any] = {"input_tokens": 1000}
    elif _body(request).get("stream"):
        return anthropic_text_turn("OK")
    else:
        payload = {
            "id": "msg_other",
            "type": "message",
            "role": "assistant",
            "model": "claude-replay",
            "content": [{"type": "text", "text": "OK"}],
            "stop_reason": "end_turn",
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
    headers = (("content-type", "application/json"),)
    return ScriptedResponse(200, headers, body=compact_json(payload).encode())


def _claude_env(base_url: str, home: Path) -> dict[str, str]:
    env = _base_env(home) | QUIET
    env |= {"ANTHROPIC_BASE_URL": base_url, "ANTHROPIC_API_KEY": "sk-ant-bench"}
    if os.getuid() == 0:
        # Claude Code refuses to bypass permissions as root outside a declared sandbox.
        env["IS_SANDBOX"] = "1"
    return env


CLAUDE_SETUP = Setup(
    "Claude Code",
    CLAUDE,
    [str(CLAUDE.command), "-p", PROMPT, "--permission-mode", "bypassPermissions"],
    _claude_env,
    _claude_replies,
    _claude_model_call,
    _claude_other,
)


# --- Codex: OpenAI Responses ------------------------------------------------------------

# A model this version knows (no "fallback metadata" warning) whose tools are plain
# functions; its default model offers a JavaScript `exec` tool instead.
CODEX_MODEL = "gpt-5.5"
CODEX_CONFIG = """model = "{model}"
model_provider = "bench"
check_for_update_on_startup = false

[analytics]
enabled = false

[feedback]
enabled = false

[model_providers.bench]
name = "bench"
base_url = "{base_url}/v1"
wire_api = "responses"
env_key = "BENCH_API_KEY"
"""


def _codex_shell(command: str, call_id: str) -> Reply:
    """Run `command` with whichever shell tool the request offers."""

    def reply(request: RecordedRequest) -> ScriptedResponse:
        names = _tool_names(request)
        if "exec_command" in names:
            return responses_call(call_id, "exec_command", {"cmd": command})
        if "shell_command" in names:
            return responses_call(call_id, "shell_command", {"command": command})
        return responses_call(call_id, "shell", {"command": ["bash", "-lc", command]})

    return reply


def _codex_replies(_workspace: Path, calls: int) -> list[Reply]:
    def read(n: int) -> Reply:
        return _codex_shell("cat app.py", f"call_{n}")

    def search(n: int) -> Reply:
        return _codex_shell("rg -n -i port", f"call_{n}")

    return [*_task(calls, read, search), lambda _: responses_text(ANSWER)]


def _codex_model_call(request: RecordedRequest) -> bool:
    return request.path.endswith("/responses") and bool(_body(request).get("stream"))


def _codex_env(base_url: str, home: Path) -> dict[str, str]:
    codex_home = home / ".codex"
    codex_home.mkdir(exist_ok=True)
    config = CODEX_CONFIG.format(model=CODEX_MODEL, base_url=base_url)
    (codex_home / "config.toml").write_text(config, encoding="utf-8")
    return _base_env(home) | {"CODEX_HOME": str(codex_home), "BENCH_API_KEY": "bench"}


CODEX_SETUP = Setup(
    "Codex",
    CODEX,
    [
        str(CODEX.command),
        "exec",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",
        PROMPT,
    ],
    _codex_env,
    _codex_replies,
    _codex_model_call,
    lambda _: responses_text("OK"),
)


# --- measuring --------------------------------------------------------------------------


@contextlib.contextmanager
def _scratch() -> Iterator[tuple[Path, Path]]:
    """A (HOME, workspace) pair like harness.scratch()'s, outside /tmp: Codex will not set
    up its helper commands under a temporary folder, as it would in a real HOME."""
    CACHE.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="scratch-", dir=CACHE.parent) as tmp:
        root = Path(tmp)
        home, workspace = root / "home", root / "ws"
        home.mkdir()
        workspace.mkdir()
        (workspace / "app.py").write_text("PORT = 8000\nHOST = 'localhost'\n", encoding="utf-8")
        (workspace / "notes.md").write_text("# notes\nport is configurable\n", encoding="utf-8")
        yield home, workspace


def _once(setup: Setup, home: Path, workspace: Path, calls: int = 3) -> Sample:
    """One run of a task of `calls` model calls: spawn → first request, → first and last
    model call, → exit, and the peak RSS of the peer's process tree."""
    server = PeerServer(setup.replies(workspace, calls), setup.is_model_call, setup.other)
    server.start()
    try:
        env = setup.env(server.base_url, home)
        with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
            server.started = time.perf_counter()
            process = subprocess.Popen(
                setup.command,
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                text=True,
            )
            try:
                tree_peak, process_peak = _watch(process)
            finally:
                if process.poll() is None:
                    process.kill()
                    process.wait()
            total = time.perf_counter() - server.started
            out.seek(0)
            err.seek(0)
            stdout, stderr = out.read(), err.read()
    finally:
        server.stop()
    arrivals = server.arrivals
    problem = _check(process.returncode, stdout, server, calls)
    if problem:
        seen = "; ".join(a.describe() for a in arrivals) or "no request"
        output = " ".join((stdout + stderr).split())[-300:]
        raise RuntimeError(f"{problem} (requests: {seen}; output: {output})")
    model_calls = [a.at for a in arrivals if a.model_call]
    return Sample(
        arrivals[0].at, model_calls[0], model_calls[-1], total, tree_peak, process_peak, arrivals
    )


def _watch(process: subprocess.Popen[str], timeout: float = 180.0) -> tuple[int, int]:
    """Wait for `process`, reading its process tree's RSS every millisecond: the largest sum
    of VmRSS and the largest single VmHWM, in kB."""
    tree_peak = process_peak = 0
    deadline = time.monotonic() + timeout
    while process.poll() is None:
        if time.monotonic() > deadline:
            process.kill()
            raise subprocess.TimeoutExpired(process.args, timeout)
        statuses = [_status(pid) for pid in _tree(process.pid)]
        tree_peak = max(tree_peak, sum(s.get("VmRSS", 0) for s in statuses))
        process_peak = max([process_peak, *(s.get("VmHWM", 0) for s in statuses)])
        time.sleep(0.001)
    return tree_peak, process_peak


def _tree(pid: int) -> list[int]:
    """`pid` and its descendants (from /proc's children lists)."""
    found, queue = [], [pid]
    while queue:
        current = queue.pop()
        found.append(current)
        with contextlib.suppress(OSError, ValueError):
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as handle:
                    queue += [int(child) for child in handle.read().split()]
    return found


def _status(pid: int) -> dict[str, int]:
    """proc_status_kb, or nothing for a process that has just ended."""
    try:
        return proc_status_kb(pid)
    except OSError:
        return {}


def _check(returncode: int, stdout: str, server: PeerServer, expected: int) -> str | None:
    """Why a run does not count, or None: it must exit 0 after `expected` model calls, the
    second and third carrying the previous tool's output, and print the answer."""
    calls = server.model_calls
    if returncode != 0:
        return f"exit status {returncode}"
    if len(calls) != expected:
        return f"{len(calls)} model calls instead of {expected}"
    for call, marker in zip(calls[1:3], MARKERS, strict=True):
        if marker.encode() not in call.raw_body:
            return f"a tool did not run: no {marker!r} in the next model call"
    if ANSWER not in stdout:
        return "the answer is not in the output"
    return None


# The long task of bench_cli.py: 17 more model calls than the short one.
LONG_CALLS = 20


def _measure(setup: Setup, samples: int) -> list[Row]:
    name = setup.name
    with _scratch() as (home, workspace):
        # The first run in a fresh HOME writes the peer's config and state: shown apart.
        first = _once(setup, home, workspace)
        runs: list[Sample] = []
        longs: list[Sample] = []
        # Interleaved, so a busy spell of the machine hits both lengths alike.
        for _ in range(samples):
            runs.append(_once(setup, home, workspace))
            longs.append(_once(setup, home, workspace, LONG_CALLS))
    rows = timing_rows(
        SECTION, f"{name}: start → first HTTP request", [r.first_request for r in runs]
    )
    rows += timing_rows(
        SECTION, f"{name}: start → first model request", [r.first_model_call for r in runs]
    )
    rows += timing_rows(SECTION, f"{name}: 3-call task, start → exit", [r.total for r in runs])
    rows += timing_rows(
        SECTION, f"{name}: {LONG_CALLS}-call task, start → exit", [r.total for r in longs]
    )
    extra = LONG_CALLS - 3
    per_call = (_median([r.total for r in longs]) - _median([r.total for r in runs])) / extra
    between = (
        _median([r.last_model_call - r.first_model_call for r in longs])
        - _median([r.last_model_call - r.first_model_call for r in runs])
    ) / extra
    rows.append(
        Row(
            SECTION,
            f"{name}: each extra model call",
            per_call * 1000,
            "ms",
            f"({LONG_CALLS}-call − 3-call) / {extra}; first → last request {between * 1000:.2f} ms",
        )
    )
    rows += timing_rows(
        SECTION,
        f"{name}: last model request → exit",
        [r.total - r.last_model_call for r in runs + longs],
        "both task lengths",
    )
    rows.append(
        Row(
            SECTION,
            f"{name}: peak RSS, its largest process ({LONG_CALLS}-call task)",
            mb(_median([r.process_peak_kb for r in longs])),
            "MB",
            # RSS counts shared pages in each process, so the sum overstates the tree.
            f"sum over its process tree {mb(_median([r.tree_peak_kb for r in longs])):.1f} MB",
        )
    )
    rows.append(
        Row(
            SECTION,
            f"{name}: first run (fresh HOME): task",
            first.total * 1000,
            "ms",
            f"first model request at {first.first_model_call * 1000:.0f} ms",
        )
    )
    for n, arrival in enumerate(runs[-1].arrivals, 1):
        rows.append(Row(SECTION, f"{name}: request {n} (last run)", arrival.describe()))
    return rows


def _median(values: list[float] | list[int]) -> float:
    return float(statistics.median(values))


def run(quick: bool) -> list[Row]:
    samples = 5 if quick else 10
    setups = (CODEX_SETUP, CLAUDE_SETUP)
    why = install(tuple(s.peer for s in setups))
    if why is not None:
        return [Row(SECTION, "peers not measured", why)]
    rows: list[Row] = []
    for setup in setups:
        label = f"{setup.peer.package}@{setup.peer.version}"
        rows.append(Row(SECTION, f"{setup.name}: version", label, note=" ".join(setup.command)))
        try:
            rows += _measure(setup, samples)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as exc:
            rows.append(Row(SECTION, f"{setup.name}: not measured", str(exc)[:600]))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The peers beside `agentls run`.")
    parser.add_argument("--quick", action="store_true", help="5 samples instead of 10")
    for row in run(parser.parse_args().quick):
        value = f"{row.value:>9.1f} {row.unit}" if isinstance(row.value, float) else row.value
        print(f"{row.name:<56} {value}  {row.note}".rstrip())
