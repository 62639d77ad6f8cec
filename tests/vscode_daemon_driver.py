"""Runs one of the extension's node drivers (clients/vscode/test/daemon/*.ts, built into
dist-test/) against a real `agentls --stdio`, in a git repository holding one committed
file, and reads back the steps it prints (one JSON object per line, keyed by `step`)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

CLIENT = Path(__file__).resolve().parent.parent / "clients" / "vscode"


def _git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    subprocess.run(["git", *identity, *args], cwd=cwd, env=env, check=True, capture_output=True)


def run_driver(
    tmp_path: Path, driver: str, app_text: str
) -> tuple[Path, dict[str, dict[str, Any]]]:
    """`dist-test/<driver>.js` run on a workspace whose committed `app.py` holds
    `app_text`; the workspace and the driver's steps by name."""
    node = shutil.which("node")
    if node is None or not (CLIENT / "node_modules").is_dir():
        pytest.skip("the extension's npm packages are missing: run `npm ci` in clients/vscode")
    built = subprocess.run(
        [node, "scripts/build.mjs", "--tests"], cwd=CLIENT, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text(app_text, encoding="utf-8")
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "start")
    env = {**os.environ, "AGENTLS_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [node, f"dist-test/{driver}.js", sys.executable, str(workspace)],
        cwd=CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    steps: dict[str, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            step = json.loads(line)
            steps[step["step"]] = step
    assert "error" not in steps, steps["error"]
    assert done.returncode == 0, done.stdout + done.stderr
    return workspace, steps
