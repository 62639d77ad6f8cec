"""Memory: the daemon's peak RSS over a 20-turn session, against import-only floors.

Floors are fresh interpreters that import one thing and report their own VmRSS; the
difference between a session's peak (VmHWM, read from /proc before shutdown) and the
matching floor is what the loop, the session and its history add. The SDK sessions run
the real `anthropic` / `openai` providers against the in-process ReplayServer from
`tests/replay_server.py`. Every turn is a Read call plus a final answer (two model calls).

RSS is also read at the `initialize` response (only the light half is loaded then) and
once `agent/listSessions` has been answered after `initialized` (the core has loaded; an
SDK preload may still be running); newSession is timed from there.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from harness import (
    PYTHON,
    TESTS_DIR,
    DaemonClient,
    Row,
    daemon_env,
    initialize_params,
    mb,
    proc_status_kb,
    scratch,
    summarize,
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

SECTION = "5 memory (RSS)"
ANSWER = "PORT is 8000, set in app.py."
QUICK_SKIPS = ("import pygls.lsp.server", "import openai", "agentls core + openai provider")
# The daemon's light half is agentls.lsp.server; its core (what sessions need) is
# agentls.lsp.handlers, imported after `initialized`. Session floors include the core.
CORE = "import agentls.lsp.server, agentls.lsp.handlers"
FLOORS = {
    "python (bare interpreter)": "pass",
    "import pygls.lsp.server": "import pygls.lsp.server",
    "import agentls.lsp.server": "import agentls.lsp.server",
    "import anthropic": "import anthropic",
    "import openai": "import openai",
    "agentls core (lsp.handlers)": CORE,
    "agentls core + anthropic provider": f"{CORE}, agentls.providers.anthropic",
    "agentls core + openai provider": f"{CORE}, agentls.providers.openai_compat",
}
RSS_PROBE = (
    "{code}\n"
    "for line in open('/proc/self/status'):\n"
    "    if line.startswith('VmRSS:'):\n"
    "        print(line.split()[1])\n"
)


def floor_kb(code: str, env: dict[str, str]) -> int:
    """VmRSS (kB) of a fresh interpreter right after running `code`."""
    out = subprocess.run(
        [PYTHON, "-c", RSS_PROBE.format(code=code)],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    return int(out.split()[-1])


def scripted_turns(turns: int) -> list[dict[str, Any]]:
    """Scripted entries for `turns` turns of Read + answer."""
    read = {"name": "Read", "input": {"file_path": "app.py"}}
    entries: list[dict[str, Any]] = []
    for _ in range(turns):
        entries += [{"text": "Reading it.", "tool_calls": [read]}, {"text": ANSWER}]
    return entries


def replay_turns(provider: str, turns: int) -> list[ScriptedResponse]:
    """Wire-exact responses for `turns` turns of Read + answer."""
    tool, text = (
        (anthropic_tool_turn, anthropic_text_turn)
        if provider == "anthropic"
        else (openai_tool_turn, openai_text_turn)
    )
    responses = []
    for n in range(turns):
        call = ToolCall(f"toolu_{n:04d}", "Read", {"file_path": "app.py"})
        responses += [tool(call, text="Reading it."), text(ANSWER)]
    return responses


def provider_env(provider: str, server: ReplayServer) -> dict[str, str]:
    """Environment variables that point a daemon's provider at the replay server."""
    common = {"AGENTLS_PROVIDER": provider, "NO_PROXY": "127.0.0.1,localhost"}
    if provider == "anthropic":
        return {**common, "ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": server.base_url}
    return {**common, "OPENAI_API_KEY": "test", "OPENAI_BASE_URL": server.openai_base_url}


async def session_memory(
    env_extra: dict[str, str], session_params: dict[str, Any], turns: int
) -> dict[str, float]:
    """Run `turns` turns in a fresh daemon; RSS (kB) and timings (s) along the way."""
    with scratch() as (home, workspace):
        client = await DaemonClient.start(daemon_env(home, **env_extra), workspace)
        try:
            # The light half answers initialize; the core loads on `initialized`, and
            # agent/listSessions waits for it (the SDK preload may still be running).
            await client.request("initialize", initialize_params(workspace))
            after_init = proc_status_kb(client.pid)["VmRSS"]
            client.notify("initialized", {})
            await client.request("agent/listSessions", {})
            core_ready = proc_status_kb(client.pid)["VmRSS"]
            start = time.perf_counter()
            session = await client.new_session(workspace, **session_params)
            ready = time.perf_counter() - start
            per_turn = await _run_turns(client, session, turns)
            status = proc_status_kb(client.pid)
        finally:
            await client.close()
    return {
        "init_rss": after_init,
        "core_rss": core_ready,
        "rss": status["VmRSS"],
        "hwm": status["VmHWM"],
        "new_session": ready,
        "first_turn": per_turn[0],
        "turn": summarize(per_turn[1:]).median,
    }


async def _run_turns(client: DaemonClient, session: str, turns: int) -> list[float]:
    seconds = []
    for n in range(turns):
        start = time.perf_counter()
        await client.submit(session, f"Where is the port set? ({n})")
        _stamp, done = await client.until_turn_completed()
        if done["stopReason"] != "end_turn":
            raise RuntimeError(f"turn {n} ended {done['stopReason']}: {done.get('error')}")
        seconds.append(time.perf_counter() - start)
    return seconds


async def scripted_session(turns: int) -> dict[str, float]:
    params = {"provider": "scripted", "script": scripted_turns(turns)}
    return await session_memory({}, params, turns)


async def sdk_session(provider: str, turns: int) -> dict[str, float]:
    with ReplayServer(replay_turns(provider, turns)) as server:
        result = await session_memory(provider_env(provider, server), {}, turns)
        if server.pending:
            raise RuntimeError(f"{server.pending} replay responses were never requested")
        return result


def _session_rows(label: str, result: dict[str, float], floor: float, turns: int) -> list[Row]:
    peak = mb(result["hwm"])
    verdict = f"target ≤ 100 MB {'met' if peak <= 100 else 'MISSED'}"
    waits = "" if label == "scripted" else " (waits for the SDK preload)"
    timing = (
        f"newSession {result['new_session'] * 1000:.0f} ms{waits}, "
        f"first turn {result['first_turn'] * 1000:.1f} ms"
    )
    return [
        Row(SECTION, f"{label}: RSS after initialize", mb(result["init_rss"]), "MB", "light half"),
        Row(SECTION, f"{label}: RSS once the core answers", mb(result["core_rss"]), "MB"),
        Row(SECTION, f"{label}: peak RSS, {turns} turns", peak, "MB", verdict),
        Row(SECTION, f"{label}: peak − its import floor", mb(result["hwm"] - floor), "MB"),
        Row(SECTION, f"{label}: per turn (Read + answer)", result["turn"] * 1000, "ms", timing),
    ]


def run(quick: bool) -> list[Row]:
    """Import floors, then one session per provider."""
    turns = 20
    rows: list[Row] = []
    with scratch() as (home, _workspace):
        env = daemon_env(home)
        wanted = {k: v for k, v in FLOORS.items() if not (quick and k in QUICK_SKIPS)}
        floors = {label: float(floor_kb(code, env)) for label, code in wanted.items()}
    for label, kb in floors.items():
        rows.append(Row(SECTION, f"floor: {label}", mb(kb), "MB"))
    base = floors["agentls core (lsp.handlers)"]
    for sdk in ("anthropic",) if quick else ("anthropic", "openai"):
        added = floors[f"import {sdk}"] - floors["python (bare interpreter)"]
        rows.append(Row(SECTION, f"{sdk} SDK adds to a bare interpreter", mb(added), "MB"))
    sessions: dict[str, tuple[Callable[[], Any], float]] = {
        "scripted": (lambda: scripted_session(turns), base),
        "anthropic (replay)": (
            lambda: sdk_session("anthropic", turns),
            floors["agentls core + anthropic provider"],
        ),
    }
    if not quick:
        sessions["openai (replay)"] = (
            lambda: sdk_session("openai", turns),
            floors["agentls core + openai provider"],
        )
    for label, (make, floor) in sessions.items():
        rows += _session_rows(label, asyncio.run(make()), floor, turns)
    return rows
