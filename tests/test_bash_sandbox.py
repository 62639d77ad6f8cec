"""The Bash sandbox: the bwrap command line, the fail-closed refusal when bwrap is missing,
and, where bwrap can run here, real commands confined to the workspace and /tmp, without
network unless allowed, killed with everything they started; its state over stdio."""

from __future__ import annotations

import asyncio
import functools
import json
import os
import shutil
import socket
import tempfile
import time
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
    blamed_on_sandbox,
    bwrap_command,
    parse_sandbox,
    prepare_sandbox,
    sandbox_status,
)
from agentls.tools.base import ToolContext, ToolError, ToolOutput
from agentls.tools.bash import BashInput, BashTool
from agentls.tools.read_cache import FileReadCache
from agentls.tools.registry import tool_spec
from agentls.workspace.view import WorkspaceView


def _bwrap_problem() -> str | None:
    if shutil.which("bwrap") is None:
        return "bubblewrap (bwrap) is not installed"
    return prepare_sandbox(SandboxSettings(mode="workspace-write")).problem


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
    sandbox = prepare_sandbox(SandboxSettings(mode="workspace-write", **settings))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    return await BashTool(sandbox).run(BashInput(command=command, timeout=20_000), context)


# --- the command line and the settings -------------------------------------------------------


def test_the_bwrap_command_binds_the_writable_paths_and_cuts_the_network() -> None:
    writable = [Path("/tmp"), Path("/home/me/project")]
    command = bwrap_command(
        "/usr/bin/bwrap", False, ["/bin/bash", "-c", "ls"], Path("/p"), writable
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
    networked = bwrap_command("bwrap", True, ["true"], Path("/"), [])
    assert "--unshare-net" not in networked


def test_writable_paths_are_the_roots_tmp_and_the_named_ones_that_exist(tmp_path: Path) -> None:
    (tmp_path / "ws" / "cache").mkdir(parents=True)
    settings = SandboxSettings(writable_paths=("cache", "missing", str(tmp_path)))
    sandbox = Sandbox(settings, "workspace-write", "/usr/bin/bwrap")
    paths = sandbox.writable_paths(tmp_path / "ws", [tmp_path / "ws"])
    assert paths == [Path("/tmp"), tmp_path, tmp_path / "ws", tmp_path / "ws" / "cache"]
    for mode in ("read-only", "danger-full-access"):
        others = Sandbox(settings, mode, "/usr/bin/bwrap")  # type: ignore[arg-type]
        assert others.writable_paths(tmp_path / "ws", [tmp_path / "ws"]) == []


def test_sandbox_settings_are_checked() -> None:
    assert parse_sandbox({"enabled": True, "writablePaths": ["~/.cache"]}) == SandboxSettings(
        "workspace-write", False, ("~/.cache",)
    )
    assert parse_sandbox({"enabled": False}).mode == "danger-full-access"
    assert parse_sandbox({"enabled": False, "mode": "read-only"}).mode == "read-only"
    assert parse_sandbox({"network": True}) == SandboxSettings(None, True)
    problems: list[str] = []
    layer = {"sandbox": {"enabled": "yes"}}
    assert apply_layer(Settings(), layer, "test", problems).sandbox == SandboxSettings()
    assert problems == [
        "test: sandbox enabled must be true or false; this layer's sandbox is ignored"
    ]
    for bad, message in [
        ([], "must be an object"),
        ({"enable": True}, "unknown keys enable"),
        ({"writablePaths": "/x"}, "writablePaths must be a list"),
        ({"mode": "workspace"}, "mode must be one of read-only, workspace-write, danger-full"),
    ]:
        with pytest.raises(ValueError, match=message):
            parse_sandbox(bad)


def test_layers_merge_key_by_key_so_a_mode_alone_keeps_the_paths() -> None:
    problems: list[str] = []
    files = {"sandbox": {"enabled": True, "writablePaths": ["cache"], "network": True}}
    settings = apply_layer(Settings(), files, "user", problems)
    settings = apply_layer(settings, {"sandbox": {"mode": "read-only"}}, "run", problems)
    assert settings.sandbox == SandboxSettings("read-only", True, ("cache",))
    # A later `enabled` is a choice of mode too, and replaces the earlier one.
    settings = apply_layer(settings, {"sandbox": {"enabled": False}}, "project", problems)
    assert settings.sandbox.mode == "danger-full-access" and problems == []


def test_nobody_chose_so_the_default_applies() -> None:
    assert Settings().sandbox.mode is None
    sandbox = prepare_sandbox(SandboxSettings())
    if BWRAP_PROBLEM is None:
        assert (sandbox.mode, sandbox.confines, sandbox.note) == ("workspace-write", True, None)
    else:
        assert (sandbox.mode, sandbox.confines, sandbox.problem) == (
            "danger-full-access",
            False,
            None,
        )
    assert sandbox_status(None, Path("/"), []) is None


# --- failing closed --------------------------------------------------------------------------


async def test_without_bwrap_every_command_is_refused(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(root))
    sandbox = prepare_sandbox(SandboxSettings(mode="workspace-write"))
    assert sandbox.bwrap is None
    assert sandbox.problem == (
        "The Bash sandbox is set to workspace-write (the `sandbox` setting) but bubblewrap "
        "(bwrap) is not installed, so commands are not run: install bubblewrap where it can "
        "create namespaces, or set `sandbox.mode` to danger-full-access."
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
    sandbox = prepare_sandbox(SandboxSettings(mode="read-only", network=True))
    assert sandbox.bwrap is None
    assert sandbox.problem is not None and (
        "but bwrap cannot create its sandbox here (bwrap: No permissions to create a new "
        "namespace), so commands are not run" in sandbox.problem
    )


def test_the_model_is_told_it_runs_in_a_sandbox() -> None:
    sandbox = Sandbox(SandboxSettings(), "workspace-write", "/usr/bin/bwrap")
    assert BashTool(sandbox).description.endswith(
        "Commands run in a sandbox: everything outside the workspace and /tmp is read-only "
        "and has no network; a failure that says so is the sandbox, not a bug to work around: "
        "the user is then asked whether to rerun it outside. When a command surely needs more "
        "(say, a download), set outside_sandbox with a justification: the user is asked first."
    )
    assert "outside_sandbox" in tool_spec(BashTool(sandbox)).input_schema["properties"]
    unboxed = BashTool(Sandbox(SandboxSettings(), "danger-full-access", None))
    assert "sandbox" not in unboxed.description
    assert "outside_sandbox" not in tool_spec(unboxed).input_schema["properties"]
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
    sandbox = prepare_sandbox(SandboxSettings(mode="workspace-write"))
    context = ToolContext(WorkspaceView([root]), FileReadCache(), root)
    command = "sleep 31.25 & sleep 31.5"
    out = await BashTool(sandbox).run(BashInput(command=command, timeout=500), context)
    assert out.is_error and out.content.startswith("Command timed out after 0.5 s")
    deadline = time.monotonic() + 10  # killed at once; reaped when the machine gets to it
    while left := [
        p for p in psutil.process_iter(["cmdline"]) if "31.25" in (p.info["cmdline"] or [])
    ]:
        assert time.monotonic() < deadline, left
        await asyncio.sleep(0.05)


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


@needs_bwrap
async def test_a_session_without_the_setting_gets_workspace_write(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    async with running_daemon(tmp_path) as client:
        result = await client.new_session(tmp_path / "ws", provider="scripted", script=[])
        assert result["sandbox"]["mode"] == "workspace-write"
        assert result["sandbox"]["active"] is True and "note" not in result["sandbox"]


async def test_without_bwrap_the_default_runs_commands_unconfined_and_says_so(
    tmp_path: Path,
) -> None:
    (tmp_path / "ws").mkdir()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    # A PATH without bwrap (bash is run by its full path).
    async with running_daemon(tmp_path, PATH=str(bin_dir)) as client:
        log = tmp_path / "requests.jsonl"
        result = await client.new_session(
            tmp_path / "ws",
            provider="scripted",
            script=bash_script("echo made > made.txt"),
            requestLog=str(log),
            permissionMode="bypassPermissions",
        )
        sandbox = result["sandbox"]
        assert (sandbox["mode"], sandbox["active"]) == ("danger-full-access", False)
        assert "problem" not in sandbox
        assert sandbox["note"].startswith(
            "Bash runs without a sandbox (danger-full-access): bubblewrap (bwrap) is not installed."
        )
        _turn, done = await client.run_turn(result["sessionId"], "make it")
        assert done["stopReason"] == "end_turn"
        assert last_tool_result(log)["is_error"] is False
        assert (tmp_path / "ws" / "made.txt").read_text() == "made\n"


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
            "mode": "workspace-write",
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


# --- what counts as the box's doing ----------------------------------------------------------


def test_only_failures_the_box_causes_are_blamed_on_it(tmp_path: Path) -> None:
    box = Sandbox(SandboxSettings(), "workspace-write", "/usr/bin/bwrap")
    writable = [tmp_path / "ws"]
    blame = functools.partial(blamed_on_sandbox, box, writable=writable)
    assert blame(output="touch: cannot touch '/opt/x': Read-only file system") == (
        'the sandbox (workspace-write) refused a write outside the workspace ("Read-only file '
        'system")'
    )
    assert blame(output="curl: (6) Could not resolve host: pypi.org") == (
        'the sandbox has no network ("Could not resolve host")'
    )
    # A denied path the daemon's user could write outside the box; not one it cannot, nor
    # one inside the writable paths (those are ordinary failures).
    own = tmp_path / "own"
    assert blame(output=f"bash: {own}/f: Permission denied") == (
        f"the sandbox (workspace-write) refused access to {own}/f (Permission denied)"
    )
    assert blame(output=f"bash: {tmp_path}/ws/f: Permission denied") is None
    if os.geteuid() != 0:
        assert blame(output="bash: /etc/shadow: Permission denied") is None
    for ordinary in ("make: *** [all] Error 2", "AssertionError", "No such file or directory"):
        assert blame(output=ordinary) is None
    networked = Sandbox(SandboxSettings(network=True), "workspace-write", "/usr/bin/bwrap")
    assert blamed_on_sandbox(networked, "Connection refused", writable) is None
    unboxed = Sandbox(SandboxSettings(), "danger-full-access", None)
    assert blamed_on_sandbox(unboxed, "Read-only file system", writable) is None
