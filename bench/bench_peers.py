"""The peers on the same fake server as `agentls run`: start → first model request and a
3-call task (read app.py, search for "port", answer), for Claude Code and Codex.

The peers come from the npm registry into ~/.cache/agentls-bench/peers (installed on first
use, never by the tests); without npm or the network the section says so and moves on.
Each runs in a scratch HOME against a local HTTP server that answers its model requests
with the task's three replies in the peer's own tool names, as SSE streams in the API's
wire format, and logs when each request arrived. Requests that are not the model call
(quota checks, token counts, titles) get a short text answer and are counted apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from harness import TESTS_DIR, Row, timing_rows

sys.path.insert(0, TESTS_DIR)
from replay_server import ToolCall, anthropic_text_turn, anthropic_tool_turn

SECTION = "11 peers"
CACHE = Path.home() / ".cache" / "agentls-bench" / "peers"
PACKAGES = ("@anthropic-ai/claude-code@2.1.197", "@openai/codex@0.169.0")


@dataclass
class FakeServer:
    """Answers a peer's model calls with `replies` (one per call), other calls with text."""

    replies: list[Callable[[], bytes]]
    is_model_call: Callable[[dict[str, Any]], bool]
    started: float = 0.0
    arrivals: list[tuple[float, str, bool]] = field(default_factory=list)

    def serve(self) -> tuple[ThreadingHTTPServer, int]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # model lists and health checks
                fake.arrivals.append((time.perf_counter() - fake.started, self.path, False))
                body = b'{"data": [], "object": "list"}'
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                size = int(self.headers.get("content-length") or 0)
                try:
                    request = json.loads(self.rfile.read(size) or b"{}")
                except ValueError:
                    request = {}
                model_call = fake.is_model_call(request) and bool(fake.replies)
                fake.arrivals.append((time.perf_counter() - fake.started, self.path, model_call))
                stream = fake.replies.pop(0)() if model_call else anthropic_chunks("OK")
                self.send_response(200)
                self.send_header("content-type", "text/event-stream")
                self.send_header("cache-control", "no-cache")
                self.end_headers()
                self.wfile.write(stream)

        server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=server.serve_forever, daemon=True).start()
        return server, server.server_address[1]


def anthropic_chunks(text: str | None = None, *calls: ToolCall) -> bytes:
    response = anthropic_tool_turn(*calls, text=text) if calls else anthropic_text_turn(text or "")
    return b"".join(response.stream_chunks())


def responses_chunks(text: str | None = None, command: str | None = None) -> bytes:
    """An OpenAI Responses API stream (what Codex speaks): a message, or one exec_command."""
    usage = {
        "input_tokens": 1000,
        "output_tokens": 20,
        "total_tokens": 1020,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens_details": {"reasoning_tokens": 0},
    }
    if command is not None:
        arguments = json.dumps({"cmd": command})
        item: dict[str, Any] = {
            "type": "function_call",
            "id": "fc_1",
            "call_id": f"call_{abs(hash(command)) % 10**8}",
            "name": "exec_command",
            "arguments": arguments,
            "status": "completed",
        }
        delta = {"type": "response.function_call_arguments.delta", "item_id": "fc_1"}
        delta.update(output_index=0, delta=arguments)
        started = {**item, "arguments": "", "status": "in_progress"}
    else:
        content = [{"type": "output_text", "text": text or "", "annotations": []}]
        item = {"type": "message", "id": "msg_1", "role": "assistant"}
        item.update(status="completed", content=content)
        delta = {"type": "response.output_text.delta", "item_id": "msg_1", "output_index": 0}
        delta.update(content_index=0, delta=text or "")
        started = {**item, "status": "in_progress", "content": []}
    response = {"id": "resp_1", "object": "response", "status": "completed", "output": [item]}
    response["usage"] = usage
    events = [
        {"type": "response.created", "response": {**response, "status": "in_progress"}},
        {"type": "response.output_item.added", "output_index": 0, "item": started},
        delta,
        {"type": "response.output_item.done", "output_index": 0, "item": item},
        {"type": "response.completed", "response": response},
    ]
    return b"".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n".encode() for e in events)


def install() -> str | None:
    """The peers' folder ready to run, or why not."""
    if (CACHE / "node_modules" / ".bin" / "claude").exists():
        return None
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    CACHE.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [npm, "install", "--no-audit", "--no-fund", *PACKAGES],
        cwd=CACHE,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    if done.returncode != 0:
        return f"npm install failed: {done.stderr.strip()[-300:]}"
    # Claude Code's native binary comes from its postinstall script, which npm may skip.
    package = CACHE / "node_modules" / "@anthropic-ai" / "claude-code"
    subprocess.run(["node", "install.cjs"], cwd=package, capture_output=True, timeout=300)
    return None


def claude_task(root: Path) -> list[Callable[[], bytes]]:
    app = str(root / "app.py")
    return [
        lambda: anthropic_chunks(None, ToolCall("toolu_r1", "Read", {"file_path": app})),
        lambda: anthropic_chunks(None, ToolCall("toolu_g1", "Grep", {"pattern": "port"})),
        lambda: anthropic_chunks("The port is 8000."),
    ]


def _timed(
    name: str,
    command: list[str],
    root: Path,
    replies: Callable[[], list[Callable[[], bytes]]],
    env_for: Callable[[int], dict[str, str]],
    samples: int,
) -> tuple[list[float], list[float], str]:
    """Run a peer `samples` times: spawn → its first model call, and spawn → exit."""
    firsts, totals, seen = [], [], ""
    for _ in range(samples):
        fake = FakeServer(replies(), lambda r: bool(r.get("tools")) and bool(r.get("stream")))
        server, port = fake.serve()
        env = env_for(port)
        fake.started = time.perf_counter()
        done = subprocess.run(
            command,
            cwd=root,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        total = time.perf_counter() - fake.started
        server.shutdown()
        model_calls = [t for t, _path, model in fake.arrivals if model]
        if done.returncode != 0 or len(model_calls) < 3:
            failure = f"exit {done.returncode}, {fake.arrivals}: {done.stderr[-500:]}"
            raise RuntimeError(f"{name}: {failure}")
        firsts.append(model_calls[0])
        totals.append(total)
        seen = ", ".join(
            f"{path}{' (model)' if model else ''} at {t * 1000:.0f} ms"
            for t, path, model in fake.arrivals
        )
    return firsts, totals, seen


def run_claude(root: Path, home: Path, samples: int) -> tuple[list[float], list[float], str]:
    """Claude Code in print mode; it reads and greps without asking."""
    command = [str(CACHE / "node_modules" / ".bin" / "claude"), "-p", "find the port"]
    command += ["--permission-mode", "acceptEdits"]

    def env_for(port: int) -> dict[str, str]:
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "ANTHROPIC_BASE_URL": f"http://127.0.0.1:{port}",
            "ANTHROPIC_API_KEY": "sk-ant-bench-key",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
            "DISABLE_AUTOUPDATER": "1",
            "DISABLE_TELEMETRY": "1",
        }

    return _timed("claude", command, root, lambda: claude_task(root), env_for, samples)


CODEX_CONFIG = """model = "gpt-5"
model_provider = "bench"
[model_providers.bench]
name = "bench"
base_url = "http://127.0.0.1:{port}/v1"
wire_api = "responses"
env_key = "BENCH_KEY"
"""


def run_codex(root: Path, home: Path, samples: int) -> tuple[list[float], list[float], str]:
    """`codex exec` with a model provider pointing at the fake server."""
    command = [str(CACHE / "node_modules" / ".bin" / "codex"), "exec"]
    command += ["--skip-git-repo-check", "--dangerously-bypass-approvals-and-sandbox"]
    command += ["find the port"]
    config = home / ".codex"
    config.mkdir(exist_ok=True)

    def env_for(port: int) -> dict[str, str]:
        (config / "config.toml").write_text(CODEX_CONFIG.format(port=port), encoding="utf-8")
        return {
            "PATH": os.environ["PATH"],
            "HOME": str(home),
            "CODEX_HOME": str(config),
            "BENCH_KEY": "bench-key",
        }

    def task() -> list[Callable[[], bytes]]:
        return [
            lambda: responses_chunks(command="cat app.py"),
            lambda: responses_chunks(command="grep -in port app.py"),
            lambda: responses_chunks("The port is 8000."),
        ]

    return _timed("codex", command, root, task, env_for, samples)


def run(quick: bool) -> list[Row]:
    why = install()
    if why is not None:
        return [Row(SECTION, "peers skipped", why)]
    samples = 3 if quick else 10
    rows: list[Row] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-peers-") as tmp:
        root, home = Path(tmp) / "ws", Path(tmp) / "home"
        root.mkdir()
        home.mkdir()
        (root / "app.py").write_text("PORT = 8000\nHOST = 'localhost'\n", encoding="utf-8")
        for name, runner in (("Claude Code -p", run_claude), ("codex exec", run_codex)):
            try:
                firsts, totals, seen = runner(root, home, samples)
            except (RuntimeError, subprocess.TimeoutExpired, OSError) as exc:
                rows.append(Row(SECTION, f"{name} failed", str(exc)[:300]))
                continue
            rows += timing_rows(SECTION, f"{name}: start → first model request", firsts)
            rows += timing_rows(SECTION, f"{name}: 3-call task, start → exit", totals)
            rows.append(Row(SECTION, f"{name} requests (last run)", seen[:200]))
    return rows


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    for row in run(parser.parse_args().quick):
        value = f"{row.value:>10.2f}" if isinstance(row.value, float) else f"{row.value}"
        print(f"{row.name:<52} {value} {row.unit:<3} {row.note}")
