"""Background shells: Bash run_in_background, BashOutput and KillShell on real processes,
then over stdio: the shell outlives its turn, clients list it and hear it end, the model
is told at its next message, and closing the session kills it."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from agent_client import (
    AgentClient,
    read_requests,
    running_daemon,
)
from agentls.tools.background import (
    MAX_UNREAD_CHARS,
    BackgroundShell,
    BackgroundShells,
    UnreadOutput,
)
from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.bash import BashTool
from agentls.tools.read_cache import FileReadCache
from agentls.tools.shells import BashOutputTool, KillShellTool
from agentls.workspace.view import WorkspaceView

# Prints `tick N` every 0.1 s, 50 times (5 s): long enough to be read while it runs.
TICKER = "for i in $(seq 1 50); do echo tick $i; sleep 0.1; done"


def is_gone(pid: int) -> bool:
    """Dead, or a zombie waiting for a reaper that this container may not run."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


async def until(predicate: Any, within: float = 10.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.05)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


@pytest.fixture
async def shells() -> Any:
    registry = BackgroundShells()
    yield registry
    await registry.kill_all()


def make_ctx(root: Path, shells: BackgroundShells | None) -> ToolContext:
    return ToolContext(WorkspaceView([root]), FileReadCache(), root, shells=shells)


async def call(tool: Tool[Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await tool.run(tool.input_model.model_validate(raw), ctx)


async def start(ctx: ToolContext, command: str) -> BackgroundShell:
    out = await call(BashTool(), ctx, command=command, run_in_background=True)
    assert ctx.shells is not None and not out.is_error
    shell = list(ctx.shells.shells.values())[-1]
    assert out.content.startswith(f"Command running in the background with ID: {shell.shell_id}")
    return shell


async def test_a_background_command_returns_at_once_and_each_read_shows_only_new_output(
    root: Path, shells: BackgroundShells
) -> None:
    ctx = make_ctx(root, shells)
    began = time.monotonic()
    shell = await start(ctx, TICKER)
    # At once: not after the command's 5 s (the bound leaves room for a loaded machine).
    assert time.monotonic() - began < 3.0 and shell.shell_id == "shell_1"
    await until(lambda: "tick 3\n" in "".join(shell.output._chunks))
    first = await call(BashOutputTool(), ctx, shell_id="shell_1")
    assert first.content.startswith("Shell shell_1: running (pid ")
    assert "tick 1\ntick 2\ntick 3" in first.content
    # Counted from what the first read showed: a stalled loop may have read several ticks.
    last_first = int(first.content.rsplit("tick ", 1)[1].split()[0])
    await until(lambda: f"tick {last_first + 2}\n" in "".join(shell.output._chunks))
    second = await call(BashOutputTool(), ctx, shell_id="shell_1")
    body = second.content.split("\n", 1)[1]
    assert "tick 1\n" not in body and f"tick {last_first + 2}" in body
    # Output lines are whole ticks, continuing where the first read stopped.
    assert body.startswith(f"tick {last_first + 1}\n")


async def test_filter_keeps_matching_lines_and_consumes_the_rest(
    root: Path, shells: BackgroundShells
) -> None:
    ctx = make_ctx(root, shells)
    shell = await start(ctx, "printf 'ok one\\nERROR two\\nok three\\nERROR four\\n'")
    await until(lambda: shell.state == "exited")
    out = await call(BashOutputTool(), ctx, shell_id=shell.shell_id, filter="^ERROR")
    assert out.content == f"Shell {shell.shell_id}: exited with code 0\nERROR two\nERROR four"
    again = await call(BashOutputTool(), ctx, shell_id=shell.shell_id)
    assert again.content == f"Shell {shell.shell_id}: exited with code 0\n(no new output)"


async def test_a_bad_filter_and_an_unknown_shell_are_errors(
    root: Path, shells: BackgroundShells
) -> None:
    ctx = make_ctx(root, shells)
    shell = await start(ctx, "true")
    with pytest.raises(ToolError, match="filter is not a valid regular expression"):
        await call(BashOutputTool(), ctx, shell_id=shell.shell_id, filter="(")
    with pytest.raises(ToolError, match=r"No background shell 'shell_9'.*shell_1"):
        await call(BashOutputTool(), ctx, shell_id="shell_9")
    with pytest.raises(ToolError, match="No background shell 'x'"):
        await call(KillShellTool(), ctx, shell_id="x")


async def test_the_exit_code_is_reported(root: Path, shells: BackgroundShells) -> None:
    ctx = make_ctx(root, shells)
    shell = await start(ctx, "echo bye >&2; exit 3")
    await until(lambda: shell.state == "exited")
    assert shell.exit_code == 3
    out = await call(BashOutputTool(), ctx, shell_id=shell.shell_id)
    assert out.content == f"Shell {shell.shell_id}: exited with code 3\nbye"
    assert not out.is_error


async def test_kill_shell_stops_the_whole_process_group(
    root: Path, shells: BackgroundShells
) -> None:
    ctx = make_ctx(root, shells)
    shell = await start(ctx, "sleep 60 & echo child $!; wait")
    await until(lambda: "child" in "".join(shell.output._chunks))
    child = int("".join(shell.output._chunks).split()[1])
    assert not is_gone(child)
    out = await call(KillShellTool(), ctx, shell_id=shell.shell_id)
    assert out.content == f"Shell {shell.shell_id} (sleep 60 & echo child $!; wait) was killed."
    assert shell.state == "killed" and is_gone(shell.pid)
    await until(lambda: is_gone(child), within=5)
    again = await call(KillShellTool(), ctx, shell_id=shell.shell_id)
    assert again.content == f"Shell {shell.shell_id} is not running: it was killed."
    read = await call(BashOutputTool(), ctx, shell_id=shell.shell_id)
    # What it wrote before it was killed is still there to read.
    assert read.content == f"Shell {shell.shell_id}: killed\nchild {child}"


async def test_kill_all_also_stops_what_an_exited_shell_left_behind(
    root: Path, shells: BackgroundShells
) -> None:
    ctx = make_ctx(root, shells)
    running = await start(ctx, "sleep 60")
    # Deaf to SIGHUP (inherited before the fork): a plain `&` child is hung up with the
    # shell's terminal when the shell exits.
    leaver = await start(ctx, "trap '' HUP; sleep 60 > /dev/null 2>&1 & echo $!")
    await until(lambda: leaver.state == "exited")
    orphan = int("".join(leaver.output._chunks).strip())
    assert not is_gone(orphan)
    await shells.kill_all()
    assert running.state == "killed"
    await until(lambda: is_gone(orphan) and is_gone(running.pid), within=5)


async def test_output_beyond_the_bound_drops_the_oldest_and_says_so(
    root: Path, shells: BackgroundShells
) -> None:
    ctx = make_ctx(root, shells)
    # Lines of 8 characters (`n000001\n`): about 10% more than the bound.
    lines = MAX_UNREAD_CHARS // 8 + 50_000
    shell = await start(ctx, f"seq -w 1 {lines} | sed 's/^/n/'")
    await until(lambda: shell.state == "exited", within=30)
    assert shell.output.dropped_chars > 0
    out = await call(BashOutputTool(), ctx, shell_id=shell.shell_id)
    header = out.content.split("\n")[1]
    assert header.startswith("[") and "earlier characters" in header
    assert f"more than {MAX_UNREAD_CHARS} characters since the last read" in header
    assert out.truncated and out.content.endswith(f"n{lines}")
    assert len(out.content) < 31_000


def test_unread_output_counts_what_it_drops() -> None:
    unread = UnreadOutput(limit=10)
    unread.append("aaa\nbbb\n")
    unread.append("ccc\nddd\n")
    text, chars, lines = unread.take()
    # "aaa\nbb" went: six characters, one line break.
    assert (text, chars, lines) == ("b\nccc\nddd\n", 6, 1)
    assert unread.take() == ("", 0, 0) and unread.total == 16


async def test_background_shells_need_a_session(root: Path) -> None:
    with pytest.raises(ToolError, match="Background shells are not available"):
        await call(BashTool(), make_ctx(root, None), command="true", run_in_background=True)


async def test_a_listener_hears_a_shell_start_and_end(root: Path) -> None:
    heard: list[tuple[str, str, int | None]] = []
    shells = BackgroundShells(lambda s: heard.append((s.shell_id, s.state, s.exit_code)))
    ctx = make_ctx(root, shells)
    shell = await start(ctx, "exit 4")
    await until(lambda: shell.state == "exited")
    assert heard == [("shell_1", "running", None), ("shell_1", "exited", 4)]


def test_the_permission_lanes() -> None:
    assert BashOutputTool().is_read_only(
        BashOutputTool.input_model.model_validate({"shell_id": "s"})
    )
    kill = KillShellTool()
    assert not kill.is_read_only(kill.input_model.model_validate({"shell_id": "s"}))
    assert getattr(kill, "calls_are_gated", False)
    # A background command meets the same rules as any Bash command.
    background = BashTool.input_model.model_validate(
        {"command": "npm start", "run_in_background": True}
    )
    assert BashTool().rule_content(background, Path("/")) == "npm start"


# --- over stdio -----------------------------------------------------------------------------


def bash_call(call_id: str, command: str, background: bool = True) -> dict[str, Any]:
    arguments: dict[str, Any] = {"command": command}
    if background:
        arguments["run_in_background"] = True
    return {"tool_calls": [{"id": call_id, "name": "Bash", "input": arguments}]}


def tool(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "input": arguments}]}


def result_of(client: AgentClient, call_id: str) -> dict[str, Any]:
    updates = [
        e
        for e in client.events.of_type("tool_call_update")
        if e["toolCallId"] == call_id and e["status"] != "in_progress"
    ]
    assert len(updates) == 1
    return updates[0]


async def list_shells(client: AgentClient, session: str) -> list[dict[str, Any]]:
    result = await client.request("agent/listShells", {"sessionId": session})
    shells: list[dict[str, Any]] = result["shells"]
    return shells


async def test_a_shell_outlives_its_turn_is_read_twice_filtered_and_killed(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        bash_call("b1", TICKER),
        {"text": "Started."},
        tool("o1", "BashOutput", shell_id="shell_1"),
        bash_call("w1", "sleep 0.6", background=False),
        tool("o2", "BashOutput", shell_id="shell_1", filter="[02468]$"),
        tool("k1", "KillShell", shell_id="shell_1"),
        {"text": "Stopped."},
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    _turn, done = await client.run_turn(session, "start the ticker")
    assert done["stopReason"] == "end_turn"
    assert "with ID: shell_1" in result_of(client, "b1")["content"]
    # The turn is over; the shell goes on.
    [listed] = await list_shells(client, session)
    assert (listed["shellId"], listed["command"], listed["status"]) == (
        "shell_1",
        TICKER,
        "running",
    )
    assert "exitCode" not in listed and listed["startedAt"].endswith("Z")
    assert not is_gone(listed["pid"])
    started = client.events.of_type("shell_status")[0]
    assert (started["shellId"], started["status"], "turnId" in started) == (
        "shell_1",
        "running",
        False,
    )
    await asyncio.sleep(1.2)
    _turn, done = await client.run_turn(session, "how is it going, then stop it")
    assert done["stopReason"] == "end_turn"
    first = result_of(client, "o1")["content"]
    assert first.startswith("Shell shell_1: running") and "tick 1\n" in first
    second = result_of(client, "o2")["content"]
    ticks = [int(line.split()[1]) for line in second.splitlines()[1:]]
    # Only new lines, and of those only the even ticks.
    assert ticks and all(tick % 2 == 0 for tick in ticks)
    assert min(ticks) > int(first.rsplit("tick ", 1)[1])
    assert result_of(client, "k1")["content"] == f"Shell shell_1 ({TICKER}) was killed."
    ended = await client.events.wait_for(
        lambda e: e["type"] == "shell_status" and e["status"] == "killed"
    )
    assert ended["shellId"] == "shell_1"
    [listed] = await list_shells(client, session)
    assert listed["status"] == "killed" and listed["exitCode"] < 0
    assert listed["outputChars"] > 0 and is_gone(listed["pid"])


async def test_an_exit_during_an_idle_session_is_told_in_the_next_message_without_a_turn(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        bash_call("b1", "sleep 0.3; echo done; exit 2"),
        {"text": "Started."},
        {"text": "Noted."},
    ]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    await client.run_turn(session, "start it")
    exited = await client.events.wait_for(
        lambda e: e["type"] == "shell_status" and e["status"] == "exited"
    )
    assert (exited["shellId"], exited["exitCode"]) == ("shell_1", 2)
    await asyncio.sleep(0.5)
    # No turn started by itself.
    assert len(client.events.of_type("turn_started")) == 1
    assert len(read_requests(log)) == 2
    await client.run_turn(session, "anything new?")
    context = read_requests(log)[2]["messages"][-1]["content"][0]["text"]
    assert '<shellNotification shellId="shell_1" status="exited" exitCode="2">' in context
    assert "exited with code 2; read what it wrote with BashOutput" in context
    [listed] = await list_shells(client, session)
    assert listed["status"] == "exited" and listed["exitCode"] == 2


async def test_an_exit_during_a_turn_reaches_its_next_step(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        bash_call("b1", "sleep 0.2; exit 0"),
        bash_call("w1", "sleep 1", background=False),
        {"text": "Done."},
    ]
    session, log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    _turn, done = await client.run_turn(session, "go")
    assert done["stopReason"] == "end_turn"
    last = read_requests(log)[2]["messages"][-1]["content"]
    texts = [b.get("text", "") for b in last if b["type"] == "text"]
    assert any('<shellNotification shellId="shell_1" status="exited"' in t for t in texts)


async def test_closing_the_session_kills_its_shells(client: AgentClient, tmp_path: Path) -> None:
    script = [
        {
            "tool_calls": [
                {
                    "id": "b1",
                    "name": "Bash",
                    "input": {"command": "sleep 60", "run_in_background": True},
                },
                {
                    "id": "b2",
                    "name": "Bash",
                    "input": {"command": "sleep 61 & sleep 62", "run_in_background": True},
                },
            ]
        },
        {"text": "Both started."},
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    await client.run_turn(session, "start two")
    listed = await list_shells(client, session)
    assert [s["shellId"] for s in listed] == ["shell_1", "shell_2"]
    pids = [s["pid"] for s in listed]
    members = [c.pid for pid in pids for c in psutil.Process(pid).children(recursive=True)]
    assert pids and all(not is_gone(pid) for pid in pids + members)
    await client.request("agent/closeSession", {"sessionId": session})
    for pid in pids + members:
        await until(lambda pid=pid: is_gone(pid), within=5)


async def test_the_daemon_exiting_kills_the_shells(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [bash_call("b1", "sleep 60"), {"text": "Started."}]
    async with running_daemon(workspace) as daemon:
        session, _log = await daemon.scripted_session(
            tmp_path, script, permissionMode="bypassPermissions"
        )
        await daemon.run_turn(session, "start it")
        [listed] = await list_shells(daemon, session)
        assert not is_gone(listed["pid"])
    # running_daemon sent shutdown and exit, as an editor does when it quits.
    await until(lambda: is_gone(listed["pid"]), within=5)


async def test_aborting_the_turn_leaves_the_shell_running(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [bash_call("b1", "sleep 60"), {"text": "Waiting", "hang": True}]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    result = await client.request("agent/submitMessage", {"sessionId": session, "text": "go"})
    await client.events.wait_for(lambda e: e["type"] == "text_delta")
    assert (await client.request("agent/abort", {"sessionId": session}))["aborted"]
    done = await client.events.turn_completed(result["turnId"])
    assert done["stopReason"] == "aborted"
    [listed] = await list_shells(client, session)
    assert listed["status"] == "running" and not is_gone(listed["pid"])
    await client.request("agent/closeSession", {"sessionId": session})
    await until(lambda: is_gone(listed["pid"]), within=5)
