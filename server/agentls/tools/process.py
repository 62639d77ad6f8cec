"""Commands as processes: spawned in their own group, their output pumped, the group killed.

Bash's foreground commands and the background shells both run through here, so a
command is started, read and stopped the same way whichever waits for it. A foreground
command writes to a pipe and reads nothing (stdin is /dev/null): its output is plain text,
with no echo and no colour, and a command that would prompt fails at once instead of
hanging until its timeout. A background shell gets a pseudo-terminal (tools/pty_process.py)
so that WriteStdin can answer its prompts. Every group is registered with the watchdog
(tools/process_guard.py), which kills it if the daemon dies first, even by SIGKILL.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Protocol

from agentls.redact import without_provider_keys
from agentls.tools.errors import ToolError
from agentls.tools.process_guard import guard_group, guarded_environ
from agentls.tools.pty_process import CLAIM_SECONDS, TERMINAL_ENVIRON, Terminal, TerminalInput

MAX_OUTPUT_CHARS = 30_000
# SIGTERM first, so well-behaved programs clean up; SIGKILL what is left after this.
KILL_GRACE_SECONDS = 0.25
KILL_POLL_SECONDS = 0.02
# After the shell exits, its background children may still hold the pipe open.
DRAIN_AFTER_EXIT_SECONDS = 0.2
PROGRESS_INTERVAL_SECONDS = 0.1
MAX_PROGRESS_CHARS = 8_000


class OutputBuffer:
    """Keeps the head and the tail of an unbounded stream in bounded memory."""

    def __init__(self, limit: int = MAX_OUTPUT_CHARS) -> None:
        self._half = limit // 2
        self._head = ""
        self._tail = ""
        self.total = 0

    def append(self, text: str) -> None:
        """Add text; only the first and last `limit / 2` characters are kept."""
        self.total += len(text)
        room = self._half - len(self._head)
        if room > 0:
            self._head += text[:room]
            text = text[room:]
        self._tail += text
        if len(self._tail) > 2 * self._half:
            self._tail = self._tail[-self._half :]

    @property
    def truncated(self) -> bool:
        """Whether anything was dropped from the middle."""
        return self.total > 2 * self._half

    def render(self) -> str:
        """All the text, or its head and tail around a marker saying how much was cut."""
        if not self.truncated:
            return self._head + self._tail
        tail = self._tail[-self._half :]
        omitted = self.total - len(self._head) - len(tail)
        return f"{self._head}\n\n[... {omitted} characters truncated ...]\n\n{tail}"


class ProgressLines:
    """Forwards complete output lines to a progress callback, at most every interval."""

    def __init__(self, emit: Callable[[str], None]) -> None:
        self._emit = emit
        self._pending = ""
        self._last = 0.0

    def feed(self, text: str) -> None:
        """Queue text; send the complete lines if the interval has passed."""
        self._pending += text
        if time.monotonic() - self._last >= PROGRESS_INTERVAL_SECONDS:
            self.flush(partial=False)

    def flush(self, partial: bool) -> None:
        """Send the queued complete lines (and the unfinished one when `partial`)."""
        cut = len(self._pending) if partial else self._pending.rfind("\n") + 1
        ready, self._pending = self._pending[:cut], self._pending[cut:]
        if not ready:
            return
        if len(ready) > MAX_PROGRESS_CHARS:
            ready = "[...]\n" + ready[-MAX_PROGRESS_CHARS:]
        self._last = time.monotonic()
        self._emit(ready)


class TextSink(Protocol):
    """Where a command's decoded output goes (an OutputBuffer, a background shell's)."""

    def append(self, text: str) -> None: ...


async def pump_output(
    stream: asyncio.StreamReader, buffer: TextSink, progress: ProgressLines
) -> None:
    """Read the merged output until EOF into the buffer and the progress stream."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    while True:
        try:
            chunk = await asyncio.wait_for(stream.read(65536), PROGRESS_INTERVAL_SECONDS)
        except TimeoutError:
            progress.flush(partial=False)
            continue
        text = decoder.decode(chunk, final=not chunk)
        buffer.append(text)
        progress.feed(text)
        if not chunk:
            progress.flush(partial=True)
            return


def _group_alive(pgid: int) -> bool:
    """Whether a member of the group still runs; zombies waiting to be reaped do not count."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        # A member we may not signal (it changed user) is still alive.
        return True
    return _running_member(pgid)


def _running_member(pgid: int) -> bool:
    # killpg also reaches zombies (killed children an init that reaps slowly still holds),
    # so /proc tells whether anything of the group still runs.
    try:
        entries = os.listdir("/proc")
    except OSError:
        return True
    for entry in entries:
        if entry.isdigit() and _member_state(entry, pgid) not in (None, "Z", "X"):
            return True
    return False


def _member_state(pid: str, pgid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return fields[0] if len(fields) > 2 and fields[2] == str(pgid) else None


def _signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def kill_process_group(pgid: int) -> None:
    """SIGTERM the whole group, then SIGKILL whatever is still there after a short grace."""
    _signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + KILL_GRACE_SECONDS
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            _signal_group(pgid, signal.SIGKILL)
            return
        await asyncio.sleep(KILL_POLL_SECONDS)


async def wait_for_exit(process: asyncio.subprocess.Process, pump: asyncio.Task[None]) -> int:
    code = await process.wait()
    # Background children (`server &`) may keep the pipe open: take what they wrote so far.
    await asyncio.wait({pump}, timeout=DRAIN_AFTER_EXIT_SECONDS)
    return code


def exit_text(code: int) -> str:
    if code < 0:
        try:
            return f"Terminated by signal {signal.Signals(-code).name}"
        except ValueError:
            return f"Terminated by signal {-code}"
    return f"Exit code {code}"


async def _start(
    argv: list[str], cwd: Path, stdin: int, output: int, environ: dict[str, str]
) -> asyncio.subprocess.Process:
    """Start `argv` in a process group of its own, guarded by the watchdog."""
    try:
        process = await asyncio.create_subprocess_exec(
            *argv,
            cwd=cwd,
            stdin=stdin,
            stdout=output,
            stderr=output,
            env=guarded_environ({**without_provider_keys(os.environ), **environ}),
            # Its own process group, so a kill reaches everything the command started.
            start_new_session=True,
        )
    except OSError as exc:
        raise ToolError(f"Cannot run the command in {cwd}: {exc.strerror}") from exc
    # Killed by the watchdog if the daemon dies before the command ends.
    guard_group(process.pid)
    return process


@contextlib.asynccontextmanager
async def spawn_shell(
    argv: list[str], cwd: Path
) -> AsyncIterator[tuple[asyncio.subprocess.Process, asyncio.StreamReader]]:
    """Start bash with stdout and stderr on one pipe that we own and close when done.

    Owning the pipe (rather than letting asyncio make it) means Process.wait() returns
    when bash exits, even while a backgrounded child still holds the pipe's write end.
    """
    read_fd, write_fd = os.pipe()
    try:
        process = await _start(argv, cwd, asyncio.subprocess.DEVNULL, write_fd, {})
    except ToolError:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    reader = asyncio.StreamReader()
    transport, _ = await asyncio.get_running_loop().connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    try:
        yield process, reader
    finally:
        transport.close()


@contextlib.asynccontextmanager
async def spawn_in_terminal(
    argv: list[str], cwd: Path
) -> AsyncIterator[tuple[asyncio.subprocess.Process, asyncio.StreamReader, TerminalInput]]:
    """Start bash on a pseudo-terminal of its own (tools/pty_process.py): its output, and
    the terminal's input side, open until the block ends."""
    try:
        terminal = Terminal()
    except OSError as exc:
        raise ToolError(f"Cannot open a terminal for the command: {exc.strerror}") from exc
    try:
        process = await _start(
            terminal.command(argv), cwd, terminal.slave, terminal.slave, TERMINAL_ENVIRON
        )
    except ToolError:
        terminal.close()
        raise
    finally:
        terminal.close_slave()
    reader, transport = await terminal.reader()
    try:
        # Started means ready for input: a Ctrl-C typed at once must find its command.
        await terminal.claimed_by(process.pid, CLAIM_SECONDS, lambda: process.returncode is None)
        yield process, reader, terminal.input
    finally:
        terminal.input.close()
        transport.close()
