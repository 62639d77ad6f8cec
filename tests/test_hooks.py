"""Hooks over stdio, with real hook scripts: PreToolUse blocking, rewriting, allowing and
asking; PostToolUse feedback; UserPromptSubmit context and refusal; a Stop hook that sends
the model back once; timeouts killed with their process group; trust for a project's own
hooks, asked once and remembered; SessionStart context; PreCompact on agent/compact. Then
the in-process callbacks of the Python API, on the loop itself."""

from __future__ import annotations

import asyncio
import json
import shlex
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from agent_client import AgentClient, read_requests, running_daemon
from agentls.context.prompt import system_prompt
from agentls.events import Compaction
from agentls.hooks.callbacks import (
    ContextCompact,
    IterationComplete,
    LoopCallbacks,
    LoopStart,
)
from agentls.hooks.config import HookCommand, parse_hooks
from agentls.hooks.decisions import ToolVerdict, read_run, tool_verdict
from agentls.hooks.points import LoopHooks
from agentls.hooks.runner import HookRun
from agentls.loop.run import LoopDeps, LoopSettings, QueryState, run_turn
from agentls.messages import user_text
from agentls.permissions.gate import Decision, PermissionGate
from agentls.permissions.rules import parse_rule
from agentls.providers.scripted import ScriptedProvider
from agentls.tools.base import ToolContext
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import ToolRegistry, default_tools
from agentls.workspace.view import WorkspaceView

Hooks = dict[str, list[dict[str, Any]]]


def hook(tmp_path: Path, name: str, body: str) -> str:
    """A Python hook script reading its JSON input as `data`; the command that runs it."""
    path = tmp_path / f"{name}.py"
    path.write_text("import json, os, sys\ndata = json.load(sys.stdin)\n" + body)
    return f"{shlex.quote(sys.executable)} {shlex.quote(str(path))}"


def on(event: str, command: str, matcher: str | None = None, timeout: float | None = None) -> Hooks:
    entry: dict[str, Any] = {"type": "command", "command": command}
    if timeout is not None:
        entry["timeout"] = timeout
    group: dict[str, Any] = {"hooks": [entry]}
    if matcher is not None:
        group["matcher"] = matcher
    return {event: [group]}


def write_settings(path: Path, settings: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(settings))


def dump_input(record: Path) -> str:
    """Hook code appending its input to `record`, one JSON line per run."""
    return (
        "data['env_project'] = os.environ.get('AGENTLS_PROJECT_DIR')\n"
        f"with open({str(record)!r}, 'a') as out:\n"
        "    out.write(json.dumps(data) + '\\n')\n"
    )


def records(path: Path) -> list[dict[str, Any]]:
    if not path.exists():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line]


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


def daemon(ws: Path, home: Path) -> Any:
    return running_daemon(ws, AGENTLS_HOME=str(home))


def user_hooks(home: Path, hooks: Hooks, **settings: Any) -> None:
    write_settings(home / "settings.json", {"hooks": hooks, **settings})


def tool_results(request: dict[str, Any]) -> list[dict[str, Any]]:
    return [b for b in request["messages"][-1]["content"] if b["type"] == "tool_result"]


def last_user_text(request: dict[str, Any]) -> str:
    return json.dumps(request["messages"][-1]["content"])


BASH_TOUCH = {
    "tool_calls": [{"id": "call_1", "name": "Bash", "input": {"command": "touch made.txt"}}]
}


async def test_pre_tool_use_exit_2_blocks_the_call_and_the_model_reads_stderr(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    seen = tmp_path / "seen.jsonl"
    command = hook(
        tmp_path, "guard", dump_input(seen) + "sys.stderr.write('no touching here')\nsys.exit(2)\n"
    )
    user_hooks(home, on("PreToolUse", command, matcher="Bash|Write"))
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(
            tmp_path, [BASH_TOUCH, {"text": "ok"}], permissionMode="bypassPermissions"
        )
        turn, done = await client.run_turn(session, "make a file")
    assert done["stopReason"] == "end_turn"
    assert not (ws / "made.txt").exists()
    result = tool_results(read_requests(log)[1])[0]
    assert result["is_error"] and "no touching here" in result["content"]
    events = client.events.of_turn(turn)
    [shown] = [e for e in events if e["type"] == "hook_result"]
    assert shown["event"] == "PreToolUse" and shown["outcome"] == "blocked"
    assert shown["message"] == "no touching here" and shown["toolCallId"] == "call_1"
    assert any(e["type"] == "tool_call_update" and e["status"] == "declined" for e in events)
    [given] = records(seen)
    assert given["hook_event_name"] == "PreToolUse" and given["session_id"] == session
    assert given["tool_name"] == "Bash" and given["tool_input"] == {"command": "touch made.txt"}
    assert given["tool_use_id"] == "call_1" and given["cwd"] == str(ws)
    assert given["permission_mode"] == "bypassPermissions"
    assert given["transcript_path"].endswith(f"{session}.jsonl")
    assert given["env_project"] == str(ws)


async def test_pre_tool_use_rewrites_the_input_and_a_bad_rewrite_fails(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    command = hook(
        tmp_path,
        "rewrite",
        "cmd = data['tool_input']['command']\n"
        "new = {'command': 'echo rewritten > out.txt'} if 'good' in cmd else {'command': 7}\n"
        "out = {'hookEventName': 'PreToolUse', 'updatedInput': new}\n"
        "print(json.dumps({'hookSpecificOutput': out}))\n",
    )
    user_hooks(home, on("PreToolUse", command, matcher="Bash"))
    script = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo good > out.txt"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo bad"}}]},
        {"text": "done"},
    ]
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(
            tmp_path, script, permissionMode="bypassPermissions"
        )
        await client.run_turn(session, "write it")
    assert (ws / "out.txt").read_text() == "rewritten\n"
    requests = read_requests(log)
    assert not tool_results(requests[1])[0]["is_error"]
    bad = tool_results(requests[2])[0]
    assert bad["is_error"] and "rewrote this call's input, and it is invalid" in bad["content"]


async def test_a_hook_allow_skips_the_prompt_but_loses_to_a_deny_rule(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    allow = json.dumps(
        {"hookSpecificOutput": {"permissionDecision": "allow", "permissionDecisionReason": "ok"}}
    )
    command = hook(tmp_path, "allow", f"print({allow!r})\n")
    user_hooks(home, on("PreToolUse", command), permissions={"deny": ["Bash(rm:*)"]})
    (ws / "keep.txt").write_text("keep")
    script = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "touch made.txt"}}]},
        {"tool_calls": [{"name": "Bash", "input": {"command": "rm keep.txt"}}]},
        {"text": "done"},
    ]
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(tmp_path, script)
        turn, done = await client.run_turn(session, "go")
    assert done["stopReason"] == "end_turn"
    assert (ws / "made.txt").exists() and (ws / "keep.txt").exists()
    assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
    denied = tool_results(read_requests(log)[2])[0]
    assert denied["is_error"] and "Denied by rule Bash(rm:*)" in denied["content"]


async def test_a_hook_ask_makes_the_gate_prompt_even_when_bypassing(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    ask = json.dumps(
        {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "check"}}
    )
    user_hooks(home, on("PreToolUse", hook(tmp_path, "ask", f"print({ask!r})\n")))
    async with daemon(ws, home) as client:
        session, _log = await client.scripted_session(
            tmp_path, [BASH_TOUCH, {"text": "ok"}], permissionMode="bypassPermissions"
        )
        answering = asyncio.create_task(client.answer_permission(session, "allow_once"))
        await client.run_turn(session, "go")
        request = await answering
    assert request["toolCallId"] == "call_1"
    assert (ws / "made.txt").exists()


async def test_post_tool_use_sees_the_response_and_its_block_reaches_the_model(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    seen = tmp_path / "seen.jsonl"
    body = dump_input(seen) + "sys.stderr.write('lint: 2 problems')\nsys.exit(2)\n"
    user_hooks(home, on("PostToolUse", hook(tmp_path, "lint", body), matcher="Bash"))
    script = [
        {"tool_calls": [{"name": "Bash", "input": {"command": "echo hello"}}]},
        {"text": "ok"},
    ]
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(
            tmp_path, script, permissionMode="bypassPermissions"
        )
        turn, _done = await client.run_turn(session, "go")
    [given] = records(seen)
    assert given["tool_response"] == {"content": "hello"}
    assert given["tool_input"] == {"command": "echo hello"}
    result = tool_results(read_requests(log)[1])[0]
    assert result["content"].startswith("hello") and "lint: 2 problems" in result["content"]
    assert not result["is_error"]
    shown = [e for e in client.events.of_turn(turn) if e["type"] == "hook_result"]
    assert [(e["event"], e["outcome"]) for e in shown] == [("PostToolUse", "blocked")]


async def test_user_prompt_submit_adds_context_and_refuses_a_prompt(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    body = (
        "if 'secret' in data['prompt']:\n"
        "    sys.stderr.write('no secrets in prompts')\n"
        "    sys.exit(2)\n"
        "print('Ticket ABC-1 is open')\n"
    )
    user_hooks(home, on("UserPromptSubmit", hook(tmp_path, "prompt", body)))
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(tmp_path, [{"text": "ok"}, {"text": "no"}])
        _turn, done = await client.run_turn(session, "what is open?")
        assert done["stopReason"] == "end_turn"
        blocked_turn, blocked = await client.run_turn(session, "the secret is 42")
        # The session goes on normally after a refused prompt.
        _turn, after = await client.run_turn(session, "and now?")
    requests = read_requests(log)
    assert "Ticket ABC-1 is open" in last_user_text(requests[0])
    assert blocked["stopReason"] == "error" and blocked["error"]["code"] == "prompt_blocked"
    assert "no secrets in prompts" in blocked["error"]["message"]
    events = client.events.of_turn(blocked_turn)
    assert [e["type"] for e in events] == ["turn_started", "hook_result", "turn_completed"]
    assert events[1]["outcome"] == "blocked" and events[1]["message"] == "no secrets in prompts"
    assert after["stopReason"] == "end_turn" and len(requests) == 2
    assert "the secret is" not in json.dumps(requests[1]["messages"])


async def test_a_stop_hook_makes_the_model_go_on_once_then_lets_it_stop(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    seen = tmp_path / "seen.jsonl"
    body = dump_input(seen) + (
        "if not data['stop_hook_active']:\n"
        "    sys.stderr.write('run the tests first')\n"
        "    sys.exit(2)\n"
    )
    user_hooks(home, on("Stop", hook(tmp_path, "stop", body)))
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(
            tmp_path, [{"text": "done"}, {"text": "tests pass"}]
        )
        _turn, done = await client.run_turn(session, "fix it")
    assert done["stopReason"] == "end_turn" and done["turns"] == 2
    requests = read_requests(log)
    assert len(requests) == 2 and "run the tests first" in last_user_text(requests[1])
    assert [r["stop_hook_active"] for r in records(seen)] == [False, True]
    assert records(seen)[0]["last_assistant_message"] == "done"


async def test_a_stop_hook_that_always_blocks_meets_the_stuck_detector(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    body = "sys.stderr.write('not yet')\nsys.exit(2)\n"
    user_hooks(home, on("Stop", hook(tmp_path, "never", body)))
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(tmp_path, [{"text": "done"}] * 10)
        turn, done = await client.run_turn(session, "finish")
    assert done["stopReason"] == "stuck"
    requests = read_requests(log)
    assert len(requests) == 4 and "repeated the same step" in last_user_text(requests[3])
    blocked = [e for e in client.events.of_turn(turn) if e["type"] == "hook_result"]
    assert len(blocked) == 4 and all(e["outcome"] == "blocked" for e in blocked)


async def test_a_hook_past_its_timeout_is_killed_with_its_children(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    pids = tmp_path / "pids"
    command = (
        f"sleep 30 & echo $! > {shlex.quote(str(pids))}; echo $$ >> {shlex.quote(str(pids))}; wait"
    )
    user_hooks(home, on("UserPromptSubmit", command, timeout=1))
    async with daemon(ws, home) as client:
        session, _log = await client.scripted_session(tmp_path, [{"text": "ok"}])
        started = time.monotonic()
        turn, done = await client.run_turn(session, "go")
        elapsed = time.monotonic() - started
    assert done["stopReason"] == "end_turn" and elapsed < 15  # not the command's 30 s
    [shown] = [e for e in client.events.of_turn(turn) if e["type"] == "hook_result"]
    assert shown["outcome"] == "timeout" and "Timed out after 1 s" in shown["message"]
    for pid in (int(p) for p in pids.read_text().split()):
        assert not alive(pid), pid


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[0] not in ("Z", "X")
    except FileNotFoundError:
        return False


async def test_an_abort_kills_a_running_hook_and_ends_the_turn(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    pid_file = tmp_path / "pid"
    body = f"open({str(pid_file)!r}, 'w').write(str(os.getpid()))\nimport time\ntime.sleep(30)\n"
    user_hooks(home, on("UserPromptSubmit", hook(tmp_path, "slow", body)))
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(tmp_path, [{"text": "ok"}])
        result = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        while not pid_file.exists() or not pid_file.read_text():
            await asyncio.sleep(0.05)
        started = time.monotonic()
        await client.request("agent/abort", {"sessionId": session})
        done = await client.events.turn_completed(result["turnId"], timeout=20)
    assert done["stopReason"] == "aborted" and time.monotonic() - started < 10
    assert not alive(int(pid_file.read_text())) and read_requests(log) == []


async def test_an_abort_while_trust_is_asked_cancels_the_question(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    write_settings(ws / ".agentls" / "settings.json", {"hooks": on("Stop", "true")})
    async with daemon(ws, home) as client:
        session, _log = await client.scripted_session(tmp_path, [{"text": "ok"}])
        result = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
        asked = await client.events.wait_for(lambda e: e["type"] == "permission_request")
        assert asked["toolCallId"].startswith("hooks_")
        await client.request("agent/abort", {"sessionId": session})
        done = await client.events.turn_completed(result["turnId"])
    assert done["stopReason"] == "aborted"
    resolved = [e for e in client.events.items if e["type"] == "permission_resolved"]
    assert [(e["requestId"], e["outcome"]) for e in resolved] == [(asked["requestId"], "cancelled")]
    assert not (home / "workspace-trust.json").exists()


async def test_a_subagent_stop_hook_sends_the_agent_back_once(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    seen = tmp_path / "seen.jsonl"
    body = dump_input(seen) + (
        "if not data['stop_hook_active']:\n"
        "    sys.stderr.write('count the hidden files too')\n"
        "    sys.exit(2)\n"
    )
    user_hooks(home, on("SubagentStop", hook(tmp_path, "substop", body), matcher="explore"))
    task = {"description": "count", "prompt": "Count the files", "subagent_type": "explore"}
    script = [
        {"tool_calls": [{"id": "t1", "name": "Task", "input": task}]},
        {"for": "Count the files", "text": "3 files"},
        {"for": "Count the files", "text": "4 files, one hidden"},
        {"text": "There are 4."},
    ]
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(tmp_path, script)
        turn, done = await client.run_turn(session, "how many files?")
    assert done["stopReason"] == "end_turn"
    requests = read_requests(log)
    assert "count the hidden files too" in last_user_text(requests[2])
    assert "4 files, one hidden" in tool_results(requests[3])[0]["content"]
    first, second = records(seen)
    assert first["hook_event_name"] == "SubagentStop" and first["agent_type"] == "explore"
    assert first["agent_id"].startswith("agent_") and second["stop_hook_active"] is True
    [shown] = [e for e in client.events.of_turn(turn) if e["type"] == "hook_result"]
    assert shown["event"] == "SubagentStop" and shown["agentId"] == first["agent_id"]


async def test_project_hooks_ask_for_trust_once_remember_it_and_ask_again_when_changed(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    marks = tmp_path / "marks.txt"
    project_file = ws / ".agentls" / "settings.json"

    def project_hook(name: str) -> None:
        body = f"open({str(marks)!r}, 'a').write({name!r} + '\\n')\n"
        write_settings(project_file, {"hooks": on("UserPromptSubmit", hook(tmp_path, name, body))})

    user_body = f"open({str(marks)!r}, 'a').write('user\\n')\n"
    user_hooks(home, on("UserPromptSubmit", hook(tmp_path, "user", user_body)))
    project_hook("first")
    async with daemon(ws, home) as client:
        asked = await trust_turn(client, tmp_path, "allow_always")
        assert asked is not None
        assert [o["optionId"] for o in asked["options"]] == [
            "allow_always",
            "allow_once",
            "reject_once",
            "reject_always",
        ]
        assert "first.py" in asked["title"] and asked["input"]["settingsFile"] == str(project_file)
        assert await trust_turn(client, tmp_path, None) is None
        # The two hooks of an event run at once: their order is not fixed.
        assert sorted(marks.read_text().split()) == ["first", "first", "user", "user"]
        project_hook("second")
        assert await trust_turn(client, tmp_path, "reject_always") is not None
        assert await trust_turn(client, tmp_path, None) is None
    # Refused: the project's hook never ran; the user's own always did.
    assert sorted(marks.read_text().split()) == ["first", "first", "user", "user", "user", "user"]
    remembered = json.loads((home / "workspace-trust.json").read_text())
    assert remembered[str(ws)]["trusted"] is False


async def trust_turn(
    client: AgentClient, tmp_path: Path, option: str | None
) -> dict[str, Any] | None:
    """A turn in a new session, answering the trust question with `option`; the question."""
    session, _log = await client.scripted_session(tmp_path, [{"text": "ok"}])
    answering = asyncio.create_task(client.answer_permission(session, option or ""))
    turn, done = await client.run_turn(session, "hello")
    assert done["stopReason"] == "end_turn"
    if option is None:
        answering.cancel()
        assert not [e for e in client.events.of_turn(turn) if e["type"] == "permission_request"]
        return None
    request = await answering
    resolved = [e for e in client.events.of_turn(turn) if e["type"] == "permission_resolved"]
    assert [e["optionId"] for e in resolved] == [option]
    return request


async def test_session_start_context_comes_with_the_first_message_only(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    seen = tmp_path / "seen.jsonl"
    body = dump_input(seen) + "print('Branch: feature/x')\n"
    user_hooks(home, on("SessionStart", hook(tmp_path, "start", body), matcher="startup"))
    async with daemon(ws, home) as client:
        session, log = await client.scripted_session(tmp_path, [{"text": "a"}, {"text": "b"}])
        await client.run_turn(session, "one")
        await client.run_turn(session, "two")
    first, second = read_requests(log)
    assert '<hookContext event=\\"SessionStart\\">\\nBranch: feature/x' in last_user_text(first)
    assert "Branch" not in last_user_text(second)
    assert [r["source"] for r in records(seen)] == ["startup"]


async def test_pre_compact_runs_on_agent_compact_with_its_instructions(
    tmp_path: Path, ws: Path, home: Path
) -> None:
    seen = tmp_path / "seen.jsonl"
    body = dump_input(seen) + "print('backed up the transcript')\n"
    user_hooks(home, on("PreCompact", hook(tmp_path, "compact", body), matcher="manual"))
    script = [{"text": "a"}, {"text": "b"}, {"text": "<summary>short</summary>"}]
    async with daemon(ws, home) as client:
        session, _log = await client.scripted_session(tmp_path, script)
        await client.run_turn(session, "one " + "1" * 2000)
        await client.run_turn(session, "two")
        await client.request("agent/compact", {"sessionId": session, "instructions": "keep it"})
        shown = await client.events.wait_for(lambda e: e["type"] == "hook_result")
    [given] = records(seen)
    assert given["trigger"] == "manual" and given["custom_instructions"] == "keep it"
    assert shown["event"] == "PreCompact" and shown["outcome"] == "success"
    assert shown["message"] == "backed up the transcript" and "turnId" not in shown


# ---------------------------------------------------------------- in-process callbacks


class Prompter:
    async def wait_for_answer(self, request: Any) -> Any:
        raise AssertionError("no permission request expected")


def loop_deps(root: Path, script: list[dict[str, Any]], callbacks: LoopCallbacks) -> LoopDeps:
    return LoopDeps(
        provider=ScriptedProvider(script),
        registry=ToolRegistry(default_tools()),
        tool_context=ToolContext(WorkspaceView([root]), FileReadCache(), root),
        gate=PermissionGate("bypassPermissions", cwd=str(root)),
        prompter=Prompter(),
        system=system_prompt(),
        settings=LoopSettings(model="scripted"),
        hooks=LoopHooks(callbacks=callbacks),
    )


async def test_callbacks_see_the_loop_start_and_each_iteration(tmp_path: Path) -> None:
    seen: list[Any] = []

    async def on_iteration(info: IterationComplete) -> None:
        await asyncio.sleep(0)
        seen.append(info)

    callbacks = LoopCallbacks(on_loop_start=seen.append, on_iteration_complete=on_iteration)
    script = [{"tool_calls": [{"name": "Glob", "input": {"pattern": "*"}}]}, {"text": "done"}]
    state = QueryState("turn_1", [user_text("go")])
    events = [e async for e in run_turn(state, loop_deps(tmp_path, script, callbacks))]
    assert events[-1].type == "turn_completed" and events[-1].stop_reason == "end_turn"
    start, first, second = seen
    assert start == LoopStart("turn_1", "scripted", 1)
    assert (first.iteration, first.tool_calls, first.transition, first.stop_reason) == (
        1,
        1,
        "next_turn",
        None,
    )
    assert (second.iteration, second.tool_calls, second.transition, second.stop_reason) == (
        2,
        0,
        None,
        "end_turn",
    )
    assert second.usage == events[-1].usage


async def test_a_failing_callback_is_logged_and_the_turn_goes_on(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(info: LoopStart) -> None:
        raise RuntimeError("embedder bug")

    state = QueryState("turn_1", [user_text("go")])
    deps = loop_deps(tmp_path, [{"text": "fine"}], LoopCallbacks(on_loop_start=broken))
    events = [e async for e in run_turn(state, deps)]
    assert events[-1].type == "turn_completed" and events[-1].stop_reason == "end_turn"
    assert "the LoopStart callback failed" in caplog.text and "embedder bug" in caplog.text


async def test_the_compact_callback_gets_the_compaction() -> None:
    seen: list[ContextCompact] = []
    hooks = LoopHooks(callbacks=LoopCallbacks(on_context_compact=seen.append))
    await hooks.for_subagent("agent_1", "explore").compacted(Compaction("auto", 900, 100), "t1")
    assert seen == [ContextCompact("auto", 900, 100, "t1", "agent_1")]


def test_settings_are_parsed_with_problems_named_and_commands_run_once() -> None:
    problems: list[str] = []
    user = {
        "PreToolUse": [
            {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "fmt"}]},
            {"matcher": "*", "hooks": [{"command": "audit", "timeout": 5}]},
            {"matcher": "(", "hooks": [{"command": "never"}]},
        ],
        "OnLunch": [],
    }
    project = {"PreToolUse": [{"hooks": [{"command": "fmt"}, {"command": "x", "timeout": -1}]}]}
    config = parse_hooks(
        [("user settings", user), ("/p/.agentls/settings.json", project)],
        "/p/.agentls/settings.json",
        problems,
    )
    assert [c.command for c in config.commands("PreToolUse", "Edit")] == ["fmt", "audit", "x"]
    assert [c.command for c in config.commands("PreToolUse", "MultiEdit")] == ["audit", "fmt", "x"]
    assert config.commands("PreToolUse", "Edit")[1].timeout == 5
    assert config.project_commands() == ["fmt", "x"] and config.project_digest is not None
    assert len(problems) == 3
    assert "not a regular expression" in problems[0] and "OnLunch" in problems[1]
    assert "timeout must be a positive number" in problems[2]


def test_the_strictest_pre_tool_use_decision_wins_and_the_first_rewrite_is_kept() -> None:
    def reply(output: dict[str, Any]) -> Any:
        run = HookRun(HookCommand("h"), 0, json.dumps(output))
        return read_run(run, "PreToolUse")

    allow = {"hookSpecificOutput": {"permissionDecision": "allow", "updatedInput": {"a": 1}}}
    ask = {"hookSpecificOutput": {"permissionDecision": "ask", "permissionDecisionReason": "look"}}
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "no"}}
    assert tool_verdict([reply(allow), reply(ask)]) == ToolVerdict("ask", "look", {"a": 1})
    assert tool_verdict([reply(allow), reply(deny)]) == ToolVerdict("deny", "no")
    failed = read_run(HookRun(HookCommand("h"), 1, "", "boom"), "PreToolUse")
    assert failed.outcome == "error" and tool_verdict([failed]) == ToolVerdict()


@pytest.mark.parametrize(
    ("mode", "rules", "hook", "expected"),
    [
        ("default", [], "allow", "allow"),
        ("default", ["deny:Bash(rm:*)"], "allow", "deny"),
        ("default", ["ask:Bash(rm:*)"], "allow", "ask"),
        ("plan", [], "allow", "deny"),
        ("default", ["allow:Bash(rm:*)"], "deny", "deny"),
        ("bypassPermissions", [], "deny", "deny"),
        ("bypassPermissions", [], "ask", "ask"),
        ("default", ["allow:Bash(rm:*)"], "ask", "ask"),
        ("default", ["deny:Bash(rm:*)"], "ask", "deny"),
    ],
)
def test_how_a_hook_decision_meets_the_rules_and_the_mode(
    mode: str, rules: list[str], hook: str, expected: str
) -> None:
    parsed = [parse_rule(text.split(":", 1)[1], text.split(":", 1)[0]) for text in rules]
    gate = PermissionGate(mode, parsed, cwd="/w")  # type: ignore[arg-type]
    decision = gate.decide("Bash", "execute", False, "rm -f x", Decision(hook, "said so"))  # type: ignore[arg-type]
    assert decision.behavior == expected
    if expected == hook and hook != "ask":
        assert "said so" in decision.reason
