"""`python -m agentls.conformance --cmd "agentls --stdio"`: the black-box conformance suite.

Runs every check against fresh processes of the server command, over raw JSON-RPC on
pipes (or TCP with --tcp), and prints a pass/fail table; exits 1 when a check fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
import traceback
from pathlib import Path

from agentls.conformance.kit import Context, command_of
from agentls.conformance.suite import CHECKS
from agentls.plural import counted


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentls.conformance", description=__doc__)
    parser.add_argument("--cmd", required=True, help='the server command, e.g. "agentls --stdio"')
    parser.add_argument(
        "--tcp",
        action="store_true",
        help="connect over TCP: the command listens (a {port} in it becomes 0) and prints "
        '"agentls: discovery file PATH"; the kit connects and presents the token from that '
        'file, e.g. "agentls --tcp --port {port}"',
    )
    parser.add_argument("--only", help="run the checks whose name contains this text")
    parser.add_argument("-v", "--verbose", action="store_true", help="tracebacks of failures")
    args = parser.parse_args(argv)
    checks = [(n, f) for n, f in CHECKS if not args.only or args.only in n]
    failed = 0
    width = max(len(name) for name, _ in checks)
    with tempfile.TemporaryDirectory(prefix="agentls-conformance-") as tmp:
        context = Context(command_of(args.cmd), Path(tmp), tcp=args.tcp)
        for name, run in checks:
            started = time.monotonic()
            try:
                run(context)
                verdict, detail = "PASS", ""
            except Exception as exc:
                failed += 1
                verdict, detail = "FAIL", f"{type(exc).__name__}: {exc}"
                if args.verbose:
                    traceback.print_exc()
            seconds = time.monotonic() - started
            print(f"{verdict}  {name:<{width}}  {seconds:5.2f} s  {detail}".rstrip(), flush=True)
    print(f"\n{len(checks) - failed} of {counted(len(checks), 'check')} passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
