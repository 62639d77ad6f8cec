"""The VS Code extension's worktree card against a real daemon.

`clients/vscode/test/daemon/worktree.ts` runs the extension's own reducer and its
whole-file View diff code (src/reducer.ts, src/worktreeCard.ts) in node against
`agentls --stdio`: a scripted isolated agent edits a committed file in its worktree, the
card shows its branch and file, the old text comes back whole from the worktree's copy and
agent/worktreeDiff, a merge over the user's own change to the same line lists the conflict on
the card (nothing written), and once that change is undone a merge marks the card through
`worktree_resolved`.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "vscode"
ORIGINAL = 'PORT = 8000\nHOST = "x"\n'


def _git(cwd: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    subprocess.run(["git", *identity, *args], cwd=cwd, env=env, check=True, capture_output=True)


def test_the_worktree_card_views_and_merges_an_isolated_agents_edit(tmp_path: Path) -> None:
    node = shutil.which("node")
    if node is None or not (CLIENT / "node_modules").is_dir():
        pytest.skip("the extension's npm packages are missing: run `npm ci` in clients/vscode")
    built = subprocess.run(
        [node, "scripts/build.mjs", "--tests"], cwd=CLIENT, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "app.py").write_text(ORIGINAL, encoding="utf-8")
    _git(workspace, "init", "-q", "-b", "main")
    _git(workspace, "add", "-A")
    _git(workspace, "commit", "-q", "-m", "start")
    env = {**os.environ, "AGENTLS_HOME": str(tmp_path / "home")}
    done = subprocess.run(
        [node, "dist-test/worktree-daemon.js", sys.executable, str(workspace)],
        cwd=CLIENT,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    steps: dict[str, dict[str, Any]] = {}
    for line in done.stdout.splitlines():
        if line.startswith("{"):
            step = json.loads(line)
            steps[step["step"]] = step
    card = steps["card"]
    assert card["branch"].startswith("agentls/agent_") and card["state"] == "ready", card
    assert card["files"] == [{"path": "app.py", "status": "modified", "added": 1, "removed": 1}]
    # Until the merge, the user's tree is untouched.
    assert card["userFile"] == ORIGINAL
    view = steps["view diff"]
    assert view["relative"] == "app.py"
    assert view["after"] == 'PORT = 9000\nHOST = "x"\n'
    assert view["before"] == ORIGINAL
    conflict = steps["conflict"]
    assert conflict["resolved"] is False
    [listed] = conflict["conflicts"]
    assert listed["path"] == str(workspace / "app.py") and listed["reason"], listed
    assert conflict["userFile"] == ORIGINAL.replace("8000", "7000")  # nothing was written
    merged = steps["merged"]
    assert merged == {"step": "merged", "resolved": True, "state": "merged", "conflicts": []}
    assert (workspace / "app.py").read_text(encoding="utf-8") == 'PORT = 9000\nHOST = "x"\n'
