"""The editor quits mid-turn: however it leaves (EOF, `exit`, `shutdown` then EOF, SIGTERM), every
running turn is aborted and its end written to the transcript before the process ends."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from test_e2e_wire import RawPipe

HANGING = [{"text": "Working on it", "hang": True}]


async def start_hanging_turn(tmp_path: Path) -> tuple[RawPipe, Path, str]:
    pipe = await RawPipe.start({"AGENTLS_HOME": str(tmp_path / "home")})
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    await pipe.response_to(1)
    pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    params = {"cwd": str(tmp_path), "provider": "scripted", "script": HANGING}
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "agent/newSession", "params": params})
    session = (await pipe.response_to(2))["result"]["sessionId"]
    submit = {"sessionId": session, "text": "go"}
    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "agent/submitMessage", "params": submit})
    turn = (await pipe.response_to(3))["result"]["turnId"]
    while True:
        message = await pipe.receive()
        if message.get("method") == "agent/event" and message["params"]["type"] == "text_delta":
            break
    transcript = tmp_path / "home" / "sessions" / f"{session}.jsonl"
    return pipe, transcript, turn


def turn_ends(transcript: Path) -> list[tuple[str, str]]:
    records = [json.loads(line) for line in transcript.read_text().splitlines()]
    return [(r["turnId"], r["stopReason"]) for r in records if r["type"] == "turn"]


async def leave(pipe: RawPipe, how: str) -> None:
    assert pipe.process.stdin is not None
    if how == "SIGTERM":
        pipe.process.terminate()
    if how in ("shutdown then EOF", "shutdown and exit"):
        pipe.send({"jsonrpc": "2.0", "id": 9, "method": "shutdown"})
        if how == "shutdown and exit":
            await pipe.response_to(9)
    if how in ("exit", "shutdown and exit"):
        pipe.send({"jsonrpc": "2.0", "method": "exit"})
    if how in ("EOF", "shutdown then EOF"):
        pipe.process.stdin.close()
    await asyncio.wait_for(pipe.process.wait(), 20)


@pytest.mark.parametrize(
    "how", ["EOF", "exit", "shutdown then EOF", "shutdown and exit", "SIGTERM"]
)
async def test_a_turn_running_when_the_editor_leaves_is_recorded_as_aborted(
    tmp_path: Path, how: str, long_run: bool
) -> None:
    for attempt in range(10 if long_run else 2):
        home = tmp_path / str(attempt)
        home.mkdir()
        pipe, transcript, turn = await start_hanging_turn(home)
        await leave(pipe, how)
        assert turn_ends(transcript) == [(turn, "aborted")], how
        expected = 1 if how == "exit" else 0
        assert pipe.process.returncode == expected
