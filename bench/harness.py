"""Shared pieces of the benchmarks: statistics, a clean daemon environment, /proc readers,
LSP framing, and a minimal asyncio JSON-RPC client for `agentls --stdio`.

The client is deliberately tiny (no pygls, no pytest-lsp) so that what is measured is the
daemon, not the client library.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

PYTHON = sys.executable
# tests/ holds replay_server.py; modules that need it put this on sys.path first.
TESTS_DIR = str(Path(__file__).resolve().parent.parent / "tests")
# In this process: every bench measures the daemon it spawns (bench_startup times the
# relay to the warm daemon on its own rows).
DAEMON = [PYTHON, "-m", "agentls", "--stdio", "--no-daemon"]
PROVIDER_VARS = (
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "AGENTLS_PROVIDER",
    "AGENTLS_MODEL",
    "AGENTLS_SCRIPT",
    "AGENTLS_REQUEST_LOG",
)
Event = dict[str, Any]


# --- statistics ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Summary:
    """Median, 90th percentile, minimum and count of a list of samples."""

    median: float
    p90: float
    low: float
    n: int


def summarize(samples: list[float]) -> Summary:
    """A Summary of `samples` (p90 by nearest rank)."""
    ordered = sorted(samples)
    rank = max(0, min(len(ordered) - 1, round(0.9 * len(ordered) + 0.5) - 1))
    return Summary(statistics.median(ordered), ordered[rank], ordered[0], len(ordered))


@dataclass(frozen=True, slots=True)
class Row:
    """One line of the report: a number with its unit, and a free-form note."""

    section: str
    name: str
    value: float | str
    unit: str = ""
    note: str = ""


def timing_rows(section: str, name: str, samples: list[float], note: str = "") -> list[Row]:
    """Rows for the median and p90 of samples given in seconds, shown in ms."""
    s = summarize(samples)
    detail = f"p90 {s.p90 * 1000:.2f} ms, min {s.low * 1000:.2f} ms, n={s.n}"
    return [Row(section, name, s.median * 1000, "ms", f"{detail}{'; ' + note if note else ''}")]


# --- environment and workspace ------------------------------------------------------


def daemon_env(home: Path, **extra: str) -> dict[str, str]:
    """os.environ without provider settings, with AGENTLS_HOME=`home` and `extra` on top."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    env["AGENTLS_HOME"] = str(home)
    env.update(extra)
    return env


@contextlib.contextmanager
def scratch() -> Iterator[tuple[Path, Path]]:
    """A temporary (AGENTLS_HOME, workspace) pair; the workspace holds two small files."""
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        root = Path(os.path.realpath(tmp))
        home, workspace = root / "home", root / "ws"
        home.mkdir()
        workspace.mkdir()
        (workspace / "app.py").write_text("PORT = 8000\nHOST = 'localhost'\n", encoding="utf-8")
        (workspace / "notes.md").write_text("# notes\nport is configurable\n", encoding="utf-8")
        yield home, workspace


def proc_status_kb(pid: int) -> dict[str, int]:
    """VmRSS / VmHWM (and friends) of a live process, in kB."""
    values: dict[str, int] = {}
    with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as handle:
        for line in handle:
            key, _, rest = line.partition(":")
            if key.startswith("Vm"):
                with contextlib.suppress(ValueError, IndexError):
                    values[key] = int(rest.split()[0])
    return values


def mb(kb: float) -> float:
    """kB to MB (MiB)."""
    return kb / 1024.0


# --- LSP framing --------------------------------------------------------------------


def frame(message: dict[str, Any]) -> bytes:
    """One JSON-RPC message with its Content-Length header."""
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def read_frame(stream: IO[bytes]) -> dict[str, Any] | None:
    """The next message from a blocking byte stream, or None at EOF."""
    length = -1
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode("ascii").partition(":")
        if name.strip().lower() == "content-length":
            length = int(value)
    body = stream.read(length)
    result: dict[str, Any] = json.loads(body)
    return result


def initialize_params(workspace: Path) -> dict[str, Any]:
    """Minimal InitializeParams: no applyEdit (the daemon writes files itself)."""
    return {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}}


# --- asyncio client -----------------------------------------------------------------


class DaemonClient:
    """`agentls --stdio` as a subprocess, spoken to over raw Content-Length frames."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.events: asyncio.Queue[tuple[float, Event]] = asyncio.Queue()
        self.on_event: Callable[[Event], None] | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._next_id = 0
        self._reader = asyncio.create_task(self._read_loop())

    @classmethod
    async def start(cls, env: dict[str, str], cwd: Path) -> DaemonClient:
        """Spawn the daemon (stderr discarded)."""
        process = await asyncio.create_subprocess_exec(
            *DAEMON,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
            env=env,
            cwd=str(cwd),
            limit=1 << 20,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        return self.process.pid

    def _write(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(frame(message))

    async def request(self, method: str, params: Any, timeout: float = 60) -> Any:
        """Send a request and wait for its result (RuntimeError on a JSON-RPC error)."""
        self._next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[self._next_id] = future
        self._write({"jsonrpc": "2.0", "id": self._next_id, "method": method, "params": params})
        return await asyncio.wait_for(future, timeout)

    def notify(self, method: str, params: Any) -> None:
        self._write({"jsonrpc": "2.0", "method": method, "params": params})

    async def initialize(self, workspace: Path) -> Any:
        result = await self.request("initialize", initialize_params(workspace))
        self.notify("initialized", {})
        return result

    async def new_session(self, workspace: Path, **params: Any) -> str:
        result = await self.request("agent/newSession", {"cwd": str(workspace), **params})
        session_id: str = result["sessionId"]
        return session_id

    async def submit(self, session_id: str, text: str) -> str:
        result = await self.request("agent/submitMessage", {"sessionId": session_id, "text": text})
        turn_id: str = result["turnId"]
        return turn_id

    async def next_event(self, timeout: float = 60) -> tuple[float, Event]:
        """The next agent/event with the perf_counter time it was decoded."""
        return await asyncio.wait_for(self.events.get(), timeout)

    async def until_turn_completed(self, timeout: float = 60) -> tuple[float, Event]:
        """Drain events up to the next turn_completed."""
        while True:
            stamp, event = await self.next_event(timeout)
            if event.get("type") == "turn_completed":
                return stamp, event

    async def close(self) -> None:
        """shutdown + exit, then make sure the process is gone."""
        with contextlib.suppress(Exception):
            await self.request("shutdown", None, timeout=10)
            self.notify("exit", None)
            assert self.process.stdin is not None
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 5)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
        self._reader.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._reader

    async def _read_loop(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            try:
                header = await stdout.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                self._fail_pending()
                return
            length = _content_length(header)
            body = await stdout.readexactly(length)
            self._dispatch(json.loads(body))

    def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if method == "agent/event":
            params = message["params"]
            if self.on_event is not None:
                self.on_event(params)
            else:
                self.events.put_nowait((time.perf_counter(), params))
        elif method is not None and "id" in message:
            self._write({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif "id" in message and method is None:
            future = self._pending.pop(message["id"], None)
            if future is None or future.done():
                return
            if "error" in message:
                future.set_exception(RuntimeError(json.dumps(message["error"])))
            else:
                future.set_result(message.get("result"))

    def _fail_pending(self) -> None:
        for future in self._pending.values():
            if not future.done():
                future.set_exception(RuntimeError("the daemon closed its stdout"))
        self._pending.clear()


def _content_length(header: bytes) -> int:
    for line in header.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    raise ValueError(f"no Content-Length in {header!r}")
