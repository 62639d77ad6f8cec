"""The VS Code extension's join path against a real `agentls --tcp`.

`clients/vscode/test/daemon/join.ts` runs the extension's own discovery and socket code
(src/discovery.ts, src/daemonSocket.ts, what `agentls.server.connect: "discover"` runs) in
node: it finds the daemon this test started through its discovery file, presents the token
in `initialize`, runs a scripted turn, stops as LanguageClient.stop() does, is turned away
with a forged token (with the message the extension shows), joins again, and names a refused
port. The real VS Code run of the same path is tests/test_e2e_vscode.py.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

from editor_tcp_daemon import tcp_daemon

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "vscode"


def _steps(output: str) -> dict[str, list[dict[str, Any]]]:
    steps: dict[str, list[dict[str, Any]]] = {}
    for line in output.splitlines():
        if line.startswith("{"):
            step = json.loads(line)
            steps.setdefault(step["step"], []).append(step)
    return steps


def test_the_extension_joins_a_running_daemon_with_its_token(tmp_path: Path) -> None:
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None or not (CLIENT / "node_modules").is_dir():
        pytest.skip("the extension's npm packages are missing: run `npm ci` in clients/vscode")
    built = subprocess.run(
        [node, "scripts/build.mjs", "--tests"], cwd=CLIENT, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with tcp_daemon(tmp_path) as daemon:
        token = daemon.discovered()["token"]
        done = subprocess.run(
            [node, "dist-test/join-daemon.js", str(workspace)],
            cwd=CLIENT,
            env=daemon.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
        still_serving = daemon.process.poll() is None
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert token not in output
    steps = _steps(done.stdout)
    [discovered] = steps["discovered"]
    assert discovered["port"] == daemon.port
    assert discovered["pid"] == daemon.process.pid
    assert Path(discovered["file"]) == daemon.discovery
    assert [s["stopReason"] for s in steps["turn"]] == ["end_turn", "end_turn"]
    assert len(steps["stopped"]) == 2
    [forged] = steps["wrong token"]
    assert forged["refused"] and forged["closed"], forged
    assert "refused this window: the connection was closed during initialize" in forged["message"]
    [refused] = steps["refused"]
    assert "refused the connection: it is not listening there any more" in refused["message"]
    assert still_serving


def test_the_extension_comes_back_to_a_turn_after_a_reload(tmp_path: Path) -> None:
    """`clients/vscode/test/daemon/reload.ts`: a window goes away while its turn's Write waits
    for permission; the next one finds the note in its workspace state, resumes the session
    with the note's seq and draws, through the extension's reducer, the conversation once,
    the notice, and the waiting card, which it answers: the turn ends once and the file is
    written."""
    npm, node = shutil.which("npm"), shutil.which("node")
    if npm is None or node is None or not (CLIENT / "node_modules").is_dir():
        pytest.skip("the extension's npm packages are missing: run `npm ci` in clients/vscode")
    built = subprocess.run(
        [node, "scripts/build.mjs", "--tests"], cwd=CLIENT, capture_output=True, text=True
    )
    assert built.returncode == 0, built.stderr
    workspace = tmp_path / "ws"
    workspace.mkdir()
    with tcp_daemon(tmp_path) as daemon:
        done = subprocess.run(
            [node, "dist-test/reload-daemon.js", str(workspace), str(tmp_path / "state.json")],
            cwd=CLIENT,
            env=daemon.env,
            capture_output=True,
            text=True,
            timeout=180,
        )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    steps = _steps(done.stdout)
    [first] = steps["first window"]
    assert first["pending"] == 1
    # The note is the seq before the turn began: the turn's events all come again.
    assert first["note"] == {"sessionId": first["sessionId"], "lastSeq": first["note"]["lastSeq"]}
    assert first["note"]["lastSeq"] < first["lastSeq"]
    [resumed] = steps["resumed"]
    assert resumed["runningTurnId"], resumed
    assert resumed["startedAt"] == first["note"]["lastSeq"]
    [card] = steps["card"]
    assert card["title"].startswith("Write"), card
    [second] = steps["second window"]
    assert second["dropped"] == 0, second
    assert second["ends"] == 1, second
    assert second["stopReason"] == "end_turn", second
    assert second["users"] == ["Write hello.txt"], second
    assert second["answers"] == ["Writing it.", "Done."], second
    assert second["notices"] == ["re-attached to the turn that was running when the window closed"]
    assert second["permissions"] == ["selected"], second
    assert second["tools"] == ["completed"], second
    assert not second["noteKept"], second
    assert second["file"] == "hi\n"
    assert (workspace / "hello.txt").read_text() == "hi\n"
