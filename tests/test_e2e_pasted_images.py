"""Images pasted or dropped into a client travel inline as data: URIs (no file needed)."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams

from agent_client import AgentClient, capabilities, daemon_config, read_requests, write_script
from test_images import png


@pytest_lsp.fixture(config=daemon_config())
async def client(lsp_client: AgentClient, tmp_path: Path):
    (tmp_path / "ws").mkdir()
    root = (tmp_path / "ws").as_uri()
    await lsp_client.initialize_session(
        lsp.InitializeParams(capabilities=capabilities(True), root_uri=root)
    )
    yield
    await lsp_client.shutdown_session()


async def start(client: AgentClient, tmp_path: Path) -> tuple[str, Path]:
    log = tmp_path / "requests.jsonl"
    script = write_script(tmp_path / "script.jsonl", [{"text": "I see it."}])
    result = await client.new_session(
        tmp_path / "ws", provider="scripted", script=str(script), requestLog=str(log)
    )
    return result["sessionId"], log


def data_uri(data: bytes, media_type: str = "image/png") -> str:
    return f"data:{media_type};base64,{base64.b64encode(data).decode()}"


def first_user_message(log: Path) -> list[dict[str, Any]]:
    return read_requests(log)[0]["messages"][0]["content"]


async def test_a_pasted_image_reaches_the_model_named(client: AgentClient, tmp_path: Path) -> None:
    session, log = await start(client, tmp_path)
    image = png(3, 2)
    attachments = [{"uri": data_uri(image), "name": "screenshot.png"}]
    _turn, done = await client.run_turn(session, "What is this?", attachments=attachments)
    assert done["stopReason"] == "end_turn"
    content = first_user_message(log)
    assert '<attachment name="screenshot.png" image="png 3x2"/>' in content[0]["text"]
    images = [b for b in content if b["type"] == "image"]
    assert len(images) == 1
    assert base64.b64decode(images[0]["source"]["data"]) == image
    assert images[0]["source"]["media_type"] == "image/png"
    assert images[0]["name"] == "screenshot.png"


async def test_bytes_that_are_no_image_are_named_not_sent(
    client: AgentClient, tmp_path: Path
) -> None:
    session, log = await start(client, tmp_path)
    attachments = [{"uri": data_uri(b"plain text, not pixels")}]
    _turn, done = await client.run_turn(session, "look", attachments=attachments)
    assert done["stopReason"] == "end_turn"
    content = first_user_message(log)
    assert '<attachment name="pasted image 1" error="not a PNG' in content[0]["text"]
    assert not [b for b in content if b["type"] == "image"]


@pytest.mark.parametrize(
    "uri",
    ["data:text/plain;base64,aGk=", "data:image/png,rawbytes", "data:image/png;base64,!!!"],
)
async def test_a_malformed_data_uri_is_refused_and_the_session_goes_on(
    client: AgentClient, tmp_path: Path, uri: str
) -> None:
    session, _log = await start(client, tmp_path)
    with pytest.raises(JsonRpcInvalidParams, match="base64"):
        await client.request(
            "agent/submitMessage",
            {"sessionId": session, "text": "x", "attachments": [{"uri": uri}]},
        )
    _turn, done = await client.run_turn(session, "still here?")
    assert done["stopReason"] == "end_turn"
