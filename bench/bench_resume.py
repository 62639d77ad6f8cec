"""Resume: rebuilding a session from a 5,000-message transcript.

The transcript is written directly with the store's `Transcript` API, as a session would
have written it: a `session` head like `SessionManager.create` writes (scripted provider),
then 625 turns of eight messages each (a user request with its <userContext> block, three
rounds of assistant text + tool_use and a user tool_result of a few hundred characters,
a final answer) with a `turn` record after each. A second case puts a compaction boundary
in the middle: the summary merged into the last two turns, written again as copies, as
`Transcript.record_compaction` does.

A 50,000-message session (a compaction every 1,000 messages, as a long one has) is then
resumed over stdio in a fresh daemon, whole (every message returned, as before there was a
`messageLimit`) and with `messageLimit` 100, first with the transcript mapped in full and
then with the map the first resume saved: the time, and the RSS it adds to the daemon.

Three layers are timed: `load_transcript` alone, `SessionManager.resume` in process (the
same, plus settings, provider and AgentSession construction), and `agent/resumeSession`
over stdio (plus the wire conversion of every display message and a multi-MB response).
The plain case also times the `toolCalls` each reply's tool_use blocks add to a display
(`display_calls`: the calls announced again with the session's tools), beside the rest of
the display's wire conversion (`to_wire` of every message's content), for the last 100
messages (a `messageLimit` resume's first page) and for all 5,000.

Each resume is followed by a close, so the next one starts from the file again; the file
must not change between runs (a well-paired transcript needs no repair records). In
process, `gc.collect()` runs before each sample: loading allocates some 100,000 tracked
objects, and whether a full collection lands inside a sample otherwise depends on what
ran before (with both SDKs imported, one costs ~150 ms, tripling some samples). The
daemon's numbers include whatever collections happen there.
"""

from __future__ import annotations

import asyncio
import gc
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.context.compaction_steps import compacted_history, summary_message
from agentls.events import Compaction
from agentls.messages import (
    Message,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
    new_id,
)
from agentls.session.display import display_calls
from agentls.session.manager import SessionManager
from agentls.session.records import SessionStarted, TurnEnded
from agentls.session.store import SessionMeta, Transcript, load_transcript, transcript_path
from agentls.session.transcript_map import load_tail, saved_map_path
from agentls.wire import to_wire
from harness import (
    DaemonClient,
    Row,
    daemon_env,
    mb,
    proc_status_kb,
    scratch,
    summarize,
    timing_rows,
)

SECTION = "7 resume (5,000-message transcript)"
MESSAGES = 5_000
PER_TURN = 8  # a request, three tool round trips, the answer
KEPT_TURNS = 2  # turns kept verbatim after the compaction boundary
SCRIPT = [{"text": "Resumed.", "usage": {"input_tokens": 1000, "output_tokens": 5}}]
OVERRIDES: dict[str, Any] = {"provider": "scripted", "script": SCRIPT}
CASES = {"plain": False, "compacted": True}


# --- the transcript -----------------------------------------------------------------


def user_context(n: int, first: bool) -> str:
    """A <userContext> block shaped like `agentls.context.prompt.user_context`'s."""
    parts = [f"<currentTime>2025-05-01T10:{n % 60:02d}:00+02:00</currentTime>"]
    if first:
        parts += [
            "<cwd>/home/dev/project</cwd>",
            "<gitStatus>\n## main\n M src/pkg/app.py\n</gitStatus>",
        ]
    parts += [
        "<openEditors>",
        f'<editor path="src/pkg/module_{n % 40}.py" version="{n % 17 + 1}"/>',
        f'<editor path="tests/test_module_{n % 40}.py" version="3"/>',
        "</openEditors>",
        f'<activeFile path="src/pkg/module_{n % 40}.py" cursorLine="{n % 300 + 1}"></activeFile>',
    ]
    return "<userContext>\n" + "\n".join(parts) + "\n</userContext>"


def numbered(lines: list[str]) -> str:
    return "".join(f"{i:6d}\t{line}\n" for i, line in enumerate(lines, 1))


def tool_round(n: int, k: int) -> tuple[Message, Message]:
    """An assistant message with text and one tool call, and the user's tool_result."""
    call_id = f"toolu_{n:04d}{k}{new_id('x')[2:14]}"
    module = f"src/pkg/module_{n % 40}.py"
    if k == 0:
        call = ToolUseBlock(call_id, "Read", {"file_path": module})
        result = numbered(
            [
                "from __future__ import annotations",
                "",
                "import logging",
                "",
                "log = logging.getLogger(__name__)",
                f"PORT = {8000 + n % 10}",
                "",
                f"def handle_{n}(request: dict[str, object]) -> dict[str, object]:",
                '    """Answer one request."""',
                '    log.debug("handling %s", request)',
                '    return {"status": "ok", "port": PORT}',
            ]
        )
        text = "Let me read the module first."
    elif k == 1:
        call = ToolUseBlock(call_id, "Grep", {"pattern": f"handle_{n}", "path": "src"})
        result = "\n".join(
            f"src/pkg/module_{(n + j) % 40}.py:{10 + j * 7}:    return handle_{n}(payload)"
            for j in range(5)
        )
        text = "Now where it is called from."
    else:
        call = ToolUseBlock(
            call_id, "Bash", {"command": f"pytest -q tests/test_module_{n % 40}.py"}
        )
        result = (
            "........................................                                 [100%]\n"
            f"40 passed in 0.{n % 90 + 10}s\n"
            "warnings summary: tests/conftest.py:12: DeprecationWarning: the event_loop "
            "fixture is deprecated; use the loop_scope argument of pytest.mark.asyncio\n"
        )
        text = "And the tests, to be sure nothing else depends on it."
    return (
        Message("assistant", (TextBlock(text), call)),
        Message("user", (ToolResultBlock(call_id, result),)),
    )


def conversation_turn(n: int) -> list[Message]:
    """One request worked through three tool calls: PER_TURN messages."""
    question = (
        f"Request {n}: the handler in module_{n % 40} returns the wrong port when the "
        "environment overrides it. Find where it is set and fix it, then run the tests."
    )
    messages = [Message("user", (TextBlock(user_context(n, n == 0)), TextBlock(question)))]
    for k in range(3):
        messages += tool_round(n, k)
    answer = (
        f"Fixed: module_{n % 40} now reads PORT from the environment before falling back "
        f"to {8000 + n % 10}; handle_{n} has five callers, none of which pass a port of "
        "their own, and the 40 tests pass. I did not touch the configuration loader."
    )
    messages.append(Message("assistant", (TextBlock(answer),)))
    return messages


@dataclass(frozen=True, slots=True)
class Written:
    session_id: str
    path: Path
    history: int  # messages the model sees after a resume
    seconds: float

    @property
    def size_mb(self) -> float:
        return self.path.stat().st_size / (1 << 20)


def write_transcript(
    home: Path, workspace: Path, compact: bool, messages: int = MESSAGES, every: int = 0
) -> Written:
    """A transcript of `messages` messages, optionally with a boundary half-way, or (with
    `every`) a compaction every `every` turns, as a long session has."""
    start = time.perf_counter()
    session_id = new_id("sess")
    meta = SessionMeta(session_id, str(workspace), provider="scripted", model="scripted")
    transcript = Transcript(transcript_path(home, session_id), meta)
    history: list[Message] = []
    turns = messages // PER_TURN
    try:
        settings = {"provider": "scripted", "script": [{"text": "ok"}]}
        transcript.write(
            SessionStarted(session_id, str(workspace), "scripted", "scripted", settings)
        )
        for n in range(turns):
            due = n > 0 and n % every == 0 if every else n == turns // 2
            if compact and due:
                history = _compact(transcript, history)
            turn_id = new_id("turn")
            for message in conversation_turn(n):
                transcript.record_message(message, turn_id)
                history.append(message)
            transcript.write(TurnEnded(turn_id, "end_turn", 4))
        meta.turns = turns
        transcript.touch(title="Request 0: the handler in module_0 returns the wrong port")
    finally:
        transcript.close()
    return Written(session_id, transcript.path, len(history), time.perf_counter() - start)


def _compact(transcript: Transcript, history: list[Message]) -> list[Message]:
    kept = history[-KEPT_TURNS * PER_TURN :]
    dropped = len(history) - len(kept)
    summary = (
        "The user is fixing port handling across the src/pkg modules, one module per "
        "request; every fix so far reads PORT from the environment first. " * 6
    )
    compacted = compacted_history(summary_message(summary, dropped), kept)
    event = Compaction("auto", 180_000, 9_000)
    transcript.record_compaction(compacted, event, ("snip", "summary"))
    return compacted


# --- the three layers ---------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Stdio:
    samples: list[float]
    response_mb: float


def time_load(path: Path, runs: int) -> list[float]:
    """`load_transcript` alone: read, parse, rebuild the messages, repair the pairing."""
    samples = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        load_transcript(path)
        samples.append(time.perf_counter() - start)
    return samples


async def time_manager_resume(home: Path, written: Written, runs: int) -> list[float]:
    """SessionManager.resume with the scripted overrides, closed after each run."""
    manager = SessionManager(lambda _payload: None, env={"AGENTLS_HOME": str(home)})
    samples = []
    for _ in range(runs):
        gc.collect()
        start = time.perf_counter()
        session, display = await manager.resume(written.session_id, OVERRIDES)
        samples.append(time.perf_counter() - start)
        _check(len(display.messages), len(session.history), written)
        await manager.close(session.id)
    return samples


async def time_stdio_resume(home: Path, workspace: Path, written: Written, runs: int) -> Stdio:
    """agent/resumeSession round trips in one daemon, after its core has loaded."""
    client = await DaemonClient.start(daemon_env(home), workspace)
    samples = []
    size = 0
    try:
        await client.initialize(workspace)
        await client.request("agent/listSessions", {})  # waits for the background core load
        params = {"sessionId": written.session_id, "script": SCRIPT}
        for _ in range(runs):
            start = time.perf_counter()
            result = await client.request("agent/resumeSession", params)
            samples.append(time.perf_counter() - start)
            _check(len(result["messages"]), None, written)
            size = len(json.dumps(result, separators=(",", ":")))
            await client.request("agent/closeSession", {"sessionId": written.session_id})
    finally:
        await client.close()
    return Stdio(samples, size / (1 << 20))


async def tool_call_rows(home: Path, written: Written, runs: int) -> list[Row]:
    """What `toolCalls` costs a display of the last 100 messages and of all of them, beside
    the content's own wire conversion."""
    manager = SessionManager(lambda _payload: None, env={"AGENTLS_HOME": str(home)})
    session, display = await manager.resume(written.session_id, OVERRIDES)
    try:
        last = _display_rows("last 100", display.messages[-100:], session, runs)
        return last + _display_rows("all", display.messages, session, runs)
    finally:
        await manager.close(session.id)


def _display_rows(label: str, messages: list[Message], session: Any, runs: int) -> list[Row]:
    def content() -> None:
        for m in messages:
            to_wire(list(m.content))

    def calls() -> None:
        for m in messages:
            display_calls(m, session.registry, session.cwd)

    wired = [_timed(content) for _ in range(runs)]
    called = [_timed(calls) for _ in range(runs)]
    ratio = summarize(called).median / summarize(wired).median
    name = f"plain: display of {label} messages"
    return timing_rows(SECTION, f"{name}, content to_wire", wired) + timing_rows(
        SECTION, f"{name}, toolCalls", called, f"{ratio:.2f}x the content's to_wire"
    )


def _check(display: int, history: int | None, written: Written) -> None:
    """The resume saw every message (and, in process, the history after the boundary)."""
    if display != MESSAGES or history not in (None, written.history):
        raise RuntimeError(
            f"resume gave {display} display / {history} history messages; "
            f"expected {MESSAGES} / {written.history}"
        )


def _rate_row(label: str, samples: list[float]) -> Row:
    median = summarize(samples).median
    return Row(SECTION, f"{label}, rate", MESSAGES / median, "msg/s", "display messages / median")


async def _measure(quick: bool) -> list[Row]:
    runs = 3 if quick else 7
    rows: list[Row] = []
    for case, compact in CASES.items():
        with scratch() as (home, workspace):
            written = write_transcript(home, workspace, compact)
            size = written.path.stat().st_size
            shape = (
                f"{MESSAGES:,} messages, {written.history:,} after the last boundary"
                f"{' (mid-way)' if compact else ''}; "
                f"built and written in {written.seconds * 1000:.0f} ms"
            )
            rows.append(Row(SECTION, f"{case}: transcript size", written.size_mb, "MB", shape))
            layers = {
                "load_transcript": time_load(written.path, runs),
                "SessionManager.resume": await time_manager_resume(home, written, runs),
            }
            for layer, samples in layers.items():
                rows += timing_rows(SECTION, f"{case}: {layer}", samples)
                rows.append(_rate_row(f"{case}: {layer}", samples))
            stdio = await time_stdio_resume(home, workspace, written, runs)
            note = (
                f"response {stdio.response_mb:.1f} MB of JSON; "
                f"first in this daemon {stdio.samples[0] * 1000:.0f} ms"
            )
            label = f"{case}: agent/resumeSession (stdio)"
            rows += timing_rows(SECTION, label, stdio.samples, note)
            rows.append(_rate_row(label, stdio.samples))
            if not compact:
                rows += await tool_call_rows(home, written, runs)
            if written.path.stat().st_size != size:
                raise RuntimeError("resuming changed the transcript (repair records?)")
    return rows


# --- a 50,000-message session: the whole display, or its last page ------------------

LONG_SECTION = "7 resume (50,000-message transcript)"
LONG_MESSAGES = 50_000
LONG_EVERY = 125  # turns between compactions: one every 1,000 messages
PAGE = 100  # the messageLimit a client asks for


@dataclass(frozen=True, slots=True)
class Resumed:
    seconds: float
    added_kb: int  # VmRSS after the resume minus before it
    peak_kb: int  # VmHWM after the resume minus VmRSS before it
    shown: int


async def resume_in_fresh_daemon(
    home: Path, workspace: Path, session_id: str, limit: int | None
) -> Resumed:
    """One agent/resumeSession in a daemon whose core has loaded, with its RSS around it."""
    client = await DaemonClient.start(daemon_env(home), workspace)
    try:
        await client.initialize(workspace)
        await client.request("agent/listSessions", {"limit": 1})
        before = proc_status_kb(client.pid)["VmRSS"]
        params: dict[str, Any] = {"sessionId": session_id, "script": SCRIPT}
        if limit is not None:
            params["messageLimit"] = limit
        start = time.perf_counter()
        result = await client.request("agent/resumeSession", params, timeout=300)
        seconds = time.perf_counter() - start
        after = proc_status_kb(client.pid)
    finally:
        await client.close()
    return Resumed(
        seconds, after["VmRSS"] - before, after["VmHWM"] - before, len(result["messages"])
    )


async def _measure_long(quick: bool) -> list[Row]:
    runs = 2 if quick else 5
    rows: list[Row] = []
    with scratch() as (home, workspace):
        written = write_transcript(home, workspace, True, LONG_MESSAGES, LONG_EVERY)
        shape = (
            f"{LONG_MESSAGES:,} messages, a compaction every {LONG_EVERY * PER_TURN:,}, "
            f"{written.history:,} after the last; written in {written.seconds:.1f} s"
        )
        rows.append(Row(LONG_SECTION, "transcript size", written.size_mb, "MB", shape))
        map_file = saved_map_path(written.path)
        cases = {
            "whole display (before)": (None, False),
            f"messageLimit {PAGE}, first (file mapped)": (PAGE, False),
            f"messageLimit {PAGE}, later (map saved)": (PAGE, True),
        }
        for label, (limit, keep_map) in cases.items():
            samples = []
            for _ in range(runs):
                if not keep_map:
                    map_file.unlink(missing_ok=True)
                resumed = await resume_in_fresh_daemon(home, workspace, written.session_id, limit)
                samples.append(resumed)
            note = f"{samples[0].shown:,} messages returned; a fresh daemon each"
            rows += timing_rows(
                LONG_SECTION, f"agent/resumeSession, {label}", [r.seconds for r in samples], note
            )
            added = sorted(r.added_kb for r in samples)[len(samples) // 2]
            peak = sorted(r.peak_kb for r in samples)[len(samples) // 2]
            rows.append(
                Row(LONG_SECTION, f"RSS added, {label}", mb(added), "MB", "median, after - before")
            )
            rows.append(
                Row(LONG_SECTION, f"peak RSS added, {label}", mb(peak), "MB", "VmHWM - before")
            )
        cold = [
            _timed(lambda: load_tail(written.path, PAGE), before=lambda: map_file.unlink())
            for _ in range(runs)
        ]
        warm = [_timed(lambda: load_tail(written.path, PAGE)) for _ in range(runs)]
        rows += timing_rows(LONG_SECTION, f"load_tail({PAGE}) in process, file mapped", cold)
        rows += timing_rows(LONG_SECTION, f"load_tail({PAGE}) in process, map saved", warm)
    return rows


def _timed(work: Any, before: Any = None) -> float:
    if before is not None:
        before()
    gc.collect()
    start = time.perf_counter()
    work()
    return time.perf_counter() - start


def run(quick: bool) -> list[Row]:
    """Transcript sizes and resume times for both cases, then the 50,000-message session."""
    return asyncio.run(_measure(quick)) + asyncio.run(_measure_long(quick))
