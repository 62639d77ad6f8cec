"""Background shells: Bash commands that go on running while the conversation does.

A shell belongs to its session, not to a turn: the end or abort of a turn leaves it
running, and closing the session (or the daemon) kills every one. It is spawned, pumped
and killed as a foreground Bash command is (tools/process.py), in a process group of its
own under the watchdog, but on a pseudo-terminal, so WriteStdin can type into it. Its
output is kept for the next read as plain text (tools/terminal_text.py), bounded, the
oldest unread text going first when it overflows. The tools over them (BashOutput,
WriteStdin, KillShell) are in shells.py and write_stdin.py.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal
from xml.sax.saxutils import escape, quoteattr

from agentls.tools.errors import ToolError
from agentls.tools.process import (
    ProgressLines,
    exit_text,
    kill_process_group,
    pump_output,
    spawn_in_terminal,
    wait_for_exit,
)
from agentls.tools.pty_process import TerminalInput
from agentls.tools.terminal_text import TerminalText

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

    def peek(self) -> str:
        """The unread text, left unread."""
        return "".join(self._chunks)

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
    # Where WriteStdin types: the terminal's input side, while the shell runs.
    terminal: TerminalInput | None = None
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


class _PlainOutput:
    """The terminal's output as the model reads it (plain text), into the unread output."""

    def __init__(self, output: UnreadOutput) -> None:
        self._output = output
        self._plain = TerminalText()

    def append(self, text: str) -> None:
        self._output.append(self._plain.feed(text))

    def flush(self) -> None:
        self._output.append(self._plain.flush())


async def _follow(
    process: asyncio.subprocess.Process, reader: asyncio.StreamReader, output: UnreadOutput
) -> int:
    """Keep the shell's output until it exits; its exit code. Cancelled (the daemon ends
    without closing the session), it kills the shell's group first."""
    plain = _PlainOutput(output)
    pump = asyncio.create_task(pump_output(reader, plain, _NoProgress(lambda _text: None)))
    try:
        return await wait_for_exit(process, pump)
    except asyncio.CancelledError:
        await asyncio.shield(kill_process_group(process.pid))
        raise
    finally:
        pump.cancel()
        plain.flush()


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
            async with spawn_in_terminal(argv, cwd) as (process, reader, terminal):
                # Numbered per session (shell_1, shell_2…): short for the model to repeat.
                self._count += 1
                shell_id = f"shell_{self._count}"
                shell = BackgroundShell(shell_id, command, description, process.pid, time.time())
                shell.task = asyncio.current_task()
                shell.terminal = terminal
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
