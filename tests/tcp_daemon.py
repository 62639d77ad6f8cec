"""A real `agentls --tcp` daemon for tests: started, its listening and discovery lines read,
and the host, port and token it gives clients (from the discovery file)."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

LISTENING = "agentls: listening on "
DISCOVERY = "agentls: discovery file "


@dataclass
class TcpDaemon:
    process: asyncio.subprocess.Process
    host: str
    port: int
    token: str
    discovery: Path
    # Keeps reading stderr, or a chatty daemon blocks on a full pipe.
    draining: asyncio.Task[None]

    def initialize_params(self, **extra: Any) -> dict[str, Any]:
        """`initialize` params that present this daemon's token."""
        return {
            "processId": None,
            "capabilities": {},
            "initializationOptions": {"authToken": self.token},
            **extra,
        }

    async def stop(self) -> int:
        if self.process.returncode is None:
            self.process.terminate()
        return await asyncio.wait_for(self.process.wait(), 60)


async def start_tcp_daemon(
    *args: str, env: dict[str, str] | None = None, timeout: float = 60, cwd: Path | None = None
) -> TcpDaemon:
    """`agentls --tcp` (on port 0 unless `args` say otherwise), once it listens; in `cwd`
    (default: this process's), where relative paths a client sends land."""
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "agentls",
        "--tcp",
        *args,
        stderr=subprocess.PIPE,
        env={**os.environ, **(env or {})},
        cwd=cwd,
    )
    assert process.stderr is not None
    lines: list[str] = []
    while not (lines and lines[-1].startswith(DISCOVERY)):
        line = (await asyncio.wait_for(process.stderr.readline(), timeout)).decode()
        assert line, f"the daemon exited before listening: {''.join(lines)}"
        lines.append(line.rstrip("\n"))
    listening = next(line for line in lines if line.startswith(LISTENING))
    path = Path(lines[-1].removeprefix(DISCOVERY))
    found = json.loads(path.read_text(encoding="utf-8"))
    assert listening.rsplit(":", 1)[1] == str(found["port"]), (listening, found)
    draining = asyncio.create_task(_drain(process.stderr))
    return TcpDaemon(process, found["host"], found["port"], found["token"], path, draining)


async def _drain(stream: asyncio.StreamReader) -> None:
    while await stream.read(65536):
        pass
