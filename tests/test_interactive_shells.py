"""Interactive shells: background shells on a pseudo-terminal, typed into with WriteStdin.

Real processes throughout (a Python REPL, bash's `read -p`, `sleep` interrupted by Ctrl-C),
first through the tools in process, then through the real daemon over stdio with the
scripted model: permission asked with the shell's command, a deny rule honoured.
No timing asserts: output is waited for with generous bounds.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from agent_client import AgentClient
from agentls.sandbox import SandboxSettings, prepare_sandbox
from agentls.tools.background import BackgroundShell, BackgroundShells
from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.bash import BashTool
from agentls.tools.read_cache import FileReadCache
from agentls.tools.shells import BashOutputTool, KillShellTool
from agentls.tools.terminal_text import TerminalText, plain_text
from agentls.tools.write_stdin import MAX_INPUT_CHARS, WriteStdinTool, shown_input
from agentls.workspace.view import WorkspaceView
from test_cli_permission_prompt import on_a_terminal
from test_cli_warm import environment

# Generous: a loaded machine may take seconds to start a Python REPL.
WAIT_MS = 30_000
ASK_NAME = 'read -p "Name? " name; echo "Hello $name"'


async def until(predicate: Any, within: float = 20.0) -> None:
    deadline = time.monotonic() + within
    while not predicate():
        assert time.monotonic() < deadline, "condition not met in time"
        await asyncio.sleep(0.02)


def no_such_process(pid: int) -> bool:
    """Gone and reaped: not even a zombie is left."""
    try:
        psutil.Process(pid)
    except psutil.NoSuchProcess:
        return True
    return False


# --- what the model reads of a terminal -----------------------------------------------------


def test_plain_text_drops_sequences_and_keeps_what_a_terminal_would_show() -> None:
    raw = "\x1b[31mred\x1b[0m\r\n\x1b]0;title\x07at 10%\rat 20%\rat 30%\r\nab\x08c\x07\tend"
    assert plain_text(raw) == "red\nat 30%\nac\tend"


def test_a_sequence_cut_between_chunks_is_completed_by_the_next() -> None:
    plain = TerminalText()
    chunks = ["one\r", "\ntwo \x1b[3", "2mgreen\x1b", "[0m\r", "\n>>> "]
    assert "".join(plain.feed(chunk) for chunk in chunks) + plain.flush() == (
        "one\ntwo green\n>>> "
    )


def test_the_input_is_shown_on_one_line_with_controls_visible() -> None:
    assert shown_input("print(1)\n") == "print(1)⏎"
    assert shown_input("\x03") == "^C" and shown_input("\x04") == "^D"
    assert len(shown_input("x" * 500)) == 60


# --- the tools on real processes ------------------------------------------------------------


@pytest.fixture
async def ctx(tmp_path: Path) -> Any:
    shells = BackgroundShells()
    root = tmp_path.resolve()
    yield ToolContext(WorkspaceView([root]), FileReadCache(), root, shells=shells)
    await shells.kill_all()


async def call(tool: Tool[Any], ctx: ToolContext, **raw: Any) -> ToolOutput:
    return await tool.run(tool.input_model.model_validate(raw), ctx)


async def start(ctx: ToolContext, command: str) -> BackgroundShell:
    out = await call(BashTool(), ctx, command=command, run_in_background=True)
    assert ctx.shells is not None and not out.is_error, out.content
    return list(ctx.shells.shells.values())[-1]


async def test_a_python_repl_is_driven_line_by_line(ctx: ToolContext) -> None:
    shell = await start(ctx, "python3 -i -q")
    prompt = await call(
        WriteStdinTool(), ctx, shell_id=shell.shell_id, input="", wait_ms=WAIT_MS, wait_for=">>> $"
    )
    assert prompt.content.endswith("\n>>> ")
    answer = await call(
        WriteStdinTool(),
        ctx,
        shell_id=shell.shell_id,
        input="6 * 7\n",
        wait_ms=WAIT_MS,
        wait_for="42",
    )
    # The terminal echoes the line, the REPL answers; no \r, no escape codes.
    assert answer.content.split("\n", 1)[1].startswith("6 * 7\n42")
    assert "\r" not in answer.content and "\x1b" not in answer.content
    await call(WriteStdinTool(), ctx, shell_id=shell.shell_id, input="\x04", wait_ms=WAIT_MS)
    await until(lambda: shell.state == "exited")
    assert shell.exit_code == 0
    await until(lambda: no_such_process(shell.pid))


async def test_wait_for_looks_past_a_prompt_left_unread_before_the_input(
    ctx: ToolContext,
) -> None:
    shell = await start(ctx, "python3 -i -q")
    await until(lambda: shell.output.peek().endswith(">>> "))
    slow = "import time; time.sleep(0.3); print('late')\n"
    out = await call(
        WriteStdinTool(),
        ctx,
        shell_id=shell.shell_id,
        input=slow,
        wait_ms=WAIT_MS,
        wait_for=">>> $",
    )
    # The old prompt was unread, and matched: only the one after the answer counts.
    assert out.content.endswith("\nlate\n>>> ")


async def test_a_read_prompt_is_answered(ctx: ToolContext) -> None:
    shell = await start(ctx, ASK_NAME)
    prompt = await call(
        WriteStdinTool(), ctx, shell_id=shell.shell_id, input="", wait_ms=WAIT_MS, wait_for="\\? $"
    )
    # read -p shows its prompt only on a terminal.
    assert prompt.content.endswith("\nName? ")
    out = await call(
        WriteStdinTool(),
        ctx,
        shell_id=shell.shell_id,
        input="Alice\n",
        wait_ms=WAIT_MS,
        wait_for="Hello Alice",
    )
    assert out.content.endswith("\nAlice\nHello Alice")
    await until(lambda: shell.state == "exited")


async def test_ctrl_c_interrupts_the_running_command(ctx: ToolContext) -> None:
    shell = await start(ctx, "sleep 60")
    await call(WriteStdinTool(), ctx, shell_id=shell.shell_id, input="\x03", wait_ms=0)
    await until(lambda: shell.state == "exited")
    assert shell.status_line() == "terminated by signal SIGINT"
    await until(lambda: no_such_process(shell.pid))


async def test_writing_to_an_exited_or_unknown_shell_or_too_much_is_an_error(
    ctx: ToolContext,
) -> None:
    shell = await start(ctx, "echo bye; exit 3")
    await until(lambda: shell.state == "exited")
    with pytest.raises(ToolError, match="is not running: it exited with code 3"):
        await call(WriteStdinTool(), ctx, shell_id=shell.shell_id, input="x\n")
    with pytest.raises(ToolError, match="No background shell 'shell_9'"):
        await call(WriteStdinTool(), ctx, shell_id="shell_9", input="x\n")
    running = await start(ctx, "cat")
    with pytest.raises(ToolError, match=f"at most {MAX_INPUT_CHARS} go in one call"):
        await call(
            WriteStdinTool(), ctx, shell_id=running.shell_id, input="x" * (MAX_INPUT_CHARS + 1)
        )
    await call(KillShellTool(), ctx, shell_id=running.shell_id)
    with pytest.raises(ToolError, match="is not running: it was killed"):
        await call(WriteStdinTool(), ctx, shell_id=running.shell_id, input="x\n")
    # What the first shell wrote is still there to read.
    read = await call(BashOutputTool(), ctx, shell_id=shell.shell_id)
    assert read.content == f"Shell {shell.shell_id}: exited with code 3\nbye"


SANDBOX = prepare_sandbox(SandboxSettings(mode="workspace-write"))


@pytest.mark.skipif(
    SANDBOX is None or SANDBOX.problem is not None, reason="the sandbox cannot run here"
)
async def test_a_sandboxed_shell_keeps_its_terminal_and_its_box(ctx: ToolContext) -> None:
    # bwrap, not bash, leads the shell's session here: only the helper that claims the
    # terminal before bwrap starts gives the command job control (and Ctrl-C).
    boxed = BashTool(SANDBOX)
    raw = {"command": "read -p 'File? ' f; touch /var/$f; sleep 60", "run_in_background": True}
    await boxed.run(boxed.input_model.model_validate(raw), ctx)
    assert ctx.shells is not None
    shell = ctx.shells.get("shell_1")
    # Typed ahead of the prompt, a line would be echoed before it: wait for the prompt.
    await call(
        WriteStdinTool(), ctx, shell_id="shell_1", input="", wait_ms=WAIT_MS, wait_for="\\? $"
    )
    out = await call(
        WriteStdinTool(), ctx, shell_id="shell_1", input="x\n", wait_ms=WAIT_MS, wait_for="system"
    )
    assert "x\ntouch: cannot touch '/var/x': Read-only file system" in out.content
    await call(WriteStdinTool(), ctx, shell_id="shell_1", input="\x03", wait_ms=0)
    await until(lambda: shell.state == "exited")
    assert shell.status_line() == "terminated by signal SIGINT"


async def test_fifty_shells_opened_and_killed_leak_no_descriptor(ctx: ToolContext) -> None:
    assert ctx.shells is not None
    # One first, so what the first spawn opens for good (the watchdog's pipe) is counted.
    first = await start(ctx, "sleep 60")
    await call(KillShellTool(), ctx, shell_id=first.shell_id)
    before = len(os.listdir("/proc/self/fd"))
    shells = [await start(ctx, "sleep 60") for _ in range(50)]
    for shell in shells:
        await call(KillShellTool(), ctx, shell_id=shell.shell_id)
    assert all(shell.state == "killed" for shell in shells)
    await until(lambda: all(no_such_process(shell.pid) for shell in shells))
    assert len(os.listdir("/proc/self/fd")) <= before


async def test_a_child_left_in_the_background_is_hung_up_with_the_terminal(
    ctx: ToolContext,
) -> None:
    shell = await start(ctx, "sleep 60 & echo $!")
    await until(lambda: shell.state == "exited")
    child = int(shell.output.peek().strip())
    # The shell's end closes its terminal; what it left in the foreground gets SIGHUP.
    await until(lambda: not psutil.pid_exists(child) or psutil.Process(child).status() == "zombie")


# --- through the daemon ---------------------------------------------------------------------


def tool(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "input": arguments}]}


def background(call_id: str, command: str) -> dict[str, Any]:
    return tool(call_id, "Bash", command=command, run_in_background=True)


def result_of(client: AgentClient, call_id: str) -> dict[str, Any]:
    updates = [
        e
        for e in client.events.of_type("tool_call_update")
        if e["toolCallId"] == call_id and e["status"] != "in_progress"
    ]
    assert len(updates) == 1, updates
    return updates[0]


def write(call_id: str, text: str, wait_for: str | None = None) -> dict[str, Any]:
    extra = {"wait_for": wait_for} if wait_for else {}
    return tool(call_id, "WriteStdin", shell_id="shell_1", input=text, wait_ms=WAIT_MS, **extra)


async def test_the_model_drives_a_repl_and_answers_a_prompt_over_stdio(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        background("b1", "python3 -i -q"),
        write("w0", "", wait_for=">>> $"),
        write("w1", "print('six' * 2)\n", wait_for="sixsix\n>>> $"),
        write("w2", "\x04"),
        background("b2", ASK_NAME),
        tool(
            "w3", "WriteStdin", shell_id="shell_2", input="Bob\n", wait_ms=WAIT_MS, wait_for="Hello"
        ),
        {"text": "Done."},
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    _turn, done = await client.run_turn(session, "talk to python")
    assert done["stopReason"] == "end_turn"
    started = client.events.of_type("tool_call")
    kinds = {e["toolCallId"]: (e["kind"], e["title"]) for e in started}
    assert kinds["w1"] == ("execute", "Write to shell_1: print('six' * 2)⏎")
    replied = result_of(client, "w1")
    assert replied["status"] == "completed"
    assert replied["content"].endswith("\nprint('six' * 2)\nsixsix\n>>> ")
    assert "Hello Bob" in result_of(client, "w3")["content"]
    ended = await client.events.wait_for(
        lambda e: (
            e["type"] == "shell_status" and e["shellId"] == "shell_1" and e["status"] != "running"
        )
    )
    assert (ended["status"], ended["exitCode"]) == ("exited", 0)


async def test_ctrl_c_over_stdio_and_a_write_to_the_exited_shell_fails(
    client: AgentClient, tmp_path: Path
) -> None:
    script = [
        background("b1", "sleep 60"),
        write("w1", "\x03"),
        {"text": "Interrupted."},
        write("w2", "more\n"),
        {"text": "It had ended."},
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    await client.run_turn(session, "start and interrupt it")
    ended = await client.events.wait_for(
        lambda e: e["type"] == "shell_status" and e["status"] != "running"
    )
    # SIGINT, as a terminal's Ctrl-C sends it.
    assert (ended["status"], ended["exitCode"]) == ("exited", -2)
    await client.run_turn(session, "write to it again")
    failed = result_of(client, "w2")
    assert failed["status"] == "failed"
    assert failed["content"].startswith(
        "Shell shell_1 is not running: it terminated by signal SIGINT"
    )


def project_rules(tmp_path: Path, **permissions: list[str]) -> None:
    folder = tmp_path / "ws" / ".agentls"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"permissions": permissions}), "utf-8")


async def test_writing_asks_with_the_shells_command_and_a_bash_rule_does_not_allow_it(
    client: AgentClient, tmp_path: Path
) -> None:
    project_rules(tmp_path, allow=["Bash(python3:*)"])
    script = [
        background("b1", "python3 -i -q"),
        write("w1", "1 + 1\n", wait_for="\n2\n>>> $"),
        {"text": "Two."},
    ]
    session, _log = await client.scripted_session(tmp_path, script)
    turn = asyncio.ensure_future(client.run_turn(session, "add"))
    request = await client.answer_permission(session, "allow_once")
    assert request["toolCallId"] == "w1"
    assert request["title"] == "Write to shell_1 (python3 -i -q): 1 + 1⏎"
    assert request["input"] == {
        "shell_id": "shell_1",
        "input": "1 + 1\n",
        "wait_ms": WAIT_MS,
        "wait_for": "\n2\n>>> $",
    }
    rules = [o.get("rule") for o in request["options"] if o["kind"] == "allow_always"]
    assert rules == ["WriteStdin(python3:*)"]
    _turn, done = await turn
    assert done["stopReason"] == "end_turn"
    assert result_of(client, "w1")["content"].endswith("\n2\n>>> ")
    # Only the write asked: the Bash rule allowed starting the REPL.
    assert len(client.events.of_type("permission_request")) == 1


async def test_a_deny_rule_on_the_shells_command_refuses_without_asking(
    client: AgentClient, tmp_path: Path
) -> None:
    project_rules(tmp_path, deny=["WriteStdin(python3:*)"])
    script = [
        background("b1", "python3 -i -q"),
        write("w1", "import os; os.system('touch pwned')\n"),
        {"text": "Refused."},
    ]
    session, _log = await client.scripted_session(
        tmp_path, script, permissionMode="bypassPermissions"
    )
    _turn, done = await client.run_turn(session, "try")
    assert done["stopReason"] == "end_turn"
    refused = result_of(client, "w1")
    assert refused["status"] == "declined"
    assert refused["content"] == "Denied by rule WriteStdin(python3:*)."
    assert not client.events.of_type("permission_request")
    assert not (tmp_path / "ws" / "pwned").exists()


# --- agentls run ----------------------------------------------------------------------------


def test_agentls_run_asks_on_the_terminal_with_the_shells_command(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".agentls").mkdir(parents=True)
    settings = {"permissions": {"allow": ["Bash(python3:*)"]}}
    (project / ".agentls" / "settings.json").write_text(json.dumps(settings), "utf-8")
    script = [
        background("b1", "python3 -i -q"),
        write("w1", "6 * 7\n", wait_for="42\n>>> $"),
        {"text": "It is 42."},
    ]
    env = environment(tmp_path, script)
    code, _out, shown = on_a_terminal(["--no-daemon", "multiply"], "y", project, env, True)
    assert code == 0, shown
    question = shown.index("Allow Write to shell_1 (python3 -i -q): 6 * 7⏎?")
    assert "[a] Always allow WriteStdin(python3:*)" in shown[question:]
    assert "→ Allow once" in shown[question:] and "It is 42." in shown[question:]
