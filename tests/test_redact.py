"""Secrets never reach events, transcripts or logs; short non-secret keys are left alone."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import Any

import pytest

from agentls.redact import Masker, RedactingFilter
from agentls.session.manager import SessionManager
from agentls.wire import json_sink

KEY = "sk-proj-4f8a9c2e7b1d6a3f"


def test_values_that_cannot_be_secrets_are_not_masked() -> None:
    masker = Masker.from_environment({"OPENAI_API_KEY": "x", "ANTHROPIC_API_KEY": "ollama"})
    assert masker.secrets == ()
    assert masker.mask("expected exactly one x") == "expected exactly one x"


def test_credential_variables_are_masked_wherever_they_appear() -> None:
    env = {"OPENAI_API_KEY": KEY, "HOME": "/home/someone-long", "MY_SERVICE_TOKEN": "t0k3n-abcdef"}
    masker = Masker.from_environment(env)
    assert set(masker.secrets) == {KEY, "t0k3n-abcdef"}
    assert masker.mask(f"key={KEY}; again {KEY}") == "key=***; again ***"
    assert masker.mask("/home/someone-long") == "/home/someone-long"
    assert masker.mask_value({"a": [f"{KEY}", 3, None], "b": "t0k3n-abcdef"}) == {
        "a": ["***", 3, None],
        "b": "***",
    }


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("Authorization: Bearer abc.def-ghi", "Authorization: Bearer ***"),
        ("'authorization': 'Basic dXNlcjpwYXNz'", "'authorization': 'Basic ***'"),
        ('{"x-api-key": "sk-ant-whatever"}', '{"x-api-key": "***"}'),
        ("headers api-key=abcdef1234", "headers api-key=***"),
    ],
)
def test_credential_headers_are_masked_whoever_they_belong_to(text: str, masked: str) -> None:
    assert Masker().mask(text) == masked


def test_log_records_are_masked_with_their_tracebacks(caplog: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger("agentls.test.redact")
    handler = caplog.handler
    handler.addFilter(RedactingFilter(Masker([KEY])))
    try:
        raise RuntimeError(f"request failed with key {KEY}")
    except RuntimeError:
        logger.exception("call with %s failed", KEY)
    finally:
        handler.filters.clear()
    assert KEY not in caplog.text
    assert "call with *** failed" in caplog.text
    assert "request failed with key ***" in caplog.text


async def test_a_key_read_from_a_file_never_reaches_events_or_the_transcript(
    tmp_path: Path,
) -> None:
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={KEY}\n", encoding="utf-8")
    events: list[dict[str, Any]] = []
    done = asyncio.Event()

    def sink(event: dict[str, Any]) -> None:
        events.append(event)
        if event["type"] == "turn_completed":
            done.set()

    env = {"AGENTLS_HOME": str(tmp_path / "home"), "OPENAI_API_KEY": KEY}
    manager = SessionManager(json_sink(sink), env=env)
    script = [
        {"tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": ".env"}}]},
        {"text": f"The key is {KEY}."},
    ]
    session = await manager.create(tmp_path, {"provider": "scripted", "script": script})
    session.submit("what is in .env?")
    await asyncio.wait_for(done.wait(), 10)
    assert events[-1]["stopReason"] == "end_turn"
    assert KEY not in repr(events)
    assert "***" in repr(events)
    assert KEY not in session.transcript.path.read_text(encoding="utf-8")


async def test_a_command_the_model_runs_never_sees_the_provider_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from agentls.tools.base import ToolContext
    from agentls.tools.bash import BashInput, BashTool
    from agentls.tools.read_cache import FileReadCache
    from agentls.workspace.view import WorkspaceView

    monkeypatch.setenv("ANTHROPIC_API_KEY", KEY)
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setenv("AGENTLS_PROBE", "kept")
    ctx = ToolContext(WorkspaceView([tmp_path]), FileReadCache(), tmp_path)
    out = await BashTool().run(BashInput(command="env"), ctx)
    assert "AGENTLS_PROBE=kept" in out.content
    assert KEY not in out.content
    names = {line.split("=", 1)[0] for line in out.content.splitlines()}
    assert not names & {"ANTHROPIC_API_KEY", "OPENAI_API_KEY"}


def test_nothing_agentls_run_prints_holds_the_key(tmp_path: Path) -> None:
    import json
    import os
    import subprocess
    import sys

    script = tmp_path / "script.jsonl"
    error = {"kind": "authentication", "message": f"invalid x-api-key {KEY}", "retryable": False}
    script.write_text(json.dumps({"text": "hi", "error": error}) + "\n", encoding="utf-8")
    env = {
        **os.environ,
        "OPENAI_API_KEY": KEY,
        "AGENTLS_PROVIDER": "scripted",
        "AGENTLS_SCRIPT": str(script),
        "AGENTLS_LOG_LEVEL": "DEBUG",
        "AGENTLS_HOME": str(tmp_path / "home"),
    }
    done = subprocess.run(
        [sys.executable, "-m", "agentls", "run", "hello", "--cwd", str(tmp_path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert done.returncode == 1
    assert "invalid x-api-key ***" in done.stdout + done.stderr
    assert KEY not in done.stdout + done.stderr
    transcripts = list((tmp_path / "home" / "sessions").glob("*.jsonl"))
    assert transcripts
    assert all(KEY not in t.read_text(encoding="utf-8") for t in transcripts)


def test_the_daemon_log_masks_keys_and_headers() -> None:
    import os
    import subprocess
    import sys

    code = (
        "import logging; from agentls.cli import configure_logging; configure_logging(); "
        "log = logging.getLogger('agentls.test'); "
        "log.error('sent %s with Authorization: Bearer abc.def', __import__('os').environ['K'])"
    )
    env = {**os.environ, "OPENAI_API_KEY": KEY, "K": KEY}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    assert "sent *** with Authorization: Bearer ***" in done.stderr
    assert KEY not in done.stderr
