"""The tools over background shells: `BashOutput` reads what a shell wrote since the last
read, `KillShell` stops it (`Bash {run_in_background: true}` starts one; the shells
themselves are in background.py).
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from agentls.plural import counted
from agentls.tool_values import ToolKind
from agentls.tools.background import MAX_UNREAD_CHARS, BackgroundShell, BackgroundShells
from agentls.tools.base import ReadOnlyTool, Tool, ToolContext, ToolError, ToolOutput
from agentls.tools.process import MAX_OUTPUT_CHARS, OutputBuffer


def _shells(ctx: ToolContext) -> BackgroundShells:
    if ctx.shells is None:
        raise ToolError("Background shells are not available here.")
    return ctx.shells


def _keep_matching(text: str, pattern: re.Pattern[str]) -> str:
    return "".join(line for line in text.splitlines(keepends=True) if pattern.search(line))


def _compile(filter_text: str) -> re.Pattern[str]:
    try:
        return re.compile(filter_text)
    except re.error as exc:
        raise ToolError(f"filter is not a valid regular expression: {exc}.") from exc


def render_new_output(shell: BackgroundShell, pattern: re.Pattern[str] | None) -> ToolOutput:
    """The shell's status and the output since the last read (matching lines with a
    filter), its head and tail when it is long; the text is now read."""
    text, dropped_chars, dropped_lines = shell.output.take()
    if pattern is not None:
        text = _keep_matching(text, pattern)
    lines = [f"Shell {shell.shell_id}: {shell.status_line()}"]
    if dropped_chars:
        lines.append(
            f"[{counted(dropped_chars, 'earlier character')} "
            f"({counted(dropped_lines, 'line')}) were dropped: the "
            f"shell wrote more than {MAX_UNREAD_CHARS} characters since the last read]"
        )
    buffer = OutputBuffer(MAX_OUTPUT_CHARS)
    buffer.append(text.rstrip("\n"))
    shown = buffer.render()
    if not shown:
        shown = "(no new matching output)" if pattern is not None else "(no new output)"
    lines.append(shown)
    return ToolOutput("\n".join(lines), truncated=buffer.truncated or dropped_chars > 0)


class BashOutputInput(BaseModel):
    shell_id: str = Field(description="The id Bash gave the background shell")
    filter: str | None = Field(
        default=None,
        description="A regular expression: only new lines that match it are shown (the "
        "others are read and gone)",
    )


class BashOutputTool(ReadOnlyTool[BashOutputInput]):
    """Reads what a background shell wrote since the last read."""

    name: str = "BashOutput"
    description: str = (
        "Reads the output of a background shell (started with Bash run_in_background) "
        "written since your last read of it, stdout and stderr together, with its status: "
        "running, exited with its code, or killed. Each read returns only new output. "
        "filter, a regular expression, keeps only the matching lines; the other lines are "
        "read too and will not be shown again. Long output keeps its head and tail."
    )
    input_model: type[BaseModel] = BashOutputInput
    kind: ToolKind = "other"

    def title(self, args: BashOutputInput) -> str:
        return f"{self.name} {args.shell_id}"

    async def run(self, args: BashOutputInput, ctx: ToolContext) -> ToolOutput:
        pattern = _compile(args.filter) if args.filter is not None else None
        return render_new_output(_shells(ctx).get(args.shell_id), pattern)


class KillShellInput(BaseModel):
    shell_id: str = Field(description="The id of the background shell to stop")


class KillShellTool(Tool[KillShellInput]):
    """Stops one of the session's background shells."""

    name: str = "KillShell"
    description: str = (
        "Stops a background shell started with Bash run_in_background, and every process it "
        "started (SIGTERM, then SIGKILL). Only this session's shells can be stopped. Its "
        "unread output stays readable with BashOutput."
    )
    input_model: type[BaseModel] = KillShellInput
    kind: ToolKind = "execute"
    # It stops only what this session started, which met the gate when it started: the
    # call is asked about by rules only (it still takes the serial lane).
    calls_are_gated: bool = True

    def title(self, args: KillShellInput) -> str:
        return f"{self.name} {args.shell_id}"

    async def run(self, args: KillShellInput, ctx: ToolContext) -> ToolOutput:
        shells = _shells(ctx)
        if shells.get(args.shell_id).state != "running":
            shell = shells.get(args.shell_id)
            ended = "was killed" if shell.state == "killed" else shell.status_line()
            return ToolOutput(f"Shell {shell.shell_id} is not running: it {ended}.")
        shell = await shells.kill(args.shell_id)
        return ToolOutput(f"Shell {shell.shell_id} ({shell.command}) was killed.")
