"""Command line: the daemon (`--stdio`, `--tcp`), a headless turn (`run`), the offline `demo`."""

from __future__ import annotations

import argparse
import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

from agentls import __version__
from agentls.config import PROVIDERS
from agentls.redact import Masker, install_log_filter


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `agentls` console script."""
    args = _parser().parse_args(argv)
    configure_logging()
    if args.command == "run":
        return _run_headless(args)
    if args.command == "demo":
        return _run_demo(args)
    if args.tcp:
        from agentls.lsp.tcp import serve_tcp

        serve_tcp(args.host, args.port)
        return 0
    from agentls.lsp.stdio import serve_stdio

    return serve_stdio()


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
    run.add_argument("--provider", choices=list(PROVIDERS))
    run.add_argument("--max-turns", type=int, help="model calls allowed in the turn (-1: max)")
    run.add_argument("--cwd", type=Path, default=None, help="workspace (default: current dir)")
    demo = commands.add_parser("demo", help="an offline agent turn on the scripted model")
    demo.add_argument("--json", action="store_true", help="print one agent/event object per line")
    return parser


def _run_headless(args: argparse.Namespace) -> int:
    from agentls.headless import NoTerminal, Terminal, one_turn

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
    return asyncio.run(one_turn(cwd, args.prompt, overrides, args.json, answers))


def _run_demo(args: argparse.Namespace) -> int:
    from agentls.demo import SCRIPT, make_workspace
    from agentls.headless import DemoAnswers, one_turn

    with tempfile.TemporaryDirectory(prefix="agentls-demo-") as tmp:
        root = Path(tmp)
        make_workspace(root)
        overrides = {"provider": "scripted", "script": str(SCRIPT)}
        out = sys.stdout
        if not args.json:
            out.write(f"agentls demo: a scripted agent turn in {root}\n\n")
        code = asyncio.run(
            one_turn(
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


if __name__ == "__main__":
    sys.exit(main())
