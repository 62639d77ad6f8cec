"""Bash: real subprocesses, their process groups, output caps and the read-only allow-list."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import psutil  # type: ignore[import-untyped]
import pytest

from agentls.permissions.read_only_bash import is_read_only_command
from agentls.tools.base import ToolContext, ToolError, ToolOutput
from agentls.tools.bash import BashInput, BashTool
from agentls.tools.process import OutputBuffer
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import WorkspaceView


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path.resolve()


def make_ctx(root: Path, progress: list[str] | None = None) -> ToolContext:
    sink = progress if progress is not None else []
    return ToolContext(WorkspaceView([root]), FileReadCache(), root, progress=sink.append)


async def bash(root: Path, command: str, **extra: object) -> ToolOutput:
    args = BashInput.model_validate({"command": command, **extra})
    return await BashTool().run(args, make_ctx(root))


def is_gone(pid: int) -> bool:
    """Dead, or a zombie waiting for a reaper that this container may not run."""
    try:
        return bool(psutil.Process(pid).status() == psutil.STATUS_ZOMBIE)
    except psutil.NoSuchProcess:
        return True


async def wait_all_gone(pids: list[int], within: float = 5.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if all(is_gone(pid) for pid in pids):
            return True
        await asyncio.sleep(0.05)
    return False


async def test_output_merges_stdout_and_stderr_in_the_working_directory(root: Path) -> None:
    out = await bash(root, "pwd; echo err >&2")
    assert out.content == f"{root}\nerr" and not out.is_error


async def test_a_non_zero_exit_is_an_error_with_the_code(root: Path) -> None:
    out = await bash(root, "echo partial; exit 3")
    assert out.is_error and out.content == "partial\nExit code 3"


async def test_no_output_says_so(root: Path) -> None:
    out = await bash(root, "true")
    assert out.content == "(Bash completed with no output)" and not out.is_error


async def test_stdin_is_closed_so_readers_do_not_hang(root: Path) -> None:
    out = await asyncio.wait_for(bash(root, "cat; read line; echo after"), timeout=5)
    assert out.content.endswith("after")


async def test_output_lines_stream_to_progress(root: Path) -> None:
    progress: list[str] = []
    # A second apart: two reads however late the loop gets to the first line.
    args = BashInput(command="echo one; sleep 1; echo two")
    await BashTool().run(args, make_ctx(root, progress))
    assert "".join(progress) == "one\ntwo\n"
    assert len(progress) >= 2


async def test_long_output_keeps_head_and_tail_around_a_marker(root: Path) -> None:
    out = await bash(root, "seq 1 20000")
    assert out.truncated
    assert out.content.startswith("1\n2\n3\n") and out.content.endswith("19999\n20000")
    total = len("\n".join(str(n) for n in range(1, 20001))) + 1
    omitted = total - 30_000
    assert f"[... {omitted} characters truncated ...]" in out.content
    assert len(out.content) < 30_000 + 100


def test_output_buffer_keeps_everything_under_the_limit() -> None:
    buffer = OutputBuffer(limit=10)
    for piece in ["ab", "cde", "fghij"]:
        buffer.append(piece)
    assert buffer.render() == "abcdefghij" and not buffer.truncated
    buffer.append("k")
    assert buffer.render() == "abcde\n\n[... 1 characters truncated ...]\n\nghijk"


async def test_timeout_kills_the_whole_process_group(root: Path) -> None:
    started = time.monotonic()
    out = await bash(root, "sleep 30 & echo child=$!; sleep 30", timeout=500)
    assert time.monotonic() - started < 5
    assert out.is_error and "timed out after 0.5 s" in out.content
    child = int(out.content.split("child=")[1].split()[0])
    assert await wait_all_gone([child])


async def test_cancellation_kills_children_and_reraises(root: Path) -> None:
    progress: list[str] = []
    command = "sleep 30 & echo pid=$!; sleep 30 & echo pid=$!; wait"
    task = asyncio.create_task(BashTool().run(BashInput(command=command), make_ctx(root, progress)))
    deadline = time.monotonic() + 5
    while "".join(progress).count("pid=") < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    pids = [int(part.split()[0]) for part in "".join(progress).split("pid=")[1:]]
    assert len(pids) == 2 and not any(is_gone(pid) for pid in pids)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_all_gone(pids)


async def test_a_backgrounded_child_holding_the_pipe_does_not_block_the_result(
    root: Path,
) -> None:
    started = time.monotonic()
    out = await bash(root, "sleep 3 & echo bg=$!; echo done")
    assert time.monotonic() - started < 2
    assert out.content.endswith("done") and not out.is_error
    psutil.Process(int(out.content.split("bg=")[1].split()[0])).kill()


def test_title_is_the_description_or_the_shortened_command() -> None:
    tool = BashTool()
    assert tool.title(BashInput(command="ls", description="List files")) == "List files"
    long = tool.title(BashInput(command="echo " + "x" * 200))
    assert len(long) == 80 and long.endswith("…")


def test_rule_content_is_the_command(root: Path) -> None:
    assert BashTool().rule_content(BashInput(command="make test"), root) == "make test"


@pytest.mark.parametrize(
    ("command", "read_only"),
    [
        ("ls -la", True),
        ("cat README.md | head -20", True),
        ("git status && git diff --stat", True),
        ("git log --oneline -n 5; pwd", True),
        ("git branch", True),
        ("git branch -a -v", True),
        ("grep -rn 'TODO' src | sort | uniq -c", True),
        ("find . -name '*.py' -type f", True),
        ("rg foo src || echo none", True),
        ("wc -l *.py", True),
        ("echo $HOME", True),
        ("git diff --output=patch.txt", False),
        ("git branch new-feature", False),
        ("git branch -D main", False),
        ("git commit -m x", False),
        ("git -c core.pager=sh log", False),
        ("git log *", False),
        ("git grep -O foo", False),
        ("find . -name '*.tmp' -delete", False),
        ("find . -exec rm {} ;", False),
        ("sort -o out.txt in.txt", False),
        ("sort in.txt -ro out.txt", False),
        ("rg --pre ./evil foo", False),
        ("tree -o out.txt", False),
        ("uniq in.txt out.txt", False),
        ("echo hi > file", False),
        ("echo hi >> file", False),
        ("cat < /etc/passwd", False),
        ("ls $(rm -rf x)", False),
        ("ls `rm -rf x`", False),
        ("sleep 10 &", False),
        ("ls\nrm -rf x", False),
        ("(ls)", False),
        ("ls | xargs rm", False),
        ("rm -rf build", False),
        ("/bin/ls", False),
        ("./ls", False),
        ("FOO=1 ls", False),
        ("ls 'unterminated", False),
        ("", False),
        ("ls &&", False),
        ("python -c 'print(1)'", False),
        ("ls a#b; rm -rf x", False),
        ("ls # ; rm -rf x", False),
        ("sort --compress-program=sh in.txt", False),
        ("tree -R", False),
    ],
)
def test_read_only_classification(command: str, read_only: bool) -> None:
    assert is_read_only_command(command) is read_only
    assert BashTool().is_read_only(BashInput(command=command)) is read_only


async def test_a_missing_working_directory_is_a_tool_error(root: Path) -> None:
    ctx = make_ctx(root)
    ctx.cwd = root / "gone"
    with pytest.raises(ToolError, match="Cannot run the command"):
        await BashTool().run(BashInput(command="ls"), ctx)


async def test_cancellation_kills_a_child_that_ignores_sigterm(root: Path) -> None:
    progress: list[str] = []
    command = "bash -c 'trap \"\" TERM; echo pid=$$; sleep 30' & wait"
    task = asyncio.create_task(BashTool().run(BashInput(command=command), make_ctx(root, progress)))
    deadline = time.monotonic() + 5
    while "pid=" not in "".join(progress) and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    pid = int("".join(progress).split("pid=")[1].split()[0])
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_all_gone([pid])


def test_a_group_of_zombies_counts_as_gone() -> None:
    import subprocess

    from agentls.tools.process import _group_alive

    # Exited but not yet reaped, as children handed to a slow init are: killpg still
    # reaches them, yet nothing runs, so the kill must not wait for them.
    child = subprocess.Popen(["true"], start_new_session=True)
    deadline = time.monotonic() + 5
    while psutil.Process(child.pid).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline
        time.sleep(0.01)
    try:
        assert not _group_alive(child.pid)
    finally:
        child.wait()
    assert not _group_alive(child.pid)
