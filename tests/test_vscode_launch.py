"""The command line the VS Code extension starts the daemon with (clients/vscode/src/launch.ts).

It is run here exactly as written there: it must start agentls, and a file in the opened
folder named like a module the daemon imports must never be imported (`-P`), which
`python -m agentls`, what the extension ran before, does import.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import agentls

LAUNCH_TS = Path(__file__).resolve().parent.parent / "clients" / "vscode" / "src" / "launch.ts"
# A module `agentls --version` imports (argparse); a workspace could hold one.
HOSTILE = "import pathlib\npathlib.Path('imported-from-workspace').write_text('x')\n"


def daemon_args() -> list[str]:
    match = re.search(r"export const DAEMON_ARGS = (\[.*\]);", LAUNCH_TS.read_text("utf-8"))
    assert match, "launch.ts no longer declares DAEMON_ARGS on one line"
    args: list[str] = json.loads(match.group(1))
    return args


def _run(args: list[str], workspace: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, *args, "--version"],
        cwd=workspace,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_extension_launch_starts_agentls(tmp_path: Path) -> None:
    done = _run(daemon_args(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"agentls {agentls.__version__}"


def test_a_module_in_the_workspace_is_never_imported(tmp_path: Path) -> None:
    (tmp_path / "argparse.py").write_text(HOSTILE)
    done = _run(daemon_args(), tmp_path)
    assert done.returncode == 0, done.stderr
    assert not (tmp_path / "imported-from-workspace").exists()


def test_what_the_extension_ran_before_imports_it(tmp_path: Path) -> None:
    # The check above can see the danger: `-m agentls` puts the folder first on sys.path.
    (tmp_path / "argparse.py").write_text(HOSTILE)
    _run(["-m", "agentls"], tmp_path)
    assert (tmp_path / "imported-from-workspace").exists()


def test_the_startup_bench_times_this_launch() -> None:
    bench = str(Path(__file__).resolve().parent.parent / "bench")
    sys.path.insert(0, bench)
    try:
        import bench_startup  # type: ignore[import-not-found, unused-ignore]
    finally:
        sys.path.remove(bench)
    assert [sys.executable, *daemon_args()] == bench_startup.RELAY_VSCODE
