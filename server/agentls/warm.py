"""`agentls run` as a thin client of a per-user daemon that stays warm.

Starting the core costs over a second (the provider SDK alone is most of it), so `run`
talks JSON-RPC over a private Unix socket to a daemon (`agentls --socket`) that already
has everything loaded, starting one on first use. The daemon's settings come from its
environment, so each distinct environment (API keys, base URLs, AGENTLS_* variables) gets
its own daemon: the socket's name is a hash of them. A daemon exits after
AGENTLS_DAEMON_IDLE seconds (default 600) without a connection.

Standard library only, and no asyncio, pathlib, typing or hashlib: this module is the
whole warm path, and each of those costs milliseconds at every start on a small machine.
"""

from __future__ import annotations

import json
import os
import select
import sys
import time
from _socket import socket

from agentls import __version__, cli_worktrees, daemon_socket
from agentls.cli_print import Answers, HumanPrinter, JsonPrinter, ProgressLine, write

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_INTERRUPTED = 0, 1, 2, 130
# Errors a user fixes by changing the command or the configuration (exit 2).
USAGE_CODES = (-32602, 1001, 1004)
# How long a Ctrl-C waits for the daemon to confirm the turn's end before the client goes:
# the daemon also ends and records the turn when the connection closes, so the wait only
# lets the end be shown (and the abort be answered) before the exit.
STOP_WAIT = 1.0
# The answers a Ctrl-C waits for: a turn's start (so that it is aborted, and its end shown)
# and the abort. Not a pending newSession: closing the connection is enough there.
SETTLING = ("agent/submitMessage", "agent/continueTurn", "agent/abort")

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


# No daemon could be reached or started; the caller runs the turn in-process.
WarmUnavailable = daemon_socket.Unavailable
socket_path = daemon_socket.socket_path


class RpcError(Exception):
    def __init__(self, error: dict[str, Any]) -> None:
        super().__init__(error.get("message", "error"))
        self.code = int(error.get("code", -32603))


def file_uri(path: str) -> str:
    """`file://` URI of an absolute POSIX path (what pathlib's as_uri gives, without it)."""
    safe = b"/-._~!$&'()*+,;=:@" + bytes(range(48, 58)) + bytes(range(65, 91))
    safe += bytes(range(97, 123))
    quoted = "".join(chr(b) if b in safe else f"%{b:02X}" for b in os.fsencode(path))
    return "file://" + quoted


class Connection:
    """LSP-framed JSON-RPC over a connected socket, read with a timeout."""

    def __init__(self, sock: socket) -> None:
        self._sock = sock
        # What was received and not parsed yet starts at `_start`: a message taken from the
        # front moves `_start` instead of copying the rest (a burst of events arrives as
        # hundreds of messages in one read).
        self._buffer = bytearray()
        self._start = 0
        self._next_id = 0
        # Requests sent and not answered yet: id → method. Noted before the request goes
        # out, so an interrupt at any point leaves no answer unaccounted for.
        self.unanswered: dict[int, str] = {}

    def send(self, message: dict[str, Any]) -> None:
        body = json.dumps({"jsonrpc": "2.0", **message}, ensure_ascii=False).encode()
        self._sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)

    def request(self, method: str, params: Any) -> int:
        self._next_id += 1
        self.unanswered[self._next_id] = method
        self.send({"id": self._next_id, "method": method, "params": params})
        return self._next_id

    def notify(self, method: str, params: Any) -> None:
        self.send({"method": method, "params": params})

    def receive(self, timeout: float | None) -> dict[str, Any] | None:
        """The next message, or None when `timeout` passes first."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            message = self._parse()
            if message is not None:
                return message
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self._sock], [], [], left)
            if not ready:
                return None
            chunk = self._sock.recv(65536)
            if not chunk:
                raise ConnectionError("the daemon closed the connection")
            if self._start:
                del self._buffer[: self._start]
                self._start = 0
            self._buffer += chunk

    def _parse(self) -> dict[str, Any] | None:
        buffer, start = self._buffer, self._start
        end = buffer.find(b"\r\n\r\n", start)
        if end < 0:
            return None
        if buffer.startswith(b"Content-Length: ", start):
            # The daemon's header comes first (pygls may add a Content-Type): no split.
            stop = buffer.find(b"\r\n", start, end)
            length = int(buffer[start + 16 : stop if stop >= 0 else end])
        else:
            length = next(
                int(line.split(b":", 1)[1])
                for line in bytes(buffer[start:end]).split(b"\r\n")
                if line.lower().startswith(b"content-length:")
            )
        body = end + 4
        if len(buffer) - body < length:
            return None
        self._start = body + length
        message: dict[str, Any] = json.loads(buffer[body : self._start])
        return message

    def close(self) -> None:
        self._sock.close()


def connect(env: dict[str, str]) -> Connection:
    """A connection to this environment's daemon, started if none answers."""
    return Connection(daemon_socket.open_socket(env))


class Turn:
    """One `run` over a connection: the session, the message, the events until the end."""

    def __init__(
        self, conn: Connection, printer: HumanPrinter | JsonPrinter, answers: Answers
    ) -> None:
        self.conn = conn
        self.printer = printer
        self.answers = answers
        self.progress: ProgressLine | None = None
        self.session_id = ""
        # The turn this run waits for, once the daemon has named it, and whether it ended.
        self.turn_id = ""
        self.ended = False
        # Ctrl-C was pressed: what still comes is shown, nothing is asked.
        self.stopping = False
        # An isolated agent's worktree was made: the run offers it at the end.
        self.saw_worktree = False

    def call(self, method: str, params: Any) -> Any:
        """A request whose answer is needed before going on (events are shown meanwhile)."""
        wanted = self.conn.request(method, params)
        while True:
            message = self.conn.receive(None)
            assert message is not None
            if message.get("id") == wanted and "method" not in message:
                self.answered(message)
                if "error" in message:
                    raise RpcError(message["error"])
                return message.get("result")
            self.handle(message)

    def answered(self, message: dict[str, Any]) -> None:
        """Note what an answer tells: the session opened, the turn started."""
        method = self.conn.unanswered.pop(message.get("id", -1), None)
        result = message.get("result")
        if not isinstance(result, dict):
            return
        if method in ("agent/newSession", "agent/resumeSession") and not self.session_id:
            self.session_id = str(result.get("sessionId", ""))
        elif method in ("agent/submitMessage", "agent/continueTurn") and result.get("turnId"):
            self.turn_id, self.ended = str(result["turnId"]), False
            if self.stopping:
                # The abort may have reached the daemon before this turn was there.
                self.abort()

    def handle(self, message: dict[str, Any]) -> dict[str, Any] | None:
        """Show an event and answer what it asks; returns turn_completed when it comes."""
        method = message.get("method")
        if method is None:
            self.answered(message)
            return None
        if "id" in message:
            # A request this client does not serve (it offers no capabilities).
            self.conn.send({"id": message["id"], "error": {"code": -32601, "message": method}})
            return None
        if method != "agent/event":
            return None
        event: dict[str, Any] = message["params"]
        if self.progress is not None:
            self.progress.clear()
            self.progress.saw(event)
        self.printer.show(event)
        kind = event.get("type")
        if kind == "subagent_completed" and "worktree" in event:
            self.saw_worktree = True
        if kind == "turn_completed":
            if event.get("turnId") == self.turn_id:
                self.ended = True
            return event
        if not self.stopping:
            self.answer(event)
        return None

    def answer(self, event: dict[str, Any]) -> None:
        """Ask the terminal (or the policy) what a permission request or question needs."""
        kind = event.get("type")
        if kind == "permission_request":
            option = self.answers.permission(event)
            self.printer.answered(event, option)
            reply = {"sessionId": self.session_id, "requestId": event["requestId"]}
            reply["optionId"] = option
            feedback = self.answers.feedback(event, option)
            if feedback:
                reply["message"] = feedback
            self.conn.request("agent/respondPermission", reply)
        elif kind == "ask_user":
            answer = self.answers.question(event)
            self.conn.request(
                "agent/respondAskUser",
                {"sessionId": self.session_id, "requestId": event["requestId"], "answer": answer},
            )

    def until_done(self) -> dict[str, Any]:
        """The events of the current turn until its turn_completed."""
        while True:
            message = self.conn.receive(0.25)
            if message is None:
                if self.progress is not None:
                    self.progress.draw()
                continue
            done = self.handle(message)
            if done is not None and done.get("turnId") == self.turn_id:
                return done

    def abort(self) -> None:
        params = {"sessionId": self.session_id}
        if self.turn_id:
            params["turnId"] = self.turn_id
        self.conn.request("agent/abort", params)

    def stop(self) -> None:
        """Ctrl-C: abort the turn, and wait a moment for the daemon to confirm its end.

        A turn that a pending submitMessage starts is waited for too (and aborted by its id
        when the answer names it). A second Ctrl-C ends the wait."""
        self.stopping = True
        try:
            if self.session_id:
                self.abort()
            self._settle(time.monotonic() + STOP_WAIT)
        except (OSError, ValueError, KeyError, StopIteration) as exc:
            # The connection broke, or the interrupt cut a message short: nothing more to
            # wait for (the daemon ends the turn when the connection closes).
            write(sys.stderr, f"agentls: stopped without the daemon's confirmation ({exc})\n")

    def _settle(self, deadline: float) -> None:
        while self._unsettled():
            left = deadline - time.monotonic()
            message = self.conn.receive(left) if left > 0 else None
            if message is None:
                return
            self.handle(message)

    def _unsettled(self) -> bool:
        pending = any(method in SETTLING for method in self.conn.unanswered.values())
        return pending or bool(self.turn_id and not self.ended)


def run_warm(
    cwd: str,
    prompt: str,
    session: dict[str, Any],
    overrides: dict[str, Any],
    as_json: bool,
    answers: Answers,
    progress: bool,
) -> int:
    """One turn through the warm daemon. `session`: resume / continue_newest / data / intent.

    Raises WarmUnavailable, before any daemon has answered, when no daemon can be had. Ctrl-C
    (KeyboardInterrupt) at any point aborts the turn and returns 130; before the connection
    is made it propagates, as nothing needs stopping yet."""
    printer = JsonPrinter(sys.stdout) if as_json else HumanPrinter(sys.stdout, cwd)
    turn = Turn(connect(dict(os.environ)), printer, answers)
    turn.progress = ProgressLine(sys.stderr) if progress else None
    try:
        return _run(turn, cwd, prompt, session, overrides, as_json)
    except KeyboardInterrupt:
        turn.stop()
        return EXIT_INTERRUPTED
    finally:
        if turn.progress is not None:
            turn.progress.clear()
        turn.conn.close()


def _initialize(turn: Turn, cwd: str) -> None:
    """`initialize`. A daemon that closes the connection before answering it (its idle
    time ran out, or `agentls stop`, just as this run connected) has done nothing for it:
    once, another is reached (started if none answers), as the editors' relay does."""
    params = {
        "processId": os.getpid(),
        "rootUri": file_uri(cwd),
        "capabilities": {},
        "clientInfo": {"name": "agentls run", "version": __version__},
        # The run's turn ends with it (Ctrl-C), never runs on as an editor's may.
        "initializationOptions": {"detachedTurnTimeout": 0},
    }
    try:
        turn.call("initialize", params)
    except ConnectionError:
        turn.conn.close()
        turn.conn = connect(dict(os.environ))
        turn.call("initialize", params)


def _run(
    turn: Turn,
    cwd: str,
    prompt: str,
    session: dict[str, Any],
    overrides: dict[str, Any],
    as_json: bool,
) -> int:
    _initialize(turn, cwd)
    turn.conn.notify("initialized", {})
    try:
        _open_session(turn, cwd, session, overrides)
    except RpcError as exc:
        sys.stderr.write(f"agentls: {exc}\n")
        return EXIT_USAGE if exc.code in USAGE_CODES else EXIT_FAILED
    message: dict[str, Any] = {"sessionId": turn.session_id, "text": prompt}
    if session.get("data") is not None:
        message["data"] = session["data"]
    if session.get("intent"):
        message["intent"] = session["intent"]
    try:
        turn.call("agent/submitMessage", message)
    except RpcError as exc:
        # An unknown slash command, say: nothing ran.
        sys.stderr.write(f"agentls: {exc}\n")
        return EXIT_USAGE if exc.code in USAGE_CODES else EXIT_FAILED
    done = turn.until_done()
    while done.get("stopReason") == "max_turns" and turn.answers.go_on(done):
        turn.call("agent/continueTurn", {"sessionId": turn.session_id})
        done = turn.until_done()
    if turn.progress is not None:
        turn.progress.clear()
    if not as_json:
        # Only when there can be any: a worktree made now, or one an earlier run kept.
        if turn.saw_worktree or session.get("resume") or session.get("continue_newest"):
            _offer_worktrees(turn)
        write(
            sys.stderr,
            f"session {turn.session_id} (agentls run --resume {turn.session_id} goes on)\n",
        )
    return EXIT_OK if done.get("stopReason") == "end_turn" else EXIT_FAILED


def _offer_worktrees(turn: Turn) -> None:
    """The isolated agents' worktrees: each one's diff summary, then merge, discard or keep."""
    session = turn.session_id
    try:
        listed = turn.call("agent/listWorktrees", {"sessionId": session})
    except RpcError as exc:
        # A daemon of an older version has no worktrees to offer.
        write(sys.stderr, f"agentls: worktrees not listed: {exc}\n")
        return
    for entry, action in cli_worktrees.decide(listed["worktrees"], turn.answers):
        result = None
        if action != "keep":
            params = {"sessionId": session, "agentId": entry["agentId"], "action": action}
            try:
                result = turn.call("agent/resolveWorktree", params)
            except RpcError as exc:
                write(sys.stderr, f"agentls: {entry['agentId']} not {action}d: {exc}\n")
                continue
        cli_worktrees.report(entry, action, result)


def _open_session(turn: Turn, cwd: str, session: dict[str, Any], overrides: dict[str, Any]) -> None:
    """A new session, or the earlier one `session` names (its answer sets turn.session_id)."""
    resume = session.get("resume")
    if session.get("continue_newest"):
        listed = turn.call("agent/listSessions", {"cwd": cwd, "limit": 1})
        if not listed["sessions"]:
            raise RpcError({"code": 1001, "message": f"No session to continue in {cwd}."})
        resume = listed["sessions"][0]["sessionId"]
    if resume:
        # The settings apply to a session the daemon rebuilds from its transcript; one it
        # has open (in an editor) keeps its own, but for the mode and model set below.
        # No messages: the command line shows none of the conversation (a long one is
        # neither read nor sent).
        params = {"sessionId": resume, "messageLimit": 0, **overrides}
        resumed = turn.call("agent/resumeSession", params)
        session_id: str = resumed["sessionId"]
        # What the command line says for this turn applies to the resumed session too.
        if "permissionMode" in overrides:
            mode = {"sessionId": session_id, "permissionMode": overrides["permissionMode"]}
            turn.call("agent/setPermissionMode", mode)
        if "model" in overrides or "provider" in overrides:
            model = overrides.get("model") or resumed["model"]
            change = {"sessionId": session_id, "model": model}
            if "provider" in overrides:
                change["provider"] = overrides["provider"]
            turn.call("agent/setModel", change)
        return
    turn.call("agent/newSession", {"cwd": cwd, **overrides})
