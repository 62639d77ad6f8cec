"""The faults run: real turns through the daemon (over stdio) on both real SDKs, under every
way a model API fails, with the invariants checked on what the client saw and on what the
API was sent next.

Each case is one session whose model name gives its requests their own script on the
replay server, so cases run side by side: a turn whose attempts meet the fault, then a
second turn that must simply work. For every case:

- each turn ends exactly once (one `turn_completed`);
- a recovered turn ends `end_turn`, and what a client shows (text deltas less those of
  discarded attempts) is the final answer once; its tool call runs once, whole;
- a turn whose retries are spent ends `error` (`model_errors`) with nothing left shown
  and no tool run;
- every request the API got holds a valid history: roles alternate, no partial assistant
  message, every tool call answered by its result right after.

The default run takes one cut point per fault; `--long` sweeps every cut point of every
broken stream. Both print their figures (`-s` shows them).
"""

from __future__ import annotations

import asyncio
import json
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

import pytest

from agent_client import AgentClient, Event, running_daemon
from replay_server import (
    Frame,
    RawFrame,
    RecordedRequest,
    ReplayServer,
    ScriptedResponse,
    ToolCall,
    anthropic_error,
    anthropic_text_turn,
    anthropic_tool_turn,
    openai_error,
    openai_text_turn,
    openai_tool_turn,
)

ANSWER = "The port is 8000, set in app.py as PORT."
LOOKING = "Reading app.py first."
AFTER_TOOL = "It listens on 8000."
NEXT = "Still here."
READ = ToolCall("call_read_1", "Read", {"file_path": "app.py"})
# Every turn of a case may retry once: a fault that persists spends the retries quickly.
RETRIES = 1
IDLE = 2.0
# How many cases talk to the daemon at once.
PARALLEL = 8

Outcome = Literal["recovers", "persists"]


# --- the two APIs ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Api:
    """One provider: how to reach it, and its responses (good ones and HTTP faults)."""

    name: Literal["anthropic", "openai"]
    text: Callable[[str], ScriptedResponse]
    tool: Callable[[ToolCall, str], ScriptedResponse]
    rate_limited: ScriptedResponse
    server_error: ScriptedResponse
    overloaded: ScriptedResponse
    # An event whose data is not JSON (Anthropic's SDK skips data without an event name).
    not_json: bytes

    def env(self, replay: ReplayServer) -> dict[str, str]:
        if self.name == "anthropic":
            return {
                "AGENTLS_PROVIDER": "anthropic",
                "ANTHROPIC_API_KEY": "sk-fault-run",
                "ANTHROPIC_BASE_URL": replay.base_url,
            }
        return {"AGENTLS_PROVIDER": "openai", "OPENAI_BASE_URL": replay.openai_base_url}

    def stop_frame(self, response: ScriptedResponse) -> int:
        """The index of the frame that says the message is complete (its stop reason)."""
        for n, frame in enumerate(response.frames or ()):
            data = _frame_json(frame)
            if self.name == "anthropic" and data.get("type") == "message_delta":
                return n
            choices = data.get("choices") or [{}]
            if self.name == "openai" and choices[0].get("finish_reason"):
                return n
        raise AssertionError("no stop frame")


def _frame_json(frame: Frame | RawFrame) -> dict[str, Any]:
    if not isinstance(frame, Frame) or not frame.data.startswith("{"):
        return {}
    data: dict[str, Any] = json.loads(frame.data)
    return data


ANTHROPIC = Api(
    "anthropic",
    text=lambda text: anthropic_text_turn(text),
    tool=lambda call, text: anthropic_tool_turn(call, text=text),
    rate_limited=anthropic_error(
        429,
        "rate_limit_error",
        "Number of requests has exceeded your rate limit.",
        headers={"retry-after": "1"},
    ),
    server_error=anthropic_error(500, "api_error", "Internal server error"),
    overloaded=anthropic_error(529, "overloaded_error", "Overloaded"),
    not_json=b"event: content_block_delta\ndata: {not json}\n\n",
)
OPENAI = Api(
    "openai",
    text=lambda text: openai_text_turn(text),
    tool=lambda call, text: openai_tool_turn(call, text=text),
    rate_limited=openai_error(
        429,
        "requests",
        "Rate limit reached for requests.",
        code="rate_limit_exceeded",
        headers={"retry-after": "1"},
    ),
    server_error=openai_error(500, "server_error", "The server had an error."),
    overloaded=openai_error(503, "server_error", "The engine is currently overloaded."),
    not_json=b"data: {not json}\n\n",
)
APIS = (ANTHROPIC, OPENAI)


# --- faults ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Fault:
    """One way an attempt goes wrong: `make` turns the good response into the faulty one,
    striking at a frame for stream faults; `where` gives the frames worth striking at.

    `tool`: the good response calls a tool (else it answers in text). `tolerated`: the
    stream stays whole (a garbage line SSE ignores), so nothing retries. `idle`: the fault
    is a stall, which needs a short `idleTimeout` (and costs it, so it is never swept).
    """

    name: str
    tool: bool
    make: Callable[[Api, ScriptedResponse, int], ScriptedResponse]
    where: Callable[[Api, ScriptedResponse], list[int]] | None = None
    tolerated: bool = False
    idle: bool = False


def _text_frames(api: Api, response: ScriptedResponse) -> list[int]:
    """Frame indices in the middle of the streamed text."""
    frames = response.frames or ()
    hits = [n for n, f in enumerate(frames) if '"text_delta"' in _data(f) or _openai_text(f)]
    return hits[1:-1] or hits


def _arg_frames(api: Api, response: ScriptedResponse) -> list[int]:
    """Frame indices in the middle of the tool call's arguments."""
    frames = response.frames or ()
    marker = '"input_json_delta"' if api.name == "anthropic" else '"arguments":"'
    hits = [n for n, f in enumerate(frames) if marker in _data(f) and '"name"' not in _data(f)]
    return hits[1:-1] or hits


def _data(frame: Frame | RawFrame) -> str:
    return frame.data if isinstance(frame, Frame) else ""


def _openai_text(frame: Frame | RawFrame) -> bool:
    choices = _frame_json(frame).get("choices") or [{}]
    return bool((choices[0].get("delta") or {}).get("content"))


def _truncated(response: ScriptedResponse, at: int) -> ScriptedResponse:
    frame = (response.frames or ())[at].render()
    return response.cut(at, RawFrame(frame[: len(frame) // 2]))


FAULTS = (
    Fault("http_429_retry_after", False, lambda api, r, _: api.rate_limited),
    Fault("http_500", False, lambda api, r, _: api.server_error),
    Fault("http_529_or_503", False, lambda api, r, _: api.overloaded),
    Fault("no_response", False, lambda api, r, _: replace(r, no_response=True)),
    Fault("drop_before_first_event", False, lambda api, r, _: replace(r, drop_after=0)),
    Fault("drop_mid_text", False, lambda api, r, n: replace(r, drop_after=n), _text_frames),
    Fault("drop_mid_tool_args", True, lambda api, r, n: replace(r, drop_after=n), _arg_frames),
    Fault("clean_end_mid_text", False, lambda api, r, n: r.cut(n), _text_frames),
    Fault("clean_end_mid_tool_args", True, lambda api, r, n: r.cut(n), _arg_frames),
    Fault(
        "stall_past_idle_timeout",
        False,
        lambda api, r, n: replace(r, stall_at=n, stall=IDLE * 3),
        _text_frames,
        idle=True,
    ),
    Fault(
        "garbage_line",
        False,
        lambda api, r, n: r.insert(n, RawFrame(b"garbage\n")),
        _text_frames,
        tolerated=True,
    ),
    Fault(
        "garbage_bytes",
        False,
        lambda api, r, n: r.insert(n, RawFrame(b"\xff\xfe garbage\n")),
        _text_frames,
    ),
    Fault(
        "data_not_json",
        False,
        lambda api, r, n: r.insert(n, RawFrame(api.not_json)),
        _text_frames,
    ),
    Fault("truncated_event", False, lambda api, r, n: _truncated(r, n), _text_frames),
    Fault("truncated_event_in_args", True, lambda api, r, n: _truncated(r, n), _arg_frames),
)


@dataclass(frozen=True, slots=True)
class Case:
    api: Api
    fault: Fault
    outcome: Outcome
    at: int | None

    @property
    def name(self) -> str:
        at = "" if self.at is None else f"-at{self.at}"
        return f"{self.api.name}-{self.fault.name}{at}-{self.outcome}"

    @property
    def model(self) -> str:
        # The case's scripts are found by model; no model table entry matches this name.
        return f"fault-{self.name}"

    def good(self) -> ScriptedResponse:
        """The response the faulty attempt should have been."""
        return self.api.tool(READ, LOOKING) if self.fault.tool else self.api.text(ANSWER)

    def first_turn(self) -> list[ScriptedResponse]:
        """The answers to the first turn's question: the fault (once, or until retries are
        spent), then the good response. What follows a tool result is scripted apart,
        because a call may have run from the faulty attempt (a stream broken after its
        message was complete) or only from the good one."""
        faulty = self.fault.make(self.api, self.good(), self.at or 0)
        if self.outcome == "persists":
            return [faulty] * (RETRIES + 1)
        return [faulty, self.good()]

    def expected_text(self) -> str:
        if self.outcome == "persists":
            return ""
        return LOOKING + AFTER_TOOL if self.fault.tool else ANSWER

    def must_retry(self) -> bool:
        """Whether the fault costs a retry: a stream broken after its stop reason does not
        (only usage and the end were still to come), nor a line SSE ignores."""
        if self.fault.tolerated:
            return False
        if self.at is None:
            return True
        return self.at <= self.api.stop_frame(self.good())


# The faults whose spent retries the default run checks (`--long` checks every one's).
PERSISTS_BY_DEFAULT = {
    "http_429_retry_after",
    "drop_mid_tool_args",
    "clean_end_mid_text",
    "data_not_json",
}


def cases(long: bool) -> list[Case]:
    """Every fault on both APIs; `long` sweeps every cut point and spends every fault's
    retries, the default run one cut point and a few faults' retries."""
    out: list[Case] = []
    for api in APIS:
        for fault in FAULTS:
            for at in _cut_points(api, fault, long):
                out.append(Case(api, fault, "recovers", at))
                persists = Case(api, fault, "persists", at)
                # A cut past the stop reason, or a line SSE ignores, is no fault to persist.
                if not persists.must_retry():
                    continue
                if long or fault.name in PERSISTS_BY_DEFAULT:
                    out.append(persists)
    return out


def _cut_points(api: Api, fault: Fault, long: bool) -> list[int | None]:
    """Every frame of the good response (`long`), else the middle one of `fault.where`."""
    if fault.where is None:
        return [None]
    good = api.tool(READ, LOOKING) if fault.tool else api.text(ANSWER)
    if long and not fault.idle:
        return list(range(len(good.frames or ())))
    points = fault.where(api, good)
    return [points[len(points) // 2]]


# --- checks ---------------------------------------------------------------------------


@dataclass(slots=True)
class Tally:
    """The run's figures."""

    cases: int = 0
    turns: int = 0
    ended_once: int = 0
    duplicated: int = 0
    # Turns whose text would show twice to a client that ignored `message_discarded`.
    duplicated_without_discards: int = 0
    invalid_histories: int = 0
    requests: int = 0
    retries: int = 0
    discarded: int = 0
    problems: list[str] = field(default_factory=list)

    def fail(self, case: Case, problem: str) -> None:
        self.problems.append(f"{case.name}: {problem}")

    def add(self, other: Tally) -> None:
        for name in (f.name for f in fields(self)):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def shown_text(events: list[Event], discards: bool = True) -> str:
    """The assistant text a client following the protocol shows: deltas, less discarded
    attempts' (`message_discarded`), unless `discards` is false."""
    pieces: list[tuple[str, str]] = []
    dropped: set[str] = set()
    for event in events:
        if event["type"] == "text_delta":
            pieces.append((event["messageId"], event["text"]))
        elif event["type"] == "message_discarded" and discards:
            dropped.add(event["messageId"])
    return "".join(text for message, text in pieces if message not in dropped)


def duplicated(shown: str, expected: str) -> bool:
    """Whether any reply, or its start (its first streamed piece), shows more often than
    it should: a retried attempt's text kept beside the retry's."""
    starts = [reply[:12] for reply in (ANSWER, LOOKING, AFTER_TOOL)]
    return any(shown.count(start) > expected.count(start) for start in starts)


def history_problems(api: Api, body: dict[str, Any], complete: set[str]) -> list[str]:
    """What is wrong with the history a request sent: roles that do not alternate, an
    assistant text that is not a whole reply, a tool call not answered right after."""
    if api.name == "anthropic":
        turns = [(m["role"], _anthropic_blocks(m)) for m in body["messages"]]
    else:
        turns = _openai_turns(body["messages"])
    problems: list[str] = []
    roles = [role for role, _ in turns]
    expected = ["user", "assistant"] * len(turns)
    if roles != expected[: len(roles)] or roles[-1:] != ["user"]:
        problems.append(f"roles {roles}")
    for n, (role, blocks) in enumerate(turns):
        if role != "assistant":
            continue
        texts = [b["text"] for b in blocks if b["type"] == "text" and b["text"]]
        problems += [f"partial assistant text {t!r}" for t in texts if t not in complete]
        calls = [b["id"] for b in blocks if b["type"] == "tool_use"]
        after = turns[n + 1][1] if n + 1 < len(turns) else []
        answered = [b["id"] for b in after if b["type"] == "tool_result"]
        if answered[: len(calls)] != calls or len(answered) != len(calls):
            problems.append(f"calls {calls} answered by {answered}")
    return problems


def _anthropic_blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    content = message["content"]
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return [
        {"type": b["type"], "text": b.get("text", ""), "id": b.get("id") or b.get("tool_use_id")}
        for b in content
    ]


def _openai_turns(messages: list[dict[str, Any]]) -> list[tuple[str, list[dict[str, Any]]]]:
    """The messages as user/assistant turns: tool messages, and the user message that may
    follow them (steering, images of results), make one user turn."""
    turns: list[tuple[str, list[dict[str, Any]]]] = []
    previous = "system"
    for message in messages:
        role, after_tool, previous = message["role"], previous == "tool", message["role"]
        if role == "system":
            continue
        if role == "assistant":
            blocks = [{"type": "text", "text": message.get("content") or ""}]
            calls = message.get("tool_calls") or []
            blocks += [{"type": "tool_use", "id": c["id"]} for c in calls]
            turns.append(("assistant", blocks))
            continue
        block = (
            {"type": "tool_result", "id": message["tool_call_id"]}
            if role == "tool"
            else {"type": "text", "text": str(message.get("content"))}
        )
        if after_tool:
            turns[-1][1].append(block)
        else:
            # A second user message in a row stays a turn of its own: roles must alternate.
            turns.append(("user", [block]))
    return turns


# --- running a case -------------------------------------------------------------------


async def run_case(
    client: AgentClient, replay: ReplayServer, root: Path, case: Case, tally: Tally
) -> None:
    cwd = root / case.name
    (cwd / ".agentls").mkdir(parents=True)
    (cwd / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    settings = {"modelRetries": RETRIES, "retryBudget": 30}
    if case.fault.idle:
        settings["idleTimeout"] = IDLE
    (cwd / ".agentls" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    session = (await client.new_session(cwd, model=case.model))["sessionId"]

    replay.script(script_key(case.model, "answer"), *case.first_turn())
    replay.script(script_key(case.model, "after_tool"), case.api.text(AFTER_TOOL))
    first, end = await submit(client, session, "Which port?")
    check_first_turn(client, case, first, end, tally)
    replay.script(script_key(case.model, "answer"), case.api.text(NEXT))
    second, end = await submit(client, session, "Are you there?")
    if end["stopReason"] != "end_turn" or shown_text(client.events.of_turn(second)) != NEXT:
        tally.fail(case, f"the next turn did not work: {end}")
    tally.cases += 1
    tally.turns += 2
    check_requests(replay, case, tally)


async def submit(client: AgentClient, session: str, text: str) -> tuple[str, Event]:
    result = await client.request("agent/submitMessage", {"sessionId": session, "text": text})
    turn: str = result["turnId"]
    return turn, await client.events.turn_completed(turn, timeout=120)


def check_first_turn(client: AgentClient, case: Case, turn: str, end: Event, tally: Tally) -> None:
    events = client.events.of_turn(turn)
    shown = shown_text(events)
    retries = [e for e in events if e["type"] == "notice" and e.get("retrying")]
    tally.retries += len(retries)
    tally.discarded += sum(e["type"] == "message_discarded" for e in events)
    if shown != case.expected_text():
        tally.fail(case, f"shown text {shown!r}")
    tally.duplicated += duplicated(shown, case.expected_text())
    raw = shown_text(events, discards=False)
    tally.duplicated_without_discards += duplicated(raw, case.expected_text())
    completed = [
        b["text"]
        for e in events
        if e["type"] == "message_completed" and e["role"] == "assistant"
        for b in e["content"]
        if b["type"] == "text"
    ]
    if "".join(completed) != case.expected_text():
        tally.fail(case, f"completed assistant text {completed!r}")
    calls = [e for e in events if e["type"] == "tool_call"]
    runs = 1 if case.fault.tool and case.outcome == "recovers" else 0
    if len(calls) != runs or any(c["input"] != READ.input for c in calls):
        tally.fail(case, f"tool calls {[c['input'] for c in calls]}")
    if case.outcome == "recovers":
        if end["stopReason"] != "end_turn":
            tally.fail(case, f"ended {end}")
        if len(retries) != int(case.must_retry()):
            tally.fail(case, f"{len(retries)} retries")
    else:
        error = end.get("error") or {}
        if end["stopReason"] != "error" or error.get("code") != "model_errors":
            tally.fail(case, f"ended {end}")
        if len(retries) != RETRIES:
            tally.fail(case, f"{len(retries)} retries")
    if case.fault.name == "http_429_retry_after" and any(e["delay"] != 1 for e in retries):
        tally.fail(case, f"retry-after not honoured: {[e['delay'] for e in retries]}")


def check_requests(replay: ReplayServer, case: Case, tally: Tally) -> None:
    complete = {ANSWER, LOOKING, AFTER_TOOL, NEXT}
    sent = [r for r in replay.requests if _model(r) == case.model]
    tally.requests += len(sent)
    bad = False
    for request in sent:
        problems = history_problems(case.api, request.body, complete)
        if problems:
            bad = True
            tally.fail(case, f"request history: {problems}")
    tally.invalid_histories += bad


def _model(request: RecordedRequest) -> str | None:
    body = request.body
    return body.get("model") if isinstance(body, dict) else None


def check_endings(client: AgentClient, tally: Tally) -> None:
    ends = Counter(e["turnId"] for e in client.events.of_type("turn_completed"))
    tally.ended_once += sum(1 for n in ends.values() if n == 1)
    tally.problems += [f"turn {t} ended {n} times" for t, n in ends.items() if n != 1]


# --- the run --------------------------------------------------------------------------


def script_key(model: str, phase: Literal["answer", "after_tool"]) -> str:
    return f"{model}:{phase}"


def route(body: Any) -> str | None:
    """A request's script: its case's (by model), for answering the user or a tool result."""
    if not isinstance(body, dict) or not body.get("messages"):
        return None
    last = body["messages"][-1]
    content = last.get("content")
    after_tool = last["role"] == "tool" or (
        isinstance(content, list) and any(b.get("type") == "tool_result" for b in content)
    )
    return script_key(body["model"], "after_tool" if after_tool else "answer")


@pytest.fixture
def replay() -> Iterator[ReplayServer]:
    server = ReplayServer(route=route).start()
    yield server
    server.stop()


async def run_provider(api: Api, replay: ReplayServer, root: Path, todo: list[Case]) -> Tally:
    tally = Tally()
    gate = asyncio.Semaphore(PARALLEL)

    async def one(case: Case) -> None:
        async with gate:
            await run_case(client, replay, root, case, tally)

    async with running_daemon(root, **api.env(replay)) as client:
        await asyncio.gather(*(one(c) for c in todo if c.api is api))
        # Anything a broken turn might still send arrives now.
        await asyncio.sleep(0.2)
        check_endings(client, tally)
    return tally


async def test_the_faults_run(replay: ReplayServer, tmp_path: Path, long_run: bool) -> None:
    todo = cases(long_run)
    started = time.monotonic()
    tallies = await asyncio.gather(*(run_provider(a, replay, tmp_path, todo) for a in APIS))
    elapsed = time.monotonic() - started
    total = Tally()
    for tally in tallies:
        total.add(tally)
    print(
        f"\nfaults run: {len(FAULTS)} faults x {len(APIS)} providers, {total.cases} cases, "
        f"{total.turns} turns, {total.ended_once} ended exactly once, {total.retries} "
        f"retries, {total.discarded} attempts discarded, {total.duplicated} turns with "
        f"duplicated text ({total.duplicated_without_discards} without message_discarded), "
        f"{total.invalid_histories} invalid histories over {total.requests} requests, "
        f"{elapsed:.1f} s"
    )
    assert total.problems == [], "\n".join(total.problems)
    assert total.cases == len(todo) and total.ended_once == total.turns


def test_the_history_check_catches_what_it_looks_for() -> None:
    # The run is only as good as its check: each broken history is caught, on both shapes.
    complete = {ANSWER, LOOKING}
    user = {"role": "user", "content": [{"type": "text", "text": "q"}]}
    partial = {"role": "assistant", "content": [{"type": "text", "text": ANSWER[:20]}]}
    call = {"type": "tool_use", "id": "c1", "name": "Read", "input": {}}
    calling = {"role": "assistant", "content": [{"type": "text", "text": LOOKING}, call]}
    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c1"}]}
    assert history_problems(ANTHROPIC, {"messages": [user, calling, result]}, complete) == []
    broken = [[user, user], [user, partial, user], [user, calling, user]]
    for messages in broken:
        assert history_problems(ANTHROPIC, {"messages": messages}, complete), messages
    o_user = {"role": "user", "content": "q"}
    o_call = {"id": "c1", "type": "function", "function": {"name": "Read", "arguments": "{}"}}
    o_calling = {"role": "assistant", "content": LOOKING, "tool_calls": [o_call]}
    o_result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    o_partial = {"role": "assistant", "content": ANSWER[:20]}
    good = [{"role": "system", "content": "s"}, o_user, o_calling, o_result, o_user]
    assert history_problems(OPENAI, {"messages": good[:4]}, complete) == []
    assert history_problems(OPENAI, {"messages": good}, complete) == []
    for messages in ([o_user, o_user], [o_user, o_partial, o_user], [o_user, o_calling, o_user]):
        assert history_problems(OPENAI, {"messages": messages}, complete), messages
