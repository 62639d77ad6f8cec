"""`agent/providerStatus` over the real daemon (stdio): what a new session would run on,
asked before any session exists, so a client can show its first-run view before the
user's first message fails with 1004."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from test_e2e_wire import RawPipe

# Every variable that could configure a provider, emptied so the machine's own do not count.
NO_CREDENTIALS = {
    name: ""
    for name in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "AZURE_OPENAI_API_KEY",
        "AZURE_OPENAI_ENDPOINT",
        "AGENTLS_PROVIDER",
        "AGENTLS_MODEL",
        "AGENTLS_SCRIPT",
    )
}


async def _ask(
    tmp_path: Path, env: dict[str, str], options: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """providerStatus, then newSession, from a daemon started in `env` with `options`."""
    home = tmp_path / "home"
    pipe = await RawPipe.start(
        {**NO_CREDENTIALS, "AGENTLS_HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path), **env}
    )
    root = tmp_path / "ws"
    root.mkdir(exist_ok=True)
    init = {"capabilities": {}, "rootUri": root.as_uri(), "initializationOptions": options}
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": init})
    await pipe.response_to(1)
    pipe.send({"jsonrpc": "2.0", "method": "initialized", "params": {}})
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "agent/providerStatus", "params": {}})
    status = await pipe.response_to(2)
    pipe.send({"jsonrpc": "2.0", "id": 3, "method": "agent/newSession", "params": {}})
    created = await pipe.response_to(3)
    await pipe.close()
    return status, created


async def test_no_provider_is_reported_before_a_session_fails(tmp_path: Path) -> None:
    status, created = await _ask(tmp_path, {}, {"permissionMode": "acceptEdits"})
    result = status["result"]
    assert result["configured"] is False
    assert "provider" not in result
    assert result["permissionMode"] == "acceptEdits"
    assert "ANTHROPIC_API_KEY" in result["problem"]
    # What the status foretold: the session cannot start.
    assert created["error"]["code"] == 1004


async def test_a_configured_provider_and_its_model(tmp_path: Path) -> None:
    script = tmp_path / "script.jsonl"
    script.write_text('{"text": "hi"}\n', encoding="utf-8")
    status, created = await _ask(tmp_path, {}, {"provider": "scripted", "script": str(script)})
    assert status["result"] == {
        "provider": "scripted",
        "model": "scripted",
        "permissionMode": "default",
        "configured": True,
    }
    assert created["result"]["model"] == "scripted"


async def test_an_openai_compatible_url_alone_configures_it(tmp_path: Path) -> None:
    env = {"OPENAI_BASE_URL": "http://127.0.0.1:9/v1", "AGENTLS_MODEL": "qwen3:8b"}
    status, _created = await _ask(tmp_path, env, {})
    assert status["result"]["provider"] == "openai"
    assert status["result"]["model"] == "qwen3:8b"
    assert status["result"]["configured"] is True


async def test_a_cwd_that_is_no_directory_is_refused(tmp_path: Path) -> None:
    pipe = await RawPipe.start({**NO_CREDENTIALS, "AGENTLS_HOME": str(tmp_path / "home")})
    pipe.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    await pipe.response_to(1)
    params = {"cwd": str(tmp_path / "missing")}
    pipe.send({"jsonrpc": "2.0", "id": 2, "method": "agent/providerStatus", "params": params})
    answer = await pipe.response_to(2)
    await pipe.close()
    assert answer["error"]["code"] == -32602
    assert answer["error"]["data"] == {"field": "cwd"}
