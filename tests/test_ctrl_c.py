"""Ctrl-C stops `agentls run` at any moment, warm or in process, on a loaded machine.

Each run gets SIGINT at a random moment (seeded in the normal run; fresh draws, and over a
hundred runs, under --long) while busy loops keep every core loaded: before the daemon is
up, while connecting, while the session opens, while the model streams, while a tool runs,
while a permission is asked on a terminal (where Ctrl-C is typed, not sent). Some runs get
a second press. Every run must exit 130; a turn that had started must have its end
recorded as aborted in the transcript (which the warm daemon writes), long before the turn
itself would have ended, and the tool's process must be gone. Only a press that comes
while the interpreter itself starts, before any code of agentls runs, ends it otherwise:
by the signal (which a shell shows as 130 too) or, under `python -m`, with CPython's exit 1
when runpy could not be imported. Those runs are counted apart.

The children start with SIGINT at its default: a test run started as `pytest &` by a shell
without job control ignores SIGINT, and so would every `agentls run` it started.
"""

from __future__ import annotations

import fcntl
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import termios
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from agentls.warm import socket_path

STORY = "Once upon a time there was a long story that went on and on. " * 10
MODES = ("warm", "cold", "in process")
KINDS = ("story", "tool", "permission")
# Generous: a loaded machine is slow, and the figures are reported, not asserted.
EXIT_BOUND = 10.0
SETTLE_BOUND = 10.0
FRAME = re.compile(r'File "([^"]+)", line \d+, in (\S+)')


@dataclass
class Run:
    number: int
    mode: str  # warm: the daemon is up; cold: this run starts it; in process: --no-daemon
    kind: str  # what the turn does when the key comes
    # The first press comes `delay` seconds after the start, or after the turn's activity
    # (text, the tool call, the permission request) showed.
    anchor: str
    delay: float
    presses: int
    second_after: float
    pressed_twice: bool = False
    # For a run ended by SIGINT while starting: where its traceback ends, if it has one.
    last_frame: str = ""
    cwd: Path = field(default_factory=Path)
    moment: str = ""
    code: int | None = None
    seconds: float = 0.0
    problems: list[str] = field(default_factory=list)

    @property
    def tag(self) -> str:
        return f"[ctrl-c run {self.number:03d}]"

    @property
    def sleep(self) -> str:
        # A command line of its own, to find the tool's process by.
        return f"30.{self.number:03d}"


def draw(rng: random.Random, count: int) -> list[Run]:
    """`count` runs. The first nine have every pair of mode and kind; of the first seven,
    runs 3 to 5 (one of each mode) are pressed early, the others (one of each kind) once
    the turn is busy."""
    pairs = [(MODES[(k + shift) % 3], KINDS[k]) for shift in range(3) for k in range(3)]
    runs = []
    for number in range(count):
        mode, kind = pairs[number] if number < len(pairs) else rng.choice(pairs)
        anchor = "start" if number in (3, 4, 5) else "activity"
        if number >= len(pairs):
            anchor = rng.choice(("start", "activity"))
        # The cold daemon's start and the in-process imports take seconds under load.
        longest = 1.0 if anchor == "activity" else 2.0 if mode == "warm" else 4.0
        presses = 2 if rng.random() < 0.3 else 1
        delay, second_after = rng.uniform(0.0, longest), rng.uniform(0.0, 0.1)
        runs.append(Run(number, mode, kind, anchor, delay, presses, second_after))
    return runs


def script_for(runs: list[Run]) -> list[dict[str, object]]:
    entries: list[dict[str, object]] = [{"for": "[warm-up]", "text": "ready"}]
    for run in runs:
        if run.kind == "story":
            entries.append({"for": run.tag, "text": STORY, "delay": 0.3, "chunk": 4})
        else:
            call = {"name": "Bash", "input": {"command": f"sleep {run.sleep}"}}
            entries.append({"for": run.tag, "tool_calls": [call]})
    return entries


def environment(home: Path, script: Path) -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.pop("AGENTLS_NO_DAEMON", None)  # the warm and cold modes go through the daemon
    return {
        **base,
        "AGENTLS_HOME": str(home),
        "AGENTLS_SCRIPT": str(script),
        "AGENTLS_PROVIDER": "scripted",
        "AGENTLS_DAEMON_IDLE": "60",
    }


@contextmanager
def busy_cores() -> Iterator[None]:
    """Every core kept busy by a loop of its own, stopped at the end."""
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"])
        for _ in range(os.cpu_count() or 2)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()


def sigint_at_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def on_a_terminal() -> None:
    """In the child: SIGINT at its default, and stdin (a pty) as the controlling terminal
    (start_new_session made the child a session leader), so that Ctrl-C typed there
    reaches its process group as it does in a shell."""
    sigint_at_default()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Watched:
    """A running `agentls run --json`: its events as they come, and its terminal's text."""

    def __init__(self, run: Run, env: dict[str, str]) -> None:
        args = [sys.executable, "-m", "agentls", "run", "--json"]
        if run.mode == "in process":
            args.append("--no-daemon")
        if run.kind in ("tool", "background"):
            args += ["--permission-mode", "bypassPermissions"]
        args.append(f"{run.tag} go")
        self.events: list[dict[str, object]] = []
        self.shown = ""
        self.master: int | None = None
        if run.kind == "permission":
            self.master, slave = os.openpty()
            self.process = subprocess.Popen(
                args,
                cwd=run.cwd,
                env=env,
                stdin=slave,
                stderr=slave,
                stdout=subprocess.PIPE,
                start_new_session=True,
                preexec_fn=on_a_terminal,
            )
            os.close(slave)
            threading.Thread(target=self._read_terminal, daemon=True).start()
        else:
            self.process = subprocess.Popen(
                args,
                cwd=run.cwd,
                env=env,
                stdin=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                stdout=subprocess.PIPE,
                preexec_fn=sigint_at_default,
            )
        self.reader = threading.Thread(target=self._read_events, daemon=True)
        self.reader.start()

    def _read_events(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.events.append(json.loads(line))

    def _read_terminal(self) -> None:
        assert self.master is not None
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:
                return  # the child closed the terminal
            if not chunk:
                return
            self.shown += chunk.decode("utf-8", "replace")

    def wait_for_activity(self, kind: str) -> None:
        wanted = {
            "story": "text_delta",
            "tool": "tool_call",
            "permission": "permission_request",
            # A command started in the background, then the model streams.
            "background": "text_delta",
        }
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and self.process.poll() is None:
            if any(e.get("type") == wanted[kind] for e in list(self.events)):
                return
            time.sleep(0.02)

    def press(self) -> None:
        """Ctrl-C: typed on the terminal, or SIGINT as a shell's kill -INT sends it."""
        if self.master is not None:
            os.write(self.master, b"\x03")
        else:
            self.process.send_signal(signal.SIGINT)

    def close(self) -> str:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait()
        self.reader.join(timeout=10)
        errors = self.process.stderr.read().decode() if self.process.stderr else self.shown
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()
        if self.master is not None:
            os.close(self.master)
        return errors


def transcripts(home: Path, cwd: Path) -> list[list[dict[str, object]]]:
    """The records of every session opened in `cwd`."""
    found = []
    for path in sorted((home / "sessions").glob("*.jsonl")):
        records = []
        for line in path.read_text().splitlines():
            try:
                records.append(json.loads(line))
            except ValueError:
                break  # the line being written
        if records and records[0].get("cwd") == str(cwd):
            found.append(records)
    return found


def sigint_caught(pid: int) -> bool:
    """Whether the process has a handler for SIGINT yet (Python installs one as it starts)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("SigCgt:"):
            return bool(int(line.split()[1], 16) & (1 << (signal.SIGINT - 1)))
    return False


def killed_while_starting(run: Run, errors: str) -> bool:
    """Ended by the press before any function of agentls ran: while the interpreter
    started (no handler yet when the key came, no traceback; or `python -m` failing to
    import runpy, which CPython reports with exit 1), or while it imported the command
    line (a traceback of module frames only). Python dies by the signal there, which a
    shell shows as exit status 130; from `main` on, the run exits 130 itself."""
    if run.code == 1:
        return errors.startswith("Could not import runpy module")
    if run.code != -signal.SIGINT:
        return False
    frames = FRAME.findall(errors)
    if not frames:
        return run.moment == "interpreter starting"
    return all(name == "<module>" or "/agentls/" not in path for path, name in frames)


def moment(run: Run, watched: Watched, home: Path, env: dict[str, str]) -> str:
    """What the run was doing when the key came (as far as can be seen from outside)."""
    if not sigint_caught(watched.process.pid):
        return "interpreter starting"
    if run.mode != "in process" and not Path(socket_path(env)).exists():
        return "daemon starting"
    sessions = transcripts(home, run.cwd)
    if not sessions:
        return "connecting" if run.mode != "in process" else "starting"
    if not any(r["type"] == "turn_start" for r in sessions[0]):
        return "opening the session"
    kinds = {e.get("type") for e in list(watched.events)}
    if "permission_request" in kinds:
        return "permission asked"
    if "tool_call" in kinds:
        return "tool running"
    if "text_delta" in kinds:
        return "streaming"
    return "turn starting"


def ended_turns(home: Path, cwd: Path) -> tuple[list[str], list[str]]:
    """The turns that began, and the stop reasons recorded for them."""
    began, ends = [], []
    for records in transcripts(home, cwd):
        began += [str(r["turnId"]) for r in records if r["type"] == "turn_start"]
        ends += [str(r["stopReason"]) for r in records if r["type"] == "turn"]
    return began, ends


def tool_alive(run: Run) -> bool:
    wanted = f"sleep\0{run.sleep}\0".encode()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if Path(f"/proc/{entry}/cmdline").read_bytes() == wanted:
                    return True
            except OSError:
                continue
    return False


def kill_one(run: Run, home: Path, env: dict[str, str]) -> None:
    run.cwd.mkdir(parents=True)
    watched = Watched(run, env)
    try:
        if run.anchor == "activity":
            watched.wait_for_activity(run.kind)
        time.sleep(run.delay)
        run.moment = moment(run, watched, home, env)
        pressed = time.monotonic()
        watched.press()
        if run.presses == 2:
            try:
                watched.process.wait(timeout=run.second_after)
            except subprocess.TimeoutExpired:
                watched.press()
                run.pressed_twice = True
        try:
            run.code = watched.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            run.problems.append("still running 60 s after Ctrl-C")
        run.seconds = time.monotonic() - pressed
    finally:
        errors = watched.close()
    if killed_while_starting(run, errors):
        run.moment = "interpreter starting"
        run.last_frame = (FRAME.findall(errors) or [("", "none")])[-1][1]
    elif run.code != 130:
        run.problems.append(f"exit {run.code}: {errors[-600:]}")
    if run.seconds > EXIT_BOUND:
        run.problems.append(f"exit took {run.seconds:.1f} s")
    check_the_turn_ended(run, home)


def check_the_turn_ended(run: Run, home: Path) -> None:
    """A turn that began was ended by the abort, its end recorded, its tool gone: long
    before the story (45 s), the command (30 s) or the unanswered question would end."""
    deadline = time.monotonic() + SETTLE_BOUND
    began, ends = ended_turns(home, run.cwd)
    while (len(ends) < len(began) or tool_alive(run)) and time.monotonic() < deadline:
        time.sleep(0.1)
        began, ends = ended_turns(home, run.cwd)
    if len(ends) != len(began) or any(reason != "aborted" for reason in ends):
        run.problems.append(f"turns {began} ended {ends}")
    if tool_alive(run):
        run.problems.append(f"sleep {run.sleep} still runs")


def stop_daemon(env: dict[str, str]) -> None:
    subprocess.run(["pkill", "-f", f"socket {socket_path(env)}"], check=False)


def report(runs: list[Run]) -> str:
    lines = [
        f"  run {r.number:3d} {r.mode:10s} {r.kind:10s} {r.anchor:8s}+{r.delay:4.2f} s "
        f"{r.moment:20s} presses {2 if r.pressed_twice else 1} exit {r.code} "
        f"after {r.seconds:.2f} s {r.last_frame}"
        for r in runs
    ]
    for label in sorted({r.moment for r in runs}):
        some = [r for r in runs if r.moment == label]
        lines.append(f"  {label}: {len(some)} runs")
    times = sorted(r.seconds for r in runs)
    exits = sum(r.code == 130 for r in runs)
    starting = sum(r.moment == "interpreter starting" and r.code != 130 for r in runs)
    lines.append(
        f"{len(runs)} runs ({sum(r.pressed_twice for r in runs)} with a second press before "
        "the exit), "
        f"{exits} exits 130, {starting} ended by the press while the interpreter started, "
        f"time to exit median {statistics.median(times):.2f} s, "
        f"max {times[-1]:.2f} s"
    )
    for mode in MODES:
        some = sorted(r.seconds for r in runs if r.mode == mode)
        if some:
            lines.append(f"  {mode}: median {statistics.median(some):.2f} s, max {some[-1]:.2f} s")
    return "\n".join(lines)


def test_ctrl_c_at_random_moments_under_load(tmp_path: Path, long_run: bool) -> None:
    rng = random.Random() if long_run else random.Random(31)
    runs = draw(rng, 120 if long_run else 7)
    script = tmp_path / "script.jsonl"
    script.write_text("".join(json.dumps(e) + "\n" for e in script_for(runs)), encoding="utf-8")
    home = tmp_path / "home"
    warm = environment(home, script)
    started = [warm]
    try:
        # The warm runs find the daemon up (an ordinary run starts it).
        warm_up = tmp_path / "warm-up"
        warm_up.mkdir()
        subprocess.run(
            [sys.executable, "-m", "agentls", "run", "[warm-up]"],
            cwd=warm_up,
            env=warm,
            check=True,
            capture_output=True,
            timeout=120,
        )
        with busy_cores():
            for run in runs:
                run.cwd = tmp_path / "runs" / f"{run.number:03d}"
                env = warm
                if run.mode == "cold":
                    # A home of its own: another environment, so another daemon.
                    env = environment(tmp_path / f"home-{run.number:03d}", script)
                    started.append(env)
                kill_one(run, home if env is warm else Path(env["AGENTLS_HOME"]), env)
    finally:
        for env in started:
            stop_daemon(env)
    summary = report(runs)
    print(f"\nCtrl-C at random moments under load:\n{summary}")
    failed = [
        f"run {r.number} ({r.mode}, {r.kind}, {r.moment}, {r.anchor} + {r.delay:.2f} s): "
        f"{r.problems}"
        for r in runs
        if r.problems
    ]
    assert not failed, "\n".join([*failed, summary])


def test_a_second_ctrl_c_in_process_leaves_at_once_and_the_end_is_still_recorded(
    tmp_path: Path,
) -> None:
    # A background command that ignores SIGTERM makes the session's close slow (its group
    # gets SIGKILL only after a grace), so the second press, 50 ms after the first, comes
    # while the turn unwinds; the model is streaming when the first comes. (Warm, the
    # client leaves as soon as the daemon confirms the abort: a second press finds no wait.)
    # It ignores SIGHUP too (its terminal hangs up when the shell ends) and runs outside
    # the sandbox, whose bwrap would end at SIGTERM and take the whole box with it.
    run = Run(900, "in process", "background", "activity", 0.0, 2, 0.05)
    run.cwd = tmp_path / "project"
    command = f"trap '' TERM HUP; sleep {run.sleep}"
    call = {"name": "Bash", "input": {"command": command, "run_in_background": True}}
    story = {"for": run.tag, "text": STORY, "delay": 0.3, "chunk": 4}
    script = tmp_path / "script.jsonl"
    lines = [{"for": run.tag, "tool_calls": [call]}, story]
    script.write_text("".join(json.dumps(e) + "\n" for e in lines), "utf-8")
    home = tmp_path / "home"
    home.mkdir()
    unboxed = {"sandbox": {"mode": "danger-full-access"}}
    (home / "settings.json").write_text(json.dumps(unboxed), "utf-8")
    env = environment(home, script)
    try:
        kill_one(run, home, env)
    finally:
        stop_daemon(env)
    print(f"\nexit {run.code} {run.seconds:.2f} s after the first press")
    assert run.pressed_twice, "the run ended before the second press"
    assert not run.problems, run.problems


PRESS_WHILE_IMPORTING = """
import builtins

_import = builtins.__import__


def _pressing_import(name, *args, **kwargs):
    if name == "agentls.headless" and builtins.__import__ is _pressing_import:
        builtins.__import__ = _import
        # Ctrl-C while code made by exec() runs, as dataclasses are made at import.
        exec("import os, signal\\nos.kill(os.getpid(), signal.SIGINT)\\nfor _ in range(9): pass")
    return _import(name, *args, **kwargs)


builtins.__import__ = _pressing_import
"""


def test_ctrl_c_while_the_core_is_imported_exits_130(tmp_path: Path) -> None:
    # CPython remembers a KeyboardInterrupt that went through exec'd code even once it
    # was caught, and under `python -m` it then ends the process by SIGINT at exit.
    hooks = tmp_path / "hooks"
    hooks.mkdir()
    (hooks / "sitecustomize.py").write_text(PRESS_WHILE_IMPORTING, encoding="utf-8")
    script = tmp_path / "script.jsonl"
    script.write_text(json.dumps({"text": "unreached"}) + "\n", encoding="utf-8")
    env = {**environment(tmp_path / "home", script), "PYTHONPATH": str(hooks)}
    done = subprocess.run(
        [sys.executable, "-m", "agentls", "run", "--no-daemon", "go"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=sigint_at_default,
    )
    assert done.returncode == 130, done.stderr
    assert "unreached" not in done.stdout
