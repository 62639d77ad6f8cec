"""`agentls acp` over stdio: spawn → initialize and → session/new answered, prompt → first
agent_message_chunk, updates per second with the daemon's CPU per update, and session/delete
of a saved session and of a live one under its running prompt.

The client is the ACP SDK's own client side (it validates every update with pydantic, so
the wall-clock rate is bounded by it too); the daemon's CPU seconds per update, read from
/proc, is the adapter's own cost, comparable with section 4's daemon CPU per event.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import time
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp import schema as acp

from bench_resume import SCRIPT, write_transcript
from bench_stdio import ANSWER, streamed_entry
from harness import Row, daemon_env, scratch, timing_rows

SECTION = "13 ACP over stdio (agentls acp)"


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat", encoding="ascii") as handle:
        fields = handle.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class CountingClient:
    """Counts updates; notes when the first agent message chunk of a prompt arrives."""

    def __init__(self) -> None:
        self.updates = 0
        self.first_chunk: float | None = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def session_update(self, session_id: str, update: Any, **_kw: Any) -> None:
        self.updates += 1
        if self.first_chunk is None and update.session_update == "agent_message_chunk":
            self.first_chunk = time.perf_counter()

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        return acp.RequestPermissionResponse(outcome=acp.DeniedOutcome(outcome="cancelled"))


async def _measure(quick: bool) -> list[Row]:
    turns = 10 if quick else 20
    deltas = 5_000 if quick else 20_000
    client = CountingClient()
    started, initialized, opened = [], [], []
    first, done = [], []
    rates, cpu = [], []
    with scratch() as (home, workspace):
        env = daemon_env(home)
        for _attempt in range(3):
            start = time.perf_counter()
            command = (sys.executable, "-m", "agentls", "acp")
            async with spawn_agent_process(client, *command, env=env) as (conn, process):
                await conn.initialize(protocol_version=PROTOCOL_VERSION)
                initialized.append(time.perf_counter() - start)
                script = [{"text": ANSWER, "chunk": 24} for _ in range(turns)]
                script += [streamed_entry(deltas, 1)] * 3
                meta = {"agentls": {"provider": "scripted", "script": script}}
                session = await conn.new_session(cwd=str(workspace), mcp_servers=[], **meta)
                opened.append(time.perf_counter() - start)
                started.append(process.pid)
                if first:
                    continue  # latency and throughput once; start-up three times
                prompt = [acp.TextContentBlock(type="text", text="question")]
                for _ in range(turns):
                    client.first_chunk = None
                    begin = time.perf_counter()
                    await conn.prompt(session_id=session.session_id, prompt=prompt)
                    done.append(time.perf_counter() - begin)
                    assert client.first_chunk is not None
                    first.append(client.first_chunk - begin)
                for _ in range(3):
                    before, cpu_before = client.updates, _cpu_seconds(process.pid)
                    begin = time.perf_counter()
                    await conn.prompt(session_id=session.session_id, prompt=prompt)
                    count = client.updates - before
                    rates.append(count / (time.perf_counter() - begin))
                    cpu.append((_cpu_seconds(process.pid) - cpu_before) / count)
    per_update = statistics.median(cpu) * 1e6
    return [
        *timing_rows(SECTION, "spawn → initialize answered", initialized),
        *timing_rows(SECTION, "spawn → session/new answered", opened),
        *timing_rows(SECTION, "prompt → first agent_message_chunk", first),
        *timing_rows(SECTION, "prompt → answer", done, "4 chunks per turn"),
        Row(
            SECTION,
            "updates per second (SDK client)",
            statistics.median(rates),
            "up/s",
            f"{deltas} one-character chunks per turn, median of 3",
        ),
        Row(
            SECTION,
            "daemon CPU per update",
            per_update,
            "µs",
            f"{1e6 / per_update:,.0f} updates/s of daemon CPU",
        ),
    ]


async def _measure_resume(quick: bool) -> list[Row]:
    """session/resume (the transcript's tail, nothing replayed) against session/load (the
    whole history replayed as updates) of one compacted 5,000-message session."""
    runs = 2 if quick else 5
    client = CountingClient()
    resumed, loaded = [], []
    with scratch() as (home, workspace):
        written = write_transcript(home, workspace, compact=True)
        command = (sys.executable, "-m", "agentls", "acp")
        async with spawn_agent_process(client, *command, env=daemon_env(home)) as (conn, _p):
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            meta = {"agentls": {"provider": "scripted", "script": SCRIPT}}
            sid = written.session_id
            for samples, opening in ((resumed, conn.resume_session), (loaded, conn.load_session)):
                for _ in range(runs):
                    begin = time.perf_counter()
                    await opening(cwd=str(workspace), session_id=sid, mcp_servers=[], **meta)
                    samples.append(time.perf_counter() - begin)
                    await conn.close_session(session_id=sid)
    ratio = statistics.median(loaded) / statistics.median(resumed)
    return [
        *timing_rows(SECTION, "session/resume, 5,000 messages", resumed, "tail read"),
        *timing_rows(SECTION, "session/load, 5,000 messages", loaded, f"{ratio:.1f}× resume"),
    ]


class RawRequests:
    """Requests the SDK's client cannot send (session/delete in 0.12.1), written on the
    agent's stdin; their answers caught by a stream observer."""

    def __init__(self) -> None:
        self.process: Any = None
        self._waiting: dict[str, asyncio.Future[dict[str, Any]]] = {}

    def observe(self, event: Any) -> None:
        waiter = self._waiting.pop(event.message.get("id"), None)
        if waiter is not None and "method" not in event.message:
            waiter.set_result(event.message)

    async def request(self, request_id: str, method: str, params: dict[str, Any]) -> Any:
        self._waiting[request_id] = asyncio.get_running_loop().create_future()
        waiter = self._waiting[request_id]
        message = {"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}
        self.process.stdin.write(json.dumps(message).encode() + b"\n")
        await self.process.stdin.drain()
        answer = await asyncio.wait_for(waiter, 30)
        assert "result" in answer, answer
        return answer["result"]


async def _measure_delete(quick: bool) -> list[Row]:
    """session/delete answered: a saved (closed) session, and a live one whose prompt is
    running (its turn aborted, every update of it flushed, then the files removed)."""
    runs = 5 if quick else 15
    client, raw = CountingClient(), RawRequests()
    saved, live = [], []
    with scratch() as (home, workspace):
        command = (sys.executable, "-m", "agentls", "acp")
        env = daemon_env(home)
        async with spawn_agent_process(
            client, *command, env=env, observers=[raw.observe], use_unstable_protocol=True
        ) as (conn, process):
            raw.process = process
            await conn.initialize(protocol_version=PROTOCOL_VERSION)
            prompt = [acp.TextContentBlock(type="text", text="question")]
            for n in range(runs):
                for samples, hang in ((saved, False), (live, True)):
                    script = [{"text": ANSWER, "hang": hang}]
                    meta = {"agentls": {"provider": "scripted", "script": script}}
                    session = await conn.new_session(cwd=str(workspace), mcp_servers=[], **meta)
                    sid = session.session_id
                    client.first_chunk = None
                    running = asyncio.create_task(conn.prompt(session_id=sid, prompt=prompt))
                    if hang:
                        while client.first_chunk is None:
                            await asyncio.sleep(0.005)
                    else:
                        await running
                        await conn.close_session(session_id=sid)
                    begin = time.perf_counter()
                    await raw.request(f"del-{n}-{hang}", "session/delete", {"sessionId": sid})
                    samples.append(time.perf_counter() - begin)
                    await running
    ratio = statistics.median(live) / statistics.median(saved)
    return [
        *timing_rows(SECTION, "session/delete, a saved session", saved, "closed first"),
        *timing_rows(
            SECTION, "session/delete, under a running prompt", live, f"{ratio:.1f}× saved"
        ),
    ]


def run(quick: bool) -> list[Row]:
    return (
        asyncio.run(_measure(quick))
        + asyncio.run(_measure_resume(quick))
        + asyncio.run(_measure_delete(quick))
    )
