"""The VS Code extension's own checks, run from the one test command.

The TypeScript wire types must match protocol/schema (no node needed for that). With the
extension's npm dependencies installed (`npm ci` in clients/vscode, which `.ci/run` does),
`npm run check` type-checks it (tsc --noEmit, strict), lints it (typescript-eslint, type
aware), bundles it (esbuild) and runs the event reducer's unit tests (node --test).
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "vscode"


def _generator() -> object:
    path = ROOT / "scripts" / "gen_ts_types.py"
    spec = importlib.util.spec_from_file_location("gen_ts_types", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_typescript_wire_types_match_the_schema() -> None:
    generator = _generator()
    assert generator.main(["--check"]) == 0, "run scripts/gen_ts_types.py"  # type: ignore[attr-defined]
    wire = (CLIENT / "src" / "wire.ts").read_text(encoding="utf-8")
    for event in ("TurnStarted", "MessageDiscarded", "PermissionRequest", "TurnCompleted"):
        assert event in wire.split("export type AgentEvent =")[1].split(";")[0]
    assert '"agent/listModels": { params: ListModelsParams; result: ListModelsResult };' in wire


def test_the_extension_type_checks_lints_builds_and_passes_its_unit_tests() -> None:
    npm = shutil.which("npm")
    if npm is None or not (CLIENT / "node_modules").is_dir():
        pytest.skip("the extension's npm packages are missing: run `npm ci` in clients/vscode")
    done = subprocess.run(
        [npm, "run", "check"],
        cwd=CLIENT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    passed = re.search(r"^# pass (\d+)$", output, re.MULTILINE)
    assert passed is not None and int(passed[1]) >= 10, output[-2000:]
    assert re.search(r"^# fail 0$", output, re.MULTILINE)
    assert (CLIENT / "dist" / "extension.js").stat().st_size > 0
    assert (CLIENT / "dist" / "webview.js").stat().st_size > 0
