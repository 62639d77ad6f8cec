"""The daemon under hostile JSON-RPC: one real daemon over stdio, thousands of generated
messages (envelopes, framing, every method's params), and the invariants that must hold:
every request answered with the right code, no notification answered, no id that only
appeared inside params answered, every accepted turn completed, a normal turn afterwards."""

from __future__ import annotations

import asyncio
import json
import os
import random
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types as lsp

import fuzz_transports
import rpc_fuzz
from agentls import api
from agentls.acp import envelope
from agentls.lsp.jsonrpc import served_methods
from agentls.lsp.server import AGENT_REQUESTS, build_server
from test_e2e_wire import spawn_daemon

AGENT_CODES = {-32602, 1001, 1002, 1003, 1004, 1006, 1008}
UNSERVED = ["textDocument/completion", "workspace/executeCommand", "textDocument/hover", "x/y"]
METHODS = list(AGENT_REQUESTS)


@dataclass
class Expect:
    """What the daemon owes for what was sent."""

    answers: dict[Any, set[int | None]] = field(default_factory=dict)  # id → codes (None: ok)
    null_errors: int = 0
    maybe: set[Any] = field(default_factory=set)  # ids after a broken frame: may be lost


class Daemon:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.session = ""
        self.root = Path()
        # Every top-level request id sent so far, with the codes its answer may carry.
        self.sent: dict[Any, set[int | None]] = {}
        self.messages = 0
        self.responses: list[dict[str, Any]] = []
        self.events: list[dict[str, Any]] = []
        # Looked up at every arrival, so kept by key, never found by scanning all (under
        # --long a scan per arrival starved the reader).
        self.answered: set[Any] = set()
        self.completed: set[Any] = set()
        # How many responses the stray-id check has looked at.
        self.checked = 0
        self.arrived = asyncio.Event()
        self.reader = asyncio.create_task(self._read())

    def write(self, data: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(data)

    def frame(self, body: bytes) -> bytes:
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    async def _read(self) -> None:
        stdout = self.process.stdout
        assert stdout is not None
        while True:
            header = await stdout.readuntil(b"\r\n\r\n")
            length = int(header.split(b":")[1].split(b"\r\n")[0])
            message = json.loads(await stdout.readexactly(length))
            if "method" in message:
                if message["method"] == "agent/event":
                    self.events.append(message["params"])
                    if message["params"]["type"] == "turn_completed":
                        self.completed.add(message["params"].get("turnId"))
            else:
                self.responses.append(message)
                msg_id = message.get("id")
                if isinstance(msg_id, str | int | None) and not isinstance(msg_id, bool):
                    self.answered.add(msg_id)
            self.arrived.set()

    async def until(self, check: Any, timeout: float = 30) -> None:
        async def poll() -> None:
            while not check():
                self.arrived.clear()
                await self.arrived.wait()

        await asyncio.wait_for(poll(), timeout)


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def daemon(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Daemon]:
    root = tmp_path_factory.mktemp("fuzz")
    script = root / "script.jsonl"
    # Each session the fuzzer opens loads this script: kept small, or thousands of sessions
    # under --long would each hold a large one.
    script.write_text('{"text": "ok"}\n' * 50)
    # The fuzzer opens hundreds of sessions on purpose (thousands under --long); the
    # maxLiveSessions cap (its own tests: test_e2e_live_sessions.py) would refuse the
    # normal turn that follows.
    (root / "home").mkdir()
    (root / "home" / "settings.json").write_text('{"maxLiveSessions": 1000000}')
    env = {
        "AGENTLS_HOME": str(root / "home"),
        "AGENTLS_PROVIDER": "scripted",
        "AGENTLS_SCRIPT": str(script),
    }
    process = await spawn_daemon(env)
    daemon = Daemon(process)
    init = {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"capabilities": {}}}
    daemon.write(daemon.frame(json.dumps(init).encode()))
    daemon.write(daemon.frame(b'{"jsonrpc": "2.0", "method": "initialized", "params": {}}'))
    new = {"cwd": str(root), "provider": "scripted", "script": [{"text": "ok"}] * 5_000}
    request = {"jsonrpc": "2.0", "id": "new", "method": "agent/newSession", "params": new}
    daemon.write(daemon.frame(json.dumps(request).encode()))
    await daemon.until(lambda: any(r.get("id") == "new" for r in daemon.responses))
    daemon.session = next(r for r in daemon.responses if r.get("id") == "new")["result"][
        "sessionId"
    ]
    daemon.root = root
    yield daemon
    daemon.reader.cancel()
    if process.returncode is None:
        process.kill()
    await process.wait()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
MESSAGE_SHAPED = st.builds(
    lambda n, m: {"jsonrpc": "2.0", "id": f"nested-{n}", "method": m, "params": {}},
    st.integers(0, 10**6),
    st.sampled_from([*METHODS, "initialize", "shutdown"]),
)
TEXT = st.one_of(st.text(max_size=20), st.sampled_from(["\ud800", "a\udfffb", "\x00", "é😀"]))


@st.composite
def agent_params(draw: st.DrawFn, session: str) -> Any:
    sid = draw(st.sampled_from([session, "sess_00000000000000000000", "nope", 7]))
    base = draw(
        st.dictionaries(
            st.sampled_from(
                [
                    "sessionId",
                    "text",
                    "data",
                    "x",
                    "requestId",
                    "optionId",
                    "delivery",
                    "cwd",
                    "model",
                ]
            ),
            JSON,
            max_size=3,
        )
    )
    if draw(st.booleans()):
        base["sessionId"] = sid
    if draw(st.booleans()):
        base["text"] = draw(TEXT)
    if draw(st.booleans()):
        base["data"] = draw(st.one_of(JSON, MESSAGE_SHAPED))
    return draw(st.sampled_from([base, base, [1, 2], None, "str"]))


@st.composite
def message(draw: st.DrawFn, session: str, serial: int) -> tuple[bytes, str, Any, set[int | None]]:
    """(frame bytes, kind, id, allowed codes) for one generated message."""
    msg_id: Any = f"m{serial}"
    kind = draw(
        st.sampled_from(
            [
                "agent",
                "agent",
                "agent",
                "notification",
                "unserved",
                "not_json",
                "not_utf8",
                "batch",
                "scalar",
                "bad_version",
                "bad_id",
                "bad_method",
                "deep",
                "short",
                "long",
                "absurd",
            ]
        )
    )

    def frame(obj: Any) -> bytes:
        body = json.dumps(obj).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    if kind == "agent":
        method = draw(st.sampled_from(METHODS))
        params = draw(agent_params(session))
        envelope: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            envelope["params"] = params
        codes: set[int | None] = {None, *AGENT_CODES}
        if method == "agent/compact":
            codes.add(-32603)  # documented: "Compaction failed: …" (e.g. nothing to summarise)
        if not isinstance(params, (dict, list, type(None))):
            codes = {-32600}
        return frame(envelope), kind, msg_id, codes
    if kind == "notification":
        method = draw(st.sampled_from([*METHODS, "agent/didChangeEditorState", *UNSERVED]))
        return (
            frame(
                {"jsonrpc": "2.0", "method": method, "params": draw(agent_params(session)) or {}}
            ),
            kind,
            None,
            set(),
        )
    if kind == "unserved":
        method = draw(st.sampled_from(UNSERVED))
        return (
            frame({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": {}}),
            kind,
            msg_id,
            {-32601},
        )
    if kind == "not_json":
        return b'Content-Length: 9\r\n\r\n{"a": 1,}', kind, None, {-32700}
    if kind == "not_utf8":
        return b"Content-Length: 4\r\n\r\n\xff\xfe{}", kind, None, {-32700}
    if kind == "batch":
        return (
            frame([{"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions"}]),
            kind,
            None,
            {-32600},
        )
    if kind == "scalar":
        return frame(draw(st.sampled_from([1, "x", None, True]))), kind, None, {-32600}
    if kind == "bad_version":
        version = draw(st.sampled_from(["1.0", 2, None]))
        return (
            frame({"jsonrpc": version, "id": msg_id, "method": "agent/listSessions"}),
            kind,
            msg_id,
            {-32600},
        )
    if kind == "bad_id":
        bad = draw(st.sampled_from([{"a": 1}, [1], True, 1.5]))
        codes = {-32600}
        return (
            frame({"jsonrpc": "2.0", "id": bad, "method": "agent/listSessions"}),
            kind,
            None,
            codes,
        )
    if kind == "bad_method":
        return frame({"jsonrpc": "2.0", "id": msg_id, "method": 5}), kind, msg_id, {-32600}
    if kind == "deep":
        depth = draw(st.integers(65, 500))
        body = (
            b'{"jsonrpc": "2.0", "id": "%s", "method": "agent/abort", "params": '
            % (msg_id.encode())
            + b"[" * depth
            + b"]" * depth
            + b"}"
        )
        return b"Content-Length: %d\r\n\r\n" % len(body) + body, kind, msg_id, {-32600}
    body = json.dumps({"jsonrpc": "2.0", "id": msg_id, "method": "agent/listSessions"}).encode()
    if kind == "short":
        return b"Content-Length: %d\r\n\r\n" % (len(body) - 5) + body, kind, None, {-32700}
    if kind == "long":
        return b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body, kind, None, {-32700}
    return b"Content-Length: 1000000000000\r\n\r\n" + body, kind, None, set()


# A few thousand messages in the normal run, tens of thousands under --long.
ROUNDS = max(40, settings.default.max_examples // 6)


@pytest.mark.asyncio(loop_scope="module")
@settings(
    max_examples=ROUNDS,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
async def test_hostile_messages_get_the_answers_the_specification_gives(
    daemon: Daemon, data: st.DataObject
) -> None:
    await _round(daemon, data)


_serial = iter(range(10**9))


async def _round(daemon: Daemon, data: st.DataObject) -> None:
    messages = data.draw(st.lists(st.builds(lambda: next(_serial)), min_size=20, max_size=80))
    expect = Expect()
    # A barrier: every answer to earlier messages (also of an example Hypothesis abandoned
    # halfway) has arrived once this one has.
    barrier = f"barrier-{next(_serial)}"
    daemon.sent[barrier] = {None}
    request = {"jsonrpc": "2.0", "id": barrier, "method": "agent/listSessions"}
    daemon.write(daemon.frame(json.dumps(request).encode()))
    await daemon.until(lambda: _answered(daemon, barrier))
    before = len(daemon.responses)
    broken = False
    for serial in messages:
        raw, kind, msg_id, codes = data.draw(message(daemon.session, serial))
        # Recorded before sending: Hypothesis may abandon an example halfway through.
        if msg_id is not None:
            daemon.sent[msg_id] = codes
        daemon.messages += 1
        daemon.write(raw)
        if kind in ("short", "long", "absurd"):
            # The message after a wrong length may be swallowed by it; a sentinel follows.
            broken = True
            sentinel = {"jsonrpc": "2.0", "id": f"after-{serial}", "method": "agent/listSessions"}
            body = json.dumps(sentinel).encode()
            daemon.sent[f"after-{serial}"] = {None}
            daemon.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
            expect.maybe.add(f"after-{serial}")
        if msg_id is None:
            expect.null_errors += bool(codes)
        elif codes:
            expect.answers[msg_id] = codes
    final = {"jsonrpc": "2.0", "id": f"end-{messages[-1]}", "method": "agent/listSessions"}
    daemon.sent.update(expect.answers)
    daemon.sent.update({i: {None} for i in expect.maybe})
    daemon.sent[final["id"]] = {None}
    daemon.write(daemon.frame(json.dumps(final).encode()))
    await daemon.until(lambda: all(_answered(daemon, i) for i in expect.answers))
    await daemon.until(lambda: _answered(daemon, final["id"]))
    fresh = daemon.responses[before:]
    for response in daemon.responses[daemon.checked :]:
        rid = response.get("id")
        # Never an id that only appeared inside params, nor an answer to a notification.
        assert rid is None or rid in daemon.sent or rid in ("init", "new"), response
    for response in fresh:
        if response.get("id") in expect.answers:
            code = response.get("error", {}).get("code")
            assert code in expect.answers[response["id"]], response
    daemon.checked = len(daemon.responses)
    nulls = [r for r in fresh if r.get("id") is None]
    if not broken:
        assert len(nulls) == expect.null_errors, nulls
    assert all(r["error"]["code"] in (-32700, -32600) for r in nulls)
    accepted = [r["result"]["turnId"] for r in fresh if "turnId" in (r.get("result") or {})]
    await daemon.until(lambda: all(t in daemon.completed for t in accepted))


def _answered(daemon: Daemon, msg_id: Any) -> bool:
    return msg_id in daemon.answered


@pytest.mark.asyncio(loop_scope="module")
async def test_a_normal_turn_works_after_the_fuzzing(daemon: Daemon) -> None:
    assert daemon.messages >= 1_000, f"the fuzzer sent only {daemon.messages} messages"
    params = {"cwd": str(daemon.root), "provider": "scripted", "script": [{"text": "fine"}]}
    fresh = {"jsonrpc": "2.0", "id": "fresh", "method": "agent/newSession", "params": params}
    daemon.write(daemon.frame(json.dumps(fresh).encode()))
    await daemon.until(lambda: _answered(daemon, "fresh"))
    created = next(r for r in daemon.responses if r.get("id") == "fresh")
    request = {
        "jsonrpc": "2.0",
        "id": "normal",
        "method": "agent/submitMessage",
        "params": {"sessionId": created["result"]["sessionId"], "text": "hello"},
    }
    daemon.write(daemon.frame(json.dumps(request).encode()))
    await daemon.until(lambda: _answered(daemon, "normal"))
    answer = next(r for r in daemon.responses if r.get("id") == "normal")
    turn = answer["result"]["turnId"]
    await daemon.until(lambda: turn in daemon.completed)
    end = next(e for e in daemon.events if e["type"] == "turn_completed" and e["turnId"] == turn)
    assert end["stopReason"] == "end_turn"


# --- the structural fuzzer, on every transport -----------------------------------------

STRUCTURAL_DEFAULT = 300  # messages per transport in the normal run
STRUCTURAL_LONG = 10_000  # under --long
# ACP names an unknown session -32002 (resource not found), never the LSP wire's 1001.
ACP_CODES: frozenset[int | None] = frozenset(
    {None, -32602, -32601, -32000, -32002, *(AGENT_CODES - {1001})}
)


def lsp_cases(session: str, root: Path, token: str) -> list[rpc_fuzz.Case]:
    """Every method the daemon serves over LSP framing, with its params' fields."""
    samples = {
        "sessionId": session,
        "cwd": str(root),
        "uri": (root / "a.txt").as_uri(),
        # A fuzzed `initialize` carries the token, so its other fields are what is tested.
        "initializationOptions": {"authToken": token},
    }
    cases = []
    for method, (model, _result) in api.REQUESTS.items():
        seed, paths = rpc_fuzz.schema_seed(model, samples)
        codes = rpc_fuzz.AGENT_CODES | ({-32603} if method == "agent/compact" else set())
        cases.append(rpc_fuzz.Case(method, seed, paths, True, frozenset(codes)))
    for method, model in api.NOTIFICATIONS.items():
        seed, paths = rpc_fuzz.schema_seed(model, samples)
        cases.append(rpc_fuzz.Case(method, seed, paths, False, frozenset()))
    served = served_methods(build_server().protocol)
    # exit and shutdown end the connection by design; agent/* are covered above.
    for method in sorted(served - set(api.REQUESTS) - set(api.NOTIFICATIONS)):
        types = lsp.METHOD_TO_TYPES.get(method)
        if method in ("exit", "shutdown") or types is None or types[2] is None:
            continue
        seed, paths = rpc_fuzz.attrs_seed(types[2], samples)
        request = types[0].__name__.endswith("Request")
        codes = frozenset({None, -32602}) if request else frozenset()
        cases.append(rpc_fuzz.Case(method, seed, paths, request, codes))
    return cases


def acp_cases(session: str, root: Path) -> list[rpc_fuzz.Case]:
    """Every ACP method the agent checks, with its params' fields (the SDK's schema)."""
    samples = {"sessionId": session, "cwd": str(root), "mcpServers": [], "protocolVersion": 1}
    cases = []
    for method, model in envelope.PARAMS.items():
        seed, paths = rpc_fuzz.schema_seed(model, samples)
        request = method not in envelope.NOTIFICATIONS
        codes = ACP_CODES if request else frozenset()
        cases.append(rpc_fuzz.Case(method, seed, paths, request, codes))
    return cases


@dataclass
class Tally:
    """What was sent on one transport and what the daemon owes for it."""

    sent: int = 0
    owed: dict[Any, frozenset[int | None]] = field(default_factory=dict)
    labels: dict[Any, str] = field(default_factory=dict)
    null_owed: list[tuple[str, frozenset[int | None]]] = field(default_factory=list)
    harness: set[Any] = field(default_factory=set)


async def _fuzz(
    client: fuzz_transports.Client, messages: list[rpc_fuzz.Message], acp: bool
) -> Tally:
    tally = Tally()
    barrier_method = "session/list" if acp else "agent/listSessions"
    for start in range(0, len(messages), 40):
        for message in messages[start : start + 40]:
            tally.sent += 1
            if message.owed == "id":
                tally.owed[message.msg_id] = message.codes
                tally.labels[message.msg_id] = message.label
            elif message.owed == "null":
                tally.null_owed.append((message.label, message.codes))
            client.send_body(message.body)
        barrier = f"barrier-{start}"
        tally.harness.add(barrier)
        await client.request(barrier_method, {}, barrier)
        assert client.process.returncode is None, "the daemon exited"
    waiting = set(tally.owed)

    def all_answered() -> bool:
        # Checked at every arrival: only the ids still waiting are looked at.
        waiting.difference_update([i for i in waiting if client.answer(i) is not None])
        return not waiting

    try:
        await client.until(all_answered, 60)
    except TimeoutError:
        unanswered = [tally.labels[i] for i in tally.owed if client.answer(i) is None]
        raise AssertionError(f"never answered: {unanswered[:10]}") from None
    return tally


def _check(client: fuzz_transports.Client, tally: Tally) -> None:
    assert client.process.returncode is None, "the daemon exited"
    counts: dict[Any, int] = {}
    for response in client.responses:
        counts[response.get("id")] = counts.get(response.get("id"), 0) + 1
    for msg_id, codes in tally.owed.items():
        assert counts.get(msg_id) == 1, (tally.labels[msg_id], counts.get(msg_id))
        code = client.answer(msg_id).get("error", {}).get("code")  # type: ignore[union-attr]
        assert code in codes, (tally.labels[msg_id], client.answer(msg_id))
    known = set(tally.owed) | tally.harness | {None, "init", "new", "fresh", "normal"}
    strays = [r for r in client.responses if r.get("id") not in known]
    # Never an answer to a notification or to anything shaped like a response.
    assert not strays, strays[:3]
    nulls = [r for r in client.responses if r.get("id") is None]
    allowed = set().union(*(codes for _label, codes in tally.null_owed))
    assert len(nulls) == len(tally.null_owed), (len(nulls), len(tally.null_owed))
    assert all(r.get("error", {}).get("code") in allowed for r in nulls), nulls[:3]


@pytest.mark.parametrize("transport", [*fuzz_transports.LSP_TRANSPORTS, "acp"])
async def test_no_message_ends_the_daemon_on_any_transport(
    transport: str, tmp_path: Path, long_run: bool
) -> None:
    root = tmp_path / "w"
    root.mkdir()
    script = tmp_path / "script.jsonl"
    script.write_text('{"text": "ok"}\n' * 50)
    # The fuzzer opens hundreds of sessions on purpose (thousands under --long); the
    # maxLiveSessions cap (its own tests: test_e2e_live_sessions.py) would refuse the
    # normal turn that follows.
    (root / "home").mkdir()
    (root / "home" / "settings.json").write_text('{"maxLiveSessions": 1000000}')
    env = {
        "AGENTLS_HOME": str(tmp_path / "home"),
        "AGENTLS_PROVIDER": "scripted",
        "AGENTLS_SCRIPT": str(script),
        "AGENTLS_LOG_LEVEL": "ERROR",
    }
    started = time.monotonic()
    client = await fuzz_transports.start(transport, tmp_path, env)
    acp = transport == "acp"
    try:
        session = await _open_session(client, root, acp)
        cases = acp_cases(session, root) if acp else lsp_cases(session, root, client.token)
        seed = int.from_bytes(os.urandom(4)) if long_run else 1
        rng = random.Random(f"{transport}-{seed}")
        generator = rpc_fuzz.Generator(cases, rng, long_run, deep_refused=not acp)
        mutations = list(generator.all_mutations())
        count = STRUCTURAL_LONG if long_run else STRUCTURAL_DEFAULT
        chosen = rng.sample(mutations, min(count, len(mutations)))
        while len(chosen) < count:
            chosen.append(rng.choice(mutations))
        messages = [generator.build(*m) for m in chosen]
        tally = await _fuzz(client, messages, acp)
        await _normal_turn(client, root, acp)
        _check(client, tally)
        print(
            f"{transport}: {tally.sent} messages ({len(mutations)} distinct mutations, seed "
            f"{seed}), {len(tally.owed)} requests answered once, {len(tally.null_owed)} "
            f"answered with id null, 0 unanswered, exits 0, {time.monotonic() - started:.0f} s"
        )
    finally:
        await client.close()


async def _open_session(client: fuzz_transports.Client, root: Path, acp: bool) -> str:
    if acp:
        init = await client.request("initialize", {"protocolVersion": 1}, "init")
        assert "result" in init, init
        # Its prompts are answered with their turn's end: a script long enough for every
        # one the fuzzer sends (an exhausted script would end a turn with an error).
        script = {"agentls": {"script": [{"text": "ok"}] * STRUCTURAL_LONG}}
        params = {"cwd": str(root), "mcpServers": [], "_meta": script}
        new = await client.request("session/new", params, "new")
    else:
        await fuzz_transports.lsp_handshake(client, root)
        new = await client.request("agent/newSession", {"cwd": str(root)}, "new")
    assert "result" in new, new
    return str(new["result"]["sessionId"])


async def _normal_turn(client: fuzz_transports.Client, root: Path, acp: bool) -> None:
    """After the fuzz, a scripted turn in a fresh session still runs end to end."""
    script = [{"text": "fine"}]
    if acp:
        new = await client.request("session/new", {"cwd": str(root), "mcpServers": []}, "fresh")
        prompt = {
            "sessionId": new["result"]["sessionId"],
            "prompt": [{"type": "text", "text": "hi"}],
        }
        done = await client.request("session/prompt", prompt, "normal")
        assert done["result"]["stopReason"] == "end_turn", done
        return
    params = {"cwd": str(root), "script": script}
    new = await client.request("agent/newSession", params, "fresh")
    submit = {"sessionId": new["result"]["sessionId"], "text": "hello"}
    turn = (await client.request("agent/submitMessage", submit, "normal"))["result"]["turnId"]

    def ended() -> dict[str, Any] | None:
        events = [n["params"] for n in client.notifications if n.get("method") == "agent/event"]
        return next(
            (e for e in events if e["type"] == "turn_completed" and e.get("turnId") == turn), None
        )

    await client.until(lambda: ended() is not None, 60)
    assert ended()["stopReason"] == "end_turn"  # type: ignore[index]
