"""The core's events as ACP `session/update` payloads, one session at a time.

ACP replaces a tool call's `content` on every update, while the core streams a running
call's output as new lines: a session's SessionUpdates keeps each call's output so far,
and remembers the calls themselves, so a permission request can describe its call.
A sub-agent's tool calls carry their Task call in `_meta.agentls.parentToolCallId` (ACP
has no nesting); its text is not streamed, its Task call's result carries its answer.
"""

from __future__ import annotations

from typing import Literal, TypeAlias

from acp import schema as acp

from agentls.acp.steering import delivery_commands
from agentls.events import (
    AvailableCommands,
    CommandOutput,
    HookResult,
    McpStatusEvent,
    MessageDiscarded,
    Notice,
    PermissionRequest,
    PlanEvent,
    SessionEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallEvent,
    ToolCallStatus,
    ToolCallUpdate,
    TurnStopReason,
    UsageEvent,
)
from agentls.tool_values import FileDiff, Location, PlanEntry, diffs_of

Update: TypeAlias = (
    acp.AgentMessageChunk
    | acp.AgentThoughtChunk
    | acp.UserMessageChunk
    | acp.ToolCallStart
    | acp.ToolCallProgress
    | acp.AgentPlanUpdate
    | acp.AvailableCommandsUpdate
    | acp.CurrentModeUpdate
    | acp.ConfigOptionUpdate
    | acp.SessionInfoUpdate
    | acp.UsageUpdate
)
ToolContent: TypeAlias = (
    acp.ContentToolCallContent | acp.FileEditToolCallContent | acp.TerminalToolCallContent
)

# A running call's output kept for its updates: its tail, as a terminal shows it.
PROGRESS_CHARS = 20_000

# ACP stop reasons; "error" is not one: a failed turn answers session/prompt with an error.
STOP_REASONS: dict[TurnStopReason, str] = {
    "end_turn": "end_turn",
    "max_turns": "max_turn_requests",
    "max_tokens": "max_tokens",
    "budget_exceeded": "max_tokens",
    "aborted": "cancelled",
    "refusal": "refusal",
    "stuck": "end_turn",
}


def text(value: str) -> acp.TextContentBlock:
    return acp.TextContentBlock(type="text", text=value)


def status_of(status: ToolCallStatus) -> str:
    """ACP v1 has no cancelled or declined call: both failed."""
    return "failed" if status in ("cancelled", "declined") else status


def locations_of(locations: tuple[Location, ...] | None) -> list[acp.ToolCallLocation] | None:
    if not locations:
        return None
    return [acp.ToolCallLocation(path=loc.path, line=loc.line) for loc in locations]


def diff_content(diff: FileDiff) -> acp.FileEditToolCallContent:
    return acp.FileEditToolCallContent(
        type="diff", path=diff.path, old_text=diff.old_text, new_text=diff.new_text
    )


def text_content(value: str) -> acp.ContentToolCallContent:
    return acp.ContentToolCallContent(type="content", content=text(value))


def chunk(
    who: Literal["user", "agent", "thought"],
    content: acp.TextContentBlock | acp.ImageContentBlock,
    message_id: str | None = None,
) -> acp.UserMessageChunk | acp.AgentMessageChunk | acp.AgentThoughtChunk:
    """A piece of a message: the user's, the agent's answer, or its thinking."""
    if who == "user":
        return acp.UserMessageChunk(
            session_update="user_message_chunk", content=content, message_id=message_id
        )
    if who == "thought":
        return acp.AgentThoughtChunk(
            session_update="agent_thought_chunk", content=content, message_id=message_id
        )
    return acp.AgentMessageChunk(
        session_update="agent_message_chunk", content=content, message_id=message_id
    )


def plan_update(entries: tuple[PlanEntry, ...]) -> acp.AgentPlanUpdate:
    return acp.AgentPlanUpdate(
        session_update="plan",
        entries=[
            acp.PlanEntry(content=e.content, status=e.status, priority=e.priority) for e in entries
        ],
    )


def commands_update(event: AvailableCommands) -> acp.AvailableCommandsUpdate:
    return acp.AvailableCommandsUpdate(
        session_update="available_commands_update",
        available_commands=[
            acp.AvailableCommand(
                name=c.name,
                description=c.description,
                input=acp.AvailableCommandInput(
                    root=acp.UnstructuredCommandInput(hint=c.argument_hint)
                )
                if c.argument_hint
                else None,
            )
            for c in event.commands
        ]
        + delivery_commands(),
    )


def tool_call_start(
    event: ToolCallEvent, status: str = "pending", parent: SessionEvent | None = None
) -> acp.ToolCallStart:
    meta = None
    if parent is not None and parent.parent_tool_call_id is not None:
        nested = {"parentToolCallId": parent.parent_tool_call_id, "agentId": parent.agent_id}
        meta = {"agentls": nested}
    return acp.ToolCallStart(
        session_update="tool_call",
        tool_call_id=event.tool_call_id,
        title=event.title,
        kind=event.kind,
        status=status,  # type: ignore[arg-type]
        locations=locations_of(event.locations),
        raw_input=event.input,
        field_meta=meta,
    )


def _usage_update(event: UsageEvent, session_cost: float) -> acp.UsageUpdate:
    """The context's fill, and the session's cost so far when this call was priced."""
    cost = None
    if event.cost_usd is not None:
        cost = acp.Cost(amount=round(session_cost, 6), currency="USD")
    return acp.UsageUpdate(
        session_update="usage_update",
        used=event.context_tokens,
        size=event.context_window,
        cost=cost,
    )


# ACP cannot take streamed text back: when an attempt whose answer was streamed is
# discarded, a line says where the text broke off, so the retry's text is not read as a
# continuation of the cut one.
CUT_NOTES = {
    "retry": "the connection to the model dropped; the answer starts again below",
    "max_tokens_escalate": "the answer reached its output limit; it starts again below",
    "compacted": "the context was compacted; the answer starts again below",
    "error": "the answer above was cut off by an error",
}


def _said(value: str) -> Update:
    """What the daemon itself has to say mid-turn (retries, MCP and hook problems): shown
    with the model's thoughts, apart from its answer."""
    return chunk("thought", text(value))


class SessionUpdates:
    """Turns one session's events into updates, remembering its tool calls."""

    def __init__(self) -> None:
        self.calls: dict[str, ToolCallEvent] = {}
        self._output: dict[str, str] = {}
        # Calls whose command runs in one of the client's terminals: the terminal shows it.
        self.terminals: dict[str, str] = {}
        # The message whose answer text is being streamed (a discarded one is marked as cut).
        self._answering: str | None = None
        # What the session has cost so far: ACP's usage_update carries the running total.
        self.cost_usd = 0.0

    def updates(self, envelope: SessionEvent) -> list[Update]:
        event = envelope.event
        nested = envelope.parent_tool_call_id is not None
        if isinstance(event, TextDeltaEvent | ThinkingDeltaEvent):
            if nested:
                return []
            thinking = isinstance(event, ThinkingDeltaEvent)
            if not thinking:
                self._answering = event.message_id
            return [chunk("thought" if thinking else "agent", text(event.text), event.message_id)]
        if isinstance(event, MessageDiscarded):
            if nested or event.message_id != self._answering:
                return []
            self._answering = None
            return [chunk("agent", text(f"\n\n[{CUT_NOTES[event.reason]}]\n\n"))]
        if isinstance(event, ToolCallEvent):
            self.calls[event.tool_call_id] = event
            return [tool_call_start(event, parent=envelope)]
        if isinstance(event, ToolCallUpdate):
            return self._tool_update(event)
        if isinstance(event, PlanEvent):
            return [] if nested else [plan_update(event.entries)]
        if isinstance(event, AvailableCommands):
            return [commands_update(event)]
        if isinstance(event, UsageEvent):
            # A sub-agent's calls are the session's cost too.
            if event.cost_usd is not None:
                self.cost_usd += event.cost_usd
            return [] if nested else [_usage_update(event, self.cost_usd)]
        if isinstance(event, CommandOutput):
            return [chunk("agent", text(event.text))]
        said = _remark(event)
        return [_said(said)] if said is not None else []

    def _tool_update(self, event: ToolCallUpdate) -> list[Update]:
        call_id = event.tool_call_id
        terminal = self.terminals.get(call_id)
        content: list[ToolContent] | None = None
        if event.status == "in_progress":
            if event.content is None or terminal is not None:
                return [_progress(call_id, "in_progress")]
            so_far = (self._output.get(call_id, "") + event.content + "\n")[-PROGRESS_CHARS:]
            self._output[call_id] = so_far
            content = [text_content(so_far)]
        else:
            # The call has ended: what was kept for it goes.
            self._output.pop(call_id, None)
            self.calls.pop(call_id, None)
            self.terminals.pop(call_id, None)
            content = []
            if terminal is not None:
                content.append(acp.TerminalToolCallContent(type="terminal", terminal_id=terminal))
            content.extend(diff_content(d) for d in diffs_of(event.diff, event.diffs))
            if event.content and terminal is None:
                content.append(text_content(event.content))
        return [_progress(call_id, status_of(event.status), content, locations_of(event.locations))]

    def permission_call(self, request: PermissionRequest) -> acp.ToolCallUpdate:
        """The call a permission request is about, as `session/request_permission` names it."""
        call = self.calls.get(request.tool_call_id)
        content: list[ToolContent] | None = None
        diffs = diffs_of(request.diff, request.diffs)
        if diffs:
            content = [diff_content(d) for d in diffs]
        elif request.plan is not None:
            # ExitPlanMode: the plan is what the user approves.
            content = [text_content(request.plan)]
        elif request.sandbox_escalation is not None:
            # A rerun outside the sandbox: why, and the command that would leave it.
            escalation = request.sandbox_escalation
            text = f"Why: {escalation.reason}\n\n    {escalation.command}"
            content = [text_content(text)]
        return acp.ToolCallUpdate(
            tool_call_id=request.tool_call_id,
            title=request.title,
            kind=call.kind if call is not None else None,
            status="pending",
            content=content,
            locations=locations_of(call.locations) if call is not None else None,
            raw_input=request.input,
        )


def _progress(
    call_id: str,
    status: str,
    content: list[ToolContent] | None = None,
    locations: list[acp.ToolCallLocation] | None = None,
) -> acp.ToolCallProgress:
    return acp.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=call_id,
        status=status,  # type: ignore[arg-type]
        content=content,
        locations=locations,
    )


def _remark(event: object) -> str | None:
    """A line for the events a person should hear of that ACP has no update for."""
    if isinstance(event, Notice) and event.level != "info":
        return f"[{event.level}] {event.message}"
    if isinstance(event, McpStatusEvent) and event.status == "failed":
        return f"[MCP] The server {event.server} failed: {event.error or 'no reason given'}"
    if isinstance(event, HookResult) and event.outcome != "success":
        reason = f": {event.message}" if event.message else ""
        return f"[hook] {event.event} hook `{event.command}` {event.outcome}{reason}"
    return None
