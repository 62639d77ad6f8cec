"""Nothing the daemon starts outlives it, even when it is killed with SIGKILL.

Bash commands, background shells, hooks and MCP stdio servers each run in a process group
of their own. The daemon kills those groups when a command ends early, when a session
closes and when it shuts down; a daemon killed outright does none of that. So each group is
also registered with a watchdog (tools/watchdog.py): a small process started with the first
registration, which kills every registered group once the daemon is gone. Registering is
one non-blocking write of a few bytes to a pipe, so a command starts no slower.

A group is known only once its process runs, and the daemon may die in between (or a
command may leave its group with `setsid`). So each command also gets the guard's mark in
its environment (`AGENTLS_GUARD`), which its descendants inherit; the watchdog is started
before the first such command, and when the daemon is gone it also kills the group of
every process that carries the mark.

There is one guard per process, not per session: what it guards against is the death of
this process, and every part that spawns a group registers with the same watchdog.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import sys
import threading
from collections.abc import Mapping
from pathlib import Path

from agentls.tools.watchdog import MARK_VARIABLE, group_exists

log = logging.getLogger(__name__)
# Run by path, not as `-m agentls…`: it needs nothing of the package, so it starts fast.
WATCHDOG_SCRIPT = Path(__file__).with_name("watchdog.py")
# Past this many known groups, the ones that ended are forgotten.
PRUNE_AT = 256


class ProcessGuard:
    """The daemon's end of the watchdog: the groups to kill if this process dies."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._groups: set[int] = set()
        self.watchdog_pid: int | None = None
        self._pipe: int | None = None
        self.mark = _new_mark()

    def environ(self, env: Mapping[str, str]) -> dict[str, str]:
        """`env` with this daemon's mark, for a command about to start (the watchdog is
        started first, so the command is covered from its first instruction)."""
        with self._lock:
            if self._pipe is None:
                self._start()
        return {**env, MARK_VARIABLE: self.mark}

    def guard(self, pgid: int) -> None:
        """Have the watchdog kill process group `pgid` if this process dies."""
        with self._lock:
            self._groups.add(pgid)
            if len(self._groups) > PRUNE_AT:
                self._groups = {g for g in self._groups if group_exists(g)}
            if self._pipe is None or not self._send(f"+{pgid}\n"):
                # No watchdog yet, or it died: a new one, told every group there is.
                self._start()

    def guard_child_groups(self) -> None:
        """Guard every child of this process that leads a group of its own (for children
        spawned by code that does not hand out their pid, such as the MCP SDK's)."""
        watchdog = self.watchdog_pid
        for pid in _child_group_leaders():
            if pid != watchdog and pid not in self._groups:
                self.guard(pid)

    def _send(self, lines: str) -> bool:
        assert self._pipe is not None
        try:
            os.write(self._pipe, lines.encode("ascii"))
        except BlockingIOError:
            # The watchdog reads as fast as commands start; a full pipe means it hangs.
            log.warning("the process watchdog is not reading; a command is not guarded")
        except OSError:
            return False
        return True

    def _start(self) -> None:
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None
        self._reap()
        read_end, write_end = os.pipe()
        try:
            self.watchdog_pid = _spawn_watchdog(read_end, self.mark)
        except OSError as exc:
            log.warning("the process watchdog could not start: %s", exc)
            os.close(write_end)
            return
        finally:
            os.close(read_end)
        # Not inherited by the commands (os.pipe is close-on-exec), or their
        # being alive would hide the daemon's death.
        os.set_blocking(write_end, False)
        self._pipe = write_end
        self._groups = {g for g in self._groups if group_exists(g)}
        self._send("".join(f"+{g}\n" for g in sorted(self._groups)))

    def _reap(self) -> None:
        """Collect a watchdog that died (it would stay a zombie)."""
        if self.watchdog_pid is not None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.watchdog_pid, os.WNOHANG)
            self.watchdog_pid = None

    def reset_after_fork(self) -> None:
        """A forked child is another process: it must start its own watchdog."""
        self._lock = threading.Lock()
        self._groups = set()
        self.watchdog_pid = None
        self.mark = _new_mark()
        if self._pipe is not None:
            os.close(self._pipe)
            self._pipe = None


def _new_mark() -> str:
    # The pid says whose; the random part keeps a reused pid from matching an old mark.
    return f"{os.getpid()}-{secrets.token_hex(8)}"


def _spawn_watchdog(stdin: int, mark: str) -> int:
    """Start the watchdog reading `stdin`, in a session of its own (a signal to the
    daemon's group must not take it too), its output thrown away; its pid."""
    argv = [sys.executable, "-I", "-S", str(WATCHDOG_SCRIPT), str(os.getpid()), mark]
    return os.posix_spawn(
        sys.executable,
        argv,
        os.environ,
        file_actions=[
            (os.POSIX_SPAWN_DUP2, stdin, 0),
            (os.POSIX_SPAWN_OPEN, 1, os.devnull, os.O_WRONLY, 0),
            (os.POSIX_SPAWN_DUP2, 1, 2),
        ],
        setsid=True,
    )


def _child_group_leaders() -> list[int]:
    """This process's children (of every thread) that lead their own process group."""
    leaders = []
    for task in Path("/proc/self/task").glob("*/children"):
        try:
            children = task.read_text(encoding="ascii").split()
        except OSError:
            continue
        leaders += [int(pid) for pid in children if _leads_group(int(pid))]
    return leaders


def _leads_group(pid: int) -> bool:
    try:
        return os.getpgid(pid) == pid
    except OSError:
        return False


GUARD = ProcessGuard()
os.register_at_fork(after_in_child=GUARD.reset_after_fork)


def guard_group(pgid: int) -> None:
    """Have the watchdog kill process group `pgid` if the daemon dies (see ProcessGuard)."""
    GUARD.guard(pgid)


def guarded_environ(env: Mapping[str, str]) -> dict[str, str]:
    """`env` marked for the watchdog (see ProcessGuard.environ)."""
    return GUARD.environ(env)


def guard_child_groups() -> None:
    """Guard the daemon's children that lead their own groups (see ProcessGuard)."""
    GUARD.guard_child_groups()
