"""Command line: the daemon (`--stdio`, `--tcp`), a headless turn (`run`), the offline `demo`."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any, TextIO

from agentls import __version__
from agentls.errors import AgentError, ProviderNotConfigured
from agentls.redact import Masker, install_log_filter

EXIT_OK, EXIT_FAILED, EXIT_NOT_CONFIGURED, EXIT_INTERRUPTED = 0, 1, 2, 130


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `agentls` console script."""
    args = _parser().parse_args(argv)
    configure_logging()
    if args.command == "run":
        return _run_headless(args)
    if args.command == "demo":
        return _run_demo(args)
    from agentls.lsp.server import build_server

    server = build_server()
    if args.tcp:
        server.start_tcp(args.host, args.port)
    else:
        server.start_io()
    return EXIT_OK


def configure_logging() -> None:
    """Log to stderr at AGENTLS_LOG_LEVEL, with every credential value masked."""
    logging.basicConfig(
        level=os.environ.get("AGENTLS_LOG_LEVEL", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    install_log_filter(Masker.from_environment(os.environ), logging.getLogger().handlers)


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agentls", description="An agent loop served to editors the way a language server is."
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    parser.add_argument("--stdio", action="store_true", help="serve over stdio (the default)")
    parser.add_argument("--tcp", action="store_true", help="serve over TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument("--port", type=int, default=2087, help="TCP port (default 2087)")
    commands = parser.add_subparsers(dest="command")
    run = commands.add_parser("run", help="run one headless turn in the current directory")
    run.add_argument("prompt", help="what to ask the agent")
    run.add_argument("--json", action="store_true", help="print one agent/event object per line")
    run.add_argument(
        "--permission-mode",
        choices=["default", "acceptEdits", "plan", "bypassPermissions"],
        help="how tool calls are approved (default: default)",
    )
    run.add_argument("--model", help="model name (default: AGENTLS_MODEL or the provider's)")
    run.add_argument("--provider", choices=["anthropic", "openai", "scripted"])
    run.add_argument("--max-turns", type=int, help="model calls allowed in the turn (-1: max)")
    run.add_argument("--cwd", type=Path, default=None, help="workspace (default: current dir)")
    demo = commands.add_parser("demo", help="an offline agent turn on the scripted model")
    demo.add_argument("--json", action="store_true", help="print one agent/event object per line")
    return parser


def _run_headless(args: argparse.Namespace) -> int:
    overrides: dict[str, Any] = {}
    for key, value in (
        ("permissionMode", args.permission_mode),
        ("model", args.model),
        ("provider", args.provider),
        ("maxTurns", args.max_turns),
    ):
        if value is not None:
            overrides[key] = value
    cwd = (args.cwd or Path.cwd()).resolve()
    answers = Terminal() if sys.stdin.isatty() else NoTerminal()
    return asyncio.run(_one_turn(cwd, args.prompt, overrides, args.json, answers))


def _run_demo(args: argparse.Namespace) -> int:
    from agentls.demo import SCRIPT, make_workspace

    with tempfile.TemporaryDirectory(prefix="agentls-demo-") as tmp:
        root = Path(tmp)
        make_workspace(root)
        overrides = {"provider": "scripted", "script": str(SCRIPT)}
        out = sys.stdout
        if not args.json:
            out.write(f"agentls demo: a scripted agent turn in {root}\n\n")
        code = asyncio.run(
            _one_turn(
                root,
                "Make the server honour the PORT variable.",
                overrides,
                args.json,
                DemoAnswers(),
            )
        )
        if not args.json:
            out.write("\n--- server.py after the turn ---\n")
            out.write((root / "server.py").read_text(encoding="utf-8"))
        return code


class Answers:
    """How a headless turn answers permission requests and AskUser questions."""

    def permission(self, event: dict[str, Any]) -> str:
        return "reject_once"

    def question(self, event: dict[str, Any]) -> str:
        return "(No answer: agentls run has no terminal to ask on. Decide yourself or stop.)"


class DemoAnswers(Answers):
    def permission(self, event: dict[str, Any]) -> str:
        return "allow_always"


class NoTerminal(Answers):
    def permission(self, event: dict[str, Any]) -> str:
        sys.stderr.write(
            "\n[No terminal to ask on: rejected. Rerun with --permission-mode acceptEdits "
            "or bypassPermissions.]\n"
        )
        return "reject_once"


class Terminal(Answers):
    def permission(self, event: dict[str, Any]) -> str:
        choices = {"y": "allow_once", "a": "allow_always", "n": "reject_once", "d": "reject_always"}
        while True:
            reply = _ask(f"Allow {event['title']}? [y]es / [a]lways / [n]o / [d]eny always: ")
            if reply[:1].lower() in choices:
                return choices[reply[:1].lower()]
            if not reply:
                return "reject_once"

    def question(self, event: dict[str, Any]) -> str:
        choices = event.get("choices")
        hint = f" ({' / '.join(choices)})" if choices else ""
        return _ask(f"{event['question']}{hint}: ")


def _ask(prompt: str) -> str:
    sys.stderr.write("\n" + prompt)
    sys.stderr.flush()
    return sys.stdin.readline().strip()


async def _one_turn(
    cwd: Path, prompt: str, overrides: dict[str, Any], as_json: bool, answers: Answers
) -> int:
    from agentls.session.manager import SessionManager
    from agentls.wire import json_sink

    done: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
    printer = _JsonPrinter(sys.stdout) if as_json else _HumanPrinter(sys.stdout)
    manager: SessionManager

    def on_event(event: dict[str, Any]) -> None:
        printer.show(event)
        if event["type"] == "permission_request":
            asyncio.get_running_loop().create_task(_answer(event))
        elif event["type"] == "ask_user":
            asyncio.get_running_loop().create_task(_reply(event))
        elif event["type"] == "turn_completed" and not done.done():
            done.set_result(event)

    async def _answer(event: dict[str, Any]) -> None:
        option = await asyncio.to_thread(answers.permission, event)
        printer.show({"type": "permission_answer", "optionId": option})
        manager.get(event["sessionId"]).respond_permission(event["requestId"], option)

    async def _reply(event: dict[str, Any]) -> None:
        reply = await asyncio.to_thread(answers.question, event)
        manager.get(event["sessionId"]).respond_ask_user(event["requestId"], reply)

    manager = SessionManager(json_sink(on_event))
    try:
        session = await manager.create(cwd, overrides)
    except ProviderNotConfigured as exc:
        sys.stderr.write(f"agentls: {exc.message}\n")
        return EXIT_NOT_CONFIGURED
    except AgentError as exc:
        sys.stderr.write(f"agentls: {exc.message}\n")
        return EXIT_FAILED
    session.submit(prompt)
    try:
        completed = await done
    except asyncio.CancelledError:
        session.abort()
        await manager.close_all()
        return EXIT_INTERRUPTED
    await manager.close_all()
    return EXIT_OK if completed["stopReason"] == "end_turn" else EXIT_FAILED


class _JsonPrinter:
    def __init__(self, out: TextIO) -> None:
        self._out = out

    def show(self, event: dict[str, Any]) -> None:
        if event["type"] == "permission_answer":
            return
        _write(self._out, json.dumps(event, ensure_ascii=False) + "\n")


class _HumanPrinter:
    """Text as it streams, one line per tool call and result, the stop reason at the end."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._in_text = False
        self._titles: dict[str, str] = {}

    def show(self, event: dict[str, Any]) -> None:
        kind = event["type"]
        if kind == "text_delta":
            self._write(event["text"])
            self._in_text = True
            return
        if kind == "thinking_delta" or kind == "message_completed":
            return
        line = self._line(event)
        if line:
            self._write(("\n" if self._in_text else "") + line + "\n")
            self._in_text = False

    def _line(self, event: dict[str, Any]) -> str | None:
        kind = event["type"]
        if kind == "tool_call":
            self._titles[event["toolCallId"]] = event["title"]
            return f"● {event['title']}"
        if kind == "tool_call_update" and event["status"] in ("completed", "failed", "declined"):
            first = (event.get("content") or "").strip().splitlines()
            summary = first[0][:100] if first else event["status"]
            mark = "✓" if event["status"] == "completed" else "✗"
            return f"  {mark} {summary}"
        if kind == "permission_request":
            return f"? permission requested: {event['title']}"
        if kind == "ask_user":
            return f"? {event['question']}"
        if kind == "compaction":
            before, after = event["tokensBefore"], event["tokensAfter"]
            return f"[context compacted ({event['trigger']}): {before:,} → {after:,} tokens]"
        if kind == "permission_answer":
            return f"  → {event['optionId']}"
        if kind == "notice":
            return f"[{event['level']}] {event['message']}"
        if kind == "turn_completed":
            error = event.get("error")
            detail = f": {error['message']}" if error else ""
            usage = event.get("usage", {})
            tokens = f"{usage.get('inputTokens', 0)} in / {usage.get('outputTokens', 0)} out tokens"
            return f"\n[{event['stopReason']} after {event['turns']} model calls, {tokens}]{detail}"
        return None

    def _write(self, text: str) -> None:
        _write(self._out, text)


def _write(out: TextIO, text: str) -> None:
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `agentls run --json … | head`): stop printing quietly.
        pass


if __name__ == "__main__":
    sys.exit(main())
