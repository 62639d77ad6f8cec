"""One agent turn without an editor: `agentls run` and `agentls demo`.

The session hands this front end typed events; it prints them for a person, or, with
`--json`, turns them into the same `agent/event` objects the LSP server sends. Permission
requests and AskUser questions are answered on the terminal, or by a fixed policy when
there is none.
"""

from __future__ import annotations

import asyncio
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agentls.cli_print import (
    Answers,
    HumanPrinter,
    JsonPrinter,
    ProgressLine,
)
from agentls.errors import AgentError, InvalidParams, ProviderNotConfigured, UnknownSession
from agentls.events import AskUserRequest, PermissionRequest, SessionEvent, TurnCompleted
from agentls.session.manager import SessionManager
from agentls.session.slash import submit_message
from agentls.wire import event_payload

EXIT_OK, EXIT_FAILED, EXIT_NOT_CONFIGURED, EXIT_INTERRUPTED = 0, 1, 2, 130


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
    ended: asyncio.Queue[tuple[TurnCompleted, dict[str, Any]]] = asyncio.Queue()
    printer: JsonPrinter | HumanPrinter = (
        JsonPrinter(sys.stdout) if as_json else HumanPrinter(sys.stdout)
    )
    status = ProgressLine(sys.stderr) if progress else None
    manager: SessionManager

    def on_event(envelope: SessionEvent) -> None:
        payload = event_payload(envelope)
        if status is not None:
            status.clear()
            status.saw(payload)
        printer.show(payload)
        event = envelope.event
        if isinstance(event, PermissionRequest):
            asyncio.get_running_loop().create_task(_answer(envelope.session_id, payload))
        elif isinstance(event, AskUserRequest):
            asyncio.get_running_loop().create_task(_reply(envelope.session_id, payload))
        elif isinstance(event, TurnCompleted):
            ended.put_nowait((event, payload))

    async def _answer(session_id: str, request: dict[str, Any]) -> None:
        option = await asyncio.to_thread(answers.permission, request)
        printer.answered(option)
        manager.get(session_id).respond_permission(request["requestId"], option)

    async def _reply(session_id: str, request: dict[str, Any]) -> None:
        reply = await asyncio.to_thread(answers.question, request)
        manager.get(session_id).respond_ask_user(request["requestId"], reply)

    manager = SessionManager(on_event)
    try:
        session = await _session(manager, cwd, request, overrides)
    except (ProviderNotConfigured, UnknownSession, InvalidParams) as exc:
        sys.stderr.write(f"agentls: {exc.message}\n")
        return EXIT_NOT_CONFIGURED
    except AgentError as exc:
        sys.stderr.write(f"agentls: {exc.message}\n")
        return EXIT_FAILED
    try:
        await submit_message(
            manager, session, request.prompt, data=request.data, intent=request.intent
        )
    except InvalidParams as exc:
        # An unknown slash command: nothing ran.
        sys.stderr.write(f"agentls: {exc.message}\n")
        await manager.close_all()
        return EXIT_NOT_CONFIGURED
    ticker = asyncio.create_task(_tick(status)) if status is not None else None
    try:
        completed, payload = await ended.get()
        while completed.stop_reason == "max_turns" and await asyncio.to_thread(
            answers.go_on, payload
        ):
            session.continue_turn()
            completed, payload = await ended.get()
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


async def _tick(status: ProgressLine) -> None:
    while True:
        await asyncio.sleep(0.25)
        status.draw()
