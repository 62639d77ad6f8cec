"""Run every agentls benchmark and print one compact table. Numbers only, no assertions.

    python bench/run.py            # the full set (about two minutes)
    python bench/run.py --quick    # fewer samples (well under a minute)
    python bench/run.py --only startup,rss

Sections: 1 startup (spawn → initialize vs interpreter and bare-pygls floors, spawn → core
ready and → first anthropic session, what is imported when, and `agentls --stdio` relayed to
the warm daemon with the daemon up and not), 2 submit → first text_delta
over stdio (and agent/inlineEdit → its permission_request against a Read-then-Edit
message), 3 per-turn loop overhead in process, 4 events per second (in process vs stdio),
5 memory (import floors vs session peaks, scripted and the real SDKs against a local replay
server), 6 the SDK providers' per-call cost at 10 and 1,000 messages of history (Anthropic,
Chat Completions, Responses) and one Anthropic call's CPU split into the provider, the SDK
alone and the SDK's HTTP client alone, then each extra model call of a whole turn in process
(scripted and Anthropic) and what of it is ours outside the SDK, 7 resuming
a 5,000-message transcript (load, SessionManager.resume, agent/resumeSession over stdio), 8
<userContext> (an enormous editor state; mentions), 9 abort while Bash runs children, 10 `agentls
run` start → first model request, a 3-call and a 20-call task, each extra model call, last
model request → exit and peak RSS, in process and through the warm daemon (with the
scripted model, and with the Anthropic SDK against a local replay server),
11 the peers (Claude Code, Codex) on the same fake server as 10, with its rows (start →
first model request, the 3- and 20-call tasks, each extra model call, last model request →
exit, peak RSS; installed from npm into ~/.cache on first use), 12 typing in
Neovim while its chat streams (key latency, writes per delta, Neovim's CPU; inline edit:
`:AgentEdit` → the proposal in the buffer, a 200-hunk review drawn and decided; a 50-file
turn's `:AgentChanges`, rewind preview and rewind), 13 `agentls
acp` (start-up, prompt → first chunk, updates per second and
the daemon's CPU per update, session/delete of a saved session and under a running
prompt), 14 the process watchdog (a Bash call with its group guarded
and not, a registration, the watchdog's start, SIGKILL → the daemon's commands gone), 15 a
window reloading mid-turn (resumeSession of the running session, the missed events resent,
the cost of holding them), 16 sessions (listing 2,000 through the index and without it; RSS
and descriptors after 200 sessions opened and closed; deleting one); 7 also resumes a 50,000-message
session whole and with `messageLimit`, 17 apply_patch (a 20-file patch against the same
changes as Edit calls, and the bytes the tool adds to every request), 18 plan approval and
the shortcuts (what ExitPlanMode adds to the prefix; `!command`, `# note` and `/context`
turns against a model turn), 19 plugins (reading them at session open, none and ten
installed; one plugin's trust digest; what ten plugins add to the first request), 20
interactive shells (spawn on a terminal against a pipe, a background start, a WriteStdin
round trip to a REPL, WriteStdin's bytes in every request), 21 isolated agents (a
worktree's add, settle, three-way merge and discard in a 500-file repository; the bytes
`isolation` adds to the Task tool's spec).
`--only` names: startup, stdio, loop, rss, provider, resume, context, abort, cli, peers,
nvim, acp, guard, reattach, sessions, patch, shortcuts, plugins, shells, worktrees. Every
daemon gets its own temporary AGENTLS_HOME. The load average is printed because every number
here is wall-clock time on a possibly shared machine.
"""

from __future__ import annotations

import argparse
import compileall
import importlib
import os
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from agentls import __version__
from harness import Row

# Imported one at a time, so a module that no longer imports fails alone.
BENCHES = {
    "startup": "bench_startup",
    "stdio": "bench_stdio",
    "loop": "bench_loop",
    "rss": "bench_rss",
    "provider": "bench_provider",
    "resume": "bench_resume",
    "context": "bench_context",
    "abort": "bench_abort",
    "cli": "bench_cli",
    "peers": "bench_peers",
    "nvim": "bench_nvim",
    "acp": "bench_acp",
    "guard": "bench_guard",
    "reattach": "bench_reattach",
    "sessions": "bench_sessions",
    "plugins": "bench_plugins",
    "patch": "bench_patch",
    "shortcuts": "bench_shortcuts",
    "shells": "bench_shells",
    "worktrees": "bench_worktrees",
}
NAME_WIDTH = 54


def format_value(row: Row) -> str:
    """A number with as many decimals as its unit deserves; text as it is."""
    value = row.value
    if isinstance(value, str):
        return value
    if row.unit in ("ev/s", "msg/s"):
        return f"{value:,.0f}"
    if row.unit in ("MB", "µs"):
        return f"{value:.1f}"
    return f"{value:.2f}"


def render(rows: list[Row]) -> str:
    """Rows grouped by section (in section order) as aligned text."""
    lines: list[str] = []
    # Failures ("! name") last, after the numbered sections.
    sections = sorted({row.section for row in rows}, key=lambda s: (s.startswith("!"), s))
    for section in sections:
        lines.append(f"\n== {section} ==")
        for row in (r for r in rows if r.section == section):
            name = row.name if len(row.name) <= NAME_WIDTH else row.name[: NAME_WIDTH - 1] + "…"
            value = format_value(row)
            cell = f"{value} {row.unit}".rstrip() if not isinstance(row.value, str) else value
            note = f"  [{row.note}]" if row.note else ""
            if isinstance(row.value, str) and len(cell) > 16:
                lines.append(f"  {name:<{NAME_WIDTH}} {cell}{note}")
            else:
                lines.append(f"  {name:<{NAME_WIDTH}} {cell:>16}{note}")
    return "\n".join(lines)


def header(quick: bool) -> str:
    load = ", ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"agentls {__version__} benchmarks ({'quick' if quick else 'full'}) — "
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs, "
        f"load average {load}, {platform.platform(terse=True)}"
    )


def compile_package() -> str:
    """Compile agentls to bytecode before timing anything, as `pip install` does for an
    installed copy: an editable install, or a machine with PYTHONDONTWRITEBYTECODE set (this
    project's is), would otherwise have every spawned daemon and relay compile the package's
    sources at each start (16 ms of the relay's CPU measured here), which no user pays."""
    import agentls

    package = Path(agentls.__file__).resolve().parent
    compiled = compileall.compile_dir(package, quiet=1)
    return "agentls compiled to bytecode" if compiled else "agentls NOT fully compiled"


def run_all(names: list[str], quick: bool) -> tuple[list[Row], dict[str, float], bool]:
    """Every named benchmark; a failing one is reported and the rest still run."""
    rows: list[Row] = []
    seconds: dict[str, float] = {}
    ok = True
    for name in names:
        start = time.perf_counter()
        try:
            bench: Callable[[bool], list[Row]] = importlib.import_module(BENCHES[name]).run
            rows += bench(quick)
        except Exception as exc:
            ok = False
            traceback.print_exc()
            rows.append(Row(f"! {name}", "FAILED", f"{type(exc).__name__}: {exc}"))
        seconds[name] = time.perf_counter() - start
        print(f"  ran {name} in {seconds[name]:.1f} s", file=sys.stderr, flush=True)
    return rows, seconds, ok


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples (< 1 min)")
    parser.add_argument(
        "--only", default=",".join(BENCHES), help=f"comma-separated subset of {list(BENCHES)}"
    )
    args = parser.parse_args(argv)
    names = [n.strip() for n in args.only.split(",") if n.strip()]
    unknown = [n for n in names if n not in BENCHES]
    if unknown:
        parser.error(f"unknown benchmark(s) {unknown}; choose from {list(BENCHES)}")
    print(header(args.quick), "—", compile_package(), flush=True)
    start = time.perf_counter()
    rows, seconds, ok = run_all(names, args.quick)
    print(render(rows))
    parts = ", ".join(f"{name} {value:.1f}" for name, value in seconds.items())
    print(f"\ntotal {time.perf_counter() - start:.1f} s ({parts})")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
