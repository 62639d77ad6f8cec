"""Every agent/* method, written once: its params and result models (by their names in
agentls.api) and the AgentHandlers method that answers it over LSP.

Light on purpose: the LSP server registers the methods before anything heavy is imported,
so the models and handlers are named here and looked up where they live (agentls.api
builds REQUESTS from this table; the handlers' dispatch table too).
"""

from __future__ import annotations

from typing import NamedTuple


class Method(NamedTuple):
    params: str
    result: str
    handler: str


REQUESTS: dict[str, Method] = {
    "agent/newSession": Method("NewSessionParams", "NewSessionResult", "new_session"),
    "agent/submitMessage": Method("SubmitMessageParams", "SubmitMessageResult", "submit_message"),
    "agent/inlineEdit": Method("InlineEditParams", "SubmitMessageResult", "inline_edit"),
    "agent/abort": Method("AbortParams", "AbortResult", "abort"),
    "agent/respondPermission": Method(
        "RespondPermissionParams", "EmptyResult", "respond_permission"
    ),
    "agent/respondAskUser": Method("RespondAskUserParams", "EmptyResult", "respond_ask_user"),
    "agent/listSessions": Method("ListSessionsParams", "ListSessionsResult", "list_sessions"),
    "agent/resumeSession": Method("ResumeSessionParams", "ResumeSessionResult", "resume_session"),
    "agent/getMessages": Method("GetMessagesParams", "GetMessagesResult", "get_messages"),
    "agent/compact": Method("CompactParams", "CompactResult", "compact"),
    "agent/closeSession": Method("SessionParams", "EmptyResult", "close_session"),
    "agent/deleteSession": Method("SessionParams", "DeleteSessionResult", "delete_session"),
    "agent/setPermissionMode": Method(
        "SetPermissionModeParams", "EmptyResult", "set_permission_mode"
    ),
    "agent/setModel": Method("SetModelParams", "EmptyResult", "set_model"),
    "agent/listModels": Method("ListModelsParams", "ListModelsResult", "list_models"),
    "agent/providerStatus": Method(
        "ProviderStatusParams", "ProviderStatusResult", "provider_status"
    ),
    "agent/noteUserAction": Method("NoteUserActionParams", "EmptyResult", "note_user_action"),
    "agent/continueTurn": Method("SessionParams", "ContinueTurnResult", "continue_turn"),
    "agent/forkSession": Method("ForkSessionParams", "ResumeSessionResult", "fork_session"),
    "agent/listTasks": Method("SessionParams", "ListTasksResult", "list_tasks"),
    "agent/stopTask": Method("StopTaskParams", "StopTaskResult", "stop_task"),
    "agent/listShells": Method("SessionParams", "ListShellsResult", "list_shells"),
    "agent/listPermissionRules": Method(
        "SessionParams", "PermissionRulesResult", "list_permission_rules"
    ),
    "agent/updatePermissionRules": Method(
        "UpdatePermissionRulesParams", "PermissionRulesResult", "update_permission_rules"
    ),
    "agent/listMcpServers": Method("SessionParams", "ListMcpServersResult", "list_mcp_servers"),
    "agent/restartMcpServer": Method("McpServerParams", "EmptyResult", "restart_mcp_server"),
    "agent/setMcpServerEnabled": Method(
        "SetMcpServerEnabledParams", "EmptyResult", "set_mcp_server_enabled"
    ),
    "agent/rewind": Method("RewindParams", "RewindResult", "rewind"),
    "agent/turnDiff": Method("TurnDiffParams", "TurnDiffResult", "turn_diff"),
    "agent/listCommands": Method("SessionParams", "ListCommandsResult", "list_commands"),
    "agent/listWorktrees": Method("SessionParams", "ListWorktreesResult", "list_worktrees"),
    "agent/worktreeDiff": Method("WorktreeDiffParams", "TurnDiffResult", "worktree_diff"),
    "agent/resolveWorktree": Method(
        "ResolveWorktreeParams", "ResolveWorktreeResult", "resolve_worktree"
    ),
}
# Notifications, by their params model's name.
NOTIFICATIONS: dict[str, str] = {"agent/didChangeEditorState": "EditorStateParams"}
