"""The sandbox's modes through the real daemon and real bubblewrap: what each lets a command
and the file tools write, the default, and the one rerun outside the box that only the
user's approval allows (after a denied write or a cut connection, or asked up front)."""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_client import AgentClient, read_requests, running_daemon
from terminal_run import run_on_a_terminal
from test_bash_sandbox import needs_bwrap
from test_cli_warm import environment

pytestmark = needs_bwrap


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory neither in the workspace nor in /tmp (so read-only in the box)."""
    folder = Path(tempfile.mkdtemp(prefix="agentls-modes-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def listener() -> Iterator[int]:
    """A local TCP server (the test never reaches the internet)."""
    server = socket.create_server(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


def workspace(tmp_path: Path, **settings: Any) -> Path:
    """The workspace, whose settings allow Bash (so the only question is the sandbox's)."""
    root = tmp_path / "ws"
    (root / ".agentls").mkdir(parents=True)
    layer = {"permissions": {"allow": ["Bash"]}, **settings}
    (root / ".agentls" / "settings.json").write_text(json.dumps(layer), encoding="utf-8")
    return root


def calls(*tool_calls: dict[str, Any]) -> list[dict[str, Any]]:
    return [{"tool_calls": [call]} for call in tool_calls] + [{"text": "done"}]


def bash(command: str, **more: Any) -> dict[str, Any]:
    return {"name": "Bash", "input": {"command": command, **more}}


async def open_session(client: AgentClient, tmp_path: Path, script: Any, **params: Any) -> str:
    result = await client.new_session(
        tmp_path / "ws",
        provider="scripted",
        script=script,
        requestLog=str(tmp_path / "requests.jsonl"),
        **params,
    )
    session_id: str = result["sessionId"]
    return session_id


def tool_results(tmp_path: Path) -> list[str]:
    """Each tool result the model read, in order."""
    texts = []
    for message in read_requests(tmp_path / "requests.jsonl")[-1]["messages"]:
        for block in message["content"] if isinstance(message["content"], list) else []:
            if block.get("type") == "tool_result":
                content = block["content"]
                texts.append(content if isinstance(content, str) else json.dumps(content))
    return texts


def requests_of(client: AgentClient) -> list[dict[str, Any]]:
    return client.events.of_type("permission_request")


async def answer_next(client: AgentClient, session: str, option: str) -> dict[str, Any]:
    """Wait for a permission request not yet answered, and answer it with `option`."""
    answered = {e["requestId"] for e in client.events.of_type("permission_resolved")}
    request = await client.events.wait_for(
        lambda e: e["type"] == "permission_request" and e["requestId"] not in answered
    )
    params = {"sessionId": session, "requestId": request["requestId"], "optionId": option}
    await client.request("agent/respondPermission", params)
    await client.events.wait_for(
        lambda e: e["type"] == "permission_resolved" and e["requestId"] == request["requestId"]
    )
    return request


# --- what each mode lets a command write ---------------------------------------------------


@pytest.mark.parametrize("answer", ["allow_once", "reject_once"])
async def test_a_write_outside_the_workspace_is_denied_and_rerun_only_when_allowed(
    tmp_path: Path, outside: Path, answer: str
) -> None:
    workspace(tmp_path)
    target = outside / "escaped.txt"
    script = calls(bash(f"touch made.txt && echo out > {target}"))
    async with running_daemon(tmp_path) as client:
        session = await open_session(client, tmp_path, script)
        submitted = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "write it"}
        )
        request = await client.answer_permission(session, answer)
        done = await client.events.turn_completed(submitted["turnId"])
    assert done["stopReason"] == "end_turn"
    escalation = request["sandboxEscalation"]
    assert escalation["trigger"] == "failed_in_sandbox"
    assert escalation["command"] == f"touch made.txt && echo out > {target}"
    assert "Read-only file system" in escalation["reason"]
    assert [o["optionId"] for o in request["options"]] == ["allow_once", "reject_once"]
    assert request["title"].startswith("Run outside the sandbox: touch made.txt")
    assert (tmp_path / "ws" / "made.txt").exists()
    [result] = tool_results(tmp_path)
    if answer == "allow_once":
        assert target.read_text() == "out\n"
        assert result.endswith("(Ran outside the sandbox, as the user allowed.)")
    else:
        assert not target.exists()
        assert "Read-only file system" in result
        assert "Not rerun outside: the user kept it in the sandbox." in result


async def test_the_default_is_workspace_write(tmp_path: Path, outside: Path) -> None:
    # No `sandbox` setting anywhere, and bypassPermissions: nobody is asked, nothing leaves.
    workspace(tmp_path)
    script = calls(bash(f"touch made.txt && touch {outside}/escaped.txt"))
    async with running_daemon(tmp_path) as client:
        session = await open_session(client, tmp_path, script, permissionMode="bypassPermissions")
        _turn, done = await client.run_turn(session, "write it")
        assert requests_of(client) == []
    assert done["stopReason"] == "end_turn"
    assert (tmp_path / "ws" / "made.txt").exists()
    assert not (outside / "escaped.txt").exists()
    [result] = tool_results(tmp_path)
    assert "Not rerun outside: bypassPermissions mode asks nobody" in result


async def test_read_only_lets_commands_write_nothing(tmp_path: Path) -> None:
    workspace(tmp_path)
    marker = Path(tempfile.gettempdir()) / f"agentls-modes-{tmp_path.name}"
    script = calls(bash(f"echo x > /dev/null && touch made.txt; touch {marker}"))
    async with running_daemon(tmp_path) as client:
        session = await open_session(client, tmp_path, script, sandbox={"mode": "read-only"})
        submitted = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "write it"}
        )
        await client.answer_permission(session, "reject_once")
        await client.events.turn_completed(submitted["turnId"])
    assert not (tmp_path / "ws" / "made.txt").exists()
    assert not marker.exists()
    [result] = tool_results(tmp_path)
    assert "touch: cannot touch 'made.txt': Read-only file system" in result
    assert f"touch: cannot touch '{marker}': Read-only file system" in result


async def test_danger_full_access_runs_commands_unconfined(tmp_path: Path, outside: Path) -> None:
    workspace(tmp_path, sandbox={"mode": "danger-full-access"})
    script = calls(bash(f"touch {outside}/escaped.txt"))
    async with running_daemon(tmp_path) as client:
        result = await client.new_session(
            tmp_path / "ws", provider="scripted", script=script, requestLog=str(tmp_path / "r")
        )
        assert result["sandbox"] == {
            "mode": "danger-full-access",
            "active": False,
            "network": True,
            "writablePaths": [],
        }
        _turn, done = await client.run_turn(result["sessionId"], "write it")
        assert requests_of(client) == []
    assert done["stopReason"] == "end_turn"
    assert (outside / "escaped.txt").exists()


async def test_no_network_in_the_box_and_the_rerun_reaches_it(
    tmp_path: Path, listener: int
) -> None:
    workspace(tmp_path)
    command = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    async with running_daemon(tmp_path) as client:
        session = await open_session(client, tmp_path, calls(bash(command)))
        submitted = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "connect"}
        )
        request = await client.answer_permission(session, "allow_once")
        await client.events.turn_completed(submitted["turnId"])
    assert request["sandboxEscalation"]["reason"] == (
        'the sandbox has no network ("Connection refused")'
    )
    [result] = tool_results(tmp_path)
    assert result == "connected\n(Ran outside the sandbox, as the user allowed.)"


async def test_the_model_may_ask_up_front_with_a_justification(
    tmp_path: Path, outside: Path
) -> None:
    workspace(tmp_path)
    why = "It installs the tool into /var/tmp."
    first = bash(f"touch {outside}/first.txt", outside_sandbox=True, justification=why)
    second = bash(f"touch {outside}/second.txt", outside_sandbox=True, justification=why)
    async with running_daemon(tmp_path) as client:
        session = await open_session(client, tmp_path, calls(first, second))
        submitted = await client.request(
            "agent/submitMessage", {"sessionId": session, "text": "install"}
        )
        allowed = await answer_next(client, session, "allow_once")
        await answer_next(client, session, "reject_once")
        await client.events.turn_completed(submitted["turnId"])
    assert allowed["sandboxEscalation"] == {
        "command": f"touch {outside}/first.txt",
        "reason": why,
        "trigger": "model_request",
    }
    assert (outside / "first.txt").exists()
    assert not (outside / "second.txt").exists()
    ran, refused = tool_results(tmp_path)
    assert ran == "(Bash completed with no output)\n(Ran outside the sandbox, as the user allowed.)"
    assert refused == (
        "Not run: it was to run outside the sandbox, and the user kept it in the sandbox."
    )


# --- the file tools ------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["acceptEdits", "default"])
async def test_file_tools_refuse_every_write_in_read_only(tmp_path: Path, mode: str) -> None:
    root = workspace(tmp_path, sandbox={"mode": "read-only"}, applyPatchTool=True)
    (root / "a.txt").write_text("one\n", encoding="utf-8")
    patch = "*** Begin Patch\n*** Add File: b.txt\n+two\n*** End Patch"
    write = {"name": "Write", "input": {"file_path": "new.txt", "content": "x"}}
    edit = {"name": "Edit", "input": {"file_path": "a.txt", "old_string": "one", "new_string": "1"}}
    script = [
        {"tool_calls": [{"name": "Read", "input": {"file_path": "a.txt"}}]},
        # Two failed rounds, not three (which would end the turn).
        {"tool_calls": [write, edit]},
        {"tool_calls": [{"name": "apply_patch", "input": {"input": patch}}]},
        {"text": "done"},
    ]
    async with running_daemon(tmp_path) as client:
        session = await open_session(client, tmp_path, script, permissionMode=mode)
        _turn, done = await client.run_turn(session, "change it")
        assert requests_of(client) == []
    assert done["stopReason"] == "end_turn"
    _read, *writes = tool_results(tmp_path)
    assert len(writes) == 3
    for result in writes:
        assert "this session's sandbox is read-only (the `sandbox.mode` setting)" in result
    assert (root / "a.txt").read_text(encoding="utf-8") == "one\n"
    assert not (root / "new.txt").exists() and not (root / "b.txt").exists()


# --- agentls run ---------------------------------------------------------------------------


def test_agentls_run_takes_the_mode_and_asks_the_rerun_on_the_terminal(
    tmp_path: Path, outside: Path
) -> None:
    project = workspace(tmp_path)
    target = outside / "escaped.txt"
    env = environment(tmp_path, calls(bash(f"touch {target}")))
    replies: list[str] = []

    def answer(shown: str) -> str | None:
        # First `a`, which this question does not offer (no "always"): it is asked again.
        asked = shown.count("Run outside the sandbox: touch")
        if asked > len(replies) and shown.endswith(": ") and len(replies) < 2:
            replies.append("a" if not replies else "y")
            return replies[-1]
        return None

    args = ["--no-daemon", "--sandbox", "workspace-write", "escape"]
    code, out, shown = run_on_a_terminal(args, answer, project, env)
    assert code == 0, shown
    assert f"  touch {target}\n  Why: the sandbox (workspace-write) refused a write outside" in out
    assert "[y] Run it outside the sandbox, once · [n] Keep it in the sandbox" in shown
    assert replies == ["a", "y"] and target.exists()
