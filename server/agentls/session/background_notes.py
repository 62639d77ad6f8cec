"""What the model hears of work that ends in the background: agents and shells.

A background agent's result reaches the running turn at its next step, or starts a turn
of its own when the session is idle; a shell that exited on its own is only noted (for the
next step or message). `BackgroundReports` holds the callbacks the session gives
`BackgroundTasks` and `BackgroundShells`.
"""

from __future__ import annotations

from collections.abc import Callable

from agentls.events import ShellStatus
from agentls.session.events_out import SessionEvents
from agentls.session.inbox import Inbox
from agentls.session.subagents import TaskRecord
from agentls.session.turns import TurnQueue
from agentls.tools.background import BackgroundShell, exit_note
from agentls.tools.base import ToolOutput


class BackgroundReports:
    def __init__(
        self,
        events: SessionEvents,
        inbox: Inbox,
        turns: TurnQueue,
        submit: Callable[[str], object],
        closing: Callable[[], bool],
    ) -> None:
        self._events = events
        self._inbox = inbox
        self._turns = turns
        self._submit = submit
        # Once the session closes, what ends is no news to anyone.
        self._closing = closing

    def task_finished(self, record: TaskRecord, output: ToolOutput | None) -> None:
        """A background agent ended: the model hears of it at its next step, or, when the
        session is idle, in a turn of its own."""
        if output is not None and output.usage is not None:
            self._events.spent(output.usage, output.cost_usd)
        if self._closing():
            return
        if output is None:
            note = f"The background {record.subagent_type} agent {record.agent_id} was stopped."
            self._inbox.note_user_action(note)
            return
        text = (
            f'<taskNotification agentId="{record.agent_id}" type="{record.subagent_type}" '
            f'status="{record.status}">\n{output.content}\n</taskNotification>'
        )
        running = self._turns.running
        if running is not None and not running.abort.is_set():
            self._inbox.steer(text)
        else:
            self._submit(text)

    def shell_changed(self, shell: BackgroundShell) -> None:
        """Tell clients a shell started or ended; an exit nobody asked for is noted for the
        model (at the running turn's next step, else in the next message: no turn of its
        own)."""
        status = ShellStatus(shell.shell_id, shell.command, shell.state, shell.exit_code)
        self._events.emit(status, None)
        if shell.state != "exited" or shell.stopping or self._closing():
            return
        self._inbox.note_shell(exit_note(shell))
