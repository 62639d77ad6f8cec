"""One extra model call's CPU in this process, the whole loop around it included.

`agentls run`'s turn (headless `one_turn`, as `--no-daemon` runs it) on a 3-call and a
20-call task (each extra call a Read or a Grep, as in bench_cli), alternating, and the
difference of this process's CPU (every thread) / 17: the loop, the tools, the events,
the transcript and the provider. The model is the scripted provider, or the Anthropic
SDK against tests/replay_server.py run as a process of its own, so that its CPU is not
counted here. Set beside bench_provider's split of one Anthropic call (the provider, the
SDK alone, its HTTP client alone), it says how much of a call is ours outside the SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from harness import PROVIDER_VARS, PYTHON, TESTS_DIR, scratch

SHORT, LONG = 3, 20
READ = {"name": "Read", "input": {"file_path": "app.py"}}
GREP = {"name": "Grep", "input": {"pattern": "port", "-i": True}}
ANSWER = "The port is 8000."


def _calls(length: int) -> list[dict[str, Any] | None]:
    """The tool call of each model call of a task (None: the final answer)."""
    return [(READ, GREP)[n % 2] for n in range(length - 1)] + [None]


def _scripted_task(path: Path, length: int) -> Path:
    lines = [{"tool_calls": [call]} if call else {"text": ANSWER} for call in _calls(length)]
    path.write_text("".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8")
    return path


def _anthropic_turns(length: int) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for n, call in enumerate(_calls(length)):
        tool = {"id": f"toolu_{n:04d}", **call} if call else None
        turns.append({"anthropic_turn": {"tool_calls": [tool]} if tool else {"text": ANSWER}})
    return turns


@contextlib.contextmanager
def _replay_process(script: Path) -> Iterator[str]:
    """tests/replay_server.py serving `script` in a process of its own; its base URL."""
    server = Path(TESTS_DIR) / "replay_server.py"
    command = [PYTHON, str(server), "--script", str(script)]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        yield f"http://127.0.0.1:{process.stdout.readline().strip()}"
    finally:
        process.terminate()
        process.wait()


@contextlib.contextmanager
def _environ(values: dict[str, str]) -> Iterator[None]:
    saved = dict(os.environ)
    for name in PROVIDER_VARS:
        os.environ.pop(name, None)
    os.environ.update(values)
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def _one_run(workspace: Path) -> float:
    """CPU seconds (this process) of one `agentls run --no-daemon` turn, printed nowhere."""
    from agentls.cli_print import NoTerminal
    from agentls.headless import TurnRequest, one_turn

    overrides = {"permissionMode": "acceptEdits"}
    with open(os.devnull, "w", encoding="utf-8") as sink, contextlib.redirect_stdout(sink):
        start = time.process_time()
        turn = one_turn(
            workspace,
            TurnRequest("find the port"),
            overrides,
            False,
            NoTerminal(),
            resume_hint=False,
        )
        code = asyncio.run(turn)
        spent = time.process_time() - start
    if code != 0:
        raise RuntimeError(f"the turn ended with exit code {code}")
    return spent


def extra_call_cpu(provider: str, rounds: int) -> list[float]:
    """Seconds of CPU per extra model call, one value per round of a short and a long run."""
    with scratch() as (home, workspace):
        env = {"AGENTLS_HOME": str(home), "AGENTLS_NO_DAEMON": "1"}
        scripts = {n: _scripted_task(home.parent / f"task{n}.jsonl", n) for n in (SHORT, LONG)}
        replay = contextlib.nullcontext("")
        if provider == "anthropic":
            turns = [
                turn
                for _ in range(rounds + 1)
                for n in (SHORT, LONG)
                for turn in _anthropic_turns(n)
            ]
            script = home.parent / "replay.json"
            script.write_text(json.dumps(turns), encoding="utf-8")
            replay = _replay_process(script)
        with replay as base_url, _environ(env), contextlib.chdir(workspace):
            if base_url:
                os.environ.update(
                    AGENTLS_PROVIDER="anthropic",
                    ANTHROPIC_API_KEY="test",
                    ANTHROPIC_BASE_URL=base_url,
                    NO_PROXY="127.0.0.1,localhost",
                )
            per_call = []
            for n in range(rounds + 1):
                spent = {}
                for length in (SHORT, LONG):
                    os.environ["AGENTLS_SCRIPT"] = str(scripts[length])
                    spent[length] = _one_run(workspace)
                if n:  # the first round imports and connects
                    per_call.append((spent[LONG] - spent[SHORT]) / (LONG - SHORT))
    return per_call


def median_ms(values: list[float]) -> float:
    return float(statistics.median(values)) * 1000


if __name__ == "__main__":
    for name in sys.argv[1:] or ["scripted", "anthropic"]:
        values = extra_call_cpu(name, 10)
        print(f"{name}: each extra model call {median_ms(values):.2f} ms CPU, n={len(values)}")
