"""Sessions at scale: listing 2,000 of them, and a daemon that opened and closed 200.

Listing: 2,000 sessions are written with the store's `Transcript` API (a head and a
listing entry each, as `SessionManager.create` leaves them). Timed in process: the old
way (`list_metas`, one meta file read and parsed per session), the index rebuilt from
nothing, the index as a new process reads it (`agentls sessions`: one scan of the folder,
one file parsed), and as a daemon holds it between listings (the scan only); then
`agent/listSessions` over stdio, the first page of 50 and all 2,000 in pages of 500, in a
daemon whose core has loaded, and `agent/deleteSession` of a closed one among them (its
files removed and the index rewritten without it).

Live sessions: in one daemon over stdio, 10 sessions are opened and closed (what the
first ones load once, SDK imports and caches, is not a leak), then 200 more (one in ten
runs a scripted turn); VmRSS and open descriptors (/proc/<pid>/fd) before and after.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from pathlib import Path
from typing import Any

from agentls.messages import new_id
from agentls.session.index import SessionIndex, index_path, indexed_metas
from agentls.session.records import SessionStarted
from agentls.session.store import SessionMeta, Transcript, list_metas, transcript_path
from harness import DaemonClient, Row, daemon_env, mb, proc_status_kb, scratch, timing_rows

SECTION = "16 sessions (2,000 listed; 200 opened and closed)"
LISTED = 2_000
CYCLES = 200
SCRIPT = [{"text": "done"}]


def write_sessions(home: Path, workspace: Path, count: int) -> None:
    for n in range(count):
        session_id = new_id("sess")
        meta = SessionMeta(session_id, str(workspace), provider="scripted", model="scripted")
        transcript = Transcript(transcript_path(home, session_id), meta)
        transcript.write(SessionStarted(session_id, str(workspace), "scripted", "scripted"))
        transcript.touch(title=f"Request {n}: fix the port handling in module_{n % 40}")
        transcript.close()


def timed(work: Any, runs: int, before: Any = None) -> list[float]:
    samples = []
    for _ in range(runs):
        if before is not None:
            before()
        gc.collect()
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return samples


async def list_over_stdio(home: Path, workspace: Path, runs: int) -> dict[str, list[float]]:
    client = await DaemonClient.start(daemon_env(home), workspace)
    found: dict[str, list[float]] = {
        "first page of 50": [],
        "all, pages of 500": [],
        "agent/deleteSession (stdio), a closed one of 2,000": [],
    }
    try:
        await client.initialize(workspace)
        await client.request("agent/listSessions", {"limit": 1})
        for _ in range(runs):
            start = time.perf_counter()
            await client.request("agent/listSessions", {"limit": 50})
            found["first page of 50"].append(time.perf_counter() - start)
            start = time.perf_counter()
            params: dict[str, Any] = {"limit": 500}
            while "nextCursor" in (page := await client.request("agent/listSessions", params)):
                params = {"limit": 500, "cursor": page["nextCursor"]}
            found["all, pages of 500"].append(time.perf_counter() - start)
        # Deleting one (transcript, meta, folder; the held index rewritten without it).
        first = await client.request("agent/listSessions", {"limit": runs})
        for info in first["sessions"]:
            start = time.perf_counter()
            await client.request("agent/deleteSession", {"sessionId": info["sessionId"]})
            found["agent/deleteSession (stdio), a closed one of 2,000"].append(
                time.perf_counter() - start
            )
    finally:
        await client.close()
    return found


async def cycle(client: DaemonClient, workspace: Path, turn: bool) -> None:
    session_id = await client.new_session(workspace, provider="scripted", script=SCRIPT)
    if turn:
        await client.submit(session_id, "go")
        await client.until_turn_completed()
    await client.request("agent/closeSession", {"sessionId": session_id})


async def open_and_close(home: Path, workspace: Path) -> list[Row]:
    client = await DaemonClient.start(daemon_env(home), workspace)
    try:
        await client.initialize(workspace)
        for n in range(10):
            await cycle(client, workspace, n % 2 == 0)
        rss, fds = proc_status_kb(client.pid)["VmRSS"], len(os.listdir(f"/proc/{client.pid}/fd"))
        start = time.perf_counter()
        for n in range(CYCLES):
            await cycle(client, workspace, n % 10 == 0)
        seconds = time.perf_counter() - start
        rss_after = proc_status_kb(client.pid)["VmRSS"]
        fds_after = len(os.listdir(f"/proc/{client.pid}/fd"))
    finally:
        await client.close()
    note = f"{CYCLES} sessions in {seconds:.1f} s"
    return [
        Row(SECTION, "daemon RSS before 200 sessions", mb(rss), "MB", "after 10 warm-up ones"),
        Row(SECTION, "daemon RSS after 200 sessions", mb(rss_after), "MB", note),
        Row(SECTION, "RSS after / before", rss_after / rss, "x"),
        Row(SECTION, "open fds before / after 200 sessions", f"{fds} / {fds_after}", ""),
    ]


async def _measure(quick: bool) -> list[Row]:
    runs = 3 if quick else 9
    rows: list[Row] = []
    with scratch() as (home, workspace):
        write_sessions(home, workspace, LISTED)
        old = timed(lambda: list_metas(home), runs)
        rebuilt = timed(
            lambda: indexed_metas(home), runs, lambda: index_path(home).unlink(missing_ok=True)
        )
        cold = timed(lambda: indexed_metas(home), runs)
        held = SessionIndex(home)
        warm = timed(held.metas, runs)
        rows += timing_rows(SECTION, "2,000: one meta file each (before)", old)
        rows += timing_rows(SECTION, "2,000: the index rebuilt from nothing", rebuilt)
        rows += timing_rows(SECTION, "2,000: the index read by a new process", cold)
        rows += timing_rows(SECTION, "2,000: the index a daemon holds (after)", warm)
        for label, samples in (await list_over_stdio(home, workspace, runs)).items():
            name = label if label.startswith("agent/") else f"agent/listSessions (stdio), {label}"
            rows += timing_rows(SECTION, name, samples)
    with scratch() as (home, workspace):
        rows += await open_and_close(home, workspace)
    return rows


def run(quick: bool) -> list[Row]:
    """Listing 2,000 sessions, and RSS and descriptors around 200 sessions."""
    return asyncio.run(_measure(quick))
