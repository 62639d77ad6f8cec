"""Loop events: every step of a turn, as small frozen dataclasses in one closed union.

The session stamps `sessionId`, `seq` and `turnId`; `wire.to_wire` turns an event into the
`agent/event` payload. Field names are snake_case here and camelCase on the wire.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, TypeAlias

from agentls.messages import ContentBlock
from agentls.names import HookEvent
from agentls.tool_values import FileDiff, Location, PlanEntry, ToolKind
from agentls.usage import Usage

TurnStopReason = Literal[
    "end_turn", "max_turns", "max_tokens", "aborted", "refusal", "error", "budget_exceeded", "stuck"
]
ToolCallStatus = Literal["pending", "in_progress", "completed", "failed", "cancelled", "declined"]
PermissionOptionKind = Literal["allow_once", "allow_always", "reject_once", "reject_always"]


@dataclass(frozen=True, slots=True)
class TextPosition:
    line: int
    character: int


@dataclass(frozen=True, slots=True)
class TextRange:
    """A range as the client sent it (columns in its negotiated position encoding)."""

    start: TextPosition
    end: TextPosition


@dataclass(frozen=True, slots=True)
class InlineEditTarget:
    """The region an agent/inlineEdit turn changes: the client's own URI and range."""

    uri: str
    range: TextRange


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn_id: str
    user_message_id: str
    # True for a turn agent/continueTurn started: no new user message, the model goes on.
    continued: bool | None = None
    # Set for an agent/inlineEdit turn: the file and region it was asked to change.
    inline_edit: InlineEditTarget | None = None
    type: Literal["turn_started"] = "turn_started"


# Built once per streamed delta (and SessionEvent once per event sent): not frozen, as
# frozen=True sets each field through object.__setattr__, about three times the cost of
# plain slots; nothing changes an event once built either way.
@dataclass(slots=True)
class TextDeltaEvent:
    message_id: str
    text: str
    type: Literal["text_delta"] = "text_delta"


@dataclass(slots=True)
class ThinkingDeltaEvent:
    message_id: str
    text: str
    type: Literal["thinking_delta"] = "thinking_delta"


@dataclass(frozen=True, slots=True)
class MessageCompleted:
    message_id: str
    role: Literal["user", "assistant"]
    content: tuple[ContentBlock, ...]
    type: Literal["message_completed"] = "message_completed"


@dataclass(frozen=True, slots=True)
class ToolCallEvent:
    tool_call_id: str
    name: str
    kind: ToolKind
    title: str
    input: dict[str, Any]
    locations: tuple[Location, ...] | None = None
    type: Literal["tool_call"] = "tool_call"


@dataclass(frozen=True, slots=True)
class ToolCallUpdate:
    tool_call_id: str
    status: ToolCallStatus
    content: str | None = None
    diff: FileDiff | None = None
    truncated: bool | None = None
    # Every file's change, for a call that changed several (apply_patch).
    diffs: tuple[FileDiff, ...] | None = None
    # A completed change: where it starts in each file (tool_values.changed_places), so a
    # client goes to the edited line; the call's own locations name only the files.
    locations: tuple[Location, ...] | None = None
    type: Literal["tool_call_update"] = "tool_call_update"


@dataclass(frozen=True, slots=True)
class PlanEvent:
    """The model's plan as it now stands (after each TodoWrite, and on resume): the whole
    list, which replaces the last one shown."""

    entries: tuple[PlanEntry, ...]
    type: Literal["plan"] = "plan"


@dataclass(frozen=True, slots=True)
class SubagentStarted:
    """A Task call started a sub-agent; its own events follow, tagged with `agentId` and
    `parentToolCallId` (the Task call)."""

    agent_id: str
    parent_tool_call_id: str
    subagent_type: str
    description: str
    type: Literal["subagent_started"] = "subagent_started"


@dataclass(frozen=True, slots=True)
class SubagentCompleted:
    """A sub-agent's loop ended; its report is the Task call's result."""

    agent_id: str
    parent_tool_call_id: str
    stop_reason: TurnStopReason
    turns: int
    tool_calls: int
    usage: Usage
    duration_ms: int
    # What the agent's model calls cost in dollars; None when a price is unknown.
    cost_usd: float | None = None
    # An agent that ran in its own git worktree (Task `isolation: "worktree"`): what it changed.
    worktree: WorktreeSummary | None = None
    type: Literal["subagent_completed"] = "subagent_completed"


@dataclass(frozen=True, slots=True)
class WorktreeFileStat:
    """One file an isolated agent's branch changed (path relative to the repository)."""

    path: str
    status: Literal["added", "modified", "deleted"]
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class WorktreeSummary:
    """An isolated agent's worktree: where it is, its branch, and what it changed."""

    path: str
    branch: str
    base_commit: str
    files: tuple[WorktreeFileStat, ...]
    added: int
    removed: int


@dataclass(frozen=True, slots=True)
class WorktreeResolved:
    """The user merged an isolated agent's changes into the working tree, or discarded
    them; either way its worktree and branch are gone (an event outside turns)."""

    agent_id: str
    action: Literal["merged", "discarded"]
    branch: str
    # The files a merge wrote (absolute paths); empty for a discard.
    files: tuple[str, ...] = ()
    type: Literal["worktree_resolved"] = "worktree_resolved"


@dataclass(frozen=True, slots=True)
class PermissionOption:
    option_id: str
    name: str
    kind: PermissionOptionKind
    # For the "always" options: the exact rule the answer saves, e.g. `Bash(npm test:*)`.
    rule: str | None = None


PERMISSION_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption("allow_once", "Allow once", "allow_once"),
    PermissionOption("allow_always", "Always allow", "allow_always"),
    PermissionOption("reject_once", "Reject", "reject_once"),
    PermissionOption("reject_always", "Always reject", "reject_always"),
)


@dataclass(frozen=True, slots=True)
class SandboxEscalation:
    """What a request to run one command outside the Bash sandbox is about."""

    command: str
    # Why: what in the failed run points at the box, or the model's justification.
    reason: str
    # `failed_in_sandbox`: it ran in the box and failed because of it; `model_request`:
    # the model asked up front (Bash's `outside_sandbox`).
    trigger: Literal["failed_in_sandbox", "model_request"]


# A rerun outside the box is allowed once or not at all: an "always" would undo the box.
SANDBOX_ESCALATION_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption("allow_once", "Run it outside the sandbox, once", "allow_once"),
    PermissionOption("reject_once", "Keep it in the sandbox", "reject_once"),
)


@dataclass(frozen=True, slots=True)
class PermissionRequest:
    request_id: str
    tool_call_id: str
    title: str
    input: dict[str, Any]
    options: tuple[PermissionOption, ...] = PERMISSION_OPTIONS
    # For a file change: the file's text now (buffer first) and what the call would make it.
    diff: FileDiff | None = None
    # For a change of several files (apply_patch): each file's change, with its kind.
    diffs: tuple[FileDiff, ...] | None = None
    # For ExitPlanMode: the plan (markdown) the user approves, sends back or rejects.
    plan: str | None = None
    # For a Bash command to run outside the sandbox (options: SANDBOX_ESCALATION_OPTIONS).
    sandbox_escalation: SandboxEscalation | None = None
    # True for a file change of an agent/inlineEdit turn: reviewed in the editor, not the chat.
    inline_edit: bool | None = None
    type: Literal["permission_request"] = "permission_request"


# A plan's answers (ExitPlanMode). Their kinds let a client that knows only the four
# permission options still offer them: "always" approves with edits accepted.
PLAN_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption("plan_approve", "Approve (ask before edits)", "allow_once"),
    PermissionOption("plan_approve_accept_edits", "Approve, accept edits", "allow_always"),
    PermissionOption("plan_keep_planning", "Keep planning", "reject_once"),
    PermissionOption("plan_reject", "Reject", "reject_always"),
)


@dataclass(frozen=True, slots=True)
class PermissionModeChanged:
    """The session's permission mode changed (agent/setPermissionMode, /mode, or an
    approved plan)."""

    permission_mode: str
    type: Literal["permission_mode_changed"] = "permission_mode_changed"


@dataclass(frozen=True, slots=True)
class PermissionResolved:
    request_id: str
    outcome: Literal["selected", "cancelled"]
    option_id: str | None = None
    type: Literal["permission_resolved"] = "permission_resolved"


@dataclass(frozen=True, slots=True)
class AskUserRequest:
    request_id: str
    tool_call_id: str
    question: str
    choices: tuple[str, ...] | None = None
    type: Literal["ask_user"] = "ask_user"


@dataclass(frozen=True, slots=True)
class AskUserResolved:
    request_id: str
    outcome: Literal["answered", "cancelled"]
    answer: str | None = None
    type: Literal["ask_user_resolved"] = "ask_user_resolved"


@dataclass(frozen=True, slots=True)
class Compaction:
    trigger: Literal["auto", "manual", "reactive"]
    tokens_before: int
    tokens_after: int
    type: Literal["compaction"] = "compaction"


@dataclass(frozen=True, slots=True)
class UsageEvent:
    input_tokens: int
    output_tokens: int
    cache_read_tokens: int
    cache_write_tokens: int
    context_tokens: int
    context_window: int
    cost_usd: float | None = None
    type: Literal["usage"] = "usage"


@dataclass(frozen=True, slots=True)
class Notice:
    level: Literal["info", "warning", "error"]
    message: str
    retrying: bool | None = None
    attempt: int | None = None
    # Seconds until the retry, with `retrying`.
    delay: float | None = None
    type: Literal["notice"] = "notice"


@dataclass(frozen=True, slots=True)
class MessageDiscarded:
    """A model attempt's streamed deltas that will not become a message: clients drop them.

    Sent when an attempt that streamed text or thinking fails and is asked again (`retry`),
    or is asked again with a higher output limit (`max_tokens_escalate`), or after a
    too-long prompt is compacted (`compacted`). The next attempt streams under a new id.
    `error`: the attempt failed and the turn ends with that error (retries spent, or an
    error not worth retrying); no attempt follows.
    """

    message_id: str
    reason: Literal["retry", "max_tokens_escalate", "compacted", "error"]
    type: Literal["message_discarded"] = "message_discarded"


@dataclass(frozen=True, slots=True)
class TurnLimitReached:
    """The turn made `max_turns` model calls and stops (`max_turns`); the client may offer to
    go on with agent/continueTurn, which allows as many again."""

    turns: int
    max_turns: int
    type: Literal["turn_limit_reached"] = "turn_limit_reached"


@dataclass(frozen=True, slots=True)
class McpStatusEvent:
    """An MCP server of the session changed status: starting, ready (with its tool count),
    failed (with why; it is restarted unless it failed every start), stopped, disabled by
    the user. Outside turns."""

    server: str
    status: Literal["awaiting_approval", "starting", "ready", "failed", "stopped", "disabled"]
    transport: Literal["stdio", "http"]
    tool_count: int | None = None
    error: str | None = None
    # The how-manieth start this is; above 1 after a restart.
    attempt: int | None = None
    type: Literal["mcp_status"] = "mcp_status"


@dataclass(frozen=True, slots=True)
class HookResult:
    """A user-configured hook blocked, failed, timed out or said something (a hook that
    succeeded without output is not reported)."""

    event: HookEvent
    command: str
    outcome: Literal["success", "blocked", "error", "timeout"]
    message: str | None = None
    # The tool call a PreToolUse or PostToolUse hook ran for.
    tool_call_id: str | None = None
    type: Literal["hook_result"] = "hook_result"


@dataclass(frozen=True, slots=True)
class ShellStatus:
    """A background shell started (`running`) or ended: it exited by itself (`exitCode`,
    negative for a signal) or was `killed` (KillShell, or the session closing)."""

    shell_id: str
    command: str
    status: Literal["running", "exited", "killed"]
    exit_code: int | None = None
    type: Literal["shell_status"] = "shell_status"


@dataclass(frozen=True, slots=True)
class CommandOutput:
    """What a local slash command (`/cost`, `/help`, `/clear`, …) answered. It is sent in
    the command's turn, before its turn_completed; nothing joins the history."""

    command: str
    text: str
    # True when the command failed (its turn then ends `error`).
    is_error: bool | None = None
    type: Literal["command_output"] = "command_output"


@dataclass(frozen=True, slots=True)
class CommandInfo:
    name: str
    description: str
    argument_hint: str | None = None
    # builtin, skill, project, user or plugin (and mcp prompts' own).
    source: str = "builtin"


@dataclass(frozen=True, slots=True)
class AvailableCommands:
    """The session's slash commands, for completion: sent when the session opens and
    whenever the set changes (outside turns: no turnId)."""

    commands: tuple[CommandInfo, ...]
    type: Literal["available_commands"] = "available_commands"


@dataclass(frozen=True, slots=True)
class TurnError:
    code: str
    message: str
    retryable: bool


@dataclass(frozen=True, slots=True)
class TurnCompleted:
    turn_id: str
    stop_reason: TurnStopReason
    turns: int
    usage: Usage
    error: TurnError | None = None
    # What `usage` cost in dollars (sub-agents included); None when a price is unknown.
    cost_usd: float | None = None
    type: Literal["turn_completed"] = "turn_completed"


LoopEvent: TypeAlias = (
    TurnStarted
    | TextDeltaEvent
    | ThinkingDeltaEvent
    | MessageCompleted
    | MessageDiscarded
    | ToolCallEvent
    | ToolCallUpdate
    | PlanEvent
    | SubagentStarted
    | SubagentCompleted
    | PermissionRequest
    | PermissionResolved
    | PermissionModeChanged
    | AskUserRequest
    | AskUserResolved
    | Compaction
    | UsageEvent
    | Notice
    | TurnLimitReached
    | HookResult
    | ShellStatus
    | TurnCompleted
    | McpStatusEvent
    | CommandOutput
    | AvailableCommands
    | WorktreeResolved
)
# Where a turn's events go (the session's sink, a test's list).
Emit: TypeAlias = Callable[[LoopEvent], None]


@dataclass(slots=True)
class SessionEvent:
    """A loop event as a session delivers it: numbered, and tagged with its session and turn."""

    session_id: str
    seq: int
    turn_id: str | None
    event: LoopEvent
    # For a sub-agent's events: the Task call that started it, and its id.
    parent_tool_call_id: str | None = None
    agent_id: str | None = None
