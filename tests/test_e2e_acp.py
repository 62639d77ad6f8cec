"""`agentls acp` end to end: the real daemon as a subprocess, the ACP SDK's own client side
(tests/acp_client.py) playing the editor, a scripted model playing the model."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError
from acp import schema as acp

from acp_client import EditorClient, acp_agent, agent_text, requests_log, scripted
from test_bash_sandbox import BWRAP_PROBLEM
from test_e2e_mcp import http_server

MCP_SERVER = Path(__file__).parent / "mcp_fixture_server.py"


def text(value: str) -> list[Any]:
    return [acp.TextContentBlock(type="text", text=value)]


def workspace(tmp_path: Path, files: dict[str, str] | None = None) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    for name, content in (files or {}).items():
        (ws / name).write_text(content, encoding="utf-8")
    return ws


def tool_results(tmp_path: Path) -> str:
    """Everything the model was sent, as one string (tool results included)."""
    return json.dumps(requests_log(tmp_path)[-1])


async def one_prompt(
    client: EditorClient,
    cwd: Any,
    meta: dict[str, Any],
    prompt: list[Any],
    **capabilities: bool,
) -> tuple[str, acp.PromptResponse]:
    """A new agent, a session at `cwd` with `meta` (a script), one prompt: the session's
    id and the prompt's answer."""
    async with acp_agent(client, **capabilities) as (conn, _init):
        session = await conn.new_session(cwd=str(cwd), mcp_servers=[], **meta)
        return session.session_id, await conn.prompt(session_id=session.session_id, prompt=prompt)


READ_THEN_EDIT = [
    {
        "text": "Reading.",
        "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "a.py"}}],
    },
    {
        "text": "",
        "tool_calls": [
            {
                "id": "t2",
                "name": "Edit",
                "input": {"file_path": "a.py", "old_string": "x = 2", "new_string": "x = 3"},
            }
        ],
    },
    {"text": "Done."},
]


async def test_initialize_says_what_the_agent_does(tmp_path: Path) -> None:
    client = EditorClient()
    async with acp_agent(client) as (conn, init):
        caps = init.agent_capabilities
        assert init.protocol_version == 1
        assert caps is not None and caps.load_session
        assert caps.prompt_capabilities is not None
        assert caps.prompt_capabilities.image and caps.prompt_capabilities.embedded_context
        assert caps.mcp_capabilities is not None and caps.mcp_capabilities.http
        assert init.agent_info is not None and init.agent_info.name == "agentls"
        variables = {v.name for m in init.auth_methods or [] for v in m.vars}
        assert variables == {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}
        # No key in the environment: session/new says which variable to set.
        with pytest.raises(RequestError) as failed:
            await conn.new_session(cwd=str(workspace(tmp_path)), mcp_servers=[])
        assert failed.value.code == -32000
        assert "API_KEY" in str(failed.value)


async def test_a_prompt_reads_the_unsaved_buffer_and_writes_through_the_editor(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 1\n"})
    client = EditorClient()
    client.auto_permission = "allow_once"
    client.buffers[str(ws / "a.py")] = "x = 2  # unsaved\n"
    session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, READ_THEN_EDIT), text("fix a.py")
    )
    sid = session_id
    assert answer.stop_reason == "end_turn"
    assert answer.usage is not None and answer.usage.output_tokens > 0
    assert agent_text(client, sid) == "Reading.Done."
    starts = {u["toolCallId"]: u for u in client.of(sid, "tool_call")}
    assert starts["t1"]["kind"] == "read" and starts["t1"]["title"] == "Read a.py"
    assert starts["t1"]["locations"][0]["path"] == str(ws / "a.py")
    ends = {
        u["toolCallId"]: u
        for u in client.of(sid, "tool_call_update")
        if u["status"] in ("completed", "failed")
    }
    # The model read the editor's text, not the disk's.
    read = ends["t1"]["content"][0]["content"]["text"]
    assert "x = 2  # unsaved" in read
    diff = ends["t2"]["content"][0]
    assert diff == {
        "type": "diff",
        "path": str(ws / "a.py"),
        "oldText": "x = 2  # unsaved\n",
        "newText": "x = 3  # unsaved\n",
        "_meta": None,
    }
    # Where the change is, now that it is made, for a client that follows the agent.
    assert ends["t2"]["locations"] == [{"path": str(ws / "a.py"), "line": 0, "_meta": None}]
    # The edit went through the editor's fs/write_text_file, after its call was shown
    # running.
    assert client.writes == [(str(ws / "a.py"), "x = 3  # unsaved\n")]
    incoming = [m for way, m in client.wire if way == "incoming"]
    write = next(i for i, m in enumerate(incoming) if m.get("method") == "fs/write_text_file")
    running = next(
        i
        for i, m in enumerate(incoming)
        if m.get("method") == "session/update"
        and m["params"]["update"].get("toolCallId") == "t2"
        and m["params"]["update"].get("status") == "in_progress"
    )
    assert running < write
    assert (ws / "a.py").read_text(encoding="utf-8") == "x = 3  # unsaved\n"
    # The permission request described its call, with the change to review.
    [request] = client.permission_requests
    call = request["toolCall"]
    assert call["toolCallId"] == "t2" and call["kind"] == "edit"
    assert call["content"][0]["newText"] == "x = 3  # unsaved\n"
    kinds = [o["kind"] for o in request["options"]]
    assert kinds == ["allow_once", "allow_always", "reject_once", "reject_always"]
    assert "Edit(./a.py)" in request["options"][1]["name"]
    assert client.of(sid, "usage_update")
    # The session got its title from the first message.
    [info] = client.of(sid, "session_info_update")
    assert info["title"] == "fix a.py" and info["updatedAt"].endswith("Z")


async def test_without_fs_the_agent_reads_and_writes_the_disk(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 2\n"})
    client = EditorClient()
    client.auto_permission = "allow_once"
    client.buffers[str(ws / "a.py")] = "never read\n"
    _session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, READ_THEN_EDIT), text("fix a.py"), fs=False
    )
    assert answer.stop_reason == "end_turn"
    assert client.reads == [] and client.writes == []
    assert (ws / "a.py").read_text(encoding="utf-8") == "x = 3\n"


async def test_always_allow_is_remembered_for_the_next_call(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "a = 1\nb = 1\n"})
    script = [
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "a.py"}}]},
        {"tool_calls": [_edit("e1", "a = 1", "a = 2")]},
        {"tool_calls": [_edit("e2", "b = 1", "b = 2")]},
        {"text": "Both changed."},
    ]
    client = EditorClient()
    client.auto_permission = "allow_always"
    _session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, script), text("change both")
    )
    assert answer.stop_reason == "end_turn"
    assert len(client.permission_requests) == 1
    assert (ws / "a.py").read_text(encoding="utf-8") == "a = 2\nb = 2\n"
    # Kept for the next sessions in the project's personal, git-ignored settings file.
    saved = json.loads((ws / ".agentls" / "settings.local.json").read_text(encoding="utf-8"))
    assert saved == {"permissions": {"allow": ["Edit(./a.py)"]}}
    assert (ws / ".agentls" / ".gitignore").read_text(encoding="utf-8") == "settings.local.json\n"


def _edit(call_id: str, old: str, new: str) -> dict[str, Any]:
    return {
        "id": call_id,
        "name": "Edit",
        "input": {"file_path": "a.py", "old_string": old, "new_string": new},
    }


async def test_cancel_with_a_pending_permission_ends_the_turn_cancelled_once(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"a.py": "a = 1\n"})
    script = [
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "a.py"}}]},
        {"text": "Changing it.", "tool_calls": [_edit("e1", "a = 1", "a = 2")]},
        {"text": "Fresh answer."},
    ]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("change a")))
        pending = await client.next_permission()
        await conn.cancel(session_id=sid)
        # The client answers its pending request `cancelled`, as ACP requires.
        pending.set_result({"outcome": "cancelled"})
        answer = await asyncio.wait_for(turn, 20)
        assert answer.stop_reason == "cancelled"
        ended = [u for u in client.of(sid, "tool_call_update") if u["toolCallId"] == "e1"][-1]
        assert ended["status"] == "failed"
        assert (ws / "a.py").read_text(encoding="utf-8") == "a = 1\n"
        # The session goes on: the next prompt is a turn of its own.
        again = await conn.prompt(session_id=sid, prompt=text("and now?"))
    assert again.stop_reason == "end_turn"
    assert agent_text(client, sid).endswith("Fresh answer.")


async def test_cancel_stops_a_streaming_answer(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    script = [{"text": "This answer never finishes", "hang": True}, {"text": "Next."}]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=text("go")))
        await client.wait_for(lambda: client.of(sid, "agent_message_chunk"))
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(turn, 20)).stop_reason == "cancelled"
        assert (await conn.prompt(session_id=sid, prompt=text("again"))).stop_reason == "end_turn"


async def test_load_replays_the_whole_history_before_answering(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"a.py": "x = 2\n"})
    first = EditorClient()
    first.auto_permission = "allow_once"
    async with acp_agent(first) as (conn, _init):
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[], **scripted(tmp_path, READ_THEN_EDIT)
        )
        await conn.prompt(session_id=session.session_id, prompt=text("fix a.py"))
    sid = session.session_id
    later = EditorClient()
    async with acp_agent(later) as (conn, _init):
        listed = await conn.list_sessions(cwd=str(ws))
        assert [s.session_id for s in listed.sessions] == [sid]
        loaded = await conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
        assert loaded is not None and loaded.modes is not None
        replayed = [u["sessionUpdate"] for u in later.updates_before_response("session/load")]
    kinds = [k for k in replayed if k not in ("available_commands_update", "usage_update")]
    assert kinds[:4] == [
        "user_message_chunk",
        "agent_message_chunk",
        "tool_call",
        "tool_call_update",
    ]
    assert kinds.count("tool_call") == 2 and kinds.count("tool_call_update") == 2
    user = later.of(sid, "user_message_chunk")[0]["content"]["text"]
    assert user == "fix a.py"
    calls = {u["toolCallId"]: u for u in later.of(sid, "tool_call")}
    assert calls["t1"]["kind"] == "read" and calls["t1"]["title"] == "Read a.py"
    assert calls["t2"]["content"][0]["type"] == "diff"
    assert calls["t2"]["content"][0]["newText"] == "x = 3"
    results = {u["toolCallId"]: u for u in later.of(sid, "tool_call_update")}
    assert results["t1"]["status"] == "completed"
    assert "x = 2" in results["t1"]["content"][0]["content"]["text"]
    assert agent_text(later, sid) == "Reading.Done."


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_an_mcp_server_from_session_new_gives_tools(tmp_path: Path, transport: str) -> None:
    with contextlib.ExitStack() as stack:
        server: Any
        if transport == "http":
            url = stack.enter_context(http_server())
            header = acp.HttpHeader(name="X-Test", value="1")
            server = acp.HttpMcpServer(type="http", name="fx", url=url, headers=[header])
        else:
            server = acp.McpServerStdio(
                name="fx", command=sys.executable, args=[str(MCP_SERVER)], env=[]
            )
        await _echo_through(tmp_path, server)


async def _echo_through(tmp_path: Path, server: Any) -> None:
    ws = workspace(tmp_path)
    script = [
        {"tool_calls": [{"id": "m1", "name": "mcp__fx__echo", "input": {"text": "hello"}}]},
        {"text": "It answered."},
    ]
    client = EditorClient()
    client.auto_permission = "allow_once"
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(
            cwd=str(ws), mcp_servers=[server], **scripted(tmp_path, script)
        )
        answer = await conn.prompt(session_id=session.session_id, prompt=text("echo"))
    assert answer.stop_reason == "end_turn"
    done = [
        u
        for u in client.of(session.session_id, "tool_call_update")
        if u["toolCallId"] == "m1" and u["status"] == "completed"
    ]
    assert done and "echo: hello" in done[0]["content"][0]["content"]["text"]


@pytest.mark.parametrize("terminal", [True, False])
async def test_bash_runs_in_the_clients_terminal_when_offered(
    tmp_path: Path, terminal: bool
) -> None:
    ws = workspace(tmp_path)
    command = "echo hi-from-bash; exit 3"
    script = [
        {"tool_calls": [{"id": "b1", "name": "Bash", "input": {"command": command}}]},
        {"text": "Ran it."},
    ]
    client = EditorClient()
    client.auto_permission = "allow_once"
    session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, script), text("run it"), terminal=terminal
    )
    assert answer.stop_reason == "end_turn"
    # The model heard the output and the exit code either way.
    sent = tool_results(tmp_path)
    assert "hi-from-bash" in sent and "Exit code 3" in sent
    updates = [u for u in client.of(session_id, "tool_call_update")]
    final = [u for u in updates if u["toolCallId"] == "b1"][-1]
    assert final["status"] == "failed"
    if terminal:
        # In the default sandbox where bwrap works (the box's command line around it).
        [ran] = client.terminal_commands
        assert ran[-3:] == ["/bin/bash", "-c", command]
        assert ran[0].endswith("bwrap") if BWRAP_PROBLEM is None else len(ran) == 3
        [(terminal_id, shown)] = client.terminals.items()
        assert shown.released
        assert final["content"] == [{"type": "terminal", "terminalId": terminal_id, "_meta": None}]
    else:
        assert client.terminals == {}
        assert "hi-from-bash" in final["content"][0]["content"]["text"]


async def test_modes_and_models_are_session_modes_and_config_options(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    client = EditorClient()
    script = [{"text": "unused"}]
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        sid = session.session_id
        assert session.modes is not None and session.modes.current_mode_id == "default"
        assert [m.id for m in session.modes.available_modes] == [
            "default",
            "acceptEdits",
            "plan",
            "bypassPermissions",
        ]
        ids = [o.root.id if hasattr(o, "root") else o.id for o in session.config_options or []]
        assert ids == ["mode", "model"]
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        changed = await conn.set_config_option(
            session_id=sid, config_id="mode", value="acceptEdits"
        )
        assert changed is not None
        mode = _option(changed.config_options, "mode")
        assert mode.current_value == "acceptEdits"
        with pytest.raises(RequestError) as bad:
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
        assert bad.value.code == -32602
        # A /mode command changes it from the prompt, and the client hears of it.
        answer = await conn.prompt(session_id=sid, prompt=text("/mode plan"))
        assert answer.stop_reason == "end_turn"
        modes = [u["currentModeId"] for u in client.of(sid, "current_mode_update")]
        assert modes[-1] == "plan"
        commands = client.of(sid, "available_commands_update")
        names = {c["name"] for c in commands[0]["availableCommands"]}
        assert {"compact", "mode", "model", "cost"} <= names


def _option(options: Any, option_id: str) -> Any:
    for option in options:
        value = getattr(option, "root", option)
        if value.id == option_id:
            return value
    raise AssertionError(option_id)


async def test_prompt_blocks_become_the_message_and_its_attachments(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"notes.md": "line one\nline two\nline three\n"})
    client = EditorClient()
    png = (Path(__file__).parent / "fixtures").glob("**/*.png")
    image = next(png, None)
    blocks: list[Any] = [
        acp.TextContentBlock(type="text", text="Look at "),
        acp.ResourceContentBlock(
            type="resource_link", uri=(ws / "notes.md").as_uri() + "#L2:2", name="notes.md"
        ),
        acp.TextContentBlock(type="text", text=" and "),
        acp.EmbeddedResourceContentBlock(
            type="resource",
            resource=acp.TextResourceContents(
                uri=(ws / "draft.py").as_uri(), text="print('unsaved draft')"
            ),
        ),
    ]
    if image is not None:
        data = __import__("base64").b64encode(image.read_bytes()).decode()
        blocks.append(acp.ImageContentBlock(type="image", data=data, mime_type="image/png"))
    _session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, [{"text": "Seen."}]), blocks
    )
    assert answer.stop_reason == "end_turn"
    sent = tool_results(tmp_path)
    assert "Look at @notes.md#L2-2 and @draft.py" in sent
    assert "line two" in sent and "line one" not in sent
    assert "print(&#x27;unsaved draft&#x27;)" in sent or "print('unsaved draft')" in sent


async def test_unknown_sessions_and_bad_params_are_clear_errors(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        # Every method naming a session answers an unknown one with ACP's -32002
        # (resource not found), the id in its message and in `data.sessionId`.
        calls = {
            "session/prompt": conn.prompt(session_id="sess_nope", prompt=text("hi")),
            "session/load": conn.load_session(cwd=str(ws), session_id="sess_nope", mcp_servers=[]),
            "session/resume": conn.resume_session(cwd=str(ws), session_id="sess_nope"),
            "session/fork": conn.fork_session(cwd=str(ws), session_id="sess_nope"),
            "session/set_mode": conn.set_session_mode(session_id="sess_nope", mode_id="plan"),
            "session/set_config_option": conn.set_config_option(
                config_id="model", session_id="sess_nope", value="m"
            ),
            "session/close": conn.close_session(session_id="sess_nope"),
        }
        for method, call in calls.items():
            with pytest.raises(RequestError) as unknown:
                await call
            error = unknown.value
            assert (error.code, error.data) == (-32002, {"sessionId": "sess_nope"}), method
            assert "'sess_nope'" in str(error), method
        with pytest.raises(RequestError) as relative:
            await conn.new_session(cwd="relative/dir", mcp_servers=[])
        assert relative.value.code == -32602
        # A cancel for no session is a notification: ignored, the agent keeps serving.
        await conn.cancel(session_id="sess_nope")
        listed = await conn.list_sessions(cwd=str(tmp_path))
        assert listed.sessions == []


async def test_malformed_lines_are_answered_and_the_agent_keeps_serving() -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "acp",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        env=dict(os.environ),
    )
    assert process.stdin is not None and process.stdout is not None
    initialize = {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "initialize",
        "params": {"protocolVersion": 1},
    }
    lines = [
        b"{not json\n",
        b"[1, 2]\n",
        # Shaped like a response (to nothing the agent sent): dropped, never answered.
        b'{"jsonrpc": "2.0", "id": 4}\n',
        b'{"jsonrpc": "2.0", "id": 3, "method": 5}\n',
    ]
    for line in lines:
        process.stdin.write(line)
    process.stdin.write(json.dumps(initialize).encode() + b"\n")
    await process.stdin.drain()
    answers = [json.loads(await asyncio.wait_for(process.stdout.readline(), 20)) for _ in range(4)]
    process.stdin.close()
    await asyncio.wait_for(process.wait(), 20)
    assert [a.get("error", {}).get("code") for a in answers[:3]] == [-32700, -32600, -32600]
    assert answers[2]["id"] == 3
    assert answers[3]["id"] == 7 and answers[3]["result"]["protocolVersion"] == 1
    assert process.returncode == 0


async def test_a_sub_agents_calls_are_nested_under_its_task_call(tmp_path: Path) -> None:
    ws = workspace(tmp_path, {"app.py": "port = 8000\n"})
    task = {
        "id": "t1",
        "name": "Task",
        "input": {
            "description": "Find the port",
            "prompt": "Find the port",
            "subagent_type": "explore",
        },
    }
    script = [
        {"tool_calls": [task]},
        {
            "for": "Find the port",
            "tool_calls": [{"id": "g1", "name": "Grep", "input": {"pattern": "port"}}],
        },
        {"for": "Find the port", "text": "app.py:1 sets port = 8000."},
        {"text": "The port is set in app.py."},
    ]
    client = EditorClient()
    session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, script), text("where?")
    )
    sid = session_id
    assert answer.stop_reason == "end_turn"
    starts = {u["toolCallId"]: u for u in client.of(sid, "tool_call")}
    assert starts["t1"]["_meta"] is None
    nested = starts["g1"]["_meta"]["agentls"]
    assert nested["parentToolCallId"] == "t1" and nested["agentId"]
    # The child's answer is its Task call's result, not part of the parent's answer.
    assert agent_text(client, sid) == "The port is set in app.py."
    result = [u for u in client.of(sid, "tool_call_update") if u["toolCallId"] == "t1"][-1]
    assert result["status"] == "completed"
    assert "app.py:1 sets port = 8000." in result["content"][0]["content"]["text"]


def _ask(question: str, choices: list[str] | None = None) -> dict[str, Any]:
    arguments: dict[str, Any] = {"question": question}
    if choices:
        arguments["choices"] = choices
    return {"tool_calls": [{"id": "q1", "name": "AskUser", "input": arguments}]}


@pytest.mark.parametrize("form", [True, False])
async def test_ask_user_choices_reach_the_person(tmp_path: Path, form: bool) -> None:
    script = [_ask("Which port?", ["8000", "8080"]), {"text": "Using it."}]
    client = EditorClient()
    client.auto_permission = "choice-1"
    client.elicitation_answer = {"answer": "8080"}
    _session_id, answer = await one_prompt(
        client,
        str(workspace(tmp_path)),
        scripted(tmp_path, script),
        text("set it up"),
        elicitation=form,
    )
    assert answer.stop_reason == "end_turn"
    assert "The user answered: 8080" in tool_results(tmp_path)
    if form:
        [asked] = client.elicitations
        assert asked["message"] == "Which port?" and asked["toolCallId"] == "q1"
        assert asked["requestedSchema"]["properties"]["answer"]["enum"] == ["8000", "8080"]
        assert client.permission_requests == []
    else:
        [asked] = client.permission_requests
        assert asked["toolCall"]["title"] == "Which port?"
        assert [o["name"] for o in asked["options"]] == ["8000", "8080"]


async def test_a_free_text_question_needs_a_form(tmp_path: Path) -> None:
    script = [_ask("What should the service be called?"), {"text": "Named."}]
    client = EditorClient()
    client.elicitation_answer = {"answer": "ledger"}
    _session_id, answer = await one_prompt(
        client,
        str(workspace(tmp_path)),
        scripted(tmp_path, script),
        text("name it"),
        elicitation=True,
    )
    assert answer.stop_reason == "end_turn"
    assert "The user answered: ledger" in tool_results(tmp_path)
    schema = client.elicitations[0]["requestedSchema"]["properties"]["answer"]
    assert "enum" not in schema


async def test_a_change_to_an_unread_file_is_refused_before_anyone_is_asked(
    tmp_path: Path,
) -> None:
    ws = workspace(tmp_path, {"a.py": "a = 1\n"})
    script = [{"tool_calls": [_edit("e1", "a = 1", "a = 2")]}, {"text": "It must be read first."}]
    client = EditorClient()
    client.auto_permission = "allow_once"
    session_id, answer = await one_prompt(
        client, str(ws), scripted(tmp_path, script), text("change a")
    )
    assert answer.stop_reason == "end_turn"
    assert client.permission_requests == [] and client.writes == []
    final = client.of(session_id, "tool_call_update")[-1]
    assert final["toolCallId"] == "e1" and final["status"] == "failed"
    assert "has not been read yet" in final["content"][0]["content"]["text"]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is gone for our purposes (its parent has not reaped it yet).
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        return stat.read().rsplit(")", 1)[1].split()[0] != "Z"


async def test_sigterm_ends_the_agent_and_every_command_it_started(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    background = {"command": "echo $$ > bg.pid; exec sleep 301", "run_in_background": True}
    script = [
        {"tool_calls": [{"id": "b1", "name": "Bash", "input": background}]},
        {
            "tool_calls": [
                {
                    "id": "b2",
                    "name": "Bash",
                    "input": {"command": "echo $$ > fg.pid; exec sleep 300"},
                }
            ]
        },
        {"text": "never reached"},
    ]
    client = EditorClient()
    client.auto_permission = "allow_once"
    # Unconfined: in the sandbox's pid namespace `$$` is not the host's pid.
    unboxed = scripted(tmp_path, script, sandbox={"mode": "danger-full-access"})
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **unboxed)
        turn = asyncio.create_task(conn.prompt(session_id=session.session_id, prompt=text("go")))
        files = [ws / "fg.pid", ws / "bg.pid"]
        async with asyncio.timeout(20):
            while not all(f.exists() and f.read_text().strip() for f in files):
                await asyncio.sleep(0.05)
        pids = [int(f.read_text()) for f in files]
        assert all(_alive(pid) for pid in pids)
        client.process.terminate()
        assert await asyncio.wait_for(client.process.wait(), 20) == 0
        with contextlib.suppress(ConnectionError):
            await turn  # the connection closed with the agent: no answer comes
    # Both commands went with the agent, and the turn's end was recorded.
    deadline = asyncio.get_running_loop().time() + 10
    while any(_alive(pid) for pid in pids) and asyncio.get_running_loop().time() < deadline:
        await asyncio.sleep(0.1)
    assert not any(_alive(pid) for pid in pids)
    home = Path(os.environ["AGENTLS_HOME"])
    records = (home / "sessions" / f"{session.session_id}.jsonl").read_text(encoding="utf-8")
    assert '"stopReason": "aborted"' in records or '"stopReason":"aborted"' in records


async def test_resume_and_fork_go_on_from_the_history(tmp_path: Path) -> None:
    ws = workspace(tmp_path)
    # A fork keeps its source's settings, the scripted model's script too (played afresh).
    script = [{"text": "An answer."}]
    client = EditorClient()
    async with acp_agent(client) as (conn, _init):
        session = await conn.new_session(cwd=str(ws), mcp_servers=[], **scripted(tmp_path, script))
        await conn.prompt(session_id=session.session_id, prompt=text("first question"))
        resumed = await conn.resume_session(
            cwd=str(ws), session_id=session.session_id, mcp_servers=[]
        )
        assert resumed.modes is not None
        # A resume replays nothing: the client has the thread already.
        assert client.updates_before_response("session/resume") == []
        fork = await conn.fork_session(cwd=str(ws), session_id=session.session_id, mcp_servers=[])
        assert fork.session_id != session.session_id
        answer = await conn.prompt(session_id=fork.session_id, prompt=text("and then?"))
        assert answer.stop_reason == "end_turn"
        await conn.close_session(session_id=session.session_id)
        with pytest.raises(RequestError) as closed:
            await conn.prompt(session_id=session.session_id, prompt=text("still there?"))
        assert closed.value.code == -32002
    # The fork's model saw the original conversation before its own question.
    sent = tool_results(tmp_path)
    assert "first question" in sent and "An answer." in sent and "and then?" in sent
    assert agent_text(client, fork.session_id) == "An answer."


def test_stdin_or_stdout_that_is_no_stream_gets_a_clear_error(tmp_path: Path) -> None:
    """Started by hand with a file or /dev/null where an editor's pipe belongs: one line
    that says so, exit 2, no traceback (asyncio cannot poll such a descriptor)."""
    import subprocess
    import sys

    command = [sys.executable, "-m", "agentls", "acp"]
    from_null = subprocess.run(
        command, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=60
    )
    assert from_null.returncode == 2
    assert from_null.stderr.startswith("agentls acp: stdin is a device that is not a terminal")
    with (tmp_path / "out.json").open("w") as out:
        to_file = subprocess.run(
            command, input="", stdout=out, stderr=subprocess.PIPE, text=True, timeout=60
        )
    assert to_file.returncode == 2
    assert "stdout is a file" in to_file.stderr and "Traceback" not in to_file.stderr
    over_pipes = subprocess.run(command, input="", capture_output=True, text=True, timeout=60)
    assert over_pipes.returncode == 0, over_pipes.stderr
