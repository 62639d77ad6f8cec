"""The load run: many sessions at once on one daemon, over stdio and over several TCP
connections, with a client that stops reading for a while, and sessions opened and closed
by the hundred.

Every session runs turns of parallel reads (Read, Read, Grep, Glob in one model reply) and
a Bash call on the scripted model in `bypassPermissions` (so nothing waits for a person).
Asserted: each session's `seq` runs 1, 2, 3… without a gap, each turn has exactly one
`turn_completed` (and every tool call its completed update), a client that stops reading
loses nothing and stalls nobody else, and after warm-up the daemon's RSS and open file
descriptors come back within 10% however many sessions come and go. Turn latencies (p50,
p99) and the memory figures are printed, never asserted. `--long` runs it at full
strength: 10 s without reading, more turns, 200 sessions opened and closed.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil

from wire_client import Daemon, Message, WireClient, tcp_client, tcp_daemon

SESSIONS = 20
TCP_CONNECTIONS = 4


def tool_round(n: int, turn: int) -> list[dict[str, Any]]:
    """One turn's model replies: four reads in one reply, then Bash, then the answer."""
    tag = f"s{n}t{turn}"
    reads = [
        {"id": f"{tag}r1", "name": "Read", "input": {"file_path": "src/app.py"}},
        {"id": f"{tag}r2", "name": "Read", "input": {"file_path": "README.md"}},
        {"id": f"{tag}g", "name": "Grep", "input": {"pattern": "def ", "path": "src"}},
        {"id": f"{tag}f", "name": "Glob", "input": {"pattern": "**/*.py"}},
    ]
    bash = {"id": f"{tag}b", "name": "Bash", "input": {"command": f"echo {tag} && ls src"}}
    return [{"tool_calls": reads}, {"tool_calls": [bash]}, {"text": f"done {tag}"}]


def workspace(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    for name in ("app", "util", "server"):
        body = "".join(f"def {name}_{i}():\n    return {i}\n\n" for i in range(40))
        (root / "src" / f"{name}.py").write_text(body)
    (root / "README.md").write_text("# load\n" + "A line of the readme.\n" * 50)
    return root


@dataclass
class Run:
    """The sessions of one daemon, who serves each, and what every turn took."""

    cwd: Path
    clients: dict[str, WireClient] = field(default_factory=dict)
    submitted: dict[str, list[str]] = field(default_factory=dict)
    latencies: list[float] = field(default_factory=list)

    async def open(self, client: WireClient, n: int, turns: int) -> str:
        script = [reply for t in range(turns) for reply in tool_round(n, t)]
        params = {
            "cwd": str(self.cwd),
            "provider": "scripted",
            "script": script,
            "permissionMode": "bypassPermissions",
        }
        session: str = (await client.request("agent/newSession", params))["sessionId"]
        self.clients[session] = client
        self.submitted[session] = []
        return session

    async def turn(self, session: str) -> None:
        """One turn, timed from submit to its turn_completed being read."""
        client = self.clients[session]
        start = time.monotonic()
        done = len(client.of_type(session, "turn_completed"))
        result = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        self.submitted[session].append(result["turnId"])
        await client.wait_for(lambda: len(client.of_type(session, "turn_completed")) > done, 120)
        end = client.read_at[session][client.events[session].index(_last_end(client, session))]
        self.latencies.append(end - start)

    async def all_turns(self, sessions: list[str]) -> None:
        await asyncio.gather(*(self.turn(s) for s in sessions))

    def check(self) -> None:
        """Nothing lost, nothing twice: every invariant of every session."""
        for session, turns in self.submitted.items():
            events = self.clients[session].events[session]
            assert [e["seq"] for e in events] == list(range(1, len(events) + 1)), session
            ends = [e for e in events if e["type"] == "turn_completed"]
            assert [(e["turnId"], e["stopReason"]) for e in ends] == [
                (t, "end_turn") for t in turns
            ]
            calls = {e["toolCallId"] for e in events if e["type"] == "tool_call"}
            completed = {
                e["toolCallId"]
                for e in events
                if e["type"] == "tool_call_update" and e["status"] == "completed"
            }
            assert len(calls) == 5 * len(turns) and completed == calls, session


def _last_end(client: WireClient, session: str) -> Message:
    return client.of_type(session, "turn_completed")[-1]


def report(name: str, latencies: list[float]) -> None:
    ordered = sorted(latencies)
    p50 = statistics.median(ordered)
    p99 = ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]
    print(
        f"\nload {name}: {len(ordered)} turns, latency p50 {p50 * 1e3:.0f} ms,"
        f" p99 {p99 * 1e3:.0f} ms, max {ordered[-1] * 1e3:.0f} ms"
    )


async def test_twenty_sessions_over_stdio_with_a_client_that_stops_reading(
    tmp_path: Path, long_run: bool
) -> None:
    pause, timed_turns = (10.0, 3) if long_run else (2.0, 1)
    home = tmp_path / "home"
    daemon = await Daemon.spawn(["--stdio"], {"AGENTLS_HOME": str(home)}, stdio=True)
    client = daemon.stdio_client()
    await client.initialize()
    run = Run(workspace(tmp_path / "ws"))
    sessions = [await run.open(client, n, timed_turns + 1) for n in range(SESSIONS)]
    for _ in range(timed_turns):
        await run.all_turns(sessions)
    report("stdio, 20 sessions", run.latencies)

    # One more turn in every session while the client reads nothing: the daemon runs and
    # records them all meanwhile, and the client gets every event once it reads again.
    client.stop_reading()
    stopped = time.monotonic()
    turning = asyncio.gather(*(run.turn(s) for s in sessions))
    recorded = await _until_turns_recorded(run, home, sessions, timed_turns + 1, pause + 60)
    print(f"load stdio: all {SESSIONS} turns recorded {recorded:.2f} s after reading stopped")
    await asyncio.sleep(max(0.0, pause - (time.monotonic() - stopped)))
    client.resume_reading()
    await asyncio.wait_for(turning, 120)
    run.check()
    await client.request("shutdown", None)
    client.notify("exit", {})
    assert await daemon.exit_code() == 0


async def _until_turns_recorded(
    run: Run, home: Path, sessions: list[str], turns: int, timeout: float
) -> float:
    """Seconds until every session's transcript holds `turns` ended turns (read from disk)."""
    start = time.monotonic()
    while True:
        counts = [_turn_records(home, s) for s in sessions]
        if all(c >= turns for c in counts):
            return time.monotonic() - start
        assert time.monotonic() - start < timeout, f"turns recorded per session: {counts}"
        await asyncio.sleep(0.05)


def _turn_records(home: Path, session: str) -> int:
    path = home / "sessions" / f"{session}.jsonl"
    if not path.exists():
        return 0
    records = (json.loads(line) for line in path.read_text().splitlines() if '"turn' in line)
    return sum(1 for record in records if record["type"] == "turn")


async def test_twenty_sessions_over_four_tcp_connections_one_of_them_not_reading(
    tmp_path: Path, long_run: bool
) -> None:
    pause, timed_turns = (10.0, 3) if long_run else (2.0, 1)
    home = tmp_path / "home"
    daemon, options = await tcp_daemon({"AGENTLS_HOME": str(home)})
    try:
        clients = [await tcp_client(daemon.port) for _ in range(TCP_CONNECTIONS)]
        for client in clients:
            await client.initialize(options)
        run = Run(workspace(tmp_path / "ws"))
        sessions = [
            await run.open(clients[n % TCP_CONNECTIONS], n, timed_turns + 1)
            for n in range(SESSIONS)
        ]
        for _ in range(timed_turns):
            await run.all_turns(sessions)
        report(f"tcp, {SESSIONS} sessions on {TCP_CONNECTIONS} connections", run.latencies)

        # The first connection stops reading: the other connections' turns all end (and
        # are read) meanwhile; then it reads again and has lost nothing.
        slow = clients[0]
        slow_sessions = [s for s in sessions if run.clients[s] is slow]
        others = [s for s in sessions if run.clients[s] is not slow]
        slow.stop_reading()
        stopped = time.monotonic()
        slow_turns = asyncio.gather(*(run.turn(s) for s in slow_sessions))
        await asyncio.wait_for(run.all_turns(others), pause + 60)
        print(
            f"load tcp: {len(others)} turns of the reading connections ended "
            f"{time.monotonic() - stopped:.2f} s after the first one stopped reading"
        )
        assert not slow_turns.done()
        await asyncio.sleep(max(0.0, pause - (time.monotonic() - stopped)))
        slow.resume_reading()
        await asyncio.wait_for(slow_turns, 120)
        run.check()
        for client in clients:
            await client.close()
    finally:
        assert await daemon.stop() == 0


async def test_sessions_opened_and_closed_leave_memory_and_descriptors_where_they_were(
    tmp_path: Path, long_run: bool
) -> None:
    warm_up, measured = (40, 200) if long_run else (20, 40)
    daemon = await Daemon.spawn(["--stdio"], {"AGENTLS_HOME": str(tmp_path / "home")}, True)
    client = daemon.stdio_client()
    await client.initialize()
    run = Run(workspace(tmp_path / "ws"))
    process = psutil.Process(daemon.process.pid)

    async def come_and_go(first: int, count: int) -> None:
        for batch in range(first, first + count, 10):
            sessions = [await run.open(client, n, 1) for n in range(batch, batch + 10)]
            await run.all_turns(sessions)
            for session in sessions:
                await client.request("agent/closeSession", {"sessionId": session})

    await come_and_go(0, warm_up)
    base_rss, base_fds = process.memory_info().rss, process.num_fds()
    await come_and_go(warm_up, measured)
    rss, fds = process.memory_info().rss, process.num_fds()
    print(
        f"\nload sessions: after {warm_up} warm-up sessions RSS {base_rss / 2**20:.1f} MiB, "
        f"{base_fds} fds; after {measured} more {rss / 2**20:.1f} MiB "
        f"({(rss / base_rss - 1) * 100:+.1f}%), {fds} fds"
    )
    run.check()
    assert rss <= base_rss * 1.10
    assert fds <= base_fds * 1.10
    await client.request("shutdown", None)
    client.notify("exit", {})
    assert await daemon.exit_code() == 0
