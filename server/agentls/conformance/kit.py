"""What every check is built from: a Context that starts fresh servers of the command under
test, and the small steps checks share (initialize params, a turn, an expected error)."""

from __future__ import annotations

import json
import shlex
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.conformance.rpc import Message, RpcError, Server, environment

Check = Callable[["Context"], None]


def registrar(into: list[tuple[str, Check]]) -> Callable[[str], Callable[[Check], Check]]:
    """A decorator that adds a check, by name, to `into` (the suite's order is theirs)."""

    def check(name: str) -> Callable[[Check], Check]:
        def register(fn: Check) -> Check:
            into.append((name, fn))
            return fn

        return register

    return check


@dataclass
class Context:
    command: list[str]
    root: Path
    # Over TCP: the kit connects where the server's discovery file says, with its token.
    tcp: bool = False

    @contextmanager
    def uninitialized(self) -> Iterator[Server]:
        """A fresh server, not yet initialized (its `workspace` folder made)."""
        work = Path(tempfile.mkdtemp(dir=self.root))
        (work / "ws").mkdir()
        env = environment(str(work / "home"))
        # Over TCP, a `{port}` in the command becomes 0: the server picks a free port.
        command = [part.replace("{port}", "0") for part in self.command]
        server = Server(command, env, str(work), tcp=self.tcp)
        server.workspace = work / "ws"  # type: ignore[attr-defined]
        try:
            yield server
        finally:
            server.close()

    @contextmanager
    def server(
        self, encodings: list[str] | None = None, apply_edit: bool = True
    ) -> Iterator[tuple[Server, Message]]:
        """A fresh server, initialized; yields it with the initialize result."""
        with self.uninitialized() as server:
            general = {"positionEncodings": encodings} if encodings else {}
            capabilities = {"general": general, "workspace": {"applyEdit": apply_edit}}
            result = server.request("initialize", initialize_params(server, capabilities))
            server.notify("initialized", {})
            yield server, result

    def script(self, server: Server, entries: list[dict[str, Any]], **params: Any) -> str:
        """A session on the scripted model playing `entries`; its id."""
        workspace: Path = server.workspace  # type: ignore[attr-defined]
        path = workspace.parent / f"script-{len(server.responses)}-{id(entries)}.jsonl"
        path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
        result = server.request(
            "agent/newSession",
            {"cwd": str(workspace), "provider": "scripted", "script": str(path), **params},
        )
        session_id: str = result["sessionId"]
        return session_id


def initialize_params(server: Server, capabilities: Message) -> Message:
    """`initialize` params for the server's workspace (with its token over TCP)."""
    workspace: Path = server.workspace  # type: ignore[attr-defined]
    params: Message = {
        "processId": None,
        "rootUri": workspace.as_uri(),
        "capabilities": capabilities,
    }
    if server.token is not None:
        params["initializationOptions"] = {"authToken": server.token}
    return params


def turn(server: Server, session_id: str, text: str, **params: Any) -> tuple[str, Message]:
    """Submit a message and wait for its turn_completed."""
    result = server.request(
        "agent/submitMessage", {"sessionId": session_id, "text": text, **params}
    )
    turn_id = result["turnId"]
    done = server.wait_event(
        lambda e: e["type"] == "turn_completed" and e.get("turnId") == turn_id, "turn_completed"
    )
    return turn_id, done


def expect_error(code: int, call: Callable[[], Any]) -> RpcError:
    try:
        call()
    except RpcError as error:
        assert error.code == code, f"expected error {code}, got {error}"
        return error
    raise AssertionError(f"expected error {code}, got a result")


def command_of(text: str) -> list[str]:
    return shlex.split(text)
