"""WriteStdin: type into a background shell's terminal and read what it printed back.

Background shells run on a pseudo-terminal (tools/pty_process.py), so a command that asks
(`read -p`, a confirmation, a password prompt) or a REPL (`python3 -i`, `node`, `psql`)
can be talked to: the input goes in as typed, control characters included (`\\n` submits
a line, `\\u0003` is Ctrl-C, `\\u0004` Ctrl-D), and the answer is what the shell printed
since the last read, as BashOutput gives it.

Typing into a program can do anything the program can, so a call asks like a command:
rules match the shell's command (`WriteStdin(python3:*)`), never the input, and a Bash
rule does not cover it (it approved starting the command, not what is typed into it).
"""

from __future__ import annotations

import asyncio
import re
import time

from pydantic import BaseModel, Field

from agentls.tool_values import ToolKind
from agentls.tools.background import BackgroundShell
from agentls.tools.base import Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.pty_process import InputNotTaken
from agentls.tools.shells import render_new_output

DEFAULT_WAIT_MS = 2_000
MAX_WAIT_MS = 30_000
# A terminal reads a line of at most 4,095 bytes; more than a few lines is a file's job.
MAX_INPUT_CHARS = 10_000
# Without wait_for, the call returns once the shell printed and then was quiet this long.
QUIET_SECONDS = 0.5
POLL_SECONDS = 0.02
TITLE_INPUT_CHARS = 60


class WriteStdinInput(BaseModel):
    shell_id: str = Field(description="The id Bash gave the background shell")
    input: str = Field(description="The text to type")
    wait_ms: int | None = Field(
        default=None,
        ge=0,
        description=f"Milliseconds to wait for output (default {DEFAULT_WAIT_MS}, max "
        f"{MAX_WAIT_MS})",
    )
    wait_for: str | None = Field(
        default=None,
        description="A regular expression: return once the new output matches it",
    )


def shown_input(text: str) -> str:
    """The input on one line: Enter as ⏎, other control characters in caret notation."""
    shown = "".join(_visible(char) for char in text)
    return shown if len(shown) <= TITLE_INPUT_CHARS else shown[: TITLE_INPUT_CHARS - 1] + "…"


def _visible(char: str) -> str:
    if char in "\r\n":
        return "⏎"
    if char == "\x7f":
        return "^?"
    return f"^{chr(ord(char) + 64)}" if ord(char) < 32 and char != "\t" else char


class WriteStdinTool(Tool[WriteStdinInput]):
    """Types into a background shell's terminal; returns what it printed since."""

    name: str = "WriteStdin"
    description: str = (
        "Types input into a background shell's terminal (Bash run_in_background) and "
        "returns what the shell printed since your last read, with its status, as "
        "BashOutput does: answer a prompt, drive a REPL. input is sent as typed: end it "
        "with \\n to submit a line; \\u0003 is Ctrl-C, \\u0004 Ctrl-D. The terminal "
        "echoes what you type. It waits up to wait_ms for output, returning early when "
        "wait_for matches, when the output goes quiet, or when the shell exits."
    )
    input_model: type[BaseModel] = WriteStdinInput
    kind: ToolKind = "execute"

    def title(self, args: WriteStdinInput) -> str:
        return f"Write to {args.shell_id}: {shown_input(args.input)}"

    def request_title(self, args: WriteStdinInput, ctx: ToolContext) -> str:
        """The permission request names the shell's command beside the input."""
        shell = _known_shell(args, ctx)
        if shell is None:
            return self.title(args)
        return f"Write to {shell.shell_id} ({shell.command}): {shown_input(args.input)}"

    def rule_contents_in(self, args: WriteStdinInput, ctx: ToolContext) -> tuple[str | None, ...]:
        """Rules match the command the shell runs."""
        shell = _known_shell(args, ctx)
        return (shell.command if shell is not None else None,)

    def refusal_before_asking(self, args: WriteStdinInput, ctx: ToolContext) -> str | None:
        try:
            _writable_shell(args, ctx)
        except ToolError as exc:
            return str(exc)
        return None

    async def run(self, args: WriteStdinInput, ctx: ToolContext) -> ToolOutput:
        shell = _writable_shell(args, ctx)
        wait = min(args.wait_ms if args.wait_ms is not None else DEFAULT_WAIT_MS, MAX_WAIT_MS)
        pattern = _compile(args.wait_for) if args.wait_for is not None else None
        assert shell.terminal is not None
        # With input, wait_for looks only at what came after it (a prompt left unread from
        # before would match at once); with none, at everything unread.
        before = shell.output.total if args.input else 0
        try:
            await shell.terminal.write(args.input, wait / 1000)
        except InputNotTaken as exc:
            raise ToolError(
                f"Shell {shell.shell_id} took only {exc.taken} bytes of the input: it is not "
                f"reading its terminal ({shell.status_line()})."
            ) from exc
        await _settle(shell, wait / 1000, pattern, before)
        return render_new_output(shell, None)


def _known_shell(args: WriteStdinInput, ctx: ToolContext) -> BackgroundShell | None:
    if ctx.shells is None:
        return None
    return ctx.shells.shells.get(args.shell_id)


def _writable_shell(args: WriteStdinInput, ctx: ToolContext) -> BackgroundShell:
    """The running shell the call types into, or a ToolError saying why there is none."""
    if ctx.shells is None:
        raise ToolError("Background shells are not available here.")
    if len(args.input) > MAX_INPUT_CHARS:
        raise ToolError(
            f"The input is {len(args.input)} characters; at most {MAX_INPUT_CHARS} go in one "
            "call. Write a long text to a file and have the program read it."
        )
    shell = ctx.shells.get(args.shell_id)
    if shell.state != "running" or shell.terminal is None or shell.terminal.closed:
        ended = "was killed" if shell.state == "killed" else shell.status_line()
        raise ToolError(
            f"Shell {shell.shell_id} is not running: it {ended}, so nothing reads the input. "
            "Read what it wrote with BashOutput."
        )
    return shell


def _compile(text: str) -> re.Pattern[str]:
    try:
        return re.compile(text)
    except re.error as exc:
        raise ToolError(f"wait_for is not a valid regular expression: {exc}.") from exc


async def _settle(
    shell: BackgroundShell, within: float, pattern: re.Pattern[str] | None, before: int
) -> None:
    """Wait for the answer: `pattern` in the output that came after the first `before`
    characters (or, without a pattern, output followed by quiet), the shell's exit, or the
    end of `within` seconds."""
    deadline = time.monotonic() + within
    seen = shell.output.total
    quiet_since: float | None = None
    if pattern is not None and _found(shell, pattern, before):
        return
    while shell.state == "running" and time.monotonic() < deadline:
        await asyncio.sleep(POLL_SECONDS)
        if shell.output.total != seen:
            seen, quiet_since = shell.output.total, time.monotonic()
            # Searched only when something came: the unread text may be megabytes.
            if pattern is not None and _found(shell, pattern, before):
                return
        elif pattern is None and _quiet_since(quiet_since):
            return


def _found(shell: BackgroundShell, pattern: re.Pattern[str], before: int) -> bool:
    """Whether `pattern` is in the unread output written after the first `before` chars."""
    text = shell.output.peek()
    fresh = shell.output.total - before
    return pattern.search(text[max(0, len(text) - fresh) :]) is not None


def _quiet_since(moment: float | None) -> bool:
    """Whether output came, and then nothing for QUIET_SECONDS."""
    return moment is not None and time.monotonic() - moment >= QUIET_SECONDS
