"""The Bash sandbox: the bwrap command line, the fail-closed refusal when bwrap is missing,
and, where bwrap can run here, real commands confined to the workspace and /tmp, without
network unless allowed, killed with everything they started; its state over stdio."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import psutil  # type: ignore[import-untyped]
import pytest

from agent_client import read_requests, running_daemon
from agentls.config import Settings, apply_layer
from agentls.sandbox import (
    Sandbox,
    SandboxSettings,
    bwrap_command,
    parse_sandbox,
    prepare_sandbox,
    sandbox_status,
)
from agentls.tools.base import ToolContext, ToolError, ToolOutput
from agentls.tools.bash import BashInput, BashTool
from agentls.tools.read_cache import FileReadCache
from agentls.workspace.view import WorkspaceView


def _bwrap_problem() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    sandbox = prepare_sandbox(SandboxSettings(enabled=True))
    return sandbox.problem if sandbox is not None else "no sandbox"


BWRAP_PROBLEM = _bwrap_problem()
needs_bwrap = pytest.mark.skipif(
    BWRAP_PROBLEM is not None, reason=f"the sandbox cannot run here: {BWRAP_PROBLEM}"
)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    return workspace


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory neither in the workspace nor in /tmp (so read-only in the sandbox)."""
    folder = Path(tempfile.mkdtemp(prefix="agentls-sandbox-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


async def sandboxed(root: Path, command: str, **settings: Any) -> ToolOutput:
    sandbox = prepare_sandbox(SandboxSettings(enabled=True, **settings))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    return await BashTool(sandbox).run(BashInput(command=command, timeout=20_000), context)


# --- the command line and the settings -------------------------------------------------------


def test_the_bwrap_command_binds_the_writable_paths_and_cuts_the_network() -> None:
    writable = [Path("/tmp"), Path("/home/me/project")]
    command = bwrap_command(
        "/usr/bin/bwrap", SandboxSettings(True), ["/bin/bash", "-c", "ls"], Path("/p"), writable
    )
    assert command == [
        "/usr/bin/bwrap",
        "--ro-bind", "/", "/",
        "--dev", "/dev",
        "--proc", "/proc",
        "--bind", "/tmp", "/tmp",
        "--bind", "/home/me/project", "/home/me/project",
        "--unshare-net",
        "--unshare-pid",
        "--die-with-parent",
        "--chdir", "/p",
        "--", "/bin/bash", "-c", "ls",
    ]  # fmt: skip
    networked = bwrap_command("bwrap", SandboxSettings(True, network=True), ["true"], Path("/"), [])
    assert "--unshare-net" not in networked


def test_writable_paths_are_the_roots_tmp_and_the_named_ones_that_exist(tmp_path: Path) -> None:
    (tmp_path / "ws" / "cache").mkdir(parents=True)
    settings = SandboxSettings(True, writable_paths=("cache", "missing", str(tmp_path)))
    sandbox = Sandbox(settings, "/usr/bin/bwrap", None)
    paths = sandbox.writable_paths(tmp_path / "ws", [tmp_path / "ws"])
    assert paths == [Path("/tmp"), tmp_path, tmp_path / "ws", tmp_path / "ws" / "cache"]


def test_sandbox_settings_are_checked() -> None:
    assert parse_sandbox({"enabled": True, "writablePaths": ["~/.cache"]}) == SandboxSettings(
        True, False, ("~/.cache",)
    )
    problems: list[str] = []
    layer = {"sandbox": {"enabled": "yes"}}
    assert apply_layer(Settings(), layer, "test", problems).sandbox == SandboxSettings()
    assert problems == [
        "test: sandbox enabled and network must be true or false; the default is used"
    ]
    for bad, message in [
        ([], "must be an object"),
        ({"enable": True}, "unknown keys enable"),
        ({"writablePaths": "/x"}, "writablePaths must be a list"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_sandbox(bad)


def test_off_by_default_and_then_not_reported() -> None:
    assert Settings().sandbox.enabled is False
    assert prepare_sandbox(SandboxSettings()) is None
    assert sandbox_status(None, Path("/"), []) is None


# --- failing closed --------------------------------------------------------------------------


async def test_without_bwrap_every_command_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(root))
    sandbox = prepare_sandbox(SandboxSettings(enabled=True))
    assert sandbox is not None and sandbox.bwrap is None
    assert sandbox.problem == (
        "The Bash sandbox is enabled (the `sandbox.enabled` setting) but bubblewrap (bwrap) "
        "is not installed, so commands are not run: install bubblewrap where it can create "
        "namespaces, or turn the sandbox off."
    )
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    with pytest.raises(ToolError, match="not installed, so commands are not run"):
        await BashTool(sandbox).run(BashInput(command="touch made.txt"), context)
    assert not (root / "made.txt").exists()
    status = sandbox_status(sandbox, root, [root])
    assert status is not None and status["active"] is False and "not installed" in status["problem"]


def test_a_bwrap_that_cannot_create_namespaces_is_refused_with_its_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # What bwrap prints in a container that forbids user namespaces, from a stand-in binary
    # (the real one works here, so this failure cannot be produced otherwise).
    fake = tmp_path / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create a new namespace' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    sandbox = prepare_sandbox(SandboxSettings(enabled=True, network=True))
    assert sandbox is not None and sandbox.bwrap is None
    assert sandbox.problem is not None and (
        "but bwrap cannot create its sandbox here (bwrap: No permissions to create a new "
        "namespace), so commands are not run" in sandbox.problem
    )


def test_the_model_is_told_it_runs_in_a_sandbox() -> None:
    sandbox = Sandbox(SandboxSettings(True), "/usr/bin/bwrap", None)
    assert BashTool(sandbox).description.endswith(
        "Commands run in a sandbox: everything outside the workspace and /tmp is read-only "
        "and has no network; a failure that says so is the sandbox, not a bug to work around."
    )
    assert "sandbox" not in BashTool().description


# --- real commands under bwrap ---------------------------------------------------------------


@needs_bwrap
async def test_the_workspace_and_tmp_are_writable_and_the_rest_is_not(
    root: Path, outside: Path
) -> None:
    out = await sandboxed(root, f"touch made.txt && touch {outside}/escaped.txt")
    assert out.is_error
    assert "Read-only file system" in out.content
    assert (root / "made.txt").exists()
    assert not (outside / "escaped.txt").exists()
    marker = Path(tempfile.gettempdir()) / f"agentls-sandbox-{root.parent.name}"
    out = await sandboxed(root, f"echo kept > {marker} && cat {marker}")
    try:
        assert out.content == "kept" and marker.read_text() == "kept\n"
    finally:
        marker.unlink(missing_ok=True)


@needs_bwrap
async def test_named_writable_paths_are_writable(root: Path, outside: Path) -> None:
    out = await sandboxed(root, f"touch {outside}/allowed.txt", writable_paths=(str(outside),))
    assert not out.is_error, out.content
    assert (outside / "allowed.txt").exists()


@pytest.fixture
def listener() -> Iterator[int]:
    server = socket.create_server(("127.0.0.1", 0))
    server.listen()
    yield server.getsockname()[1]
    server.close()


@needs_bwrap
async def test_no_network_unless_allowed(root: Path, listener: int) -> None:
    connect = f"exec 3<>/dev/tcp/127.0.0.1/{listener} && echo connected"
    cut = await sandboxed(root, connect)
    assert cut.is_error and "connected" not in cut.content
    allowed = await sandboxed(root, connect, network=True)
    assert allowed.content == "connected"


@needs_bwrap
async def test_a_timed_out_command_dies_with_everything_it_started(root: Path) -> None:
    sandbox = prepare_sandbox(SandboxSettings(enabled=True))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    command = "sleep 31.25 & sleep 31.5"
    out = await BashTool(sandbox).run(BashInput(command=command, timeout=500), context)
    assert out.is_error and out.content.startswith("Command timed out after 0.5 s")
    await asyncio.sleep(0.3)
    left = [p for p in psutil.process_iter(["cmdline"]) if "31.25" in (p.info["cmdline"] or [])]
    assert left == []


# --- over stdio ------------------------------------------------------------------------------


def sandbox_settings(tmp_path: Path, **sandbox: Any) -> None:
    folder = tmp_path / "ws" / ".agentls"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "settings.json").write_text(json.dumps({"sandbox": sandbox}), encoding="utf-8")


def bash_script(command: str) -> list[dict[str, Any]]:
    return [{"tool_calls": [{"name": "Bash", "input": {"command": command}}]}, {"text": "ok"}]


def last_tool_result(log: Path) -> dict[str, Any]:
    messages = read_requests(log)[-1]["messages"]
    result: dict[str, Any] = messages[-1]["content"][0]
    return result


async def test_a_session_without_the_setting_has_no_sandbox(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    async with running_daemon(tmp_path) as client:
        result = await client.new_session(tmp_path / "ws", provider="scripted", script=[])
        assert "sandbox" not in result


async def test_without_bwrap_the_session_says_so_and_bash_refuses(tmp_path: Path) -> None:
    sandbox_settings(tmp_path, enabled=True)
    async with running_daemon(tmp_path, PATH=str(tmp_path)) as client:
        log = tmp_path / "requests.jsonl"
        result = await client.new_session(
            tmp_path / "ws",
            provider="scripted",
            script=bash_script("touch made.txt"),
            requestLog=str(log),
            permissionMode="bypassPermissions",
        )
        session = result["sessionId"]
        assert result["sandbox"]["active"] is False
        assert "bubblewrap (bwrap) is not installed" in result["sandbox"]["problem"]
        _turn, done = await client.run_turn(session, "make it")
        assert done["stopReason"] == "end_turn"
        result = last_tool_result(log)
        assert result["is_error"] is True
        assert "commands are not run" in json.dumps(result)
        assert not (tmp_path / "ws" / "made.txt").exists()


@needs_bwrap
async def test_a_sandboxed_session_reports_it_and_confines_bash(
    tmp_path: Path, outside: Path
) -> None:
    sandbox_settings(tmp_path, enabled=True)
    async with running_daemon(tmp_path) as client:
        result = await client.new_session(tmp_path / "ws", provider="scripted", script=[])
        assert result["sandbox"] == {
            "active": True,
            "network": False,
            "writablePaths": [
                "/tmp",
                str(tmp_path / "ws"),
                *result["sandbox"]["writablePaths"][2:],
            ],
        }
        script = bash_script(f"touch {outside}/escaped.txt")
        session, log = await client.scripted_session(
            tmp_path, script, permissionMode="bypassPermissions"
        )
        _turn, done = await client.run_turn(session, "try it")
        assert done["stopReason"] == "end_turn"
        assert "Read-only file system" in json.dumps(last_tool_result(log))
        assert not (outside / "escaped.txt").exists()
