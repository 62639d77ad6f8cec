"""The process watchdog on its own: a small "daemon" (a Python process using the guard)
starts real process groups and is SIGKILLed; the groups it guarded must go, others stay."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import psutil  # type: ignore[import-untyped]

from agentls.tools.watchdog import Registry

# The daemon in miniature: `{guarded}` and `{spare}` are sleeps in groups of their own;
# `{before}` runs before the second group is guarded, `{leak}` after.
DAEMON = """
import json, os, signal, subprocess, sys, time
from agentls.tools.process_guard import GUARD, guard_group, guarded_environ

def group(): return subprocess.Popen(["sleep", "60"], start_new_session=True).pid

first, spare = group(), group()
guard_group(first)
{before}
second = group()
guard_group(second)
{leak}
print(json.dumps({{"guarded": [first, second], "spare": spare,
                   "watchdog": GUARD.watchdog_pid, "extra": extra}}), flush=True)
time.sleep(60)
"""
# Dead (its pipe end closed), not only signalled, before the guard writes again.
KILL_WATCHDOG = """os.kill(GUARD.watchdog_pid, signal.SIGKILL)
stat = f"/proc/{GUARD.watchdog_pid}/stat"
while os.path.exists(stat) and open(stat).read().rsplit(")", 1)[1].split()[0] != "Z":
    time.sleep(0.01)"""
# The pipe's write end handed to a process that outlives the daemon: no end of file.
LEAK = "leak = subprocess.Popen(['sleep', '60'], pass_fds=[GUARD._pipe]); extra = leak.pid"


# Commands the daemon never lived to register: one marked in its environment, and one whose
# `setsid` child left the guarded group. An unmarked one must survive.
UNREGISTERED = """
marked = subprocess.Popen(["sleep", "60"], start_new_session=True, env=guarded_environ(os.environ))
escaped = subprocess.Popen(["sh", "-c", "setsid sleep 60 & echo $!"], start_new_session=True,
                           env=guarded_environ(os.environ), stdout=subprocess.PIPE, text=True)
escaped_pid = int(escaped.stdout.readline())
extra = {"marked": marked.pid, "escaped": escaped_pid}
"""


def run_daemon(before: str = "", leak: str = "extra = None") -> tuple[int, dict[str, int]]:
    code = DAEMON.format(before=before, leak=leak)
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None
    started = json.loads(process.stdout.readline())
    time.sleep(0.3)  # the watchdog has read the registrations
    process.send_signal(signal.SIGKILL)
    process.wait()
    return process.pid, started


def running(pid: int) -> bool:
    try:
        return bool(psutil.Process(pid).status() != psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return False


def wait_gone(pids: list[int], within: float = 10.0) -> list[int]:
    """The pids still running after `within` seconds (none, once they all went)."""
    deadline = time.monotonic() + within
    while (left := [pid for pid in pids if running(pid)]) and time.monotonic() < deadline:
        time.sleep(0.02)
    return left


def end(pid: int | None) -> None:
    if pid is not None and running(pid):
        os.kill(pid, signal.SIGKILL)


def test_the_groups_a_killed_daemon_guarded_die_and_no_others() -> None:
    _pid, started = run_daemon()
    try:
        assert wait_gone(started["guarded"]) == []
        assert running(started["spare"])
        assert wait_gone([started["watchdog"]]) == []
    finally:
        end(started["spare"])


def test_a_watchdog_that_died_is_replaced_and_told_every_group() -> None:
    _pid, started = run_daemon(before=KILL_WATCHDOG)
    try:
        assert wait_gone(started["guarded"]) == []
    finally:
        end(started["spare"])


def test_the_parents_death_is_enough_when_the_pipe_stays_open() -> None:
    # PR_SET_PDEATHSIG: the leaked write end never lets the pipe reach end of file; the
    # watchdog's own check of its parent would only come after 10 s, beyond this bound.
    _pid, started = run_daemon(leak=LEAK)
    try:
        assert wait_gone(started["guarded"], within=5.0) == []
    finally:
        end(started["spare"])
        end(started["extra"])


def test_the_registry_joins_lines_split_across_reads_and_skips_the_rest() -> None:
    sleep = subprocess.Popen(["sleep", "60"], start_new_session=True)
    registry = Registry()
    line = f"+{sleep.pid}\n".encode()
    try:
        # Never pid 1, nor group 0 (which killpg reads as the caller's own).
        registry.feed(b"+1\n+0\nnoise\n" + line[:2])
        assert registry.groups == set()
        registry.feed(line[2:])
        assert registry.groups == {sleep.pid}
    finally:
        sleep.kill()
        sleep.wait()
    registry.prune()
    assert registry.groups == set()


def test_commands_not_yet_registered_or_gone_from_their_group_die_by_their_mark() -> None:
    _pid, started = run_daemon(leak=UNREGISTERED)
    try:
        extra = started["extra"]
        assert isinstance(extra, dict)
        assert wait_gone([extra["marked"], extra["escaped"], *started["guarded"]]) == []
        assert running(started["spare"])
    finally:
        end(started["spare"])
