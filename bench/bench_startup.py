"""Startup: spawn → `initialize` response of `agentls --stdio`, against interpreter floors,
and spawn → the core being ready; and the same through the relay editors start (`agentls --stdio`
to the warm daemon), with the daemon up and not.

The daemon answers `initialize` with only its light half (pygls and a few agentls modules)
imported; on `initialized` it imports the core (sessions, loop, tools, pydantic models) in
a background thread, then the configured provider's SDK. So three spawn times are taken:
to the `initialize` response, to the first `agent/*` answer (`agent/listSessions`, which
waits for the core), and to the first `agent/newSession` with the anthropic provider
configured (which also waits for the SDK).

Floors are spawn-to-"imported" times of `python -c …`: timed to a printed marker, not to
exit, and without `-X importtime`, whose own overhead would distort them. The module
checks ask: does importing and building the server pull in the core or an SDK; what had
the daemon (anthropic configured) imported when it answered `initialize`; and did it
preload the SDK after `initialized` with no session asked for (read from `-X importtime`
logs, in separate runs that are not timed).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from harness import (
    DAEMON,
    PYTHON,
    Row,
    daemon_env,
    frame,
    initialize_params,
    read_frame,
    scratch,
    summarize,
    timing_rows,
)

SECTION = "1 startup"
INIT_LABEL = "daemon spawn → initialize response"  # in process: `--stdio --no-daemon`
RELAY_COLD_LABEL = "relay spawn → initialize, daemon not up"
RELAY_WARM_LABEL = "relay spawn → initialize, daemon up"
RELAY_VSCODE_LABEL = "relay, daemon up: VS Code's python -P -c …"
RELAY_RUNPY_LABEL = "relay, daemon up: python -m agentls --stdio"
CONNECTION_LABEL = "daemon up: socket connect → initialize answered"
# What Neovim 0.11 sends as its capabilities (vim.lsp.protocol.make_client_capabilities()):
# the daemon structures them for every connection.
EDITOR_CAPABILITIES = Path(__file__).with_name("nvim_capabilities.json")
# What editors start, relayed to the warm daemon: Neovim's `agentls --stdio` (the console
# script, run here by the interpreter its first line names) and the VS Code extension's
# launch line (clients/vscode/src/launch.ts); `-m agentls` for comparison (runpy first).
RELAY_RUNPY = [PYTHON, "-m", "agentls", "--stdio"]
CONSOLE_SCRIPT = Path(PYTHON).parent / "agentls"
RELAY = [PYTHON, str(CONSOLE_SCRIPT), "--stdio"] if CONSOLE_SCRIPT.is_file() else RELAY_RUNPY
RELAY_VSCODE = [PYTHON, "-P", "-c", "import sys; from agentls.cli import main; sys.exit(main())"]
# Before editors attached to the warm daemon (issue 28): each spawned its own, in process.
PREVIOUS_IN_PROCESS = "0.9 s before (issue 28)"
CORE_LABEL = "daemon spawn → core ready (listSessions answered)"
SDK_LABEL = "daemon spawn → newSession answered (anthropic)"
PYGLS_LABEL = "python -c 'import pygls.lsp.server'"
SERVER_LABEL = "bare pygls server spawn → initialize response"
# The true floor of any pygls daemon: a LanguageServer with no features answering
# initialize. Building one costs ~60 ms over the import (lsprotocol's converter resolves
# the forward references of every protocol class), which the import floor does not show.
PYGLS_SERVER = [
    PYTHON,
    "-c",
    "from pygls.lsp.server import LanguageServer\nLanguageServer('floor', '0').start_io()",
]
# Probes this slow are sampled every other round only (and not at all with --quick).
SPARSE = {SDK_LABEL}
FLOORS = {
    "python -c pass": "pass",
    PYGLS_LABEL: "import pygls.lsp.server",
    "python -c 'import agentls.lsp.server'": "import agentls.lsp.server",
}
# What the light half must not import: label → module (a package counts with its children).
# The core is imported with importlib.import_module, which -X importtime does not log (only
# `import` statements are), so a module the core imports stands for it.
WATCHED = {
    "core": "agentls.session.manager",
    "pydantic": "pydantic",
    "anthropic": "anthropic",
    "openai": "openai",
    "httpx": "httpx",  # the anthropic SDK imports it only when a client is built
}
LOADED_PROBE = (
    "import sys, json\n"
    "from agentls.lsp.server import build_server\n"
    "build_server()\n"
    "print(json.dumps(sorted(sys.modules)))\n"
)
# A daemon with the anthropic provider configured (no request ever reaches the network).
ANTHROPIC_ENV = {"AGENTLS_PROVIDER": "anthropic", "ANTHROPIC_API_KEY": "test"}
PRELOADED = "anthropic"  # imported by agentls.providers.anthropic (see WATCHED)


def initialize_request(workspace: Path) -> dict[str, Any]:
    """The `initialize` request, id 1."""
    params = initialize_params(workspace)
    return {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}


def time_spawn_ready(code: str, env: dict[str, str]) -> float:
    """Seconds from spawning `python -c code` to it saying it ran `code`.

    Timed to a printed marker, not to exit: interpreter teardown (freeing lsprotocol's
    thousands of classes) costs ~0.2 s that an `initialize` response never waits for.
    """
    start = time.perf_counter()
    process = subprocess.Popen(
        [PYTHON, "-c", f"{code}\nprint('ready', flush=True)"],
        stdout=subprocess.PIPE,
        env=env,
    )
    assert process.stdout is not None
    process.stdout.readline()
    elapsed = time.perf_counter() - start
    process.stdout.close()
    process.wait()
    return elapsed


def _shutdown(process: subprocess.Popen[bytes]) -> None:
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}))
    process.stdin.write(frame({"jsonrpc": "2.0", "method": "exit"}))
    process.stdin.flush()
    process.stdin.close()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
    process.stdout.close()


def _await_response(process: subprocess.Popen[bytes], request_id: int) -> None:
    assert process.stdout is not None
    while True:
        message = read_frame(process.stdout)
        if message is None:
            raise RuntimeError("the daemon exited before answering initialize")
        if message.get("id") == request_id and "method" not in message:
            return


def _send(process: subprocess.Popen[bytes], *messages: dict[str, Any]) -> None:
    assert process.stdin is not None
    for message in messages:
        process.stdin.write(frame(message))
    process.stdin.flush()


def _spawn(
    env: dict[str, str], workspace: Path, stderr: Any, command: list[str] | None = None
) -> subprocess.Popen[bytes]:
    """The daemon (or `command`); with a file for `stderr`, under `-X importtime` logging
    to it."""
    flags = [] if stderr is subprocess.DEVNULL else ["-X", "importtime"]
    return subprocess.Popen(
        [PYTHON, *flags, *(command or DAEMON)[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=stderr,
        env=env,
        cwd=workspace,
    )


def _after_initialized(method: str, params: dict[str, Any]) -> list[dict[str, Any]]:
    """`initialized`, then request `method` with id 2."""
    return [
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "id": 2, "method": method, "params": params},
    ]


def time_initialize(
    env: dict[str, str],
    workspace: Path,
    then: list[dict[str, Any]] | None = None,
    command: list[str] | None = None,
    timed_to: int = 2,
) -> float:
    """Seconds from spawning the daemon (or `command`) to its `initialize` response, or,
    with `then`, to the response to request id `timed_to` (2: the one among the messages
    sent after that; 1: `initialize` still, `then` awaited untimed)."""
    start = time.perf_counter()
    process = _spawn(env, workspace, subprocess.DEVNULL, command)
    _send(process, initialize_request(workspace))
    _await_response(process, 1)
    elapsed = time.perf_counter() - start
    if then:
        _send(process, *then)
        _await_response(process, 2)
        if timed_to == 2:
            elapsed = time.perf_counter() - start
    _shutdown(process)
    return elapsed


class RelayProbes:
    """Spawn → initialize of `agentls --stdio` relayed to the warm daemon, with the daemon
    up and with it stopped first (the relay then starts it), in a private runtime folder;
    the daemon is stopped at the end."""

    def __init__(self, env: dict[str, str], workspace: Path) -> None:
        # Short: a Unix socket's path has at most 107 bytes.
        self.runtime = Path(tempfile.mkdtemp(prefix="ab-"))
        self.env = {**env, "XDG_RUNTIME_DIR": str(self.runtime), "AGENTLS_DAEMON_IDLE": "300"}
        self.env.pop("AGENTLS_NO_DAEMON", None)
        self.workspace = workspace

    def cold(self) -> float:
        self.stop()
        # The core loads after `initialized` (not timed), so the next warm probe meets a
        # daemon that is done loading, as an editor's second window does.
        core = _after_initialized("agent/listSessions", {})
        return time_initialize(self.env, self.workspace, core, RELAY, timed_to=1)

    def warm(self, command: list[str] = RELAY) -> float:
        return time_initialize(self.env, self.workspace, command=command)

    def connection(self) -> float:
        """The daemon's share of a relay's start: connect to its socket, send what a relay
        sends first and an `initialize` with a real editor's capabilities, to the answer."""
        from agentls.daemon_socket import open_socket
        from agentls.relay import client_context_frame

        capabilities = json.loads(EDITOR_CAPABILITIES.read_text(encoding="utf-8"))
        params = {**initialize_request(self.workspace)["params"], "capabilities": capabilities}
        message = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": params}
        start = time.perf_counter()
        # The relay's own socket type has no makefile: the same connection as a socket.socket.
        sock = socket.socket(fileno=open_socket(self.env).detach())
        with sock, sock.makefile("rb") as answers:
            sock.sendall(client_context_frame(str(self.workspace)) + frame(message))
            while (answer := read_frame(answers)) is not None and answer.get("id") != 1:
                pass
            elapsed = time.perf_counter() - start
            sock.sendall(frame({"jsonrpc": "2.0", "method": "exit"}))
        return elapsed

    def stop(self) -> None:
        from agentls.warm_stop import daemon_pid

        folder = self.runtime / f"agentls-{os.getuid()}"
        for path in folder.glob("*.sock") if folder.is_dir() else ():
            pid = daemon_pid(str(path))
            if pid is not None:
                os.kill(pid, signal.SIGTERM)
                _wait_gone(pid)

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.runtime, ignore_errors=True)


def _wait_gone(pid: int, timeout: float = 10) -> None:
    deadline = time.perf_counter() + timeout
    while time.perf_counter() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    os.kill(pid, signal.SIGKILL)


def watched(modules: set[str]) -> dict[str, bool]:
    """WATCHED label → whether that module (or one of its submodules) is in `modules`."""
    return {
        label: any(m == name or m.startswith(name + ".") for m in modules)
        for label, name in WATCHED.items()
    }


def loaded_by_import(env: dict[str, str]) -> dict[str, bool]:
    """What is in sys.modules after importing agentls.lsp.server and building the server."""
    out = subprocess.run(
        [PYTHON, "-c", LOADED_PROBE], env=env, check=True, capture_output=True, text=True
    ).stdout
    return watched(set(json.loads(out.strip().splitlines()[-1])))


def _imported(log: str) -> set[str]:
    return {line.rsplit("|", 1)[-1].strip() for line in log.splitlines() if "|" in line}


def loaded_by_daemon(
    env: dict[str, str], workspace: Path, log: Path, preload_timeout: float = 30
) -> tuple[dict[str, bool], dict[str, bool], float | None]:
    """From one `-X importtime` daemon: what it had imported when it answered initialize;
    what it had imported once the core answered and the SDK preload was given up to
    `preload_timeout` s; and seconds from spawn to the preload's import (inflated by
    importtime), None if it never came."""
    with log.open("w+b") as stderr:
        start = time.perf_counter()
        process = _spawn(env, workspace, stderr)
        _send(process, initialize_request(workspace))
        _await_response(process, 1)
        at_initialize = watched(_imported(log.read_text(errors="replace")))
        _send(process, *_after_initialized("agent/listSessions", {}))
        _await_response(process, 2)
        preloaded: float | None = None
        deadline = time.perf_counter() + preload_timeout
        while preloaded is None and time.perf_counter() < deadline:
            if PRELOADED in _imported(log.read_text(errors="replace")):
                preloaded = time.perf_counter() - start
            else:
                time.sleep(0.01)
        later = watched(_imported(log.read_text(errors="replace")))
        _shutdown(process)
    return at_initialize, later, preloaded


def run(quick: bool) -> list[Row]:
    """All startup numbers; the probes are interleaved so machine load hits them alike."""
    spawns = 3 if quick else 10
    rows: list[Row] = []
    with scratch() as (home, workspace):
        env = daemon_env(home)
        sdk_env = daemon_env(home, **ANTHROPIC_ENV)
        list_sessions = _after_initialized("agent/listSessions", {})
        relay = RelayProbes(env, workspace)
        new_session = _after_initialized("agent/newSession", {"cwd": str(workspace)})
        probes = {label: _floor_probe(code, env) for label, code in FLOORS.items()}
        probes[SERVER_LABEL] = lambda: time_initialize(env, workspace, command=PYGLS_SERVER)
        probes[INIT_LABEL] = lambda: time_initialize(env, workspace)
        probes[CORE_LABEL] = lambda: time_initialize(env, workspace, list_sessions)
        if not quick:
            probes[SDK_LABEL] = lambda: time_initialize(sdk_env, workspace, new_session)
        # Cold before warm: each round's warm probe meets the daemon its cold one started.
        probes[RELAY_COLD_LABEL] = relay.cold
        probes[RELAY_WARM_LABEL] = relay.warm
        probes[RELAY_VSCODE_LABEL] = lambda: relay.warm(RELAY_VSCODE)
        probes[RELAY_RUNPY_LABEL] = lambda: relay.warm(RELAY_RUNPY)
        probes[CONNECTION_LABEL] = relay.connection
        try:
            samples = _interleaved(probes, spawns, warm=not quick)
        finally:
            relay.close()
        notes = {INIT_LABEL: PREVIOUS_IN_PROCESS, RELAY_WARM_LABEL: _console_script_note()}
        for label, values in samples.items():
            note = notes.get(label, "")
            rows += timing_rows(SECTION, label, values, note)
        rows += _ratio_rows(samples)
        rows += _relay_rows(samples)
        if not quick:
            packages, modules = imports_beyond_pygls(env)
            note = "-X importtime self times, inflated by importtime itself"
            rows.append(Row(SECTION, "imports beyond pygls, ms", packages, note=note))
            rows.append(Row(SECTION, "  slowest agentls modules, ms", modules))
            core = imports_of_core(env)
            note = "after initialized, in a background thread; " + note
            rows.append(Row(SECTION, "core imports (background), ms", core, note=note))
        rows.append(
            Row(SECTION, "loaded after import+build_server", _loaded(loaded_by_import(env)))
        )
        at_init, later, preloaded = loaded_by_daemon(sdk_env, workspace, home / "importtime.log")
        note = "anthropic configured"
        rows.append(Row(SECTION, "loaded in daemon at initialize", _loaded(at_init), note=note))
        when = "never" if preloaded is None else f"{preloaded * 1000:.0f} ms after spawn"
        note = f"{note}; SDK preload imported {when} (under -X importtime)"
        rows.append(Row(SECTION, "loaded after initialized, no session", _loaded(later), note=note))
    return rows


def _console_script_note() -> str:
    """What the console script costs beyond `-c`: the pip that wrote it decides (older
    ones import re to trim argv[0], some milliseconds of enum and functools)."""
    if RELAY is RELAY_RUNPY:
        return "no console script beside the interpreter: timed as python -m agentls"
    imports_re = "import re" in CONSOLE_SCRIPT.read_text(errors="replace")
    return "Neovim's agentls --stdio" + ("; its script imports re" if imports_re else "")


def _floor_probe(code: str, env: dict[str, str]) -> Callable[[], float]:
    return lambda: time_spawn_ready(code, env)


def _interleaved(
    probes: dict[str, Callable[[], float]], rounds: int, warm: bool
) -> dict[str, list[float]]:
    """Optionally one warm-up call each, then `rounds` rounds of one sample per probe."""
    for probe in probes.values() if warm else ():
        probe()
    samples: dict[str, list[float]] = {label: [] for label in probes}
    for number in range(rounds):
        for label, probe in probes.items():
            if label not in SPARSE or number % 2 == 0:
                samples[label].append(probe())
    return samples


def _ratio_rows(samples: dict[str, list[float]]) -> list[Row]:
    init, floor = summarize(samples[INIT_LABEL]), summarize(samples[SERVER_LABEL])
    imported = summarize(samples[PYGLS_LABEL])
    core = summarize(samples[CORE_LABEL])
    return [
        Row(
            SECTION,
            "initialize → core ready",
            (core.median - init.median) * 1000,
            "ms",
            f"medians; by minimum {(core.low - init.low) * 1000:.0f} ms",
        ),
        Row(
            SECTION,
            "ratio initialize / bare pygls server",
            init.median / floor.median,
            "x",
            f"by minimum {init.low / floor.low:.2f}x",
        ),
        Row(
            SECTION,
            "initialize − bare pygls server",
            (init.median - floor.median) * 1000,
            "ms",
            f"by minimum {(init.low - floor.low) * 1000:.0f} ms",
        ),
        Row(
            SECTION,
            "initialize − pygls import floor",
            (init.median - imported.median) * 1000,
            "ms",
            f"by minimum {(init.low - imported.low) * 1000:.0f} ms; includes building a "
            "LanguageServer",
        ),
        Row(SECTION, "target initialize ≤ 350 ms (median)", _verdict(init.median <= 0.35)),
    ]


def _relay_rows(samples: dict[str, list[float]]) -> list[Row]:
    here = summarize(samples[INIT_LABEL]).median
    warm = summarize(samples[RELAY_WARM_LABEL]).median
    cold = summarize(samples[RELAY_COLD_LABEL]).median
    vscode = summarize(samples[RELAY_VSCODE_LABEL]).median
    runpy = summarize(samples[RELAY_RUNPY_LABEL]).median
    return [
        Row(SECTION, "ratio in process / relay, daemon up", here / warm, "x", "medians"),
        Row(SECTION, "ratio in process / relay, daemon not up", here / cold, "x", "medians"),
        Row(SECTION, "ratio -m agentls / VS Code's launch", runpy / vscode, "x", "medians"),
        Row(SECTION, "target relay, daemon up ≤ 50 ms (median)", _verdict(warm <= 0.05)),
        Row(SECTION, "target VS Code's relay, daemon up ≤ 50 ms", _verdict(vscode <= 0.05)),
        Row(SECTION, "target relay, daemon not up ≤ 0.5 s (median)", _verdict(cold <= 0.5)),
    ]


def import_self_times(code: str, env: dict[str, str]) -> dict[str, int]:
    """Module → self import time (µs) from one `python -X importtime -c code` run."""
    log = subprocess.run(
        [PYTHON, "-X", "importtime", "-c", code],
        env=env,
        check=True,
        capture_output=True,
        text=True,
    ).stderr
    times: dict[str, int] = {}
    for line in log.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[0].strip().isdigit():
            times[parts[2].strip()] = int(parts[0])
    return times


def imports_beyond_pygls(env: dict[str, str], top: int = 5) -> tuple[str, str]:
    """What agentls imports that pygls does not: per top-level package, and its own modules."""
    ours = import_self_times("import agentls.lsp.server", env)
    floor = import_self_times("import pygls.lsp.server", env)
    extra = {module: micros for module, micros in ours.items() if module not in floor}
    per_package: dict[str, int] = {}
    for module, micros in extra.items():
        package = module.split(".")[0]
        per_package[package] = per_package.get(package, 0) + micros
    own = {m: t for m, t in extra.items() if m.startswith("agentls.")}
    total = f"total {sum(extra.values()) / 1000:.0f}: "
    return total + _ranked(per_package, top), _ranked(own, top)


def imports_of_core(env: dict[str, str], top: int = 6) -> str:
    """What importing the core (agentls.lsp.handlers) adds to the light half, per package."""
    core = import_self_times("import agentls.lsp.server, agentls.lsp.handlers", env)
    light = import_self_times("import agentls.lsp.server", env)
    per_package: dict[str, int] = {}
    for module, micros in core.items():
        if module not in light:
            package = module.split(".")[0]
            if package == "agentls":
                package = ".".join(module.split(".")[:2])
            per_package[package] = per_package.get(package, 0) + micros
    return f"total {sum(per_package.values()) / 1000:.0f}: " + _ranked(per_package, top)


def _ranked(micros: dict[str, int], top: int) -> str:
    ranked = sorted(micros.items(), key=lambda item: -item[1])[:top]
    return ", ".join(f"{name} {value / 1000:.0f}" for name, value in ranked)


def _loaded(flags: dict[str, bool]) -> str:
    return ", ".join(f"{name}={'yes' if on else 'no'}" for name, on in flags.items())


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"
