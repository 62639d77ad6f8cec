"""The watchdog process: it kills the daemon's commands when the daemon dies, however it died.

A daemon killed with SIGKILL runs no cleanup, and its commands (each in a process group of
its own, so a kill reaches what they started) would run on. So the cleanup lives here, in a
small process the daemon starts with its first command (tools/process_guard.py): its stdin
is a pipe whose only write end the daemon holds, and the daemon writes a line `+PGID` for
each group it starts. End of file on that pipe means the daemon is gone: the watchdog then
SIGTERMs every group it was told of, SIGKILLs what is left after a short grace, and exits.
A daemon that exits normally has killed its commands itself; the watchdog only makes sure.

The daemon also hands the watchdog its mark, which every command it starts carries in its
environment: a process that bears it is killed with its group too, which covers a command
whose registration the daemon did not live to write, and one that left its group.

Another line: the kernel sends it SIGTERM when its parent dies (PR_SET_PDEATHSIG), for a
write end that leaked into a process outliving the daemon. That signal also comes when
only the thread that started the watchdog ends, so what counts is that the parent changed
(checked again every PRUNE_SECONDS as a last resort).

Run as a script (`python -I -S watchdog.py DAEMON_PID`): standard library only, so it starts
in milliseconds and holds nothing of the daemon.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import select
import signal
import sys
import time

# Seconds the groups get to end after SIGTERM before SIGKILL.
GRACE_SECONDS = 0.3
POLL_SECONDS = 0.02
# How often groups that have ended are forgotten while the daemon lives, so a group id
# the system reuses later is never killed by mistake.
PRUNE_SECONDS = 10.0
PR_SET_PDEATHSIG = 1
# The environment variable that marks the daemon's commands and their descendants.
MARK_VARIABLE = "AGENTLS_GUARD"


def group_exists(pgid: int) -> bool:
    """Whether any process (a zombie included) is still in the group."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def signal_group(pgid: int, signum: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def kill_groups(groups: set[int]) -> None:
    """SIGTERM every group, then SIGKILL the ones still there after the grace."""
    for pgid in groups:
        signal_group(pgid, signal.SIGTERM)
    deadline = time.monotonic() + GRACE_SECONDS
    alive = {pgid for pgid in groups if group_exists(pgid)}
    while alive and time.monotonic() < deadline:
        time.sleep(POLL_SECONDS)
        alive = {pgid for pgid in alive if group_exists(pgid)}
    for pgid in alive:
        signal_group(pgid, signal.SIGKILL)


class Registry:
    """The groups the daemon registered, read from its pipe line by line."""

    def __init__(self) -> None:
        self.groups: set[int] = set()
        self._pending = b""

    def feed(self, chunk: bytes) -> None:
        """Take the complete `+PGID` lines of a chunk (an unfinished one waits)."""
        *lines, self._pending = (self._pending + chunk).split(b"\n")
        for line in lines:
            if line.startswith(b"+") and line[1:].isdigit() and int(line[1:]) > 1:
                self.groups.add(int(line[1:]))
        self.prune()

    def prune(self) -> None:
        self.groups = {pgid for pgid in self.groups if group_exists(pgid)}


def marked_groups(mark: str) -> set[int]:
    """The groups of the processes whose environment carries `mark`."""
    needle = f"{MARK_VARIABLE}={mark}".encode()
    groups = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/environ", "rb") as handle:
                environ = handle.read()
            if needle in environ.split(b"\0"):
                groups.add(os.getpgid(int(entry)))
        except OSError:
            continue
    groups.discard(os.getpgrp())
    return {pgid for pgid in groups if pgid > 1}


def watch(fd: int, daemon_pid: int, registry: Registry) -> None:
    """Read registrations until the daemon is gone: end of file, or a new parent."""
    wakeup = wake_on_parent_death()
    while os.getppid() == daemon_pid:
        ready, _, _ = select.select([fd, wakeup], [], [], PRUNE_SECONDS)
        if wakeup in ready:
            os.read(wakeup, 512)
        if fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                return
            registry.feed(chunk)
        elif not ready:
            registry.prune()
    # The parent died: what it wrote just before is still in the pipe.
    os.set_blocking(fd, False)
    with contextlib.suppress(OSError):
        while chunk := os.read(fd, 65536):
            registry.feed(chunk)


def wake_on_parent_death() -> int:
    """A file that becomes readable when SIGTERM comes, which the kernel sends when the
    parent dies (no exception is raised in the middle of anything)."""
    read_end, write_end = os.pipe()
    os.set_blocking(write_end, False)
    signal.signal(signal.SIGTERM, lambda _signum, _frame: None)
    signal.set_wakeup_fd(write_end)
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    return read_end


def main(argv: list[str]) -> int:
    # Only the pipe is needed; whatever else was inherited must not be held open here.
    os.closerange(3, os.sysconf("SC_OPEN_MAX"))
    registry = Registry()
    # A terminal's Ctrl-C or hang-up is for the daemon, which then ends its commands.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    mark = argv[2] if len(argv) > 2 else None
    try:
        watch(sys.stdin.fileno(), int(argv[1]), registry)
    finally:
        # Whatever ended the watch, an error included, the commands must not outlive it.
        kill_groups(registry.groups | (marked_groups(mark) if mark else set()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
