"""Pseudo-terminals for background shells: a command that prompts, or a REPL, can be talked to.

tools/process.py spawns every command; for a background shell it asks this module for a
terminal: the command gets the terminal's slave end as stdin, stdout and stderr, and as
its controlling terminal (pty_ctty.py), so prompts show, Ctrl-C written to it interrupts
the foreground command and Ctrl-D ends a read. The daemon keeps the master end: what the
command writes is read from it, what WriteStdin sends is written to it.

The terminal says it is `dumb` (programs then write no colour or cursor codes, and
readline no bracketed-paste marks, for the model to wade through) and `cat` is the pager
(a pager would wait for a key the model does not know it must press). It is 200 columns
wide, so lines wrap as rarely as on a wide window, and 50 rows high.
"""

from __future__ import annotations

import asyncio
import errno
import fcntl
import os
import struct
import sys
import termios
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

COLUMNS = 200
ROWS = 50
TERMINAL_ENVIRON = {"TERM": "dumb", "PAGER": "cat", "GIT_PAGER": "cat"}
CTTY_SCRIPT = Path(__file__).with_name("pty_ctty.py")
# How long a new shell's helper may take to claim its terminal, and how often to look.
CLAIM_SECONDS = 5.0
CLAIM_POLL_SECONDS = 0.005
# How often a write that the terminal cannot take yet is tried again.
WRITE_RETRY_SECONDS = 0.01


class InputNotTaken(Exception):
    """The command does not read its terminal: only `taken` bytes of the input went in."""

    def __init__(self, taken: int) -> None:
        super().__init__(f"only {taken} bytes were taken")
        self.taken = taken


@dataclass(slots=True)
class TerminalInput:
    """The keyboard side of a shell's terminal: text written here is what it reads. It
    holds its own copy of the master end, closed with `close` when the shell is done."""

    fd: int
    closed: bool = False

    def close(self) -> None:
        """Let the terminal go (once); later writes fail with InputNotTaken."""
        if not self.closed:
            self.closed = True
            os.close(self.fd)

    async def write(self, text: str, within: float) -> None:
        """Write all of `text` (UTF-8), waiting while the terminal's input queue is full;
        InputNotTaken after `within` seconds."""
        data = text.encode("utf-8")
        sent = 0
        deadline = time.monotonic() + within
        while sent < len(data):
            if self.closed:
                raise InputNotTaken(sent)
            try:
                sent += os.write(self.fd, data[sent:])
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise InputNotTaken(sent) from None
                await asyncio.sleep(WRITE_RETRY_SECONDS)
            except OSError:
                # EIO: nothing holds the terminal's other end any more.
                raise InputNotTaken(sent) from None


class Terminal:
    """A pseudo-terminal pair sized for a command: the slave for the child, the master kept."""

    def __init__(self) -> None:
        self.master, self.slave = os.openpty()
        fcntl.ioctl(self.slave, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
        os.set_blocking(self.master, False)
        # Its own descriptor: the reader's closes with its stream, and a number closed
        # under a writer could be reused by another file.
        self.input = TerminalInput(os.dup(self.master))

    @staticmethod
    def command(argv: list[str]) -> list[str]:
        """`argv` run so that the terminal becomes its controlling terminal."""
        return [sys.executable, "-I", "-S", str(CTTY_SCRIPT), *argv]

    async def claimed_by(
        self, pgid: int, within: float, alive: Callable[[], bool] = lambda: True
    ) -> bool:
        """Wait until group `pgid` is the terminal's foreground (pty_ctty.py claimed it),
        so a Ctrl-C written at once reaches the command; False if it did not in time, or
        is no longer `alive`."""
        deadline = time.monotonic() + within
        while time.monotonic() < deadline and alive():
            try:
                if os.tcgetpgrp(self.master) == pgid:
                    return True
            except OSError:
                pass  # no controlling process yet
            await asyncio.sleep(CLAIM_POLL_SECONDS)
        return False

    def close_slave(self) -> None:
        """The child has its copy: ours must go, or the end of its output never shows."""
        os.close(self.slave)

    async def reader(self) -> tuple[asyncio.StreamReader, asyncio.BaseTransport]:
        """A stream of what the command writes; it ends when the last writer closes the
        terminal (Linux then fails reads with EIO rather than returning end of file)."""
        reader = asyncio.StreamReader()
        loop = asyncio.get_running_loop()
        transport, _ = await loop.connect_read_pipe(
            lambda: _EndOnHangUp(reader), os.fdopen(self.master, "rb", buffering=0)
        )
        return reader, transport

    def close(self) -> None:
        """Close the master end when no reader owns it (the spawn failed)."""
        self.input.close()
        os.close(self.master)


class _EndOnHangUp(asyncio.StreamReaderProtocol):
    """A terminal whose every writer left fails its reads with EIO: that is its end."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        super().__init__(reader)

    def connection_lost(self, exc: Exception | None) -> None:
        if isinstance(exc, OSError) and exc.errno == errno.EIO:
            exc = None
        super().connection_lost(exc)
