"""The loop without any front end: scripted model, real tools, real permission gate."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentls.context.prompt import system_prompt
from agentls.events import LoopEvent, PermissionRequest, TurnCompleted
from agentls.loop.run import (
    CONTINUE_TEXT,
    LoopDeps,
    LoopSettings,
    QueryState,
    announces_action,
    run_turn,
)
from agentls.messages import Message, TextBlock, ToolResultBlock, user_text
from agentls.pairing import pairing_problems
from agentls.permissions.asking import PermissionAnswer
from agentls.permissions.gate import PermissionGate
from agentls.providers.scripted import ScriptedProvider
from agentls.tools.base import ToolContext
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry, default_tools
from agentls.workspace.view import WorkspaceView


class Answers:
    """A prompter that answers every permission request with a fixed option."""

    def __init__(self, option: str = "allow_once") -> None:
        self.option = option
        self.asked: list[PermissionRequest] = []

    async def wait_for_answer(self, request: PermissionRequest) -> PermissionAnswer:
        self.asked.append(request)
        return PermissionAnswer(self.option)


class FakeClock:
    def __init__(self) -> None:
        self.slept: list[float] = []

    async def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)


def make_deps(
    root: Path,
    script: list[dict[str, Any]],
    *,
    mode: str = "default",
    prompter: Any = None,
    clock: FakeClock | None = None,
    request_log: Path | None = None,
    **settings: Any,
) -> tuple[LoopDeps, ScriptedProvider]:
    provider = ScriptedProvider(script, request_log)
    view = WorkspaceView([root])
    deps = LoopDeps(
        provider=provider,
        registry=ToolRegistry(default_tools()),
        tool_context=ToolContext(view, FileReadCache(), root),
        gate=PermissionGate(mode, cwd=str(root)),  # type: ignore[arg-type]
        prompter=prompter or Answers(),
        system=system_prompt(),
        settings=LoopSettings(**{"model": "scripted", **settings}),
        clock=clock or FakeClock(),
    )
    return deps, provider


async def drive(deps: LoopDeps, text: str = "go", history: list[Message] | None = None):
    messages = history if history is not None else []
    messages.append(user_text(text))
    state = QueryState("turn_1", messages)
    events: list[LoopEvent] = [event async for event in run_turn(state, deps)]
    return state, events


def completed(events: list[LoopEvent]) -> TurnCompleted:
    ends = [e for e in events if isinstance(e, TurnCompleted)]
    assert len(ends) == 1 and events[-1] is ends[0]
    return ends[0]


async def test_tool_loop_runs_until_the_model_ends(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    deps, _ = make_deps(
        tmp_path,
        [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "a.txt"}}]},
            {"text": "alpha it is"},
        ],
    )
    state, events = await drive(deps)
    end = completed(events)
    assert end.stop_reason == "end_turn" and end.turns == 2
    assert state.transitions == ["next_turn"]
    assert [m.role for m in state.messages] == ["user", "assistant", "user", "assistant"]
    assert "alpha" in state.messages[2].tool_results()[0].content
    assert pairing_problems(state.messages) == []


async def test_max_turns_stops_after_the_tools_of_the_last_allowed_call(tmp_path: Path) -> None:
    call = {"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}
    deps, _ = make_deps(tmp_path, [call, call, call], max_turns=2)
    state, events = await drive(deps)
    assert completed(events).stop_reason == "max_turns"
    assert completed(events).turns == 2
    assert pairing_problems(state.messages) == []


async def test_zero_max_turns_is_a_clear_error(tmp_path: Path) -> None:
    deps, provider = make_deps(tmp_path, [{"text": "never"}], max_turns=0)
    _state, events = await drive(deps)
    end = completed(events)
    assert end.stop_reason == "error" and end.error is not None
    assert end.error.code == "chat_disabled" and "maxTurns" in end.error.message
    assert provider.remaining == 1


async def test_incomplete_intent_is_nudged_at_most_twice(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path,
        [
            {"text": "Let me check the tests:"},
            {"text": "Now I'll run them."},
            {"text": "I'll look:"},
        ],
    )
    state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    assert state.transitions == ["nudge", "nudge"]
    assert state.nudges == 2


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Let me read the file:", True),
        ("I'll run the tests now.", True),
        ("Done. The port is 9000.", False),
        ("Should I continue?", False),
        ("", False),
    ],
)
def test_announces_action(text: str, expected: bool) -> None:
    assert announces_action(text) is expected


async def test_retryable_errors_back_off_then_succeed(tmp_path: Path) -> None:
    clock = FakeClock()
    deps, _ = make_deps(
        tmp_path,
        [
            {"error": {"kind": "overloaded", "message": "Overloaded", "retryable": True}},
            {"error": {"kind": "rate_limit", "message": "slow down", "retry_after": 18}},
            {"text": "fine"},
        ],
        clock=clock,
    )
    state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    assert state.transitions == ["retry", "retry"]
    assert clock.slept[1] == 18
    notices = [e for e in events if e.type == "notice"]
    assert [n.attempt for n in notices] == [1, 2]


async def test_the_turn_ends_when_the_retries_are_spent(tmp_path: Path) -> None:
    error = {"error": {"kind": "server", "message": "boom", "retryable": True}}
    deps, _ = make_deps(tmp_path, [error, error, error, {"text": "unreached"}], model_retries=2)
    _state, events = await drive(deps)
    end = completed(events)
    assert end.stop_reason == "error" and end.error is not None and end.error.retryable
    assert end.error.code == "model_errors" and "Gave up after 3 attempts" in end.error.message
    assert [e.attempt for e in events if e.type == "notice"] == [1, 2]


async def test_retries_back_off_exponentially_within_the_budget(tmp_path: Path) -> None:
    clock = FakeClock()
    error = {"error": {"kind": "overloaded", "message": "Overloaded", "retryable": True}}
    deps, _ = make_deps(tmp_path, [error] * 20, clock=clock)
    _state, events = await drive(deps)
    end = completed(events)
    assert end.error is not None and end.error.code == "model_errors"
    # Doubling from 1 s (less up to 25% jitter), capped at 30 s, until 120 s are spent.
    assert 6 <= len(clock.slept) <= 10 and sum(clock.slept) <= 120
    for n, delay in enumerate(clock.slept[:5]):
        assert 0.75 * 2**n <= delay <= 2**n
    notices = [e for e in events if e.type == "notice"]
    assert [n.delay for n in notices] == [round(d, 3) for d in clock.slept]


async def test_a_retry_after_longer_than_the_budget_ends_the_turn(tmp_path: Path) -> None:
    clock = FakeClock()
    limited = {"error": {"kind": "rate_limit", "message": "slow down", "retry_after": 600}}
    deps, _ = make_deps(tmp_path, [limited, {"text": "unreached"}], clock=clock)
    _state, events = await drive(deps)
    assert completed(events).error is not None and clock.slept == []


async def test_abort_ends_a_retry_wait_at_once(tmp_path: Path) -> None:
    class Forever:
        async def sleep(self, seconds: float) -> None:
            await asyncio.Event().wait()

    error = {"error": {"kind": "overloaded", "message": "Overloaded", "retryable": True}}
    deps, _ = make_deps(tmp_path, [error, {"text": "unreached"}])
    deps.clock = Forever()
    state = QueryState("turn_1", [user_text("go")])
    events: list[LoopEvent] = []

    async def consume() -> None:
        async for event in run_turn(state, deps):
            events.append(event)
            if event.type == "notice":
                deps.abort.set()

    await asyncio.wait_for(consume(), 5)
    assert completed(events).stop_reason == "aborted"


async def test_a_failed_attempts_streamed_text_is_discarded_before_the_retry(
    tmp_path: Path,
) -> None:
    deps, _ = make_deps(
        tmp_path,
        [
            {"text": "Half an ans", "error": {"kind": "server", "message": "cut"}},
            {"text": "The whole answer."},
        ],
    )
    _state, events = await drive(deps)
    first = next(e for e in events if e.type == "text_delta")
    [discarded] = [e for e in events if e.type == "message_discarded"]
    assert discarded.message_id == first.message_id and discarded.reason == "retry"
    kinds = [e.type for e in events]
    assert kinds.index("message_discarded") < kinds.index("notice")
    [reply] = [e for e in events if e.type == "message_completed" and e.role == "assistant"]
    assert reply.message_id != first.message_id


@pytest.mark.parametrize(
    ("error", "code"),
    [
        ({"kind": "server", "message": "cut"}, "model_errors"),
        ({"kind": "invalid_request", "message": "bad", "retryable": False}, "invalid_request"),
    ],
    ids=["retries-spent", "not-retryable"],
)
async def test_a_turn_that_ends_on_a_model_error_discards_the_partial_text(
    tmp_path: Path, error: dict[str, Any], code: str
) -> None:
    # The history never holds the cut text, so clients must not keep showing it either.
    attempt = {"text": "Half an ans", "error": error}
    deps, _ = make_deps(tmp_path, [attempt, attempt], model_retries=1, clock=FakeClock())
    state, events = await drive(deps)
    end = completed(events)
    assert end.error is not None and end.error.code == code
    streamed = {e.message_id for e in events if e.type == "text_delta"}
    discarded = [e for e in events if e.type == "message_discarded"]
    assert {e.message_id for e in discarded} == streamed
    assert discarded[-1].reason == "error"
    assert [m.role for m in state.messages] == ["user"]


async def test_the_request_after_a_failed_turn_has_alternating_roles(tmp_path: Path) -> None:
    log = tmp_path / "requests.jsonl"
    failed = {"error": {"kind": "authentication", "message": "bad key", "retryable": False}}
    deps, _ = make_deps(tmp_path, [failed, {"text": "Hello."}], request_log=log)
    state, events = await drive(deps, "first")
    assert completed(events).stop_reason == "error"
    # The session's next turn: its message follows the unanswered one.
    _state, events = await drive(deps, "second", history=state.messages)
    assert completed(events).stop_reason == "end_turn"
    last = json.loads(log.read_text(encoding="utf-8").splitlines()[-1])
    assert [m["role"] for m in last["messages"]] == ["user"]
    assert [m.role for m in state.messages] == ["user", "user", "assistant"]


async def test_a_non_retryable_error_ends_the_turn_at_once(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path, [{"error": {"kind": "authentication", "message": "bad key", "retryable": False}}]
    )
    _state, events = await drive(deps)
    end = completed(events)
    assert end.error is not None and end.error.code == "authentication"


async def test_a_silent_stream_trips_the_watchdog(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path, [{"text": "hello", "hang": True}, {"text": "again"}], idle_timeout=0.2
    )
    state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    assert state.transitions == ["retry"]
    assert any(e.type == "notice" and "sent nothing" in e.message for e in events)


async def test_a_tool_call_cut_by_max_tokens_is_never_executed(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path,
        [
            {
                "tool_calls": [
                    {"id": "ok", "name": "Glob", "input": {"pattern": "*"}},
                    {"id": "cut", "name": "Write", "raw_input": '{"file_path": "x.txt", "conte'},
                ],
                "stop_reason": "max_tokens",
            },
            {"text": "Done in smaller pieces."},
        ],
        mode="bypassPermissions",
    )
    state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    calls = [b.id for m in state.messages for b in m.tool_uses()]
    assert calls == ["ok"]
    assert not (tmp_path / "x.txt").exists()
    assert pairing_problems(state.messages) == []
    assert state.transitions == ["max_tokens_continue"]
    assert state.messages[2].content[-1] == TextBlock(CONTINUE_TEXT)


async def test_max_tokens_escalates_once_then_continues_up_to_three_times(tmp_path: Path) -> None:
    cut = {"text": "part", "stop_reason": "max_tokens"}
    deps, _ = make_deps(tmp_path, [cut, cut, cut, cut, cut, {"text": "unreached"}])
    state, events = await drive(deps)
    assert completed(events).stop_reason == "max_tokens"
    assert state.transitions == ["max_tokens_escalate"] + ["max_tokens_continue"] * 3
    # The escalated request is the same request with a higher cap; the cut text is not kept.
    assistant_texts = [m.text() for m in state.messages if m.role == "assistant"]
    assert assistant_texts == ["part"] * 4
    assert any(e.type == "notice" and "output limit" in e.message for e in events)


async def test_broken_tool_json_becomes_an_error_result(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path,
        [
            {"tool_calls": [{"id": "bad", "name": "Read", "raw_input": '{"file_path": '}]},
            {"text": "sorry"},
        ],
    )
    state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    result = state.messages[2].tool_results()[0]
    assert result.is_error and "not valid JSON" in result.content


async def test_invalid_tool_input_names_the_bad_field(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path,
        [
            {"tool_calls": [{"id": "e", "name": "Edit", "input": {"file_path": "a"}}]},
            {"text": "ok"},
        ],
    )
    state, _events = await drive(deps)
    result = state.messages[2].tool_results()[0]
    assert result.is_error and "old_string" in result.content


async def test_unknown_tool_is_an_error_result(tmp_path: Path) -> None:
    deps, _ = make_deps(
        tmp_path, [{"tool_calls": [{"id": "x", "name": "Fly", "input": {}}]}, {"text": "ok"}]
    )
    state, _events = await drive(deps)
    result = state.messages[2].tool_results()[0]
    assert result.is_error and "Unknown tool" in result.content


async def test_three_rounds_of_failing_tools_end_the_turn(tmp_path: Path) -> None:
    bad = {"tool_calls": [{"name": "Read", "input": {"file_path": "missing.txt"}}]}
    deps, _ = make_deps(tmp_path, [bad, bad, bad, {"text": "unreached"}])
    _state, events = await drive(deps)
    end = completed(events)
    assert end.stop_reason == "error" and end.error is not None
    assert end.error.code == "tool_failures"


async def test_rejected_permission_is_not_a_tool_failure(tmp_path: Path) -> None:
    write = {"tool_calls": [{"name": "Write", "input": {"file_path": "n.txt", "content": "x"}}]}
    prompter = Answers("reject_once")
    deps, _ = make_deps(tmp_path, [write, write, write, {"text": "ok, I won't"}], prompter=prompter)
    _state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    assert len(prompter.asked) == 3
    assert not (tmp_path / "n.txt").exists()


async def test_allow_always_adds_a_rule_so_the_next_call_does_not_ask(tmp_path: Path) -> None:
    write = {"tool_calls": [{"name": "Write", "input": {"file_path": "n.txt", "content": "x"}}]}
    prompter = Answers("allow_always")
    deps, _ = make_deps(
        tmp_path,
        [
            write,
            {"tool_calls": [{"name": "Read", "input": {"file_path": "n.txt"}}]},
            {"tool_calls": [{"name": "Write", "input": {"file_path": "n.txt", "content": "y"}}]},
            {"text": "done"},
        ],
        prompter=prompter,
    )
    _state, events = await drive(deps)
    assert completed(events).stop_reason == "end_turn"
    assert len(prompter.asked) == 1
    assert (tmp_path / "n.txt").read_text() == "y"


async def test_plan_mode_refuses_writes_with_a_message(tmp_path: Path) -> None:
    write = {"tool_calls": [{"name": "Write", "input": {"file_path": "n.txt", "content": "x"}}]}
    deps, _ = make_deps(tmp_path, [write, {"text": "here is my plan"}], mode="plan")
    state, _events = await drive(deps)
    result = state.messages[2].tool_results()[0]
    assert result.is_error and "plan mode" in result.content
    assert not (tmp_path / "n.txt").exists()


async def test_abort_while_waiting_for_permission_cancels_the_request(tmp_path: Path) -> None:
    class Never:
        async def wait_for_answer(self, request: PermissionRequest) -> PermissionAnswer:
            await asyncio.Event().wait()
            raise AssertionError

    write = {
        "tool_calls": [
            {"id": "w", "name": "Write", "input": {"file_path": "n.txt", "content": "x"}}
        ]
    }
    deps, _ = make_deps(tmp_path, [write], prompter=Never())
    messages = [user_text("go")]
    state = QueryState("turn_1", messages)
    events: list[LoopEvent] = []
    async for event in run_turn(state, deps):
        events.append(event)
        if event.type == "permission_request":
            deps.abort.set()
    end = completed(events)
    assert end.stop_reason == "aborted"
    resolved = [e for e in events if e.type == "permission_resolved"]
    assert len(resolved) == 1 and resolved[0].outcome == "cancelled"
    assert pairing_problems(state.messages) == []
    assert state.messages[-1].tool_results()[0].is_error


async def test_steering_joins_the_tool_results_message(tmp_path: Path) -> None:
    steer = ["also check the README"]
    deps, _ = make_deps(
        tmp_path,
        [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}, {"text": "ok"}],
    )
    deps.take_steering = lambda: [steer.pop()] if steer else []
    state, _events = await drive(deps)
    blocks = state.messages[2].content
    assert isinstance(blocks[0], ToolResultBlock)
    assert isinstance(blocks[1], TextBlock) and blocks[1].text == "also check the README"


async def test_a_file_change_asks_with_the_change_it_would_make(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("alpha\n")
    answers = Answers()
    edit = {"file_path": "a.txt", "old_string": "alpha", "new_string": "beta"}
    missing = {"file_path": "a.txt", "old_string": "nowhere", "new_string": "x"}
    deps, _ = make_deps(
        tmp_path,
        [
            {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "a.txt"}}]},
            {"tool_calls": [{"id": "e", "name": "Edit", "input": edit}]},
            {
                "tool_calls": [
                    {"id": "w", "name": "Write", "input": {"file_path": "b.txt", "content": "new"}}
                ]
            },
            {"tool_calls": [{"id": "x", "name": "Edit", "input": missing}]},
            {"text": "done"},
        ],
        prompter=answers,
    )
    await drive(deps)
    diffs = [r.diff for r in answers.asked]
    assert diffs[0] is not None and (diffs[0].old_text, diffs[0].new_text) == ("alpha\n", "beta\n")
    assert diffs[0].path == str(tmp_path / "a.txt")
    assert diffs[1] is not None and (diffs[1].old_text, diffs[1].new_text) == (None, "new")
    # A call that cannot apply is not asked about at all; the failure is its result.
    assert len(diffs) == 2
    # "Always" names the exact rule it would save.
    rules = {o.kind: o.rule for o in answers.asked[0].options}
    assert rules == {
        "allow_once": None,
        "allow_always": "Edit(./a.txt)",
        "reject_once": None,
        "reject_always": "Edit(./a.txt)",
    }


async def test_a_change_outside_the_workspace_fails_at_once_without_asking(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("alpha\n")
    edit = {"file_path": str(outside), "old_string": "alpha", "new_string": "beta"}
    new = {"file_path": "../new.txt", "content": "x"}
    answers = Answers()
    calls = [
        {"id": "r", "name": "Read", "input": {"file_path": str(outside)}},
        {"id": "e", "name": "Edit", "input": edit},
        {"id": "w", "name": "Write", "input": new},
        {"id": "m", "name": "MultiEdit", "input": {"file_path": str(outside), "edits": [edit]}},
    ]
    script = [{"tool_calls": [call]} for call in calls]
    deps, _ = make_deps(root, [*script, {"text": "done"}], prompter=answers)
    state, _events = await drive(deps)
    assert answers.asked == []
    results = [m.tool_results()[0] for m in state.messages[2::2]]
    assert all(r.is_error and "outside the workspace" in r.content for r in results)
    assert outside.read_text() == "alpha\n" and not (tmp_path / "new.txt").exists()
