"""Command line: the daemon (`--stdio`, `--tcp`), a headless turn (`run`), the offline `demo`."""

from __future__ import annotations

import atexit
import os
import sys

from agentls import __version__, plugins_cli

# `agentls run` through the warm daemon imports only what it needs: pathlib, typing and
# json cost it milliseconds at every start, so they come in where they are used.
TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator
    from pathlib import Path
    from typing import Any

    from agentls.ctrl_c import CtrlC

EXIT_USAGE, EXIT_INTERRUPTED = 2, 130


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `agentls` console script."""
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["run"]:
        return _run_command(argv)
    if given in ([], ["--stdio"]) and os.environ.get("AGENTLS_NO_DAEMON") != "1":
        # What editors start: relayed to the warm daemon before argparse or logging load.
        from agentls.relay import relay_stdio

        relayed = relay_stdio(dict(os.environ))
        if relayed is not None:
            return relayed
        argv = [*given, "--no-daemon"]
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run_command(argv)
    configure_logging()
    serve = SUBCOMMANDS.get(args.command, _serve_daemon)
    return serve(args)


def configure_logging() -> None:
    """Log to stderr at AGENTLS_LOG_LEVEL, with every credential value masked."""
    import logging

    from agentls.redact import Masker, install_log_filter

    logging.basicConfig(
        level=os.environ.get("AGENTLS_LOG_LEVEL", "WARNING").upper(),
        stream=sys.stderr,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    install_log_filter(Masker.from_environment(os.environ), logging.getLogger().handlers)


def _parser() -> argparse.ArgumentParser:
    import argparse

    parser = argparse.ArgumentParser(
        prog="agentls", description="An agent loop served to editors the way a language server is."
    )
    parser.add_argument("--version", action="version", version=f"agentls {__version__}")
    parser.add_argument(
        "--stdio",
        action="store_true",
        help="serve over stdio (the default), through the warm per-user daemon",
    )
    parser.add_argument(
        "--no-daemon",
        action="store_true",
        help="with --stdio: serve in this process instead of through the warm per-user "
        "daemon (also AGENTLS_NO_DAEMON=1)",
    )
    parser.add_argument("--tcp", action="store_true", help="serve over TCP instead of stdio")
    parser.add_argument("--host", default="127.0.0.1", help="TCP host (default 127.0.0.1)")
    parser.add_argument(
        "--port", type=int, default=0, help="TCP port (default 0: a free one, printed on stderr)"
    )
    parser.add_argument(
        "--token-file",
        type=_path,
        metavar="FILE",
        help="with --tcp: the token clients must present, read from FILE (mode 0600) "
        "instead of a random one",
    )
    parser.add_argument(
        "--allow-remote",
        action="store_true",
        help="with --tcp: allow a --host other machines can reach (the token is still required)",
    )
    parser.add_argument("--socket", help="serve on this Unix socket (the warm `run` starts this)")
    parser.add_argument(
        "--idle-timeout",
        type=float,
        default=600,
        help="with --socket: exit after this many seconds without a connection (default 600)",
    )
    commands = parser.add_subparsers(dest="command")
    _add_run(commands)
    _add_sessions(commands)
    plugins_cli.add_parser(commands)
    replay = commands.add_parser(
        "replay",
        help="run a recorded session again offline (the model's replies from its transcript)",
        epilog="The tools run again, against the current code: by default in a scratch copy "
        "of the session's directory. Exit code 0 when every tool result matches the "
        "recording, 1 when one differs (each difference is printed).",
    )
    replay.add_argument("id", help="the session id (or a unique prefix)")
    replay.add_argument("--cwd", type=_path, help="replay in this directory instead of a copy")
    replay.add_argument("--json", action="store_true", help="print one agent/event per line")
    replay.add_argument(
        "--as-is",
        action="store_true",
        help="keep the files as they are now (by default the files the session changed start "
        "as they were when it began)",
    )
    replay.add_argument(
        "--script", type=_path, metavar="FILE.jsonl", help="only write the scripted model's script"
    )
    commands.add_parser(
        "acp",
        help="serve the Agent Client Protocol on stdio (Zed, JetBrains, ACP clients in "
        "Neovim and Emacs)",
    )
    demo = commands.add_parser("demo", help="an offline agent turn on the scripted model")
    demo.add_argument("--json", action="store_true", help="print one agent/event object per line")
    commands.add_parser(
        "stop",
        help="stop the warm daemons `agentls run` leaves (each also exits after 10 minutes "
        "without a connection)",
    )
    return parser


def _add_run(commands: Any) -> None:
    """`agentls run` and its options."""
    run = commands.add_parser(
        "run",
        help="run one headless turn in the current directory",
        epilog="Exit codes: 0 the turn ended normally (end_turn), 1 it failed or stopped "
        "otherwise, 2 usage or configuration error, 130 interrupted (Ctrl-C aborts the turn "
        "cleanly first).",
    )
    run.add_argument(
        "prompt", nargs="?", help="what to ask the agent (default: read from stdin; - too)"
    )
    run.add_argument("--json", action="store_true", help="print one agent/event object per line")
    run.add_argument(
        "--permission-mode",
        choices=_Names("PERMISSION_MODES"),
        help="how tool calls are approved (default: default)",
    )
    run.add_argument(
        "--sandbox",
        choices=_Names("SANDBOX_MODES"),
        help="where Bash commands may write: read-only, workspace-write (the default where "
        "bubblewrap works) or danger-full-access (no sandbox)",
    )
    run.add_argument("--model", help="model name (default: AGENTLS_MODEL or the provider's)")
    run.add_argument("--provider", choices=_Names("PROVIDERS"))
    run.add_argument("--max-turns", type=int, help="model calls allowed in the turn (-1: max)")
    run.add_argument("--cwd", type=_path, default=None, help="workspace (default: current dir)")
    run.add_argument(
        "--permission-rules-scope",
        choices=_Names("RULES_SCOPES"),
        help="where an always-allow or always-reject answer is saved: local "
        "(.agentls/settings.local.json, git-ignored; the default), project "
        "(.agentls/settings.json, shared), user, or session (nowhere)",
    )
    earlier = run.add_mutually_exclusive_group()
    earlier.add_argument("--resume", metavar="ID", help="go on in an earlier session")
    earlier.add_argument(
        "--continue",
        dest="continue_",
        action="store_true",
        help="go on in this directory's newest session",
    )
    run.add_argument("--data", type=_path, metavar="FILE.json", help="structured data for the turn")
    run.add_argument("--intent", help="what the user wants done with the data")
    run.add_argument(
        "--no-daemon",
        action="store_true",
        help="run in this process instead of through the warm per-user daemon "
        "(also AGENTLS_NO_DAEMON=1)",
    )


def _add_sessions(commands: Any) -> None:
    """`agentls sessions list|show|rename|delete|export`."""
    sessions = commands.add_parser("sessions", help="list, show, rename, remove, export sessions")
    actions = sessions.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="this directory's sessions, newest first")
    listing.add_argument("--all", action="store_true", help="every directory's sessions")
    listing.add_argument("--json", action="store_true", help="as JSON")
    actions.add_parser("show", help="a session as markdown").add_argument("id")
    renaming = actions.add_parser("rename", help="give a session a title")
    renaming.add_argument("id")
    renaming.add_argument("title")
    deleting = actions.add_parser("delete", aliases=["rm"], help="delete a session for good")
    deleting.add_argument("id")
    deleting.add_argument("-y", "--yes", action="store_true", help="do not ask first")
    exporting = actions.add_parser("export", help="a session as markdown or JSON")
    exporting.add_argument("id")
    exporting.add_argument("--format", choices=["md", "json"], default="md")
    exporting.add_argument("-o", "--output", type=_path, help="file to write (default: stdout)")


def _run_command(argv: list[str] | None) -> int:
    """`agentls run`: Ctrl-C is taken over first thing, so that wherever it comes the
    turn stops and the exit code is 130 (see agentls.ctrl_c)."""
    from agentls.ctrl_c import CtrlC, EndWithoutTeardown, exit_now

    ctrl_c = CtrlC()
    ctrl_c.install()
    ending = EndWithoutTeardown()
    # Registered before anything else is: the last atexit handler to run.
    atexit.register(ending.leave)
    try:
        code = _run_or_interrupted(argv, ctrl_c)
    finally:
        ctrl_c.leave()
    if code == EXIT_INTERRUPTED:
        exit_now(code)
    ending.code = code
    return code


def _run_or_interrupted(argv: list[str] | None, ctrl_c: CtrlC) -> int:
    try:
        try:
            # The warm path stays light: logging is set up only where the core runs.
            return _run_headless(_parser().parse_args(argv), ctrl_c)
        except KeyboardInterrupt:
            return EXIT_INTERRUPTED
    except KeyboardInterrupt:
        # The second press came while the first was handled just above (a third is not
        # raised at all).
        return EXIT_INTERRUPTED


def _run_headless(args: argparse.Namespace, ctrl_c: CtrlC) -> int:
    from agentls.cli_print import NoTerminal, Terminal

    overrides: dict[str, Any] = {}
    for key, value in (
        ("permissionMode", args.permission_mode),
        ("model", args.model),
        ("provider", args.provider),
        ("maxTurns", args.max_turns),
        ("permissionRulesScope", args.permission_rules_scope),
        ("sandbox", {"mode": args.sandbox} if args.sandbox else None),
    ):
        if value is not None:
            overrides[key] = value
    cwd = os.path.realpath(args.cwd or os.getcwd())
    prompt = args.prompt
    if prompt is None or prompt == "-":
        if sys.stdin.isatty():
            sys.stderr.write("agentls run: give the prompt as an argument, or pipe it in\n")
            return EXIT_USAGE
        prompt = sys.stdin.read()
        # The terminal is no longer stdin: permission prompts cannot be answered there.
        answers: Any = NoTerminal()
    else:
        answers = Terminal() if sys.stdin.isatty() else NoTerminal()
    if not prompt.strip():
        sys.stderr.write("agentls run: the prompt is empty\n")
        return EXIT_USAGE
    data: Any = None
    if args.data is not None:
        import json

        try:
            data = json.loads(args.data.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            sys.stderr.write(f"agentls run: --data {args.data}: {exc}\n")
            return EXIT_USAGE
    progress = sys.stderr.isatty() and not args.json
    if not args.no_daemon and os.environ.get("AGENTLS_NO_DAEMON") != "1":
        from agentls.warm import WarmUnavailable, run_warm

        session = {
            "resume": args.resume,
            "continue_newest": args.continue_,
            "data": data,
            "intent": args.intent,
        }
        try:
            return run_warm(cwd, prompt, session, overrides, args.json, answers, progress)
        except WarmUnavailable as exc:
            sys.stderr.write(f"agentls: no warm daemon ({exc}); running in this process\n")
    from agentls.headless import TurnRequest, run_here

    configure_logging()
    request = TurnRequest(prompt, args.resume, args.continue_, data, args.intent)
    return run_here(_path(cwd), request, overrides, args.json, answers, progress, ctrl_c)


class _Names:
    """One of agentls.names's lists for argparse `choices`, read when argparse first looks
    (an option that uses it, or --help): the warm path then never imports typing."""

    def __init__(self, name: str) -> None:
        self._name = name

    def _values(self) -> tuple[str, ...]:
        from agentls import names

        values: tuple[str, ...] = getattr(names, self._name)
        return values

    def __contains__(self, value: object) -> bool:
        return value in self._values()

    def __iter__(self) -> Iterator[str]:
        return iter(self._values())


def _serve_tcp(args: argparse.Namespace) -> int:
    from agentls.lsp.tcp import serve_tcp
    from agentls.lsp.tcp_trust import TrustError, check_host, new_token, read_token_file

    try:
        check_host(args.host, args.allow_remote)
        token = new_token() if args.token_file is None else read_token_file(args.token_file)
        serve_tcp(args.host, args.port, token)
    except TrustError as exc:
        sys.stderr.write(f"agentls: {exc}\n")
        return EXIT_USAGE
    return 0


def _path(text: str) -> Path:
    from pathlib import Path

    return Path(text)


DEMO_NEXT = """
The demo's folder and session are gone now. Next, in a project of your own, with a model
configured (ANTHROPIC_API_KEY, or OPENAI_API_KEY, or OPENAI_BASE_URL for a local server
such as Ollama's http://localhost:11434/v1):

    agentls run "what does this project do?"
"""


def _stop_daemons(_args: argparse.Namespace) -> int:
    from agentls.plural import counted
    from agentls.warm_stop import stop_daemons

    stopped = stop_daemons()
    if stopped:
        pids = ", ".join(str(pid) for pid in stopped)
        sys.stdout.write(f"stopped {counted(len(stopped), 'warm daemon')} (pid {pids})\n")
    else:
        sys.stdout.write("no warm daemon was running\n")
    return 0


def _run_demo(args: argparse.Namespace) -> int:
    import asyncio
    import tempfile

    from agentls.cli_print import DemoAnswers
    from agentls.demo import SCRIPT, make_workspace
    from agentls.headless import TurnRequest, one_turn

    with tempfile.TemporaryDirectory(prefix="agentls-demo-") as tmp:
        root = _path(tmp) / "project"
        root.mkdir()
        make_workspace(root)
        # The demo's session, settings and answers live and go with its folder: nothing of
        # it joins the user's session list, and the user's settings do not change it.
        os.environ["AGENTLS_HOME"] = str(_path(tmp) / "home")
        overrides = {"provider": "scripted", "script": str(SCRIPT)}
        out = sys.stdout
        if not args.json:
            out.write(f"agentls demo: a scripted agent turn in {root}\n\n")
        request = TurnRequest("Make the server honour the PORT variable.")
        turn = one_turn(root, request, overrides, args.json, DemoAnswers(), resume_hint=False)
        code = asyncio.run(turn)
        if not args.json:
            out.write("\n--- server.py after the turn ---\n")
            out.write((root / "server.py").read_text(encoding="utf-8"))
            out.write(DEMO_NEXT)
        return code


def _replay(args: argparse.Namespace) -> int:
    import asyncio
    import tempfile

    from agentls import replay
    from agentls import sessions_cli as cli
    from agentls.cli_print import HumanPrinter, JsonPrinter
    from agentls.plural import counted
    from agentls.session.store import list_metas, transcript_path

    try:
        meta = cli.find(args.id, list_metas(cli.home()))
        path = transcript_path(cli.home(), meta.session_id)
        recording = replay.read_recording(path)
    except (cli.SessionNotFound, OSError, ValueError) as exc:
        sys.stderr.write(f"agentls replay: {exc}\n")
        return EXIT_USAGE
    if args.script is not None:
        args.script.write_text(replay.script_jsonl(recording), encoding="utf-8")
        sys.stderr.write(
            f"wrote {len(recording.script)} model replies for {len(recording.prompts)} "
            f"messages to {args.script}\n"
        )
        return 0
    printer = JsonPrinter(sys.stdout) if args.json else HumanPrinter(sys.stdout)
    with tempfile.TemporaryDirectory(prefix="agentls-replay-") as tmp:
        cwd = args.cwd or replay.scratch_copy(recording.cwd, _path(tmp))
        sys.stderr.write(f"replaying {meta.session_id} in {cwd}\n")
        if not args.as_is and cwd.resolve() == recording.cwd.resolve():
            sys.stderr.write("the session's own directory: its files are replayed as they are\n")
        result = asyncio.run(
            replay.replay_transcript(path, cwd, printer.show, restore_files=not args.as_is)
        )
    sys.stderr.write(replay.start_files_summary(result.start_files))
    for mismatch in result.mismatches:
        sys.stderr.write(
            f"\n{mismatch.tool_call_id} differs.\n  recorded: {mismatch.recorded[:300]!r}\n"
            f"  replayed: {mismatch.replayed[:300]!r}\n"
        )
    ends = ", ".join(result.stop_reasons) or "none"
    recorded = len(recording.results)
    if result.mismatches:
        verdict = f"{len(result.mismatches)} of {recorded} tool results differ"
    else:
        verdict = f"all {recorded} tool results match the recording"
    turns = counted(len(result.stop_reasons), "turn")
    sys.stderr.write(f"\n{turns} replayed ({ends}); {verdict}\n")
    return 1 if result.mismatches else 0


def _sessions(args: argparse.Namespace) -> int:
    from agentls import sessions_cli as cli

    out = sys.stdout
    try:
        if args.action == "list":
            return cli.list_sessions(None if args.all else _path(os.getcwd()), args.json, out)
        if args.action == "show":
            return cli.show(args.id, out)
        if args.action == "rename":
            return cli.rename(args.id, args.title, out)
        if args.action in ("delete", "rm"):
            return cli.delete(args.id, args.yes, out, cli.terminal_answer())
        return cli.export(args.id, args.format, args.output, out)
    except cli.SessionNotFound as exc:
        sys.stderr.write(f"agentls sessions: {exc}\n")
        return cli.EXIT_USAGE
    except (OSError, ValueError) as exc:
        sys.stderr.write(f"agentls sessions: {exc}\n")
        return 1


def _serve_daemon(args: argparse.Namespace) -> int:
    """No subcommand: the daemon, over a Unix socket, TCP or stdio."""
    if args.socket is not None:
        from agentls.lsp.socket_daemon import serve_socket

        return serve_socket(args.socket, args.idle_timeout)
    if args.tcp:
        return _serve_tcp(args)
    from agentls.lsp.stdio import serve_stdio

    return serve_stdio()


def _serve_acp(_args: argparse.Namespace) -> int:
    from agentls.acp.serve import serve_acp

    return serve_acp()


# The subcommands after `run` (which main() takes before any parsing, for its speed).
SUBCOMMANDS: dict[str, Callable[[argparse.Namespace], int]] = {
    "demo": _run_demo,
    "sessions": _sessions,
    "replay": _replay,
    "stop": _stop_daemons,
    "acp": _serve_acp,
    "plugin": plugins_cli.run,
}


if __name__ == "__main__":
    sys.exit(main())
