"""Bash: run a shell command in the workspace and hand its output back to the model.

Every command runs in its own process group, so a timeout or a user's abort can kill it
with everything it started; nothing the agent launched outlives the turn that launched it.
Output streams to the client as it comes and is capped (head and tail kept) so a chatty
command cannot flood the model's context. The processes themselves are tools/process.py's;
which commands count as read-only, permissions/read_only_bash.py's.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import replace
from pathlib import Path

from pydantic import BaseModel, Field

from agentls.permissions.read_only_bash import is_read_only_command
from agentls.sandbox import Sandbox, blamed_on_sandbox
from agentls.tool_values import ToolKind
from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.process import (
    DRAIN_AFTER_EXIT_SECONDS,
    OutputBuffer,
    ProgressLines,
    exit_text,
    kill_process_group,
    pump_output,
    spawn_shell,
    wait_for_exit,
)
from agentls.workspace.client_side import CommandResult

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
TITLE_CHARS = 80


def _result(output: str, code: int, truncated: bool) -> ToolOutput:
    output = output.rstrip("\n")
    if code == 0:
        return ToolOutput(output or "(Bash completed with no output)", truncated=truncated)
    text = f"{output}\n{exit_text(code)}" if output else exit_text(code)
    return ToolOutput(text, is_error=True, truncated=truncated)


def _timed_out(buffer: OutputBuffer, timeout_ms: int) -> ToolOutput:
    output = buffer.render().rstrip("\n") or "(no output)"
    text = f"Command timed out after {timeout_ms / 1000:g} s. Output so far:\n{output}"
    return ToolOutput(text, is_error=True, truncated=buffer.truncated)


def _terminal_result(ran: CommandResult, timeout_ms: int) -> ToolOutput:
    """What a command run in the editor's terminal gives the model, as a local run would."""
    buffer = OutputBuffer()
    buffer.append(ran.output)
    truncated = buffer.truncated or ran.truncated
    if ran.timed_out:
        return replace(_timed_out(buffer, timeout_ms), truncated=truncated)
    if ran.exit_code is None:
        output = buffer.render().rstrip("\n")
        ended = f"Terminated by signal {ran.signal or 'unknown'}"
        return ToolOutput(
            f"{output}\n{ended}" if output else ended, is_error=True, truncated=truncated
        )
    return _result(buffer.render(), ran.exit_code, truncated)


class BashInput(BaseModel):
    command: str = Field(description="The command to run")
    timeout: int | None = Field(
        default=None, ge=1, description="Timeout in milliseconds (default 120000, max 600000)"
    )
    description: str | None = Field(
        default=None, description="What the command does, in 5-10 words"
    )
    run_in_background: bool = Field(
        default=False,
        description="Run it in the background, on a terminal, and return its shell id at "
        "once; read its output with BashOutput, type into it with WriteStdin, stop it with "
        "KillShell",
    )


class SandboxedBashInput(BashInput):
    """Bash's input where commands run in a sandbox: the model may ask to leave it."""

    outside_sandbox: bool = Field(
        default=False,
        description="Run outside the sandbox; the user is asked first. Only for a command "
        "the sandbox would stop (a write outside the workspace, the network)",
    )
    justification: str | None = Field(
        default=None, description="With outside_sandbox: why, in one sentence for the user"
    )


class BashTool(Tool[BashInput]):
    """Runs a shell command in the working directory."""

    name: str = "Bash"
    description: str = (
        "Runs a command with /bin/bash in the working directory and returns its combined "
        "stdout and stderr. Each call starts a fresh shell: `cd` and exported variables do "
        "not carry over. stdin is closed, so interactive commands fail. timeout is in "
        "milliseconds (default 120000, max 600000); on timeout the command and its children "
        "are killed. Output over 30000 characters keeps its head and tail. A non-zero exit "
        "code is reported as an error. Quote paths that contain spaces. Prefer Read, Glob, "
        "Grep, Edit and Write over cat, find, grep, sed and echo redirection for file work. "
        "Give a short description of what the command does. With run_in_background the "
        "command starts in a background shell and the call returns its id at once (timeout "
        "does not apply): use it for servers and long jobs, read its output with "
        "BashOutput and stop it with KillShell; it runs until it exits, is killed, or the "
        "session ends. Do not append `&` yourself. A background shell runs on a terminal: "
        "answer its prompts or drive a REPL with WriteStdin."
    )
    input_model: type[BaseModel] = BashInput
    kind: ToolKind = "execute"

    def __init__(self, sandbox: Sandbox | None = None) -> None:
        self.sandbox = sandbox
        if sandbox is not None and sandbox.confines:
            self.description = BashTool.description + _sandbox_note(sandbox)
            self.input_model = SandboxedBashInput

    def is_read_only(self, args: BashInput) -> bool:
        """True only for commands on the conservative inspection allow-list."""
        return is_read_only_command(args.command)

    def title(self, args: BashInput) -> str:
        """The description, or the command shortened to one line."""
        text = args.description or " ".join(args.command.split())
        text = text if len(text) <= TITLE_CHARS else text[: TITLE_CHARS - 1] + "…"
        return f"{text} (in the background)" if args.run_in_background else text

    def rule_content(self, args: BashInput, cwd: Path) -> str | None:
        """Permission rules match the command text."""
        return args.command

    async def run(self, args: BashInput, ctx: ToolContext) -> ToolOutput:
        """Run the command (outside the sandbox only once the user allowed it)."""
        outside = await self._asked_outside(args, ctx)
        if args.run_in_background:
            return await _start_in_background(args, self.argv(args.command, ctx, outside), ctx)
        # The files a command that may write changes are checkpointed, for a rewind.
        watch = contextlib.nullcontext() if self.is_read_only(args) else ctx.checkpoints.command()
        async with watch:
            output = await self._run_once(args, ctx, outside)
            if outside or not output.is_error or self.sandbox is None:
                return _ran_outside(output) if outside else output
            writable = self.sandbox.writable_paths(ctx.cwd, ctx.workspace.roots)
            reason = blamed_on_sandbox(self.sandbox, output.content, writable)
            if reason is None:
                return output
            refused = await ctx.leave_sandbox(args.command, reason, "failed_in_sandbox")
            if refused is not None:
                note = f"(This looks caused by the sandbox: {reason}. Not rerun outside: {refused})"
                return replace(output, content=f"{output.content}\n{note}")
            return _ran_outside(await self._run_once(args, ctx, True))

    async def _asked_outside(self, args: BashInput, ctx: ToolContext) -> bool:
        """Whether the model asked up front to run outside the box and the user agreed."""
        if not isinstance(args, SandboxedBashInput) or not args.outside_sandbox:
            return False
        if self.sandbox is None or not self.sandbox.confines:
            return False
        why = args.justification or "the model asked to run it outside the sandbox"
        refused = await ctx.leave_sandbox(args.command, why, "model_request")
        if refused is not None:
            raise ToolError(f"Not run: it was to run outside the sandbox, and {refused}")
        return True

    async def _run_once(self, args: BashInput, ctx: ToolContext, outside: bool) -> ToolOutput:
        """One run of the command in the foreground; kill its group on timeout or cancel."""
        timeout_ms = min(args.timeout or DEFAULT_TIMEOUT_MS, MAX_TIMEOUT_MS)
        argv = self.argv(args.command, ctx, outside)
        terminal = ctx.workspace.terminal
        if terminal is not None:
            # The editor runs it in a terminal the user watches (ACP's terminal/*).
            ran = await terminal.run(argv, ctx.cwd, timeout_ms / 1000, ctx.tool_call_id)
            return _terminal_result(ran, timeout_ms)
        buffer = OutputBuffer()
        async with spawn_shell(argv, ctx.cwd) as (process, output):
            pump = asyncio.create_task(pump_output(output, buffer, ProgressLines(ctx.progress)))
            try:
                async with asyncio.timeout(timeout_ms / 1000):
                    code = await wait_for_exit(process, pump)
            except TimeoutError:
                # Shielded (here and below) so a cancel cannot leave the group half killed.
                await asyncio.shield(kill_process_group(process.pid))
                await asyncio.wait({pump}, timeout=DRAIN_AFTER_EXIT_SECONDS)
                return _timed_out(buffer, timeout_ms)
            except asyncio.CancelledError:
                await asyncio.shield(kill_process_group(process.pid))
                raise
            finally:
                pump.cancel()
        return _result(buffer.render(), code, buffer.truncated)

    def argv(self, command: str, ctx: ToolContext, outside: bool = False) -> list[str]:
        """The command line that runs `command`: bash, inside the sandbox when there is one
        (unless the user let this command out)."""
        argv = ["/bin/bash", "-c", command]
        if self.sandbox is None or outside:
            return argv
        if self.sandbox.problem is not None:
            raise ToolError(self.sandbox.problem)
        if not self.sandbox.confines:
            return argv
        writable = self.sandbox.writable_paths(ctx.cwd, ctx.workspace.roots)
        return self.sandbox.wrap(argv, ctx.cwd, writable)


def _ran_outside(output: ToolOutput) -> ToolOutput:
    """The output of a run the user let out of the sandbox, saying so."""
    return replace(
        output, content=f"{output.content}\n(Ran outside the sandbox, as the user allowed.)"
    )


def _sandbox_note(sandbox: Sandbox) -> str:
    network = "" if sandbox.settings.network else " and has no network"
    confined = (
        "nothing can be written (but /dev/null)"
        if sandbox.mode == "read-only"
        else "everything outside the workspace and /tmp is read-only"
    )
    return (
        f" Commands run in a sandbox: {confined}{network}; a failure that says so is the "
        "sandbox, not a bug to work around: the user is then asked whether to rerun it "
        "outside. When a command surely needs more (say, a download), set outside_sandbox "
        "with a justification: the user is asked first."
    )


async def _start_in_background(args: BashInput, argv: list[str], ctx: ToolContext) -> ToolOutput:
    """Start the command as a background shell (in the sandbox, as any Bash command)."""
    if ctx.shells is None:
        raise ToolError("Background shells are not available here; run it without it.")
    shell = await ctx.shells.start(args.command, argv, ctx.cwd, args.description)
    return ToolOutput(
        f"Command running in the background with ID: {shell.shell_id} (pid {shell.pid}). "
        f'Read its output with BashOutput {{"shell_id": "{shell.shell_id}"}}; stop it with '
        "KillShell. You will be told when it exits."
    )
