"""Run hook commands: a shell each, JSON on stdin, in their own process group.

A hook that outlives its timeout, or whose turn is aborted, is killed with its whole group.
The hooks of one event run at once; the caller gets their runs in settings order.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.hooks.config import HookCommand
from agentls.redact import without_provider_keys
from agentls.tools.process import kill_process_group
from agentls.tools.process_guard import guard_group, guarded_environ

# What is kept of a hook's stdout and stderr (each); the rest is cut with a note.
OUTPUT_LIMIT = 100_000


@dataclass(frozen=True, slots=True)
class HookRun:
    """How one command ended: its exit code (None when it timed out or could not start)."""

    hook: HookCommand
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False


def hook_environment(project_dir: Path) -> dict[str, str]:
    """The daemon's environment without provider keys, and where the project is (also under
    Claude Code's name, so hooks written for it work)."""
    env = without_provider_keys(os.environ)
    env["AGENTLS_PROJECT_DIR"] = str(project_dir)
    env["CLAUDE_PROJECT_DIR"] = str(project_dir)
    return env


async def run_hooks(
    hooks: Sequence[HookCommand], payload: Mapping[str, Any], cwd: Path
) -> list[HookRun]:
    """Run every hook at once with `payload` on stdin; their runs in the order given."""
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    env = hook_environment(cwd)
    return list(await asyncio.gather(*(run_hook(hook, data, cwd, env) for hook in hooks)))


async def run_hook(hook: HookCommand, data: bytes, cwd: Path, env: Mapping[str, str]) -> HookRun:
    """One command to its end, its timeout, or the caller's cancellation (which kills it)."""
    try:
        process = await asyncio.create_subprocess_shell(
            hook.command,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=guarded_environ(env),
            start_new_session=True,
        )
    except OSError as exc:
        return HookRun(hook, None, stderr=f"The hook could not start: {exc.strerror or exc}")
    # Killed by the watchdog if the daemon dies while the hook runs.
    guard_group(process.pid)
    try:
        async with asyncio.timeout(hook.timeout):
            stdout, stderr = await process.communicate(data)
    except TimeoutError:
        await _kill(process)
        return HookRun(hook, None, stderr=f"Timed out after {hook.timeout:g} s", timed_out=True)
    except asyncio.CancelledError:
        await _kill(process)
        raise
    code = process.returncode if process.returncode is not None else -1
    return HookRun(hook, code, _text(stdout), _text(stderr))


async def _kill(process: asyncio.subprocess.Process) -> None:
    # The shell leads its own group: the kill reaches whatever the hook started.
    await kill_process_group(process.pid)
    await process.wait()


def _text(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(text) <= OUTPUT_LIMIT:
        return text
    return text[:OUTPUT_LIMIT] + f"\n… ({len(text) - OUTPUT_LIMIT:,} more characters cut)"
