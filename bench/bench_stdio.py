"""The daemon over stdio: submit → first `text_delta` latency, an inline edit's way to
its review, and events per second.

Both drive a real `agentls --stdio` with the minimal client in `harness.py`, on the
scripted provider with an inline script (delay 0). Event times are taken when the client
decodes each frame. For events per second the same streamed turn is also run in process
(`run_turn` alone, and an `AgentSession` with a no-op sink, which adds wire conversion) so
the ratio shows what JSON-RPC over a pipe costs.
"""

from __future__ import annotations

import asyncio
import os
import statistics
import time
from collections.abc import Awaitable, Callable
from typing import Any

from agentls.loop.run import QueryState, run_turn
from agentls.messages import user_text
from bench_loop import SessionDriver, loop_deps
from harness import DaemonClient, Row, daemon_env, scratch, timing_rows

LATENCY = "2 submit → first text_delta (stdio)"
INLINE = "2 inline edit → its review (stdio)"
THROUGHPUT = "4 events per second"
ANSWER = "The port is 8000; it is set in app.py and read by the server at startup."


async def first_delta_latency(turns: int) -> list[Row]:
    """Median submit→ack, submit→first text_delta and submit→turn_completed over `turns`."""
    warmup = 3
    script = [{"text": ANSWER, "chunk": 24} for _ in range(turns + warmup)]
    ack, first, done = [], [], []
    with scratch() as (home, workspace):
        client = await DaemonClient.start(daemon_env(home), workspace)
        try:
            await client.initialize(workspace)
            session = await client.new_session(workspace, provider="scripted", script=script)
            for n in range(turns + warmup):
                times = await _timed_turn(client, session, f"question {n}")
                if n >= warmup:
                    ack.append(times[0])
                    first.append(times[1])
                    done.append(times[2])
        finally:
            await client.close()
    return [
        *timing_rows(LATENCY, "submit → submitMessage response", ack),
        *timing_rows(LATENCY, "submit → first text_delta", first),
        *timing_rows(LATENCY, "submit → turn_completed", done, "4 text_delta per turn"),
    ]


async def _timed_turn(client: DaemonClient, session: str, text: str) -> tuple[float, ...]:
    start = time.perf_counter()
    await client.submit(session, text)
    acked = time.perf_counter()
    first: float | None = None
    while True:
        stamp, event = await client.next_event()
        if first is None and event["type"] == "text_delta":
            first = stamp
        if event["type"] == "turn_completed":
            assert first is not None, "a turn without text_delta"
            return acked - start, first - start, stamp - start


async def inline_edit_latency(rounds: int) -> list[Row]:
    """agent/inlineEdit → the change's permission_request (one model call: the file comes
    as read) against agent/submitMessage whose model must Read then Edit (two calls)."""
    inline_ask, submit_ask = [], []
    with scratch() as (home, workspace):
        app = workspace / "app.py"
        client = await DaemonClient.start(daemon_env(home), workspace)
        try:
            await client.initialize(workspace)
            script: list[dict[str, Any]] = []
            for n in range(2 * rounds):
                edit = {"file_path": "app.py", "old_string": f"PORT = {8000 + n}"}
                edit["new_string"] = f"PORT = {8001 + n}"
                if n % 2:
                    script.append(
                        {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]}
                    )
                script.append({"tool_calls": [{"name": "Edit", "input": edit}]})
                script.append({"text": "Done."})
            session = await client.new_session(workspace, provider="scripted", script=script)
            region = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 11}}
            for n in range(2 * rounds):
                start = time.perf_counter()
                if n % 2:
                    await client.submit(session, "bump the port")
                else:
                    params = {"uri": app.as_uri(), "range": region, "instruction": "bump it"}
                    await client.request("agent/inlineEdit", {"sessionId": session, **params})
                asked = await _answer_review(client, session)
                (submit_ask if n % 2 else inline_ask).append(asked - start)
                await client.until_turn_completed()
        finally:
            await client.close()
    ratio = statistics.median(submit_ask) / statistics.median(inline_ask)
    return [
        *timing_rows(INLINE, "inlineEdit → permission_request", inline_ask, "1 model call"),
        *timing_rows(INLINE, "submitMessage → permission_request", submit_ask, "Read, Edit"),
        Row(INLINE, "submitMessage / inlineEdit, to the review", ratio, "x"),
    ]


async def _answer_review(client: DaemonClient, session: str) -> float:
    """Wait for the file change's permission_request, allow it; when it came."""
    while True:
        stamp, event = await client.next_event()
        if event["type"] == "permission_request":
            answer = {"requestId": event["requestId"], "optionId": "allow_once"}
            await client.request("agent/respondPermission", {"sessionId": session, **answer})
            return stamp


def streamed_entry(chars: int, chunk: int) -> dict[str, Any]:
    """One model turn streaming `chars` characters in `chunk`-character deltas."""
    text = ("lorem ipsum dolor sit amet " * (chars // 27 + 1))[:chars]
    return {"text": text, "chunk": chunk, "usage": {"input_tokens": 10, "output_tokens": 10}}


Measured = list[tuple[int, float]]


def _cpu_seconds(pid: int) -> float:
    """The process's CPU time so far, in nanoseconds from each thread's schedstat (the
    clock ticks of /proc/PID/stat, 10 ms, were a seventh of a 5,000-event turn)."""
    total = 0
    for thread in os.listdir(f"/proc/{pid}/task"):
        try:
            with open(f"/proc/{pid}/task/{thread}/schedstat", encoding="ascii") as handle:
                total += int(handle.read().split()[0])
        except (OSError, ValueError, IndexError):
            continue  # a thread that ended meanwhile
    return total / 1e9


async def stdio_events_per_second(entry: dict[str, Any], repeats: int) -> Measured:
    """(events received, seconds from submit to turn_completed) per streamed turn."""
    with scratch() as (home, workspace):
        client = await DaemonClient.start(daemon_env(home), workspace)
        try:
            await client.initialize(workspace)
            script = [entry] * repeats
            session = await client.new_session(workspace, provider="scripted", script=script)
            return [await _count_turn(client, session) for _ in range(repeats)]
        finally:
            await client.close()


# (chunk size, events, daemon CPU seconds) per turn.
PerChunk = list[tuple[int, int, float]]
# The chunk sizes the CPU rows compare, in quick runs too: the goal holds for both or not.
CPU_CHUNKS = (1, 4)


async def daemon_cpu_per_event(deltas: int, chunks: tuple[int, ...], rounds: int) -> PerChunk:
    """Per turn, its chunk size, events and the daemon's CPU seconds: one daemon whose turns
    take the chunk sizes in turn, in reverse order every other round (1 4 4 1 1 4 ...).

    Run one size after the other, a change of load on the shared machine fell on one size
    only. And a full garbage collection (tens of ms: the daemon's ~110k objects) comes
    about every second streamed turn: with the sizes in the same order each round it fell
    on the same size every time, which made chunk=4 look dearer than chunk=1."""
    per_turn: PerChunk = []
    order = [*chunks, *reversed(chunks)] * rounds
    with scratch() as (home, workspace):
        client = await DaemonClient.start(daemon_env(home), workspace)
        try:
            await client.initialize(workspace)
            warmup = list(chunks)  # the first turns load and warm what turns use
            script = [streamed_entry(deltas * chunk, chunk) for chunk in warmup + order]
            session = await client.new_session(workspace, provider="scripted", script=script)
            for turn, chunk in enumerate(warmup + order):
                before = _cpu_seconds(client.pid)
                count, _seconds = await _count_turn(client, session)
                if turn >= len(warmup):
                    per_turn.append((chunk, count, _cpu_seconds(client.pid) - before))
        finally:
            await client.close()
    return per_turn


def cpu_rows(measured: PerChunk) -> list[Row]:
    """Daemon CPU per event per chunk size: all its turns' CPU over all their events (the
    collections included, as they come), with the cheapest and dearest turn."""
    rows = []
    for chunk in dict.fromkeys(size for size, _, _ in measured):
        turns = [(count, cpu) for size, count, cpu in measured if size == chunk]
        mean = sum(cpu for _, cpu in turns) / sum(count for count, _ in turns) * 1e6
        each = [cpu / count * 1e6 for count, cpu in turns]
        note = (
            f"{1e6 / mean:,.0f} ev/s of daemon CPU; turns {min(each):.2f}–{max(each):.2f} µs "
            f"({len(turns)} turns, chunk sizes alternating in one daemon)"
        )
        name = f"chunk={chunk}: daemon CPU per event (stdio)"
        rows.append(Row(THROUGHPUT, name, mean, "µs", note))
    return rows


async def _count_turn(client: DaemonClient, session: str) -> tuple[int, float]:
    count = 0
    done: asyncio.Future[float] = asyncio.get_running_loop().create_future()

    def on_event(event: dict[str, Any]) -> None:
        nonlocal count
        count += 1
        if event["type"] == "turn_completed" and not done.done():
            done.set_result(time.perf_counter())

    client.on_event = on_event
    start = time.perf_counter()
    await client.submit(session, "stream it")
    end = await asyncio.wait_for(done, 120)
    return count, end - start


async def loop_events_per_second(entry: dict[str, Any], repeats: int) -> Measured:
    """The same turns through `run_turn` alone."""
    results = []
    with scratch() as (_home, workspace):
        deps = loop_deps(workspace, [entry] * repeats)
        for n in range(repeats):
            state = QueryState(f"turn_{n}", [user_text("stream it")])
            count = 0
            start = time.perf_counter()
            async for _event in run_turn(state, deps):
                count += 1
            results.append((count, time.perf_counter() - start))
    return results


async def session_events_per_second(entry: dict[str, Any], repeats: int) -> Measured:
    """The same turns through an AgentSession (wire payloads, no transport)."""
    results = []
    with scratch() as (home, workspace):
        driver = await SessionDriver(home, workspace, [entry] * repeats).open()
        driver.session.history.append(user_text("earlier"))  # skip the git status
        for _ in range(repeats):
            before = driver.events
            start = time.perf_counter()
            await driver.turn("stream it")
            results.append((driver.events - before, time.perf_counter() - start))
        await driver.close()
    return results


LAYERS: dict[str, Callable[[dict[str, Any], int], Awaitable[Measured]]] = {
    "run_turn in process": loop_events_per_second,
    "AgentSession in process": session_events_per_second,
    "daemon over stdio": stdio_events_per_second,
}


async def throughput(deltas: int, repeats: int, chunks: tuple[int, ...]) -> list[Row]:
    """Events per second per layer: `deltas` text_delta of each chunk size (characters)."""
    rows: list[Row] = []
    for chunk in chunks:
        entry = streamed_entry(deltas * chunk, chunk)
        rates: dict[str, float] = {}
        for layer, measure in LAYERS.items():
            measured = await measure(entry, repeats)
            samples = [count / seconds for count, seconds in measured]
            rates[layer] = statistics.median(samples)
            note = (
                f"median of {repeats} turns of {measured[0][0]} events "
                f"({deltas} text_delta); range {min(samples):,.0f}–{max(samples):,.0f}"
            )
            rows.append(Row(THROUGHPUT, f"chunk={chunk}: {layer}", rates[layer], "ev/s", note))
        ratio = rates["daemon over stdio"] / rates["run_turn in process"]
        rows.append(Row(THROUGHPUT, f"chunk={chunk}: stdio / run_turn", ratio, "x"))
        per_event = 1e6 / rates["daemon over stdio"]
        rows.append(Row(THROUGHPUT, f"chunk={chunk}: cost per event over stdio", per_event, "µs"))
    return [*rows, *cpu_rows(await daemon_cpu_per_event(deltas, CPU_CHUNKS, repeats))]


def run(quick: bool) -> list[Row]:
    """Latency and throughput over stdio."""
    turns = 10 if quick else 20
    deltas = 5_000 if quick else 20_000
    repeats = 3
    chunks = (1,) if quick else (1, 4)

    async def both() -> list[Row]:
        latency = [*await first_delta_latency(turns), *await inline_edit_latency(turns)]
        return [*latency, *await throughput(deltas, repeats, chunks)]

    return asyncio.run(both())
