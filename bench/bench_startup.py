"""Startup: spawn → `initialize` response of `agentls --stdio`, against interpreter floors.

Floors are spawn-to-"imported" times of `python -c …`: timed to a printed marker, not to
exit, and without `-X importtime`, whose own overhead would distort them. The SDK check
asks two questions: does importing and building the server pull in `anthropic`/`openai`,
and had the real daemon imported them by the time it answered `initialize` (read from its
`-X importtime` log, in a separate run that is not timed).
"""

from __future__ import annotations

import json
import subprocess
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
INIT_LABEL = "daemon spawn → initialize response"
PYGLS_LABEL = "python -c 'import pygls.lsp.server'"
FLOORS = {
    "python -c pass": "pass",
    PYGLS_LABEL: "import pygls.lsp.server",
    "python -c 'import agentls.lsp.server'": "import agentls.lsp.server",
}
SDK_PROBE = (
    "import sys, json\n"
    "from agentls.lsp.server import build_server\n"
    "build_server()\n"
    "print(json.dumps({m: m in sys.modules for m in ('anthropic', 'openai', 'httpx')}))\n"
)


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
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 2, "method": "shutdown"}))
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


def time_initialize(env: dict[str, str], workspace: Path, *extra_args: str) -> float:
    """Seconds from spawning the daemon to reading its `initialize` response."""
    message = initialize_request(workspace)
    start = time.perf_counter()
    process = subprocess.Popen(
        [PYTHON, *extra_args, *DAEMON[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        env=env,
        cwd=workspace,
    )
    assert process.stdin is not None
    process.stdin.write(frame(message))
    process.stdin.flush()
    _await_response(process, 1)
    elapsed = time.perf_counter() - start
    _shutdown(process)
    return elapsed


def sdk_loaded_by_import(env: dict[str, str]) -> dict[str, bool]:
    """Which SDKs are in sys.modules after importing agentls.lsp.server and building it."""
    out = subprocess.run(
        [PYTHON, "-c", SDK_PROBE], env=env, check=True, capture_output=True, text=True
    ).stdout
    result: dict[str, bool] = json.loads(out.strip().splitlines()[-1])
    return result


def sdk_loaded_by_daemon(env: dict[str, str], workspace: Path) -> dict[str, bool]:
    """Which SDKs the real daemon had imported when it answered initialize (-X importtime)."""
    message = initialize_request(workspace)
    process = subprocess.Popen(
        [PYTHON, "-X", "importtime", *DAEMON[1:]],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        cwd=workspace,
    )
    assert process.stdin is not None and process.stderr is not None
    process.stdin.write(frame(message))
    process.stdin.flush()
    _await_response(process, 1)
    _shutdown(process)
    log = process.stderr.read().decode(errors="replace")
    process.stderr.close()
    imported = {line.rsplit("|", 1)[-1].strip() for line in log.splitlines() if "|" in line}
    return {sdk: any(m.split(".")[0] == sdk for m in imported) for sdk in ("anthropic", "openai")}


def run(quick: bool) -> list[Row]:
    """All startup numbers; the probes are interleaved so machine load hits them alike."""
    spawns = 3 if quick else 10
    rows: list[Row] = []
    with scratch() as (home, workspace):
        env = daemon_env(home)
        probes = {label: _floor_probe(code, env) for label, code in FLOORS.items()}
        probes[INIT_LABEL] = lambda: time_initialize(env, workspace)
        samples = _interleaved(probes, spawns, warm=not quick)
        for label, values in samples.items():
            rows += timing_rows(SECTION, label, values)
        rows += _ratio_rows(samples)
        if not quick:
            packages, modules = imports_beyond_pygls(env)
            note = "-X importtime self times, inflated by importtime itself"
            rows.append(Row(SECTION, "imports beyond pygls, ms", packages, note=note))
            rows.append(Row(SECTION, "  slowest agentls modules, ms", modules))
        by_import = sdk_loaded_by_import(env)
        rows.append(Row(SECTION, "SDKs after import+build_server", _loaded(by_import)))
        by_daemon = sdk_loaded_by_daemon(env, workspace)
        rows.append(Row(SECTION, "SDKs in daemon at initialize", _loaded(by_daemon)))
    return rows


def _floor_probe(code: str, env: dict[str, str]) -> Callable[[], float]:
    return lambda: time_spawn_ready(code, env)


def _interleaved(
    probes: dict[str, Callable[[], float]], rounds: int, warm: bool
) -> dict[str, list[float]]:
    """Optionally one warm-up call each, then `rounds` rounds of one sample per probe."""
    for probe in probes.values() if warm else ():
        probe()
    samples: dict[str, list[float]] = {label: [] for label in probes}
    for _ in range(rounds):
        for label, probe in probes.items():
            samples[label].append(probe())
    return samples


def _ratio_rows(samples: dict[str, list[float]]) -> list[Row]:
    init, floor = summarize(samples[INIT_LABEL]), summarize(samples[PYGLS_LABEL])
    return [
        Row(
            SECTION,
            "ratio initialize / pygls floor",
            init.median / floor.median,
            "x",
            f"by minimum {init.low / floor.low:.2f}x",
        ),
        Row(
            SECTION,
            "initialize − pygls floor",
            (init.median - floor.median) * 1000,
            "ms",
            f"by minimum {(init.low - floor.low) * 1000:.0f} ms",
        ),
        Row(SECTION, "target initialize ≤ 350 ms (median)", _verdict(init.median <= 0.35)),
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


def _ranked(micros: dict[str, int], top: int) -> str:
    ranked = sorted(micros.items(), key=lambda item: -item[1])[:top]
    return ", ".join(f"{name} {value / 1000:.0f}" for name, value in ranked)


def _loaded(flags: dict[str, bool]) -> str:
    return ", ".join(f"{name}={'yes' if on else 'no'}" for name, on in flags.items())


def _verdict(ok: bool) -> str:
    return "met" if ok else "MISSED"
