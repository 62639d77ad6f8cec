"""Shared fixtures: a real daemon over stdio (pytest-lsp) and helpers to script it."""

from __future__ import annotations

import os
import sys
import tempfile
import threading
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from hypothesis import HealthCheck, settings
from lsprotocol import types as lsp

# Every daemon these tests start keeps its transcripts out of the user's home.
os.environ.setdefault("AGENTLS_HOME", tempfile.mkdtemp(prefix="agentls-test-home-"))
# Every `agentls --stdio` a test spawns is its own daemon, in that process (a crash test
# kills it and expects the daemon dead); the tests of the warm daemon unset this.
os.environ["AGENTLS_NO_DAEMON"] = "1"
for _var in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENTLS_PROVIDER"):
    os.environ.pop(_var, None)

TESTS = Path(__file__).parent
sys.path.insert(0, str(TESTS))

from agent_client import AgentClient, capabilities, daemon_config  # noqa: E402

# Property tests are deterministic in the normal run (CI must never go red at random);
# `--long` runs them at full strength with fresh randomness.
settings.register_profile(
    "ci", derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile(
    "long", max_examples=5_000, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--long", action="store_true", help="property and fuzz tests at full strength")


def pytest_configure(config: pytest.Config) -> None:
    settings.load_profile("long" if config.getoption("--long") else "ci")


@pytest.fixture
def long_run(request: pytest.FixtureRequest) -> bool:
    """Whether the run asked for `--long` (fuzzers scale their message counts on it)."""
    return bool(request.config.getoption("--long"))


@pytest.fixture
def thread_starts(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads started while the test runs."""
    started: list[str] = []
    start = threading.Thread.start

    def counting_start(thread: threading.Thread) -> None:
        started.append(thread.name)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", counting_start)
    return started


@pytest.fixture
def workspace_files() -> dict[str, str | bytes]:
    """What the `client` fixture's workspace starts with, by relative path (a test module
    overrides this fixture to give its files)."""
    return {}


@pytest_lsp.fixture(config=daemon_config())
async def client(
    lsp_client: AgentClient, tmp_path: Path, workspace_files: dict[str, str | bytes]
) -> Any:
    """A real daemon over stdio, initialized by an editor that applies edits, with the
    workspace `tmp_path / "ws"` (a module that needs another handshake defines its own)."""
    workspace = tmp_path / "ws"
    workspace.mkdir()
    for name, content in workspace_files.items():
        path = workspace / name
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    params = lsp.InitializeParams(capabilities=capabilities(True), root_uri=workspace.as_uri())
    await lsp_client.initialize_session(params)
    yield
    await lsp_client.shutdown_session()
