"""What the model hears of work that ends in the background: agents and shells.

A background agent's result reaches the running turn at its next step, or starts a turn
of its own when the session is idle; a shell that exited on its own is only noted (for the
next step or message). These are the callbacks the session gives `BackgroundTasks` and
`BackgroundShells`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentls.events import ShellStatus
from agentls.session.subagents import TaskRecord
from agentls.tools.background import BackgroundShell, exit_note
from agentls.tools.base import ToolOutput

if TYPE_CHECKING:
    from agentls.session.session import AgentSession


def task_finished(session: AgentSession, record: TaskRecord, output: ToolOutput | None) -> None:
    """A background agent ended: the model hears of it at its next step, or, when the
    session is idle, in a turn of its own."""
    if output is not None and output.usage is not None:
        session.usage = session.usage + output.usage
        session.transcript.touch(spent=output.usage, cost=session._cost(output.usage))
    if session._closing:
        return
    if output is None:
        note = f"The background {record.subagent_type} agent {record.agent_id} was stopped."
        session._user_actions.append(note)
        return
    text = (
        f'<taskNotification agentId="{record.agent_id}" type="{record.subagent_type}" '
        f'status="{record.status}">\n{output.content}\n</taskNotification>'
    )
    running = session._running
    if running is not None and not running.abort.is_set():
        session._steering.append(text)
    else:
        session.submit(text)


def shell_changed(session: AgentSession, shell: BackgroundShell) -> None:
    """Tell clients a shell started or ended; an exit nobody asked for is noted for the
    model (at the running turn's next step, else in the next message: no turn of its own)."""
    status = ShellStatus(shell.shell_id, shell.command, shell.state, shell.exit_code)
    session._out.emit(status, None)
    if shell.state != "exited" or shell.stopping or session._closing:
        return
    session._shell_notes.append(exit_note(shell))
