"""A whole turn's `agent/event` frames, byte for byte, against a recording made before the
event pipeline was made faster (issue 28): the hot path may change, the wire may not.

The real daemon runs over stdio on the scripted model; the turn streams thinking and text,
reads, edits (a permission request with its diff), runs Bash (whose output holds a masked
secret), starts a sub-agent, and ends with text that holds non-ASCII characters and the
secret again. Only what differs from run to run is replaced before comparing: random ids
(by order of first appearance), the temporary directories and the sub-agent's duration.
`AGENTLS_RECORD_PINNED=1` writes the recording again (only for a deliberate wire change).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from pathlib import Path
from typing import Any

RECORDING = Path(__file__).parent / "fixtures" / "event_stream" / "turn.jsonl"
SECRET = "pinned-s3cret-value-0042"
_RANDOM_ID = re.compile(rb"\b(msg|toolu|turn|sess|perm|ask|agent|req|sh)_[0-9a-f]{8,32}\b")
_DURATION = re.compile(rb'"durationMs":\d+')
_NOW = re.compile(rb"<currentTime>[^<]*</currentTime>")


def _entries() -> list[dict[str, Any]]:
    usage = {"input_tokens": 120, "output_tokens": 30}
    task = {"description": "Check the port", "prompt": "Check the port", "subagent_type": "explore"}
    return [
        {
            "thinking": "The port is in app.py.",
            "text": "I will read the file first.",
            "chunk": 5,
            "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}],
            "usage": usage,
        },
        {
            "text": "Now the change.",
            "chunk": 4,
            "tool_calls": [
                {
                    "id": "e1",
                    "name": "Edit",
                    "input": {"file_path": "app.py", "old_string": "8000", "new_string": "8080"},
                }
            ],
            "usage": usage,
        },
        {
            "tool_calls": [
                {"id": "b1", "name": "Bash", "input": {"command": 'echo "$PIN_API_TOKEN ok"'}}
            ],
            "usage": usage,
        },
        {"tool_calls": [{"id": "t1", "name": "Task", "input": task}], "usage": usage},
        {"for": "Check the port", "text": "app.py sets port = 8080.", "chunk": 6, "usage": usage},
        {
            "text": f'Done: port 8080 \u2713 \u2014 na\u00efve caf\u00e9 \U0001f680 {SECRET} "q"\\',
            "chunk": 64,
            "usage": usage,
        },
    ]


class _Frames:
    """The daemon over stdio, its frames kept as the bytes it wrote."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: list[bytes] = []
        self._next_id = 0

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.process.stdin is not None
        self.process.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any) -> Any:
        self._next_id += 1
        self.send({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        while True:
            message = await self._message()
            if "method" not in message and message.get("id") == self._next_id:
                assert "error" not in message, message
                return message["result"]

    async def until_event(self, kind: str) -> dict[str, Any]:
        while True:
            message = await self._message()
            if message.get("method") == "agent/event" and message["params"]["type"] == kind:
                params: dict[str, Any] = message["params"]
                return params

    async def _message(self) -> dict[str, Any]:
        assert self.process.stdout is not None
        header = await asyncio.wait_for(self.process.stdout.readuntil(b"\r\n\r\n"), 60)
        length = int(header.split(b":")[1].split(b"\r\n")[0])
        body = await self.process.stdout.readexactly(length)
        message: dict[str, Any] = json.loads(body)
        if message.get("method") == "agent/event":
            self.events.append(body)
        return message


async def _run_turn(home: Path, workspace: Path) -> list[bytes]:
    env = {**os.environ, "AGENTLS_HOME": str(home), "PIN_API_TOKEN": SECRET}
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "--stdio",
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        cwd=str(workspace),
        env=env,
        limit=1 << 20,
    )
    frames = _Frames(process)
    try:
        root = {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}
        await frames.request("initialize", root)
        frames.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
        params = {"cwd": str(workspace), "provider": "scripted", "script": _entries()}
        session = (await frames.request("agent/newSession", params))["sessionId"]
        await frames.request("agent/submitMessage", {"sessionId": session, "text": "Go."})
        asked = await frames.until_event("permission_request")  # the Edit's
        answer = {"sessionId": session, "requestId": asked["requestId"], "optionId": "allow_once"}
        await frames.request("agent/respondPermission", answer)
        await frames.until_event("turn_completed")
        await frames.request("shutdown", None)
        frames.send({"jsonrpc": "2.0", "method": "exit"})
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()
    return frames.events


def _normalised(events: list[bytes], home: Path, workspace: Path) -> list[str]:
    names: dict[bytes, bytes] = {}

    def name(match: re.Match[bytes]) -> bytes:
        return names.setdefault(match[0], b"%s_%d" % (match[1], len(names) + 1))

    lines = []
    for body in events:
        body = body.replace(str(workspace).encode(), b"<workspace>")
        body = body.replace(str(home).encode(), b"<home>")
        body = _DURATION.sub(b'"durationMs":0', _RANDOM_ID.sub(name, body))
        body = _NOW.sub(b"<currentTime>now</currentTime>", body)
        lines.append(body.decode("ascii"))
    return lines


async def test_a_turns_event_stream_is_byte_identical_to_the_recording(tmp_path: Path) -> None:
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (workspace / "app.py").write_text("port = 8000\n", encoding="utf-8")
    events = _normalised(await _run_turn(home, workspace), home, workspace)
    if os.environ.get("AGENTLS_RECORD_PINNED") == "1":
        RECORDING.parent.mkdir(parents=True, exist_ok=True)
        RECORDING.write_text("".join(f"{line}\n" for line in events), encoding="ascii")
    recorded = RECORDING.read_text(encoding="ascii").splitlines()
    assert SECRET not in "".join(events)
    assert events == recorded
