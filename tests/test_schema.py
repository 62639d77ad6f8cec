"""protocol/schema is generated from the wire types, and real wire output validates against it."""

from __future__ import annotations

import asyncio
import copy
import importlib.util
import json
import typing
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from pydantic import ValidationError

from agentls import api
from agentls.api_worktrees import MergeConflictEntry, WorktreeEntry, WorktreeFileEntry
from agentls.events import (
    PLAN_OPTIONS,
    SANDBOX_ESCALATION_OPTIONS,
    AskUserRequest,
    AskUserResolved,
    AvailableCommands,
    CommandInfo,
    CommandOutput,
    Compaction,
    HookResult,
    LoopEvent,
    McpStatusEvent,
    MessageCompleted,
    MessageDiscarded,
    Notice,
    PermissionModeChanged,
    PermissionRequest,
    PermissionResolved,
    PlanEvent,
    SandboxEscalation,
    ShellStatus,
    SubagentCompleted,
    SubagentStarted,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    ToolCallUpdate,
    TurnCompleted,
    TurnError,
    TurnLimitReached,
    TurnStarted,
    UsageEvent,
    WorktreeFileStat,
    WorktreeResolved,
    WorktreeSummary,
)
from agentls.messages import TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentls.permissions.asking import PermissionAnswer
from agentls.session.manager import SessionManager
from agentls.tool_values import FileDiff, Location, PlanEntry
from agentls.usage import Usage
from agentls.wire import json_sink, to_wire

ROOT = Path(__file__).resolve().parent.parent
RUN_SCRIPT = "Run `python scripts/gen_schema.py` and commit protocol/schema."


def _load_generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location("gen_schema", ROOT / "scripts" / "gen_schema.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


gen = _load_generator()


# ---------------------------------------------------------------- drift


def test_checked_in_schema_is_what_the_script_generates() -> None:
    report = gen.drift(gen.generate())
    assert not report, "protocol/schema drifted from the wire types.\n" + "\n".join(
        [*report, RUN_SCRIPT]
    )


def test_generation_is_deterministic() -> None:
    assert gen.generate() == gen.generate()


def test_drift_is_reported_for_a_changed_or_missing_file() -> None:
    schema_dir = gen.SCHEMA_DIR
    files = gen.generate()
    assert gen.drift(files, schema_dir) == []
    changed = dict(files)
    changed["events.json"] = files["events.json"].replace('"turn_started"', '"turn_begun"')
    report = gen.drift(changed, schema_dir)
    assert report and report[0].endswith("2 changed lines")
    assert any("turn_begun" in line for line in report)
    missing = gen.drift({"nothing.json": "{}\n"}, schema_dir)
    assert missing == ["protocol/schema/nothing.json: missing"]


def test_every_event_type_and_request_is_in_the_schema() -> None:
    events = json.loads(gen.generate()["events.json"])
    types = {
        events["$defs"][ref["$ref"].rsplit("/", 1)[1]]["properties"]["type"]["const"]
        for ref in events["oneOf"]
    }
    assert types == {cls.__dataclass_fields__["type"].default for cls in typing.get_args(LoopEvent)}
    requests = json.loads(gen.generate()["requests.json"])
    assert set(requests["requests"]) == set(api.REQUESTS)
    assert set(requests["notifications"]) == set(api.NOTIFICATIONS)


# ---------------------------------------------------------------- validation helpers


def _schemas() -> tuple[dict[str, Any], dict[str, Any]]:
    files = gen.generate()
    return json.loads(files["events.json"]), json.loads(files["requests.json"])


def _event_validator(strict: bool) -> Any:
    """Strict: no property beyond the schema's (the published schema allows additions)."""
    jsonschema = pytest.importorskip("jsonschema")
    events, _ = _schemas()
    jsonschema.Draft202012Validator.check_schema(events)
    if strict:
        events = copy.deepcopy(events)
        for definition in events["$defs"].values():
            definition["additionalProperties"] = False
    return jsonschema.Draft202012Validator(events)


def _request_validator(method: str, part: str, *, notification: bool = False) -> Any:
    jsonschema = pytest.importorskip("jsonschema")
    _, requests = _schemas()
    jsonschema.Draft202012Validator.check_schema(requests)
    table = requests["notifications" if notification else "requests"]
    schema = {"$schema": requests["$schema"], "$defs": requests["$defs"], **table[method][part]}
    return jsonschema.Draft202012Validator(schema)


def _errors(validator: Any, payload: Any) -> list[str]:
    return [f"{list(e.absolute_path)}: {e.message}" for e in validator.iter_errors(payload)]


class _ShapeChecker:
    """Without jsonschema: the event's keys are its schema's properties, required ones
    present, and no value anywhere is null. Enough to catch a renamed or added field."""

    def __init__(self) -> None:
        events, _ = _schemas()
        self.defs = {
            d["properties"]["type"]["const"]: d
            for d in events["$defs"].values()
            if "description" in d  # the event definitions (nested ones have none)
        }

    def iter_errors(self, payload: dict[str, Any]) -> list[Any]:
        definition = self.defs.get(payload.get("type"))
        if definition is None:
            return [_Problem(f"unknown event type {payload.get('type')!r}")]
        keys, props = set(payload), set(definition["properties"])
        problems = [f"not in the schema: {k}" for k in sorted(keys - props)]
        problems += [f"missing: {k}" for k in definition["required"] if k not in payload]
        if _has_null(payload):
            problems.append("a value is null")
        return [_Problem(p) for p in problems]


def _has_null(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return value is None


class _Problem:
    def __init__(self, message: str) -> None:
        self.message = message
        self.absolute_path: list[str] = []


def _event_checker() -> Any:
    """The strict jsonschema validator when jsonschema is installed, else a shape check."""
    try:
        import jsonschema  # noqa: F401
    except ImportError:
        return _ShapeChecker()
    return _event_validator(strict=True)


# ---------------------------------------------------------------- events


def _sample_events() -> list[LoopEvent]:
    """Each event type, with its optional fields both set and left out."""
    return [
        TurnStarted("turn_1", "msg_1"),
        TextDeltaEvent("msg_2", "Hel"),
        ThinkingDeltaEvent("msg_2", "hmm"),
        MessageCompleted(
            "msg_2",
            "assistant",
            (
                ThinkingBlock("hmm", "sig"),
                ThinkingBlock("no signature"),
                TextBlock("Reading it."),
                ToolUseBlock("toolu_1", "Read", {"file_path": "/w/a.py", "-i": True}),
            ),
        ),
        MessageCompleted(
            "msg_3",
            "user",
            (ToolResultBlock("toolu_1", "1\tprint()", False), ToolResultBlock("t2", "no", True)),
        ),
        ToolCallEvent("toolu_1", "Read", "read", "Read a.py", {"file_path": "/w/a.py"}),
        ToolCallEvent(
            "toolu_2",
            "Edit",
            "edit",
            "Edit a.py",
            {"file_path": "/w/a.py"},
            (Location("/w/a.py", 3), Location("/w/b.py")),
        ),
        ToolCallUpdate("toolu_1", "in_progress"),
        ToolCallUpdate("toolu_2", "completed", "Edited.", FileDiff("/w/a.py", "a\n", "b\n"), True),
        ToolCallUpdate("toolu_3", "completed", "Created.", FileDiff("/w/new.py", None, "x\n")),
        ToolCallUpdate("toolu_4", "declined", "The user rejected this tool call."),
        PermissionRequest("perm_1", "toolu_2", "Edit a.py", {"file_path": "/w/a.py"}),
        PermissionResolved("perm_1", "selected", "allow_once"),
        PermissionResolved("perm_2", "cancelled"),
        PermissionRequest(
            "perm_3", "toolu_9", "Approve the plan", {"plan": "# P"}, PLAN_OPTIONS, plan="# P"
        ),
        PermissionRequest(
            "perm_4",
            "toolu_10",
            "Run outside the sandbox: touch /opt/x",
            {"command": "touch /opt/x"},
            SANDBOX_ESCALATION_OPTIONS,
            sandbox_escalation=SandboxEscalation(
                "touch /opt/x", "the sandbox has no network", "failed_in_sandbox"
            ),
        ),
        PermissionModeChanged("acceptEdits"),
        AskUserRequest("ask_1", "toolu_5", "Which region?", ("eu", "us")),
        AskUserRequest("ask_2", "toolu_6", "Anything else?"),
        AskUserResolved("ask_1", "answered", "eu"),
        AskUserResolved("ask_2", "cancelled"),
        Compaction("auto", 170_000, 40_000),
        UsageEvent(10, 2, 3, 4, 19, 200_000),
        UsageEvent(10, 2, 0, 0, 12, 200_000, cost_usd=0.25),
        Notice("warning", "Model error overloaded. Retrying in 0.5 s.", True, 1, 0.5),
        MessageDiscarded("msg_1", "retry"),
        Notice("error", "The history had unpaired tool calls; they were repaired."),
        TurnLimitReached(100, 100),
        McpStatusEvent("docs", "starting", "stdio"),
        McpStatusEvent("docs", "ready", "http", 12, None, 2),
        McpStatusEvent("docs", "failed", "stdio", None, "its command was not found", 1),
        HookResult("PreToolUse", "./guard.sh", "blocked", "no rm here", "toolu_1"),
        HookResult("SessionStart", "git branch", "success", "main"),
        HookResult("Stop", "./slow.sh", "timeout", "Timed out after 60 s"),
        ShellStatus("shell_1", "npm run dev", "running"),
        ShellStatus("shell_1", "npm run dev", "exited", 1),
        ShellStatus("shell_2", "sleep 60", "killed", -15),
        SubagentStarted("agent_1", "toolu_1", "explore", "Find the port"),
        SubagentCompleted("agent_1", "toolu_1", "end_turn", 2, 1, Usage(10, 2), 1234),
        SubagentCompleted(
            "agent_2",
            "toolu_2",
            "end_turn",
            2,
            1,
            Usage(10, 2),
            1234,
            worktree=WorktreeSummary(
                "/home/u/.agentls/sessions/sess_1/worktrees/agent_2",
                "agentls/agent_2",
                "0123456789abcdef0123456789abcdef01234567",
                (WorktreeFileStat("src/app.py", "modified", 3, 1),),
                3,
                1,
            ),
        ),
        WorktreeResolved("agent_2", "merged", "agentls/agent_2", ("/w/src/app.py",)),
        WorktreeResolved("agent_3", "discarded", "agentls/agent_3"),
        PlanEvent(
            (PlanEntry("Read the config", "completed"), PlanEntry("Fix it", "pending", "high"))
        ),
        CommandOutput("cost", "Session sess_1: 2 turns on scripted"),
        CommandOutput("mode", "Unknown permission mode 'x'", is_error=True),
        AvailableCommands(
            (
                CommandInfo("clear", "Start the conversation afresh"),
                CommandInfo("fix", "Fix an issue", "<issue>", "project"),
            )
        ),
        TurnCompleted("turn_1", "end_turn", 2, Usage(10, 2, 3, 4)),
        TurnCompleted(
            "turn_2",
            "error",
            1,
            Usage(),
            TurnError("authentication", "Model error authentication: bad key", False),
        ),
    ]


def _envelope(event: LoopEvent, seq: int) -> dict[str, Any]:
    """What a session's EventOut.emit sends: the envelope, then the event's wire form."""
    return {"sessionId": "sess_1", "seq": seq, "turnId": "turn_1", **to_wire(event)}


def test_every_event_type_is_sampled() -> None:
    sampled = {type(e) for e in _sample_events()}
    assert sampled == set(typing.get_args(LoopEvent)), "add the new event type to the samples"


def test_wire_events_validate_exactly() -> None:
    validator = _event_checker()
    for seq, event in enumerate(_sample_events(), 1):
        payload = _envelope(event, seq)
        assert _errors(validator, payload) == [], payload


def test_the_event_schema_rejects_what_the_wire_never_sends() -> None:
    validator = _event_validator(strict=False)
    good = _envelope(ToolCallUpdate("toolu_1", "completed", "ok"), 1)
    assert _errors(validator, good) == []
    bad_payloads = [
        {**good, "diff": None},  # None fields are left out, never null
        {k: v for k, v in good.items() if k != "seq"},
        {**good, "seq": 0},
        {**good, "status": "done"},
        {**good, "type": "tool_call_updated"},
        {("tool_call_id" if k == "toolCallId" else k): v for k, v in good.items()},
    ]
    for payload in bad_payloads:
        assert _errors(validator, payload), payload


class _Collector:
    """An event sink that answers permission requests and notes finished turns."""

    def __init__(self) -> None:
        self.events: list[dict[str, Any]] = []
        self.session: Any = None
        self.finished = asyncio.Event()

    def __call__(self, payload: dict[str, Any]) -> None:
        self.events.append(payload)
        if payload["type"] == "permission_request":
            loop = asyncio.get_running_loop()
            answer = PermissionAnswer("allow_once")
            loop.call_soon(self.session.answers.respond_permission, payload["requestId"], answer)
        if sum(e["type"] == "turn_completed" for e in self.events) == 2:
            self.finished.set()


async def test_a_real_scripted_session_emits_valid_events(tmp_path: Path) -> None:
    validator = _event_checker()
    workspace = tmp_path / "work"
    workspace.mkdir()
    source = workspace / "app.py"
    source.write_text("PORT = 8000\n", encoding="utf-8")
    script = [
        {
            "thinking": "Look first.",
            "text": "Reading it.",
            "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": str(source)}}],
        },
        {
            "text": "Changing the port.",
            "tool_calls": [
                {
                    "id": "t2",
                    "name": "Edit",
                    "input": {
                        "file_path": str(source),
                        "old_string": "8000",
                        "new_string": "9000",
                    },
                },
                {"id": "t3", "name": "Write", "input": {"file_path": "new.py", "content": "x\n"}},
                {"id": "t4", "name": "NoSuchTool", "input": {}},
            ],
        },
        {"text": "It listens on port 9000 now."},
        {"error": {"kind": "authentication", "message": "bad key", "retryable": False}},
    ]
    sink = _Collector()
    manager = SessionManager(json_sink(sink), env={"AGENTLS_HOME": str(tmp_path / "home")})
    session = await manager.create(workspace, {"provider": "scripted", "script": script})
    sink.session = session
    try:
        session.submit("Move the app to port 9000.")
        session.submit("And again?")
        await asyncio.wait_for(sink.finished.wait(), 20)
    finally:
        await manager.close_all()

    assert [e["seq"] for e in sink.events] == list(range(1, len(sink.events) + 1))
    for payload in sink.events:
        assert _errors(validator, payload) == [], payload

    def first(kind: str, **match: Any) -> dict[str, Any]:
        return next(
            e
            for e in sink.events
            if e["type"] == kind and all(e.get(k) == v for k, v in match.items())
        )

    blocks = {
        b["type"] for e in sink.events if e["type"] == "message_completed" for b in e["content"]
    }
    assert blocks == {"text", "thinking", "tool_use", "tool_result"}
    assert first("tool_call_update", toolCallId="t2", status="completed")["diff"]["oldText"]
    created = first("tool_call_update", toolCallId="t3", status="completed")["diff"]
    assert "oldText" not in created
    assert first("tool_call_update", toolCallId="t4")["status"] == "failed"
    assert first("permission_resolved")["optionId"] == "allow_once"
    assert first("usage")["contextWindow"] > 0
    completed = [e for e in sink.events if e["type"] == "turn_completed"]
    assert [c["stopReason"] for c in completed] == ["end_turn", "error"]
    assert completed[1]["error"] == {
        "code": "authentication",
        "message": "Model error authentication: bad key",
        "retryable": False,
    }


# ---------------------------------------------------------------- requests


def _dump(model: api.WireModel) -> Any:
    """A result as the daemon sends it (server.request's model_dump)."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


SAMPLE_PARAMS: dict[str, dict[str, Any]] = {
    "agent/newSession": {
        "cwd": "/w",
        "provider": "scripted",
        "permissionMode": "acceptEdits",
        "maxTurns": -1,
        "script": [{"text": "hi"}],
        "requestLog": "/tmp/requests.jsonl",
    },
    "agent/inlineEdit": {
        "sessionId": "sess_1",
        "uri": "file:///w/a.py",
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 2, "character": 4}},
        "instruction": "rename x to count",
    },
    "agent/submitMessage": {
        "sessionId": "sess_1",
        "text": "hi",
        "data": {"any": ["json"]},
        "attachments": [
            {"uri": "file:///w/a.py"},
            {"uri": "data:image/png;base64,iVBORw0KGgo=", "name": "shot.png"},
            {
                "uri": "file:///w/b.py",
                "range": {"start": {"line": 0, "character": 0}, "end": {"line": 1, "character": 2}},
            },
        ],
        "delivery": "steer",
    },
    "agent/abort": {"sessionId": "sess_1", "turnId": "turn_1"},
    "agent/respondPermission": {
        "sessionId": "sess_1",
        "requestId": "perm_1",
        "optionId": "reject_once",
        "message": "not that file",
        "updatedInput": {"file_path": "/w/c.py"},
    },
    "agent/closeSession": {"sessionId": "sess_1"},
    "agent/deleteSession": {"sessionId": "sess_1"},
    "agent/respondAskUser": {"sessionId": "sess_1", "requestId": "ask_1", "answer": "eu"},
    "agent/listSessions": {"cwd": "/w", "cursor": "sess_2", "limit": 10},
    "agent/resumeSession": {"sessionId": "sess_1", "script": [{"text": "again"}]},
    "agent/getMessages": {"sessionId": "sess_1", "before": "200", "limit": 50},
    "agent/compact": {"sessionId": "sess_1", "instructions": "keep the file list"},
    "agent/setPermissionMode": {"sessionId": "sess_1", "permissionMode": "plan"},
    "agent/setModel": {"sessionId": "sess_1", "model": "gpt-4.1", "provider": "openai"},
    "agent/listModels": {"sessionId": "sess_1", "refresh": True},
    "agent/providerStatus": {"cwd": "/tmp"},
    "agent/noteUserAction": {"sessionId": "sess_1", "text": "The user undid your change."},
    "agent/continueTurn": {"sessionId": "sess_1"},
    "agent/forkSession": {"sessionId": "sess_1", "messageId": "msg_1"},
    "agent/listTasks": {"sessionId": "sess_1"},
    "agent/listMcpServers": {"sessionId": "sess_1"},
    "agent/restartMcpServer": {"sessionId": "sess_1", "name": "docs"},
    "agent/setMcpServerEnabled": {"sessionId": "sess_1", "name": "docs", "enabled": False},
    "agent/listShells": {"sessionId": "sess_1"},
    "agent/stopTask": {"sessionId": "sess_1", "agentId": "agent_1"},
    "agent/listPermissionRules": {"sessionId": "sess_1"},
    "agent/listCommands": {"sessionId": "sess_1"},
    "agent/updatePermissionRules": {
        "sessionId": "sess_1",
        "add": [{"rule": "Bash(npm test:*)", "behavior": "allow", "scope": "project"}],
        "remove": [{"rule": "Read", "behavior": "ask", "scope": "user"}],
    },
    "agent/rewind": {"sessionId": "sess_1", "turnId": "turn_1", "what": "both", "force": True},
    "agent/turnDiff": {"sessionId": "sess_1", "turnId": "turn_1"},
    "agent/listWorktrees": {"sessionId": "sess_1"},
    "agent/worktreeDiff": {"sessionId": "sess_1", "agentId": "agent_1"},
    "agent/resolveWorktree": {"sessionId": "sess_1", "agentId": "agent_1", "action": "merge"},
}

SAMPLE_RESULTS: dict[str, api.WireModel] = {
    "agent/newSession": api.NewSessionResult(
        session_id="sess_1",
        model="scripted",
        tools=["Read", "Edit"],
        permission_mode="default",
        sandbox=api.SandboxState(
            mode="workspace-write", active=True, network=False, writable_paths=["/tmp", "/w"]
        ),
    ),
    "agent/submitMessage": api.SubmitMessageResult(turn_id="turn_1", queued=True),
    "agent/inlineEdit": api.SubmitMessageResult(turn_id="turn_2", queued=False),
    "agent/abort": api.AbortResult(aborted=False),
    "agent/respondPermission": api.EmptyResult(),
    "agent/closeSession": api.EmptyResult(),
    "agent/deleteSession": api.DeleteSessionResult(
        deleted=True, warnings=["the worktree /h/wt/agent_1 was not removed by git: locked"]
    ),
    "agent/restartMcpServer": api.EmptyResult(),
    "agent/setMcpServerEnabled": api.EmptyResult(),
    "agent/respondAskUser": api.EmptyResult(),
    "agent/listSessions": api.ListSessionsResult(
        sessions=[
            api.SessionInfo(
                session_id="sess_1",
                title="fix the port",
                cwd="/w",
                created_at="2026-11-22T08:00:00.000Z",
                updated_at="2026-11-22T08:05:00.000Z",
                turns=2,
            )
        ],
        next_cursor="sess_1",
    ),
    "agent/resumeSession": api.ResumeSessionResult(
        session_id="sess_1",
        messages=[
            api.DisplayMessage(
                message_id="msg_1",
                role="user",
                content=[{"type": "text", "text": "hi"}],
                turn_id="turn_1",
            )
        ],
        model="scripted",
        tools=["Read"],
        permission_mode="default",
        sandbox=api.SandboxState(
            mode="danger-full-access",
            active=False,
            network=True,
            writable_paths=[],
            note="Bash runs without a sandbox (danger-full-access): bwrap is not installed.",
        ),
    ),
    "agent/compact": api.CompactResult(tokens_before=170_000, tokens_after=40_000),
    "agent/setPermissionMode": api.EmptyResult(),
    "agent/setModel": api.EmptyResult(),
    "agent/listModels": api.ListModelsResult(
        provider="openai",
        models=[
            api.ModelEntry(id="gpt-4.1", current=True),
            api.ModelEntry(id="gpt-4o", display_name="GPT-4o"),
        ],
        cached=False,
    ),
    "agent/providerStatus": api.ProviderStatusResult(
        provider=None,
        model="claude-sonnet-4-5",
        permission_mode="default",
        configured=False,
        problem="No model provider is configured.",
    ),
    "agent/noteUserAction": api.EmptyResult(),
    "agent/continueTurn": api.ContinueTurnResult(turn_id="turn_2"),
    "agent/listMcpServers": api.ListMcpServersResult(
        servers=[
            api.McpServerEntry(
                name="docs",
                status="ready",
                transport="stdio",
                source=".mcp.json",
                attempts=1,
                server_version="1.0.0",
                tools=[
                    api.McpToolEntry(
                        name="mcp__docs__search",
                        server_name="search",
                        description="Searches the docs",
                        read_only=True,
                    )
                ],
                resources=[api.McpResourceEntry(uri="docs://index", name="index")],
                prompts=[
                    api.McpPromptEntry(
                        name="explain",
                        arguments=[api.McpPromptArgumentEntry(name="topic", required=True)],
                    )
                ],
            ),
            api.McpServerEntry(
                name="off",
                status="disabled",
                transport="stdio",
                source="user settings",
                attempts=0,
                tools=[],
                resources=[],
                prompts=[],
            ),
            api.McpServerEntry(
                name="db",
                status="failed",
                transport="http",
                source="agent/newSession",
                error="it did not start within 10 s",
                attempts=3,
                tools=[],
                resources=[],
                prompts=[],
            ),
        ]
    ),
    "agent/listTasks": api.ListTasksResult(
        tasks=[
            api.TaskInfo(
                agent_id="agent_1",
                subagent_type="explore",
                description="Find the port",
                status="completed",
                started_at="2026-11-25T04:00:00.000Z",
                duration_ms=1234,
            )
        ]
    ),
    "agent/stopTask": api.StopTaskResult(stopped=True),
    "agent/listShells": api.ListShellsResult(
        shells=[
            api.ShellInfo(
                shell_id="shell_1",
                command="npm run dev",
                description="Start the dev server",
                status="running",
                pid=4242,
                started_at="2026-11-25T04:00:00.000Z",
                output_chars=1280,
            ),
            api.ShellInfo(
                shell_id="shell_2",
                command="npm test",
                status="exited",
                exit_code=1,
                pid=4250,
                started_at="2026-11-25T04:01:00.000Z",
                output_chars=0,
            ),
        ]
    ),
    "agent/listPermissionRules": api.PermissionRulesResult(
        rules=[api.PermissionRuleInfo(rule="Bash(npm test:*)", behavior="allow", scope="project")]
    ),
    "agent/updatePermissionRules": api.PermissionRulesResult(rules=[]),
    "agent/listCommands": api.ListCommandsResult(
        commands=[
            api.CommandInfoParam(name="cost", description="Show the spend", source="builtin"),
            api.CommandInfoParam(
                name="frontend:component",
                description="Make a component",
                argument_hint="<name>",
                source="project",
            ),
        ]
    ),
    "agent/getMessages": api.GetMessagesResult(
        messages=[
            api.DisplayMessage(
                message_id="msg_0", role="assistant", content=[{"type": "text", "text": "ok"}]
            )
        ],
        next_cursor="150",
    ),
    "agent/forkSession": api.ResumeSessionResult(
        session_id="sess_2",
        messages=[],
        model="scripted",
        tools=["Read"],
        permission_mode="default",
        plan=[api.PlanEntryParam(content="Fix it", status="pending", priority="high")],
    ),
    "agent/rewind": api.RewindResult(
        restored=["/w/app.py"],
        deleted=["/w/new.py"],
        conflicts=[api.FileProblem(path="/w/b.py", reason="changed since the agent last wrote it")],
        failed=[],
        messages_removed=4,
        removed_message_ids=["msg_1", "msg_2", "msg_3", "msg_4"],
    ),
    "agent/turnDiff": api.TurnDiffResult(
        files=[
            api.FileChangeInfo(
                path="/w/new.py",
                diff="--- /dev/null\n+++ b/new.py\n@@ -0,0 +1 @@\n+x = 1\n",
                added=1,
                removed=0,
                created=True,
                deleted=False,
            )
        ]
    ),
    "agent/listWorktrees": api.ListWorktreesResult(
        worktrees=[
            WorktreeEntry(
                agent_id="agent_1",
                description="Add the parser",
                path="/home/u/.agentls/sessions/sess_1/worktrees/agent_1",
                branch="agentls/agent_1",
                base_commit="0123456789abcdef0123456789abcdef01234567",
                repository="/w",
                turn_id="turn_1",
                status="ready",
                files=[WorktreeFileEntry(path="parse.py", status="added", added=12, removed=0)],
                added=12,
                removed=0,
            ),
            WorktreeEntry(
                agent_id="agent_2",
                description="Fix the tests",
                path="/home/u/.agentls/sessions/sess_1/worktrees/agent_2",
                branch="agentls/agent_2",
                base_commit="0123456789abcdef0123456789abcdef01234567",
                repository="/w",
                status="running",
            ),
        ]
    ),
    "agent/worktreeDiff": api.TurnDiffResult(
        files=[
            api.FileChangeInfo(
                path="/w/parse.py",
                diff="--- /dev/null\n+++ b/parse.py\n@@ -0,0 +1 @@\n+x = 1\n",
                added=1,
                removed=0,
                created=True,
                deleted=False,
            )
        ]
    ),
    "agent/resolveWorktree": api.ResolveWorktreeResult(
        action="merge",
        resolved=False,
        merged=[],
        conflicts=[
            MergeConflictEntry(
                path="/w/app.py", reason="the agent and your working tree changed the same lines"
            )
        ],
    ),
}


def test_samples_cover_every_request() -> None:
    assert set(SAMPLE_PARAMS) == set(api.REQUESTS) == set(SAMPLE_RESULTS)


def _accepts(model: type[api.WireModel], params: dict[str, Any]) -> bool:
    try:
        model.model_validate(params)
    except ValidationError:
        return False
    return True


@pytest.mark.parametrize("method", sorted(api.REQUESTS))
def test_request_params_and_results_validate(method: str) -> None:
    params_model, result_model = api.REQUESTS[method]
    params_validator = _request_validator(method, "params")
    params = SAMPLE_PARAMS[method]
    assert _accepts(params_model, params)
    assert _errors(params_validator, params) == []
    assert (_errors(params_validator, {}) == []) == _accepts(params_model, {})
    result = SAMPLE_RESULTS[method]
    assert isinstance(result, result_model)
    assert _errors(_request_validator(method, "result"), _dump(result)) == []


async def test_a_real_new_session_result_validates(tmp_path: Path) -> None:
    manager = SessionManager(lambda _e: None, env={"AGENTLS_HOME": str(tmp_path / "home")})
    session = await manager.create(tmp_path, {"provider": "scripted", "script": []})
    try:
        result = api.NewSessionResult(
            session_id=session.id,
            model=session.model,
            tools=session.registry.names(),
            permission_mode=session.gate.mode,
        )
    finally:
        await manager.close_all()
    assert _errors(_request_validator("agent/newSession", "result"), _dump(result)) == []


def test_invalid_params_fail_the_schema_as_they_fail_the_daemon() -> None:
    cases = {
        "agent/submitMessage": {"sessionId": "sess_1", "text": "hi", "delivery": "now"},
        "agent/respondPermission": {"sessionId": "s", "requestId": "p", "optionId": "yes"},
        "agent/setModel": {"sessionId": "s", "model": ""},
        "agent/newSession": {"maxTurns": -2},
        "agent/abort": {"turnId": "turn_1"},
        "agent/inlineEdit": {"sessionId": "s", "uri": "file:///a", "range": {}, "instruction": ""},
    }
    for method, params in cases.items():
        assert not _accepts(api.REQUESTS[method][0], params), (method, params)
        assert _errors(_request_validator(method, "params"), params), (method, params)


def test_editor_state_notification_validates() -> None:
    validator = _request_validator("agent/didChangeEditorState", "params", notification=True)
    state = {
        "activeUri": "file:///w/a.py",
        "selections": [{"start": {"line": 1, "character": 0}, "end": {"line": 1, "character": 4}}],
        "visibleRanges": [],
    }
    api.EditorStateParams.model_validate(state)
    assert _errors(validator, state) == []
    assert _errors(validator, {"selections": [{"start": {"line": -1, "character": 0}}]})
