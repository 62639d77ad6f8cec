"""Background shells: Bash commands that go on running while the conversation does.

`Bash {run_in_background: true}` starts one and answers with its id at once; `BashOutput`
reads what it wrote since the last read; `KillShell` stops it. A shell belongs to its
session, not to a turn: the end or abort of a turn leaves it running, and closing the
session (or the daemon) kills every one. It is spawned, pumped and killed exactly as a
foreground Bash command is (tools/bash.py); only what happens to its output differs: it is
kept for the next read, bounded, the oldest unread text going first when it overflows.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

from pydantic import BaseModel, Field

from agentls.plural import counted
from agentls.tools.base import ReadOnlyTool, Tool, ToolContext, ToolError, ToolKind, ToolOutput
from agentls.tools.bash import (
    MAX_OUTPUT_CHARS,
    OutputBuffer,
    ProgressLines,
    exit_text,
    kill_process_group,
    pump_output,
    spawn_shell,
    wait_for_exit,
)

# What a shell may hold unread before its oldest text is dropped (about 4 MB of text).
MAX_UNREAD_CHARS = 4_000_000
ShellState = Literal["running", "exited", "killed"]


class UnreadOutput:
    """A shell's output not read yet, at most `limit` characters: the newest are kept."""

    def __init__(self, limit: int = MAX_UNREAD_CHARS) -> None:
        self._limit = limit
        self._chunks: deque[str] = deque()
        self._size = 0
        self.total = 0
        self.dropped_chars = 0
        self.dropped_lines = 0

    def append(self, text: str) -> None:
        """Keep `text`; drop the oldest unread text beyond the limit (and count it)."""
        if not text:
            return
        self._chunks.append(text)
        self._size += len(text)
        self.total += len(text)
        while self._size > self._limit:
            head = self._chunks[0]
            cut = min(len(head), self._size - self._limit)
            self._drop(head[:cut])
            if cut == len(head):
                self._chunks.popleft()
            else:
                self._chunks[0] = head[cut:]

    def _drop(self, text: str) -> None:
        self._size -= len(text)
        self.dropped_chars += len(text)
        self.dropped_lines += text.count("\n")

    def take(self) -> tuple[str, int, int]:
        """The unread text, and the characters and lines dropped before it; all now read."""
        taken = ("".join(self._chunks), self.dropped_chars, self.dropped_lines)
        self._chunks.clear()
        self._size = self.dropped_chars = self.dropped_lines = 0
        return taken


@dataclass(slots=True)
class BackgroundShell:
    """One background command, as listShells shows it."""

    shell_id: str
    command: str
    description: str | None
    pid: int
    started_at: float
    output: UnreadOutput = field(default_factory=UnreadOutput)
    state: ShellState = "running"
    exit_code: int | None = None
    task: asyncio.Task[None] | None = None
    # Set when KillShell or the session's close stops it: its end is then no news.
    stopping: bool = False

    def status_line(self) -> str:
        """`running (pid 123, 4.2 s)`, `exited with code 0`, `killed`…"""
        if self.state == "running":
            return f"running (pid {self.pid}, {time.time() - self.started_at:.1f} s)"
        if self.state == "killed":
            return "killed"
        code = self.exit_code if self.exit_code is not None else 0
        if code >= 0:
            return f"exited with code {code}"
        ended = exit_text(code)
        return ended[0].lower() + ended[1:]


class _NoProgress(ProgressLines):
    """A background shell's output goes to no tool call: nothing is queued for progress
    (a shell that never ends a line would otherwise grow the queue for as long as it runs)."""

    def feed(self, text: str) -> None:
        return None

    def flush(self, partial: bool) -> None:
        return None


async def _follow(
    process: asyncio.subprocess.Process, reader: asyncio.StreamReader, output: UnreadOutput
) -> int:
    """Keep the shell's output until it exits; its exit code. Cancelled (the daemon ends
    without closing the session), it kills the shell's group first."""
    pump = asyncio.create_task(pump_output(reader, output, _NoProgress(lambda _text: None)))
    try:
        return await wait_for_exit(process, pump)
    except asyncio.CancelledError:
        await asyncio.shield(kill_process_group(process.pid))
        raise
    finally:
        pump.cancel()


# Told when a shell starts and when it ends (the session turns it into events and notes).
ShellListener = Callable[[BackgroundShell], None]


class BackgroundShells:
    """A session's background shells, by id, in the order they started."""

    def __init__(self, changed: ShellListener = lambda _shell: None) -> None:
        self._changed = changed
        self.shells: dict[str, BackgroundShell] = {}
        self._runners: set[asyncio.Task[None]] = set()
        self._count = 0

    def get(self, shell_id: str) -> BackgroundShell:
        """The shell, or a ToolError naming the ones there are."""
        shell = self.shells.get(shell_id)
        if shell is None:
            known = ", ".join(self.shells) or "none"
            raise ToolError(
                f"No background shell {shell_id!r} in this session (its shells: {known})."
            )
        return shell

    async def start(
        self, command: str, argv: list[str], cwd: Path, description: str | None
    ) -> BackgroundShell:
        """Spawn `argv` (which runs `command`) in its own process group; the shell once it
        runs (or ToolError)."""
        started: asyncio.Future[BackgroundShell] = asyncio.get_running_loop().create_future()
        runner = asyncio.create_task(self._run(command, argv, cwd, description, started))
        # Held until it ends: the loop keeps only weak references to tasks.
        self._runners.add(runner)
        runner.add_done_callback(self._runners.discard)
        # Shielded: a cancelled call must not lose a shell that is already running.
        return await asyncio.shield(started)

    async def _run(
        self,
        command: str,
        argv: list[str],
        cwd: Path,
        description: str | None,
        started: asyncio.Future[BackgroundShell],
    ) -> None:
        try:
            async with spawn_shell(argv, cwd) as (process, reader):
                # Numbered per session (shell_1, shell_2…): short for the model to repeat.
                self._count += 1
                shell_id = f"shell_{self._count}"
                shell = BackgroundShell(shell_id, command, description, process.pid, time.time())
                shell.task = asyncio.current_task()
                self.shells[shell.shell_id] = shell
                started.set_result(shell)
                self._changed(shell)
                code = await _follow(process, reader, shell.output)
        except Exception as exc:
            if started.done():
                raise
            error = exc if isinstance(exc, ToolError) else ToolError(f"Cannot start: {exc}")
            started.set_exception(error)
            return
        shell.state = "killed" if shell.stopping else "exited"
        shell.exit_code = code
        self._changed(shell)

    async def kill(self, shell_id: str) -> BackgroundShell:
        """Stop a shell and everything it started: SIGTERM, then SIGKILL after a grace."""
        shell = self.get(shell_id)
        if shell.state == "running":
            shell.stopping = True
            await kill_process_group(shell.pid)
            if shell.task is not None:
                await asyncio.gather(shell.task, return_exceptions=True)
        return shell

    async def kill_all(self) -> None:
        """Kill every shell that runs, and what finished shells left running in their groups."""
        for shell in list(self.shells.values()):
            if shell.state == "running":
                await self.kill(shell.shell_id)
            else:
                await kill_process_group(shell.pid)


def exit_note(shell: BackgroundShell) -> str:
    """What the model is told when a shell exited by itself."""
    return (
        f'<shellNotification shellId={quoteattr(shell.shell_id)} status="exited" '
        f'exitCode="{shell.exit_code}">The background command {escape(shell.command)} '
        f"{shell.status_line()}; read what it wrote with BashOutput.</shellNotification>"
    )


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
