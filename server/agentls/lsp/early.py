"""The warm daemon's first half second: `initialize` answered before pygls is loaded.

Importing lsprotocol alone takes longer than an editor should wait for a daemon it had to
start, and no pygls server answers `initialize` sooner. So the daemon binds its socket
first (standard library), imports the server in a thread, and meanwhile answers each
connection's `initialize` itself, with the result the server would give (the same
capabilities for every client but the negotiated position encoding; a test compares the
two). When the server is loaded it takes over every connection with what was read from it
so far; the server handles that `initialize` again, for its own state, and its answer is
not sent twice (agentls.lsp.server.AgentProtocol.preanswered). Anything else, or an
`initialize` that does not look well-formed, waits for the server, as before.
"""

from __future__ import annotations

import json
import os
import select
import socket
import threading

from agentls import PROTOCOL_VERSION, __version__
from agentls.daemon_socket import try_connect_closed
from agentls.names import DELIVERIES, PERMISSION_MODES, PROVIDERS

ENCODINGS = ("utf-8", "utf-16", "utf-32")
POLL = 0.005


class Early:
    """A connection accepted before the server was loaded: what it sent, and the id of the
    `initialize` answered here (None when none was)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.received = bytearray()
        self.answered: int | str | None = None
        self.closed = False


def bind(path: str) -> socket.socket | None:
    """The daemon's listening socket at `path` (mode 0600), or None when a live daemon
    already answers there; a stale file of a dead one is replaced."""
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    if try_connect_closed(path):
        return None
    if os.path.exists(path):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(path)
    os.chmod(path, 0o600)
    listener.listen(128)
    return listener


def serve_until_loaded(listener: socket.socket, loading: threading.Thread) -> list[Early]:
    """Accept and answer `initialize` until `loading` ends; the connections accepted."""
    early: list[Early] = []
    while loading.is_alive():
        socks = [listener, *(e.sock for e in early if not e.closed)]
        readable, _, _ = select.select(socks, [], [], POLL)
        if listener in readable:
            conn, _ = listener.accept()
            early.append(Early(conn))
        for connection in early:
            if connection.sock in readable:
                _read(connection)
    return early


def _read(connection: Early) -> None:
    data = connection.sock.recv(65536)
    if not data:
        connection.closed = True
        return
    connection.received += data
    if connection.answered is None:
        request = first_initialize(bytes(connection.received))
        if request is not None:
            msg_id = request["id"]
            assert isinstance(msg_id, (int, str))  # checked by first_initialize
            connection.answered = msg_id
            connection.sock.sendall(_frame(initialize_response(request)))


def first_initialize(stream: bytes) -> dict[str, object] | None:
    """The `initialize` request among the stream's first frames (after the relay's
    `agent/clientContext`), when it is complete and looks well-formed; else None."""
    for body in _bodies(stream, limit=2):
        try:
            message = json.loads(body)
        except ValueError:
            return None
        if not isinstance(message, dict):
            return None
        if message.get("method") == "agent/clientContext" and "id" not in message:
            continue
        return message if _plain_initialize(message) else None
    return None


def _plain_initialize(message: dict[str, object]) -> bool:
    params = message.get("params")
    msg_id = message.get("id")
    if message.get("method") != "initialize" or message.get("jsonrpc") != "2.0":
        return False
    if isinstance(msg_id, bool) or not isinstance(msg_id, (int, str)):
        return False
    if not isinstance(params, dict) or not isinstance(params.get("capabilities"), dict):
        return False
    process = params.get("processId")
    root = params.get("rootUri")
    folders = params.get("workspaceFolders")
    return (
        (process is None or (isinstance(process, int) and not isinstance(process, bool)))
        and (root is None or isinstance(root, str))
        and (folders is None or isinstance(folders, list))
    )


def _bodies(stream: bytes, limit: int) -> list[bytes]:
    bodies: list[bytes] = []
    while len(bodies) < limit:
        end = stream.find(b"\r\n\r\n")
        if end < 0:
            break
        length = None
        for line in stream[:end].split(b"\r\n"):
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length" and value.strip().isdigit():
                length = int(value)
        if length is None or len(stream) < end + 4 + length:
            break
        bodies.append(stream[end + 4 : end + 4 + length])
        stream = stream[end + 4 + length :]
    return bodies


def initialize_response(request: dict[str, object]) -> dict[str, object]:
    """What the server answers this `initialize` (agentls.lsp.server)."""
    params = request["params"]
    assert isinstance(params, dict)
    general = params["capabilities"].get("general")
    wanted = general.get("positionEncodings") if isinstance(general, dict) else None
    encoding = "utf-16"
    if isinstance(wanted, list):
        encoding = next((e for e in wanted if e in ENCODINGS), encoding)
    capabilities = {
        "positionEncoding": encoding,
        "textDocumentSync": _text_document_sync(params["capabilities"]),
        "executeCommandProvider": {"commands": []},
        "workspace": {
            "workspaceFolders": {"supported": True, "changeNotifications": True},
            "fileOperations": {},
        },
        "experimental": {
            "agentls": {
                "protocolVersion": PROTOCOL_VERSION,
                "version": __version__,
                "events": "agent/event",
                "deliveries": list(DELIVERIES),
                "permissionModes": list(PERMISSION_MODES),
                "providers": list(PROVIDERS),
            }
        },
    }
    server = {"name": "agentls", "version": __version__}
    result = {"capabilities": capabilities, "serverInfo": server}
    return {"jsonrpc": "2.0", "id": request["id"], "result": result}


def _text_document_sync(client: dict[str, object]) -> dict[str, object]:
    sync: dict[str, object] = {"openClose": True, "change": 2, "save": False}
    document = client.get("textDocument")
    told = document.get("synchronization") if isinstance(document, dict) else None
    for key in ("willSave", "willSaveWaitUntil"):
        # pygls states them (as not served) when the client states them at all.
        if isinstance(told, dict) and told.get(key) is not None:
            sync[key] = False
    return sync


def _frame(message: dict[str, object]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
