"""`agentls run` on a pseudo-terminal, answering its questions as a user at the keyboard."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

# Given all the terminal has shown so far: the line to type now, or None.
Answer = Callable[[str], str | None]


def run_on_a_terminal(
    args: list[str], answer: Answer, cwd: Path, env: dict[str, str], stdout_too: bool = False
) -> tuple[int, str, str]:
    """`agentls run ARGS` with a pseudo-terminal as stdin and stderr (and stdout with
    `stdout_too`). Returns the exit code, what went to a piped stdout, and what the
    terminal showed (each typed line shown as its newline)."""
    master, slave = os.openpty()
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", *args],
        cwd=cwd,
        env=env,
        stdin=slave,
        stderr=slave,
        stdout=slave if stdout_too else subprocess.PIPE,
        text=True,
    )
    os.close(slave)
    shown = ""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.1)
        if ready:
            try:
                chunk = os.read(master, 4096).decode("utf-8", "replace")
            except OSError:
                break  # the process closed the terminal
            shown += chunk
            reply = answer(shown)
            if reply is not None:
                os.write(master, (reply + "\n").encode())
                shown += "\n"
        elif process.poll() is not None:
            break
    out = "" if stdout_too or process.stdout is None else process.stdout.read()
    process.wait(timeout=30)
    os.close(master)
    return process.returncode, out, shown


def replies_to(prompt_end: str, replies: list[str]) -> Answer:
    """Each question whose text ends with `prompt_end` gets the next of `replies`."""
    pending = list(replies)

    def answer(shown: str) -> str | None:
        if pending and shown.rstrip(" ").endswith(prompt_end):
            return pending.pop(0)
        return None

    return answer
