"""One agent turn without an editor: `agentls run` and `agentls demo`.

The session hands this front end typed events; it prints them for a person, or, with
`--json`, turns them into the same `agent/event` objects the LSP server sends. Permission
requests and AskUser questions are answered on the terminal, or by a fixed policy when
there is none.

Ctrl-C (`agentls run` in this process): the first press aborts the turn and lets it unwind
(its tools killed, its end recorded) for up to STOP_WAIT seconds; a second press, or an
unwind that takes longer, records the end at once, kills what the turn started and leaves
without waiting for the rest.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

from agentls import cli_worktrees
from agentls.cli_print import (
    Answers,
    HumanPrinter,
    JsonPrinter,
    ProgressLine,
)
from agentls.ctrl_c import CtrlC, exit_now
from agentls.errors import AgentError, InvalidParams, ProviderNotConfigured, UnknownSession
from agentls.events import (
    AskUserRequest,
    PermissionRequest,
    SessionEvent,
    SubagentCompleted,
    TurnCompleted,
)
from agentls.permissions.asking import PermissionAnswer
from agentls.session.manager import SessionManager
from agentls.session.session import AgentSession
from agentls.session.slash import submit_message
from agentls.session.turn import Submission
from agentls.session.worktree_requests import (
    WorktreeAction,
    entry_of,
    list_worktrees,
    resolve_worktree,
)
from agentls.wire import event_payload

EXIT_OK, EXIT_FAILED, EXIT_NOT_CONFIGURED, EXIT_INTERRUPTED = 0, 1, 2, 130
# How long the first Ctrl-C lets the turn unwind before its end is recorded without it.
STOP_WAIT = 1.0
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class TurnRequest:
    prompt: str
    # An earlier session to go on in, or the cwd's newest (`--continue`).
    resume: str | None = None
    continue_newest: bool = False
    data: Any = None
    intent: str | None = None


class Abandoned(Exception):
    """The turn's end is recorded and its processes killed; its tasks were not waited for."""


def run_here(
    cwd: Path,
    request: TurnRequest,
    overrides: dict[str, Any],
    as_json: bool,
    answers: Answers,
    progress: bool,
    ctrl_c: CtrlC,
) -> int:
    """`agentls run` in this process, on an event loop of its own; the exit code."""
    with asyncio.Runner() as runner:
        try:
            code = runner.run(one_turn(cwd, request, overrides, as_json, answers, progress, ctrl_c))
        except Abandoned:
            # Closing the runner would wait for every task to unwind: leave now instead.
            _leave_now(EXIT_INTERRUPTED)
        if code == EXIT_INTERRUPTED:
            # Stopped, its end recorded: tearing the loaded core down at exit would only
            # delay it (a second and more on a busy machine).
            _leave_now(code)
        return code


async def one_turn(
    cwd: Path,
    request: TurnRequest,
    overrides: dict[str, Any],
    as_json: bool,
    answers: Answers,
    progress: bool = False,
    ctrl_c: CtrlC | None = None,
    resume_hint: bool = True,
) -> int:
    """Run one turn (in a new session or an earlier one); the exit code says how it ended.

    With `ctrl_c`, its presses stop the turn (Abandoned after a second one); without it a
    cancellation (asyncio.run's Ctrl-C) is the first press. `resume_hint`: say at the end
    how to go on in the session (not for one that will not outlive the run)."""
    front = _FrontEnd(as_json, answers, progress, resume_hint)
    presses = asyncio.Queue[int]()
    if ctrl_c is not None:
        ctrl_c.deliver_to(asyncio.get_running_loop(), presses.put_nowait)
    work = asyncio.create_task(front.turn(cwd, request, overrides))
    pressed = asyncio.create_task(presses.get())
    try:
        try:
            await asyncio.wait({work, pressed}, return_when=asyncio.FIRST_COMPLETED)
        except asyncio.CancelledError:
            pass  # asyncio.run's own Ctrl-C: stop as on a first press
        else:
            if work.done():
                return work.result()
        await front.stop(work, presses)
        return EXIT_INTERRUPTED
    finally:
        pressed.cancel()
        if ctrl_c is not None:
            ctrl_c.raise_again()


class _FrontEnd:
    """The printer, the answers and the session manager of one headless turn."""

    def __init__(
        self, as_json: bool, answers: Answers, progress: bool, resume_hint: bool = True
    ) -> None:
        self.printer: JsonPrinter | HumanPrinter = (
            JsonPrinter(sys.stdout) if as_json else HumanPrinter(sys.stdout)
        )
        self.answers = answers
        self.status = ProgressLine(sys.stderr) if progress else None
        self.as_json = as_json
        self.resume_hint = resume_hint and not as_json
        self.ended: asyncio.Queue[tuple[TurnCompleted, dict[str, Any]]] = asyncio.Queue()
        self.manager = SessionManager(self.on_event)
        self._asking: set[asyncio.Task[None]] = set()
        # An isolated agent's worktree was made: the run offers it at the end.
        self.saw_worktree = False

    def on_event(self, envelope: SessionEvent) -> None:
        payload = event_payload(envelope)
        if self.status is not None:
            self.status.clear()
            self.status.saw(payload)
        self.printer.show(payload)
        event = envelope.event
        if isinstance(event, PermissionRequest):
            self._ask(self._answer(envelope.session_id, payload))
        elif isinstance(event, AskUserRequest):
            self._ask(self._reply(envelope.session_id, payload))
        elif isinstance(event, SubagentCompleted) and event.worktree is not None:
            self.saw_worktree = True
        elif isinstance(event, TurnCompleted):
            self.ended.put_nowait((event, payload))

    def _ask(self, asking: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(asking)
        # Held until done: the loop keeps only a weak reference to a task.
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    async def _answer(self, session_id: str, request: dict[str, Any]) -> None:
        option = await _on_own_thread(lambda: self.answers.permission(request))
        self.printer.answered(request, option)
        feedback = await _on_own_thread(lambda: self.answers.feedback(request, option))
        answer = PermissionAnswer(option, feedback)
        self.manager.get(session_id).answers.respond_permission(request["requestId"], answer)

    async def _reply(self, session_id: str, request: dict[str, Any]) -> None:
        reply = await _on_own_thread(lambda: self.answers.question(request))
        self.manager.get(session_id).answers.respond_ask_user(request["requestId"], reply)

    async def turn(self, cwd: Path, request: TurnRequest, overrides: dict[str, Any]) -> int:
        """Open the session, submit the message, wait for the turn's end."""
        manager = self.manager
        if isinstance(self.printer, HumanPrinter):
            self.printer.cwd = str(cwd)
        try:
            session = await _session(manager, cwd, request, overrides)
        except (ProviderNotConfigured, UnknownSession, InvalidParams) as exc:
            sys.stderr.write(f"agentls: {exc.message}\n")
            return EXIT_NOT_CONFIGURED
        except AgentError as exc:
            sys.stderr.write(f"agentls: {exc.message}\n")
            return EXIT_FAILED
        try:
            message = Submission(request.prompt, request.data, request.intent)
            await submit_message(manager, session, message)
        except InvalidParams as exc:
            # An unknown slash command: nothing ran.
            sys.stderr.write(f"agentls: {exc.message}\n")
            await manager.close_all()
            return EXIT_NOT_CONFIGURED
        status = self.status
        ticker = asyncio.create_task(_tick(status)) if status is not None else None
        try:
            completed, payload = await self.ended.get()
            while completed.stop_reason == "max_turns" and await _on_own_thread(
                functools.partial(self.answers.go_on, payload)
            ):
                session.intake.continue_turn()
                completed, payload = await self.ended.get()
        finally:
            if ticker is not None:
                ticker.cancel()
            if status is not None:
                status.clear()
        # Only when there can be any: a worktree made now, or one an earlier run kept.
        resumed = request.resume is not None or request.continue_newest
        if not self.as_json and (self.saw_worktree or resumed):
            await self._offer_worktrees(session)
        await manager.close_all()
        if self.resume_hint:
            sys.stderr.write(f"session {session.id} (agentls run --resume {session.id} goes on)\n")
        return EXIT_OK if completed.stop_reason == "end_turn" else EXIT_FAILED

    async def _offer_worktrees(self, session: AgentSession) -> None:
        """The isolated agents' worktrees: each one's diff summary, then merge, discard or
        keep it (as the warm client does)."""
        states = await list_worktrees(session)
        entries = [entry_of(s).model_dump(by_alias=True, exclude_none=True) for s in states]
        chosen = await _on_own_thread(lambda: cli_worktrees.decide(entries, self.answers))
        for entry, action in chosen:
            result = None
            if action != "keep":
                chosen_action: WorktreeAction = "merge" if action == "merge" else "discard"
                try:
                    done = await resolve_worktree(session, entry["agentId"], chosen_action)
                except AgentError as exc:
                    sys.stderr.write(f"agentls: {entry['agentId']} not {action}d: {exc.message}\n")
                    continue
                result = {
                    "resolved": not done.conflicts,
                    "conflicts": [{"path": str(p), "reason": r} for p, r in done.conflicts],
                }
            cli_worktrees.report(entry, action, result)

    async def stop(self, work: asyncio.Task[int], presses: asyncio.Queue[int]) -> None:
        """Ctrl-C: abort every turn and let it unwind for up to STOP_WAIT; a second press,
        or a longer unwind, records the ends at once and raises Abandoned."""
        # Noted first: closing the sessions takes them out of the manager.
        sessions = dict.fromkeys(self.manager.sessions.values())
        work.cancel()
        closing = asyncio.create_task(self._close(work))
        pressed = asyncio.create_task(presses.get())
        done, _ = await asyncio.wait(
            {closing, pressed}, timeout=STOP_WAIT, return_when=asyncio.FIRST_COMPLETED
        )
        pressed.cancel()
        if closing not in done:
            sessions.update(dict.fromkeys(self.manager.sessions.values()))
            for session in sessions:
                session.abandon()
            raise Abandoned

    async def _close(self, work: asyncio.Task[int]) -> None:
        await asyncio.wait({work})
        await self.manager.close_all()


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
        # Nothing of the conversation is shown: only the model's history is read.
        session, _shown, _cursor = await manager.resume_tail(resume, 0, overrides)
        return session
    return await manager.create(cwd, overrides)


async def _tick(status: ProgressLine) -> None:
    while True:
        await asyncio.sleep(0.25)
        status.draw()


async def _on_own_thread(ask: Callable[[], T]) -> T:
    """A question to the terminal, asked on a daemon thread: unlike the executor's threads,
    one still waiting for the answer when Ctrl-C ends the run is not waited for at exit."""
    loop = asyncio.get_running_loop()
    answered: asyncio.Future[T] = loop.create_future()

    def deliver(setter: Callable[[Any], None], outcome: object) -> None:
        def settle() -> None:
            if not answered.done():
                setter(outcome)

        with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
            loop.call_soon_threadsafe(settle)

    def run() -> None:
        try:
            value = ask()
        except BaseException as exc:  # handed to the loop, which raises it in the asker
            deliver(answered.set_exception, exc)
        else:
            deliver(answered.set_result, value)

    threading.Thread(target=run, name="agentls-question", daemon=True).start()
    return await answered


def _leave_now(code: int) -> NoReturn:
    """Exit at once, the processes the turn started killed (after a clean stop there are
    none left)."""
    _kill_children()
    exit_now(code)


def _kill_children() -> None:
    """SIGKILL every child process and its group (commands run in groups of their own)."""
    me = str(os.getpid())
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit() and _parent_of(entry) == me:
                with contextlib.suppress(OSError):
                    pid = int(entry)
                    if os.getpgid(pid) == pid:
                        os.killpg(pid, signal.SIGKILL)
                    else:
                        os.kill(pid, signal.SIGKILL)


def _parent_of(pid: str) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
            return handle.read().rsplit(")", 1)[1].split()[1]
    except (OSError, IndexError):
        return None
