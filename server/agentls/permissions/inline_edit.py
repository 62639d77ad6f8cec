"""The permission gate of an agent/inlineEdit turn: every file change is asked.

The user reviews an inline edit in the editor, hunk by hunk, so each change the turn
proposes is a `permission_request` whatever the session's mode: acceptEdits and
bypassPermissions do not skip it, an allow rule or a PreToolUse hook's allow does not
either, and plan mode does not refuse it (the user asked for this change and sees it
before it lands). A deny rule, or a hook's deny, still refuses it. Other calls (the
turn's read-only tools) meet the session's gate as usual.
"""

from __future__ import annotations

from pathlib import PurePath

from agentls.permissions.gate import Decision, PermissionGate
from agentls.permissions.rules import Rule

# The tools an inline edit may call: reading and navigating, and changing files.
INLINE_EDIT_TOOLS = (
    "Read",
    "Glob",
    "Grep",
    "Diagnostics",
    "GoToDefinition",
    "FindReferences",
    "WorkspaceSymbols",
    "Edit",
    "MultiEdit",
    "Write",
)
# Of those, the ones that change a file: always reviewed.
REVIEWED_TOOLS = frozenset({"Edit", "MultiEdit", "Write"})

REVIEW_REASON = "An inline edit's changes are reviewed by the user in the editor."


class InlineEditGate(PermissionGate):
    """The session's gate, with every file change asked about."""

    def __init__(self, session: PermissionGate, *, cwd: str | PurePath) -> None:
        super().__init__(session.mode, session.rules, cwd=cwd)
        self._session = session

    def decide(
        self,
        tool_name: str,
        tool_kind: str,
        read_only: bool,
        rule_content: str | None,
        hook: Decision | None = None,
    ) -> Decision:
        self.rules = list(self._session.rules)
        if tool_name not in REVIEWED_TOOLS:
            self.mode = self._session.mode
            return super().decide(tool_name, tool_kind, read_only, rule_content, hook)
        # Decided as in default mode, so only a deny (rule or hook) can stop the question.
        self.mode = "default"
        decision = super().decide(tool_name, tool_kind, read_only, rule_content, hook)
        if decision.behavior == "deny":
            return decision
        return Decision("ask", REVIEW_REASON)

    def add_rule(self, rule: Rule) -> None:
        self._session.add_rule(rule)

    def remember(self, rule: Rule) -> None:
        self._session.remember(rule)
