"""The messages that ended the daemon or got the wrong answer, one by one, and the strict
params models: each field refuses every JSON type its schema does not allow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

import fuzz_transports
from agentls import api
from agentls.messages import is_id
from agentls.session.store import transcript_path

SAMPLES: dict[str, Any] = {
    "boolean": True,
    "integer": 7,
    "number": 7100000.5,
    "string": "x",
    "array": [],
    "object": {},
}


def _json_types(node: dict[str, Any], defs: dict[str, Any]) -> set[str]:
    if "$ref" in node:
        return _json_types(defs[node["$ref"].rsplit("/", 1)[1]], defs)
    if "anyOf" in node:
        return set().union(*(_json_types(n, defs) for n in node["anyOf"]))
    if "const" in node or "enum" in node:
        values = node.get("enum", [node.get("const")])
        return {type(v).__name__.replace("str", "string") for v in values}
    if "type" not in node:
        return set(SAMPLES)  # Any
    kind = node["type"]
    return {kind, "integer"} if kind == "number" else {kind}


def _params_models() -> list[type[BaseModel]]:
    return [model for model, _result in api.REQUESTS.values()] + list(api.NOTIFICATIONS.values())


@pytest.mark.parametrize("model", _params_models(), ids=lambda m: m.__name__)
def test_every_params_field_refuses_the_json_types_its_schema_does_not_allow(
    model: type[BaseModel],
) -> None:
    schema = model.model_json_schema(by_alias=True)
    defs = schema.get("$defs", {})
    for name, node in schema["properties"].items():
        allowed = _json_types(node, defs)
        for kind, value in SAMPLES.items():
            if kind in allowed or ("null" in allowed and value is None):
                continue
            with pytest.raises(ValidationError) as refused:
                model.model_validate({name: value})
            fields = [e["loc"][0] for e in refused.value.errors()]
            assert name in fields, (model.__name__, name, kind)


def test_ids_that_name_files_have_one_shape() -> None:
    assert is_id("sess_0123456789abcdef0123", "sess")
    for bad in ["sess_" + "a" * 5000, "sess_../x", "sess_é", "sess_", "sess_a\x00", 5, "agent_a"]:
        assert not is_id(bad, "sess"), bad
    with pytest.raises(ValueError):
        transcript_path(Path("/h"), "sess_" + "a" * 5000)


async def test_the_reported_messages_get_their_answers_and_the_daemon_serves_on(
    tmp_path: Path,
) -> None:
    env = {"AGENTLS_HOME": str(tmp_path / "home"), "AGENTLS_PROVIDER": "scripted"}
    client = await fuzz_transports.start("stdio", tmp_path, env)
    try:
        await fuzz_transports.lsp_handshake(client, tmp_path)
        client.send({"jsonrpc": "2.0", "method": "$/cancelRequest", "params": {"id": {"a": 1}}})
        client.send({"jsonrpc": "2.0", "id": 7100000.5, "method": "agent/listSessions"})
        client.send({"jsonrpc": "2.0", "id": 900001})
        client.send({"jsonrpc": "2.0", "id": 900002, "error": 5})
        # A token in a message is taken out and the rest encoded again: a lone surrogate
        # beside it once ended the read loop.
        options = {"authToken": "t"}
        again = {"capabilities": {}, "x": "\ud800", "initializationOptions": options}
        answered = await client.request("initialize", again, "i2")
        assert answered["error"]["code"] == -32602, answered
        bad_root = {"capabilities": {}, "rootPath": "/\ud800"}
        refused = await client.request("initialize", bad_root, "i3")
        assert refused["error"]["code"] == -32602, refused
        cwd = await client.request("agent/listSessions", {"cwd": "/\ud800"}, "c")
        assert cwd["error"]["code"] == -32602, cwd
        long_id = "sess_" + "a" * 5000
        resumed = await client.request("agent/resumeSession", {"sessionId": long_id}, "r")
        assert resumed["error"]["code"] == 1001, resumed
        forked = await client.request("agent/forkSession", {"sessionId": long_id}, "f")
        assert forked["error"]["code"] == 1001, forked
        new = await client.request("agent/newSession", {"maxTurns": True}, "n")
        assert new["error"]["code"] == -32602, new
        listed = await client.request("agent/listSessions", {"limit": True}, "l")
        assert listed["error"]["code"] == -32602, listed
        nulls = [r for r in client.responses if r.get("id") is None]
        assert [r["error"]["code"] for r in nulls] == [-32600]  # the float id only
        assert all(r.get("id") not in (900001, 900002) for r in client.responses)
        assert client.process.returncode is None
    finally:
        await client.close()


# A directory no OS can name: a NUL, a name over 255 bytes, a path over 4096 bytes.
UNNAMEABLE = ["/tmp/a\x00b", "/" + "a" * 300, "/a" * 3000]


async def test_a_directory_the_os_cannot_name_is_invalid_params_over_lsp(tmp_path: Path) -> None:
    env = {"AGENTLS_HOME": str(tmp_path / "home"), "AGENTLS_PROVIDER": "scripted"}
    client = await fuzz_transports.start("stdio", tmp_path, env)
    try:
        await fuzz_transports.lsp_handshake(client, tmp_path)
        for n, cwd in enumerate(UNNAMEABLE):
            # Refused at the params (it was -32603: the OS said ENAMETOOLONG in the handler).
            new = await client.request("agent/newSession", {"cwd": cwd}, f"n{n}")
            assert new["error"]["code"] == -32602, new
            listed = await client.request("agent/listSessions", {"cwd": cwd}, f"l{n}")
            assert listed["error"]["code"] == -32602, listed
        assert client.process.returncode is None
    finally:
        await client.close()


async def test_acp_refuses_unnameable_directories_and_salvaged_capabilities_work(
    tmp_path: Path,
) -> None:
    env = {"AGENTLS_HOME": str(tmp_path / "home"), "AGENTLS_PROVIDER": "scripted"}
    client = await fuzz_transports.start("acp", tmp_path, env)
    try:
        # The SDK salvages `"fs": []` into its default, as a plain dict: session/new then
        # read `fs.write_text_file` from it and answered -32603.
        init = {"protocolVersion": 1, "clientCapabilities": {"fs": [], "auth": []}}
        assert "result" in await client.request("initialize", init, "init")
        for n, cwd in enumerate(UNNAMEABLE):
            for method in ("session/new", "session/list"):
                params = {"cwd": cwd, "mcpServers": []} if method == "session/new" else {"cwd": cwd}
                answer = await client.request(method, params, f"{method}{n}")
                assert answer["error"]["code"] == -32602, answer
        extra = {"cwd": str(tmp_path), "mcpServers": [], "additionalDirectories": ["/a\x00"]}
        refused = await client.request("session/new", extra, "extra")
        assert refused["error"]["code"] == -32602, refused
        script = {"agentls": {"script": [{"text": "ok"}]}}
        params = {"cwd": str(tmp_path), "mcpServers": [], "_meta": script}
        new = await client.request("session/new", params, "ok")
        assert "result" in new, new
        assert client.process.returncode is None
    finally:
        await client.close()


async def test_a_string_where_an_array_belongs_is_one_error_not_one_per_character(
    tmp_path: Path,
) -> None:
    env = {"AGENTLS_HOME": str(tmp_path / "home"), "AGENTLS_PROVIDER": "scripted"}
    client = await fuzz_transports.start("stdio", tmp_path, env)
    try:
        await fuzz_transports.lsp_handshake(client, tmp_path)
        # cattrs walked the string as a sequence: an error per character, in time
        # quadratic in its length (the --long fuzzer's 200,000 characters held the loop
        # for minutes). A notification of the same kind, then a request.
        cells = {"notebookDocument": {}, "cellTextDocuments": "a" * 5_000}
        client.send({"jsonrpc": "2.0", "method": "notebookDocument/didOpen", "params": cells})
        params = {"capabilities": {}, "workspaceFolders": "a" * 5_000}
        answer = await client.request("initialize", params, "again")
        assert answer["error"]["code"] == -32602, answer
        assert len(answer["error"]["message"]) < 500, answer["error"]["message"][:300]
        assert "workspace_folders" in answer["error"]["message"]
        assert client.process.returncode is None
    finally:
        await client.close()
