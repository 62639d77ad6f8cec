"""The warm `agentls run`: a per-user daemon on a private socket, reused, gone when idle,
and the same turn as in-process (`--no-daemon`)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import pytest

from agentls.warm import file_uri, socket_path
from terminal_run import replies_to, run_on_a_terminal


def environment(tmp: Path, script: list[dict[str, object]], idle: str = "5") -> dict[str, str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "OPENAI_"))}
    base.pop("AGENTLS_NO_DAEMON", None)  # `run` goes through the warm daemon here
    path = tmp / "script.jsonl"
    path.write_text("".join(json.dumps(e) + "\n" for e in script), encoding="utf-8")
    return {
        **base,
        "AGENTLS_HOME": str(tmp / "home"),
        "AGENTLS_SCRIPT": str(path),
        "AGENTLS_DAEMON_IDLE": idle,
    }


def run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls", "run", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
        check=False,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    return root


def stop_daemon(env: dict[str, str]) -> None:
    """The test's daemon goes now, not at its idle timeout."""
    subprocess.run(["pkill", "-f", f"socket {socket_path(env)}"], check=False)


def test_the_second_run_reuses_the_daemon_on_a_private_socket(project: Path) -> None:
    env = environment(project.parent, [{"text": "One."}])
    path = Path(socket_path(env))
    try:
        first = run("hello", cwd=project, env=env)
        assert first.returncode == 0, first.stderr
        assert "One." in first.stdout
        assert path.exists()
        assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
        assert stat.S_IMODE(path.stat().st_mode) == 0o600
        inode = path.stat().st_ino
        second = run("again", cwd=project, env=env)
        assert second.returncode == 0, second.stderr
        assert "One." in second.stdout
        assert path.stat().st_ino == inode  # the same daemon answered
    finally:
        stop_daemon(env)


def test_an_idle_daemon_exits_and_removes_its_socket(project: Path) -> None:
    env = environment(project.parent, [{"text": "One."}], idle="1")
    path = Path(socket_path(env))
    done = run("hello", cwd=project, env=env)
    assert done.returncode == 0, done.stderr
    deadline = time.monotonic() + 15
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not path.exists()


def test_a_daemon_that_leaves_before_answering_is_replaced(project: Path) -> None:
    # A daemon exiting (idle, or `agentls stop`) just as a run connects: it takes the
    # connection and the run's initialize, answers nothing, and is gone.
    env = environment(project.parent, [{"text": "One."}])
    path = Path(socket_path(env))
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    leaving = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    leaving.bind(str(path))
    leaving.listen()
    taken: list[bytes] = []

    def take_one_and_go() -> None:
        connection, _ = leaving.accept()
        taken.append(connection.recv(65536))
        path.unlink()
        leaving.close()
        connection.close()

    going = threading.Thread(target=take_one_and_go)
    going.start()
    try:
        done = run("hello", cwd=project, env=env)
        going.join(10)
        assert b'"initialize"' in taken[0]
        assert done.returncode == 0, done.stderr
        assert "One." in done.stdout
        assert path.exists()  # the daemon started in its place serves on
    finally:
        stop_daemon(env)


def test_a_different_environment_gets_its_own_daemon(project: Path) -> None:
    env = environment(project.parent, [{"text": "One."}])
    other = {**env, "AGENTLS_MODEL": "scripted-2"}
    assert socket_path(env) != socket_path(other)


def test_warm_and_in_process_runs_print_the_same_events(project: Path) -> None:
    script = [
        {"tool_calls": [{"name": "Write", "input": {"file_path": "a.txt", "content": "x"}}]},
        {"text": "done"},
    ]
    env = environment(project.parent, script)
    try:
        warm = run("--json", "--permission-mode", "acceptEdits", "write", cwd=project, env=env)
        (project / "a.txt").unlink()
        cold = run(
            "--json",
            "--no-daemon",
            "--permission-mode",
            "acceptEdits",
            "write",
            cwd=project,
            env=env,
        )
    finally:
        stop_daemon(env)
    assert warm.returncode == cold.returncode == 0, warm.stderr + cold.stderr

    def shape(out: str) -> list[tuple[str, str | None]]:
        events = [json.loads(line) for line in out.splitlines()]
        return [(e["type"], e.get("status")) for e in events]

    assert shape(warm.stdout) == shape(cold.stdout)
    assert (project / "a.txt").read_text() == "x"


def sigint_at_default() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_ctrl_c_aborts_the_turn_and_exits_130(project: Path) -> None:
    story = "Once upon a time there was a long story that went on and on. " * 10
    env = environment(project.parent, [{"text": story, "delay": 0.3, "chunk": 4}])
    process = subprocess.Popen(
        [sys.executable, "-m", "agentls", "run", "tell me a story"],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        # SIGINT at its default: a test run started as `pytest &` by a shell without job
        # control ignores SIGINT, and its children would too (agentls run keeps that).
        preexec_fn=sigint_at_default,
    )
    try:
        assert process.stdout is not None
        assert process.stdout.read(4) == "Once"
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=30)
        assert code == 130, process.stderr.read() if process.stderr else ""
        # The daemon recorded the turn's end: the session lists it as one finished turn.
        listed = subprocess.run(
            [sys.executable, "-m", "agentls", "sessions", "list", "--json"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=30,
            check=True,
        )
        deadline = time.monotonic() + 10
        while json.loads(listed.stdout)[0]["turns"] != 1 and time.monotonic() < deadline:
            time.sleep(0.2)
            listed = subprocess.run(
                [sys.executable, "-m", "agentls", "sessions", "list", "--json"],
                cwd=project,
                env=env,
                capture_output=True,
                text=True,
                timeout=30,
                check=True,
            )
        assert json.loads(listed.stdout)[0]["turns"] == 1
    finally:
        process.kill()
        stop_daemon(env)


@pytest.mark.parametrize("path", ["/tmp/plain", "/tmp/with space/é ü", "/tmp/100%/a#b?c", "/"])
def test_the_warm_client_names_the_root_as_pathlib_would(path: str) -> None:
    assert file_uri(path) == Path(path).as_uri()


def test_the_warm_path_imports_no_heavy_modules() -> None:
    # What `agentls run` imports before it talks to the daemon: the core, pathlib, typing,
    # asyncio and hashlib each cost milliseconds at every start.
    code = "import sys, agentls.cli, agentls.warm; print(' '.join(sorted(sys.modules)))"
    loaded = set(
        subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        ).stdout.split()
    )
    assert not loaded & {"pathlib", "typing", "asyncio", "hashlib", "pydantic", "agentls.loop"}


@pytest.mark.parametrize("mode", ["warm", "in process"])
def test_a_terminal_is_asked_to_go_on_at_the_turn_limit(project: Path, mode: str) -> None:
    (project / "app.py").write_text("port = 8000\n", encoding="utf-8")
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]}
    env = environment(project.parent, [read, read, {"text": "The port is 8000."}])
    extra = ["--no-daemon"] if mode == "in process" else []
    try:
        code, out, shown = run_on_a_terminal(
            ["--max-turns", "1", *extra, "find the port"],
            replies_to("[y/N]:", ["y", "y"]),
            project,
            env,
        )
    finally:
        stop_daemon(env)
    assert shown.count("Reached the turn limit (1 model call). Go on? [y/N]:") == 2, shown
    assert code == 0 and "The port is 8000." in out, (out, shown)


def test_no_at_the_turn_limit_ends_the_run(project: Path) -> None:
    read = {"tool_calls": [{"name": "Read", "input": {"file_path": "app.py"}}]}
    env = environment(project.parent, [read, {"text": "unreached"}])
    try:
        code, out, shown = run_on_a_terminal(
            ["--max-turns", "1", "go"], replies_to("[y/N]:", ["n"]), project, env
        )
    finally:
        stop_daemon(env)
    assert "Go on? [y/N]:" in shown and code == 1
    assert "unreached" not in out


def test_agentls_stop_ends_the_warm_daemon_run_left(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A runtime folder of this test's own: `stop` ends every daemon of the user found there.
    runtime = tempfile.mkdtemp(prefix="rt")
    monkeypatch.setenv("XDG_RUNTIME_DIR", runtime)
    env = {**environment(project.parent, [{"text": "One."}], idle="600")}
    try:
        assert run("hi", cwd=project, env=env).returncode == 0
        path = socket_path(env)
        assert os.path.exists(path)
        done = subprocess.run(
            [sys.executable, "-m", "agentls", "stop"],
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert done.returncode == 0, done.stderr
        assert done.stdout.startswith("stopped 1 warm daemon (pid ")
        pid = int(done.stdout.split("pid ")[1].rstrip(")\n"))
        assert not os.path.exists(path)
        deadline = time.monotonic() + 10
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert not _alive(pid)
        again = subprocess.run(
            [sys.executable, "-m", "agentls", "stop"], env=env, capture_output=True, text=True
        )
        assert again.stdout == "no warm daemon was running\n"
    finally:
        stop_daemon(env)
        shutil.rmtree(runtime, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie awaiting its reaper counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as stat_file:
            return stat_file.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False
