"""tools/run_to_end.py: a short command's output and status, read by the event loop alone."""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path

import pytest

from agentls.tools.run_to_end import run_to_end

WRITER = "import sys; sys.stdout.write('x' * 1_000_000); sys.stderr.write('oops'); sys.exit(3)"
BOTH_PATHS = [pytest.param(True, id="pidfd"), pytest.param(False, id="worker-thread")]


@pytest.mark.parametrize("use_pidfd", BOTH_PATHS)
async def test_collects_more_output_than_a_pipe_holds_and_the_exit_status(
    tmp_path: Path, use_pidfd: bool
) -> None:
    finished = await run_to_end([sys.executable, "-c", WRITER], tmp_path, use_pidfd=use_pidfd)
    assert finished.returncode == 3
    assert finished.stdout == b"x" * 1_000_000
    assert finished.stderr == b"oops"


@pytest.mark.parametrize("use_pidfd", BOTH_PATHS)
async def test_runs_in_the_given_directory(tmp_path: Path, use_pidfd: bool) -> None:
    code = "import os; print(os.getcwd())"
    finished = await run_to_end([sys.executable, "-c", code], tmp_path, use_pidfd=use_pidfd)
    assert finished.stdout.decode().strip() == str(tmp_path)


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="no pidfd on this platform")
async def test_no_thread_is_started_for_a_command(tmp_path: Path, thread_starts: list[str]) -> None:
    # asyncio's ThreadedChildWatcher starts one thread per child (Python 3.11); this path
    # reads the child's pipes and its exit on the event loop alone.
    finished = await run_to_end([sys.executable, "-c", "print('hi')"], tmp_path)
    assert finished.stdout == b"hi\n"
    assert thread_starts == []


@pytest.mark.parametrize("use_pidfd", BOTH_PATHS)
async def test_a_cancelled_command_is_killed_and_reaped(tmp_path: Path, use_pidfd: bool) -> None:
    pid_file = tmp_path / "pid"
    code = f"import os, time; open({str(pid_file)!r}, 'w').write(str(os.getpid())); time.sleep(60)"
    task = asyncio.create_task(
        run_to_end([sys.executable, "-c", code], tmp_path, use_pidfd=use_pidfd)
    )
    for _ in range(500):
        if pid_file.exists() and pid_file.read_text():
            break
        await asyncio.sleep(0.01)
    pid = int(pid_file.read_text())
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # Reaped: the pid no longer names a process (not even a zombie).
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


async def test_a_missing_program_raises_oserror(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await run_to_end([str(tmp_path / "no-such-program")], tmp_path)
