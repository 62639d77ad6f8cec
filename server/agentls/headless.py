"""One agent turn without an editor: `agentls run` and `agentls demo`.

The session hands this front end typed events; it prints them for a person, or, with
`--json`, turns them into the same `agent/event` objects the LSP server sends. Permission
requests and AskUser questions are answered on the terminal, or by a fixed policy when
there is none.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from agentls.errors import AgentError, InvalidParams, ProviderNotConfigured, UnknownSession
from agentls.events import (
    AskUserRequest,
    Compaction,
    LoopEvent,
    MessageCompleted,
    MessageDiscarded,
    Notice,
    PermissionRequest,
    SessionEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    ToolCallUpdate,
    TurnCompleted,
)
from agentls.session.manager import SessionManager
from agentls.wire import event_payload

EXIT_OK, EXIT_FAILED, EXIT_NOT_CONFIGURED, EXIT_INTERRUPTED = 0, 1, 2, 130
_FINISHED = ("completed", "failed", "declined")


class Answers:
    """How a headless turn answers permission requests and AskUser questions."""

    def permission(self, request: PermissionRequest) -> str:
        return "reject_once"

    def question(self, request: AskUserRequest) -> str:
        return "(No answer: agentls run has no terminal to ask on. Decide yourself or stop.)"


class DemoAnswers(Answers):
    def permission(self, request: PermissionRequest) -> str:
        return "allow_always"


class NoTerminal(Answers):
    def permission(self, request: PermissionRequest) -> str:
        sys.stderr.write(
            "\n[No terminal to ask on: rejected. Rerun with --permission-mode acceptEdits "
            "or bypassPermissions.]\n"
        )
        return "reject_once"


class Terminal(Answers):
    def permission(self, request: PermissionRequest) -> str:
        choices = {"y": "allow_once", "a": "allow_always", "n": "reject_once", "d": "reject_always"}
        while True:
            reply = _ask(f"Allow {request.title}? [y]es / [a]lways / [n]o / [d]eny always: ")
            if reply[:1].lower() in choices:
                return choices[reply[:1].lower()]
            if not reply:
                return "reject_once"

    def question(self, request: AskUserRequest) -> str:
        hint = f" ({' / '.join(request.choices)})" if request.choices else ""
        return _ask(f"{request.question}{hint}: ")


def _ask(prompt: str) -> str:
    sys.stderr.write("\n" + prompt)
    sys.stderr.flush()
    return sys.stdin.readline().strip()


@dataclass(frozen=True, slots=True)
class TurnRequest:
    prompt: str
    # An earlier session to go on in, or the cwd's newest (`--continue`).
    resume: str | None = None
    continue_newest: bool = False
    data: Any = None
    intent: str | None = None


async def one_turn(
    cwd: Path,
    request: TurnRequest,
    overrides: dict[str, Any],
    as_json: bool,
    answers: Answers,
    progress: bool = False,
) -> int:
    """Run one turn (in a new session or an earlier one); the exit code says how it ended."""
    done: asyncio.Future[TurnCompleted] = asyncio.get_running_loop().create_future()
    printer: _JsonPrinter | _HumanPrinter = (
        _JsonPrinter(sys.stdout) if as_json else _HumanPrinter(sys.stdout)
    )
    status = ProgressLine(sys.stderr) if progress else None
    manager: SessionManager

    def on_event(envelope: SessionEvent) -> None:
        if status is not None:
            status.clear()
            status.saw(envelope.event)
        printer.show(envelope)
        event = envelope.event
        if isinstance(event, PermissionRequest):
            asyncio.get_running_loop().create_task(_answer(envelope.session_id, event))
        elif isinstance(event, AskUserRequest):
            asyncio.get_running_loop().create_task(_reply(envelope.session_id, event))
        elif isinstance(event, TurnCompleted) and not done.done():
            done.set_result(event)

    async def _answer(session_id: str, request: PermissionRequest) -> None:
        option = await asyncio.to_thread(answers.permission, request)
        printer.answered(option)
        manager.get(session_id).respond_permission(request.request_id, option)

    async def _reply(session_id: str, request: AskUserRequest) -> None:
        reply = await asyncio.to_thread(answers.question, request)
        manager.get(session_id).respond_ask_user(request.request_id, reply)

    manager = SessionManager(on_event)
    try:
        session = await _session(manager, cwd, request, overrides)
    except (ProviderNotConfigured, UnknownSession, InvalidParams) as exc:
        sys.stderr.write(f"agentls: {exc.message}\n")
        return EXIT_NOT_CONFIGURED
    except AgentError as exc:
        sys.stderr.write(f"agentls: {exc.message}\n")
        return EXIT_FAILED
    session.submit(request.prompt, data=request.data, intent=request.intent)
    ticker = asyncio.create_task(status.run()) if status is not None else None
    try:
        completed = await done
    except asyncio.CancelledError:
        # Ctrl-C: the turn is aborted and its end recorded before the process exits.
        session.abort()
        await manager.close_all()
        return EXIT_INTERRUPTED
    finally:
        if ticker is not None:
            ticker.cancel()
        if status is not None:
            status.clear()
    await manager.close_all()
    if not as_json:
        sys.stderr.write(f"session {session.id} (agentls run --resume {session.id} goes on)\n")
    return EXIT_OK if completed.stop_reason == "end_turn" else EXIT_FAILED


async def _session(
    manager: SessionManager, cwd: Path, request: TurnRequest, overrides: dict[str, Any]
) -> Any:
    """A new session, or the earlier one the request names."""
    resume = request.resume
    if request.continue_newest:
        newest, _cursor = manager.list(cwd, None, 1)
        if not newest:
            raise UnknownSession(f"No session to continue in {cwd}.")
        resume = newest[0].session_id
    if resume is not None:
        session, _display = await manager.resume(resume, overrides)
        return session
    return await manager.create(cwd, overrides)


class ProgressLine:
    """What the turn is doing, on one line of a terminal's stderr, redrawn in place."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._started = time.monotonic()
        self._doing = "waiting for the model"
        self._tools = 0
        self._shown = False

    def saw(self, event: LoopEvent) -> None:
        if isinstance(event, ToolCallEvent):
            self._tools += 1
            self._doing = event.title
        elif isinstance(event, (TextDeltaEvent, ThinkingDeltaEvent)):
            self._doing = "writing" if isinstance(event, TextDeltaEvent) else "thinking"
        elif isinstance(event, PermissionRequest):
            self._doing = "waiting for your answer"
        elif isinstance(event, ToolCallUpdate) and event.status in _FINISHED:
            self._doing = "waiting for the model"

    async def run(self) -> None:
        frame = 0
        while True:
            await asyncio.sleep(0.25)
            frame += 1
            elapsed = time.monotonic() - self._started
            tools = (
                f" · {self._tools} tool call{'' if self._tools == 1 else 's'}"
                if self._tools
                else ""
            )
            spinner = self.FRAMES[frame % len(self.FRAMES)]
            _write(self._out, f"\r\x1b[K{spinner} {self._doing[:60]} · {elapsed:.0f}s{tools}")
            self._shown = True

    def clear(self) -> None:
        if self._shown:
            _write(self._out, "\r\x1b[K")
            self._shown = False


class _JsonPrinter:
    """One `agent/event` object per line, exactly as the LSP server would send it."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def show(self, envelope: SessionEvent) -> None:
        _write(self._out, json.dumps(event_payload(envelope), ensure_ascii=False) + "\n")

    def answered(self, option: str) -> None:
        """The answer to a permission request shows up as its permission_resolved event."""


class _HumanPrinter:
    """Text as it streams, one line per tool call and result, the stop reason at the end."""

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._in_text = False

    def show(self, envelope: SessionEvent) -> None:
        event = envelope.event
        if isinstance(event, TextDeltaEvent):
            self._write(event.text)
            self._in_text = True
            return
        if isinstance(event, (ThinkingDeltaEvent, MessageCompleted)):
            return
        line = _line(event)
        if line:
            self._line(line)

    def answered(self, option: str) -> None:
        self._line(f"  → {option}")

    def _line(self, line: str) -> None:
        self._write(("\n" if self._in_text else "") + line + "\n")
        self._in_text = False

    def _write(self, text: str) -> None:
        _write(self._out, text)


def _line(event: LoopEvent) -> str | None:
    if isinstance(event, ToolCallEvent):
        return f"● {event.title}"
    if isinstance(event, ToolCallUpdate) and event.status in _FINISHED:
        first = (event.content or "").strip().splitlines()
        summary = first[0][:100] if first else event.status
        return f"  {'✓' if event.status == 'completed' else '✗'} {summary}"
    if isinstance(event, PermissionRequest):
        return f"? permission requested: {event.title}"
    if isinstance(event, AskUserRequest):
        return f"? {event.question}"
    if isinstance(event, Compaction):
        before, after = event.tokens_before, event.tokens_after
        return f"[context compacted ({event.trigger}): {before:,} → {after:,} tokens]"
    if isinstance(event, MessageDiscarded):
        # Printed text cannot be taken back: say it does not count.
        return "[the text above was cut short and is asked for again]"
    if isinstance(event, Notice):
        return f"[{event.level}] {event.message}"
    if isinstance(event, TurnCompleted):
        detail = f": {event.error.message}" if event.error else ""
        usage = event.usage
        tokens = f"{usage.input_tokens} in / {usage.output_tokens} out tokens"
        return f"\n[{event.stop_reason} after {event.turns} model calls, {tokens}]{detail}"
    return None


def _write(out: TextIO, text: str) -> None:
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `agentls run --json … | head`): stop printing quietly.
        pass
