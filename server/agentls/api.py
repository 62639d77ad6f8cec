"""The wire contract's request params and results, as pydantic models.

Front ends validate incoming params with these (a bad field becomes -32602 naming it),
and scripts/gen_schema.py derives protocol/schema from them and from the event classes.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from agentls import methods
from agentls.api_base import ParamsModel as ParamsModel
from agentls.api_base import WireModel as WireModel
from agentls.api_base import WirePosition as WirePosition
from agentls.api_base import WireRange as WireRange
from agentls.api_inline import InlineEditParams as InlineEditParams
from agentls.api_mcp import ListMcpServersResult as ListMcpServersResult
from agentls.api_mcp import McpPromptArgumentEntry as McpPromptArgumentEntry
from agentls.api_mcp import McpPromptEntry as McpPromptEntry
from agentls.api_mcp import McpResourceEntry as McpResourceEntry
from agentls.api_mcp import McpServerEntry as McpServerEntry
from agentls.api_mcp import McpServerParams as McpServerParams
from agentls.api_mcp import McpToolEntry as McpToolEntry
from agentls.api_mcp import SetMcpServerEnabledParams as SetMcpServerEnabledParams
from agentls.api_plugins import PluginInfo as PluginInfo
from agentls.api_worktrees import (
    ListWorktreesResult as ListWorktreesResult,
)
from agentls.api_worktrees import (
    ResolveWorktreeParams as ResolveWorktreeParams,
)
from agentls.api_worktrees import (
    ResolveWorktreeResult as ResolveWorktreeResult,
)
from agentls.api_worktrees import (
    WorktreeDiffParams as WorktreeDiffParams,
)
from agentls.names import Delivery, ProviderName, RewindWhat, RulesScope, SandboxMode
from agentls.names import PermissionMode as PermissionModeName
from agentls.tool_values import ToolKind
from agentls.wire_paths import PathText
from agentls.wire_paths import unnameable as unnameable


class AttachmentParam(ParamsModel):
    uri: str
    range: WireRange | None = None
    # Shown to the model: an inline image's (a data: URI) name, e.g. the pasted file's, or
    # a symbol's beside the lines of a file (its `range`).
    name: str | None = Field(default=None, max_length=200)


class SandboxParams(ParamsModel):
    mode: SandboxMode | None = None


class SessionSettingsParams(ParamsModel):
    """The session settings a request may set (agent/newSession, agent/resumeSession)."""

    provider: ProviderName | None = None
    model: str | None = None
    permission_mode: PermissionModeName | None = None
    max_turns: int | None = Field(default=None, ge=-1)
    max_budget_tokens: int | None = Field(default=None, ge=1)
    max_budget_usd: float | None = Field(default=None, gt=0)
    append_system_prompt: str | None = None
    mcp_servers: list[dict[str, Any]] | None = None
    permission_rules_scope: RulesScope | None = None
    sandbox: SandboxParams | None = None
    # Additions to the fixed core: a scripted model and where to log its requests.
    script: str | list[dict[str, Any]] | None = None
    request_log: str | None = None


class NewSessionParams(SessionSettingsParams):
    cwd: PathText | None = None


def session_overrides(params: NewSessionParams) -> dict[str, Any]:
    """The session settings a newSession's params set (camelCase, as settings layers are)."""
    return params.model_dump(by_alias=True, exclude_none=True, exclude={"cwd"})


class SandboxState(WireModel):
    """A session's Bash sandbox (see PROTOCOL.md, "The Bash sandbox")."""

    mode: SandboxMode
    active: bool
    network: bool
    writable_paths: list[str]
    problem: str | None = None
    note: str | None = None


class NewSessionResult(WireModel):
    session_id: str
    model: str
    tools: list[str]
    permission_mode: PermissionModeName
    sandbox: SandboxState | None = None
    # The installed plugins (enabled or not); absent when there are none.
    plugins: list[PluginInfo] | None = None


class SubmitMessageParams(ParamsModel):
    session_id: str
    text: str
    data: Any = None
    intent: str | None = None
    attachments: list[AttachmentParam] | None = None
    delivery: Delivery = "queue"
    # This turn's budget, over the session's (maxBudgetTokens / maxBudgetUsd settings).
    max_budget_tokens: int | None = Field(default=None, ge=1)
    max_budget_usd: float | None = Field(default=None, gt=0)


class SubmitMessageResult(WireModel):
    turn_id: str
    queued: bool


class TaskInfo(WireModel):
    agent_id: str
    subagent_type: str
    description: str
    # running, completed, failed or stopped.
    status: str
    started_at: str
    duration_ms: int | None = None


class ListTasksResult(WireModel):
    tasks: list[TaskInfo]


class StopTaskParams(ParamsModel):
    session_id: str
    agent_id: str


class StopTaskResult(WireModel):
    stopped: bool


class ShellInfo(WireModel):
    shell_id: str
    command: str
    description: str | None = None
    # running, exited or killed; exit_code is negative when a signal ended it.
    status: str
    exit_code: int | None = None
    pid: int
    started_at: str
    # Characters it has written so far, read or not.
    output_chars: int


class ListShellsResult(WireModel):
    shells: list[ShellInfo]


class PermissionRuleInfo(ParamsModel):
    # As in settings: `Bash(npm test:*)`, `Edit(./app.py)`, `Read`.
    rule: str
    behavior: Literal["allow", "deny", "ask"]
    scope: RulesScope


class PermissionRulesResult(WireModel):
    rules: list[PermissionRuleInfo]


class UpdatePermissionRulesParams(ParamsModel):
    session_id: str
    add: list[PermissionRuleInfo] | None = None
    remove: list[PermissionRuleInfo] | None = None


class CommandInfoParam(WireModel):
    name: str
    description: str
    argument_hint: str | None = None
    # builtin, project or user.
    source: str


class ListCommandsResult(WireModel):
    commands: list[CommandInfoParam]


class ContinueTurnResult(WireModel):
    turn_id: str


class AbortParams(ParamsModel):
    session_id: str
    turn_id: str | None = None


class AbortResult(WireModel):
    aborted: bool


class DeleteSessionResult(WireModel):
    deleted: bool
    # Leftovers not removed (an agent's worktree or branch git refused to remove).
    warnings: list[str] = Field(default_factory=list)


class RespondPermissionParams(ParamsModel):
    session_id: str
    request_id: str
    # The four permission answers, and a plan's (ExitPlanMode: see events.PLAN_OPTIONS).
    option_id: Literal[
        "allow_once",
        "allow_always",
        "reject_once",
        "reject_always",
        "plan_approve",
        "plan_approve_accept_edits",
        "plan_keep_planning",
        "plan_reject",
    ]
    message: str | None = None
    updated_input: dict[str, Any] | None = None
    # The file text the user accepted after reviewing a request's `diff` (per hunk, edited).
    accepted_text: str | None = None


class NoteUserActionParams(ParamsModel):
    session_id: str
    # What the user did outside the conversation, said for the model ("The user undid …").
    text: str = Field(min_length=1, max_length=20_000)


class RespondAskUserParams(ParamsModel):
    session_id: str
    request_id: str
    answer: str


class ListSessionsParams(ParamsModel):
    cwd: PathText | None = None
    cursor: str | None = None
    limit: int = Field(default=50, ge=1, le=500)


class SessionInfo(WireModel):
    session_id: str
    title: str
    cwd: str
    created_at: str
    updated_at: str
    turns: int
    # What its turns and their sub-agents spent: tokens in (cached ones too) and out, and
    # dollars when the model's price is known.
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    # Present (true) while the session is open in this daemon and runs a turn, with or
    # without a window attached; the turn is `running_turn_id`.
    running: bool | None = None
    running_turn_id: str | None = None


class ListSessionsResult(WireModel):
    sessions: list[SessionInfo]
    next_cursor: str | None = None


class ResumeSessionParams(SessionSettingsParams):
    """The settings apply to a session rebuilt from its transcript, over those it was
    started with (a scripted session's script starts over, so a resume may name a new
    one); a session open in this daemon keeps its own."""

    session_id: str
    # The last event `seq` the client saw of this session (a window reloading mid-turn):
    # the running turn's later events are sent again, after the answer.
    last_seq: int | None = Field(default=None, ge=0)
    # Only the conversation's last `messageLimit` messages; older ones by agent/getMessages.
    message_limit: int | None = Field(default=None, ge=0, le=10_000)


class GetMessagesParams(ParamsModel):
    session_id: str
    # A `messagesCursor` or `nextCursor`: the page ends before it (absent: at the end).
    before: str | None = None
    limit: int = Field(default=100, ge=1, le=1_000)


class DisplayLocation(WireModel):
    path: str
    line: int | None = None


class DisplayToolCall(WireModel):
    """A tool_use block of the history as its `tool_call` event announced it."""

    tool_call_id: str
    kind: ToolKind
    title: str
    locations: list[DisplayLocation] | None = None


class DisplayMessage(WireModel):
    message_id: str
    role: Literal["user", "assistant"]
    content: list[dict[str, Any]]
    # On a user message that began a turn: that turn's id (for agent/rewind, agent/turnDiff).
    turn_id: str | None = None
    # On a reply with tool_use blocks (in their order): how each call was announced, so a
    # resumed chat shows "Read app.py" where the block only names "Read".
    tool_calls: list[DisplayToolCall] | None = None


class PlanEntryParam(WireModel):
    content: str
    status: Literal["pending", "in_progress", "completed"]
    priority: Literal["high", "medium", "low"]


class ResumeSessionResult(WireModel):
    session_id: str
    messages: list[DisplayMessage]
    model: str
    tools: list[str]
    permission_mode: PermissionModeName
    # The model's plan (TodoWrite) as the session left it; absent when it has none.
    plan: list[PlanEntryParam] | None = None
    sandbox: SandboxState | None = None
    # The turn the session is running, when it runs one.
    running_turn_id: str | None = None
    # The `seq` of the session's last event when it was answered (0 for a session rebuilt
    # from its transcript, whose events start again at 1).
    last_seq: int = 0
    # With `messageLimit`, when older messages were left out: agent/getMessages's `before`.
    messages_cursor: str | None = None


class GetMessagesResult(WireModel):
    messages: list[DisplayMessage]
    # Present when older messages remain: the next page's `before`.
    next_cursor: str | None = None


class ForkSessionParams(ParamsModel):
    session_id: str
    # Where to cut: before a message the user wrote, or after a reply (and its tool
    # results); absent: the whole history.
    message_id: str | None = None


class CompactParams(ParamsModel):
    session_id: str
    instructions: str | None = None


class CompactResult(WireModel):
    tokens_before: int
    tokens_after: int


class SessionParams(ParamsModel):
    session_id: str


class SetPermissionModeParams(ParamsModel):
    session_id: str
    permission_mode: PermissionModeName


class SetModelParams(ParamsModel):
    session_id: str
    model: str = Field(min_length=1)
    provider: ProviderName | None = None


class EditorStateParams(ParamsModel):
    active_uri: str | None = None
    selections: list[WireRange] | None = None
    visible_ranges: list[WireRange] | None = None


class ProviderStatusParams(ParamsModel):
    cwd: PathText | None = None  # whose settings files count; absent: the first root


class ProviderStatusResult(WireModel):
    """What a new session would run on. Not `configured`: agent/newSession would fail with
    1004, for the reason in `problem`; `provider` is absent when none is configured."""

    provider: ProviderName | None = None
    model: str
    permission_mode: PermissionModeName
    configured: bool
    problem: str | None = None


class ListModelsParams(ParamsModel):
    # The session whose provider and model to list for; absent: the daemon's settings.
    session_id: str | None = None
    refresh: bool = False


class ModelEntry(WireModel):
    id: str
    display_name: str | None = None
    current: bool = False


class ListModelsResult(WireModel):
    provider: str
    models: list[ModelEntry]
    cached: bool


class RewindParams(ParamsModel):
    session_id: str
    turn_id: str
    what: RewindWhat
    # Overwrite files the user changed since the agent left them.
    force: bool = False
    # Answer what the rewind would do and change nothing.
    dry_run: bool = False


class FileProblem(WireModel):
    path: str
    reason: str


class FileChangeInfo(WireModel):
    path: str
    diff: str
    added: int
    removed: int
    created: bool
    deleted: bool


class RewindResult(WireModel):
    restored: list[str]
    deleted: list[str]
    # Left alone: changed by the user since the agent last wrote them (unless force).
    conflicts: list[FileProblem]
    # Could not be restored (the editor refused the edit, a disk error).
    failed: list[FileProblem]
    messages_removed: int
    removed_message_ids: list[str]
    # Each file that goes back: a diff from its current content to the restored one.
    files: list[FileChangeInfo] = Field(default_factory=list)


class TurnDiffParams(ParamsModel):
    session_id: str
    turn_id: str


class TurnDiffResult(WireModel):
    files: list[FileChangeInfo]


class EmptyResult(WireModel):
    pass


def _wire_model(name: str) -> type[WireModel]:
    model = globals()[name]
    assert isinstance(model, type) and issubclass(model, WireModel), name
    return model


# The agent/* methods' models, from the one table of methods (agentls.methods).
REQUESTS: dict[str, tuple[type[WireModel], type[WireModel]]] = {
    name: (_wire_model(m.params), _wire_model(m.result)) for name, m in methods.REQUESTS.items()
}
NOTIFICATIONS: dict[str, type[WireModel]] = {
    name: _wire_model(params) for name, params in methods.NOTIFICATIONS.items()
}
