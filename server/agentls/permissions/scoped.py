"""A session's permission gate for one turn with tools pre-approved (a slash command's
`allowed-tools`).

The turn's calls meet the session's own mode and rules, read at each decision (so
`agent/setPermissionMode` or an "always" answer during the turn applies at once), plus
the command's allow rules, which take the place of session allow rules: a deny rule, plan
mode, an ask rule or a command that cannot be read for certain still wins over them. The
rules live only in this object, so they end with the turn.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePath

from agentls.permissions.gate import Decision, PermissionGate
from agentls.permissions.rules import Rule


class TurnGate(PermissionGate):
    """The session's gate and a turn's extra allow rules."""

    def __init__(
        self, session: PermissionGate, allowed: Sequence[Rule], *, cwd: str | PurePath
    ) -> None:
        super().__init__(session.mode, session.rules, cwd=cwd)
        self._session = session
        self._allowed = tuple(allowed)

    def decide(
        self,
        tool_name: str,
        tool_kind: str,
        read_only: bool,
        rule_content: str | None,
        hook: Decision | None = None,
    ) -> Decision:
        self.mode = self._session.mode
        self.rules = [*self._session.rules, *self._allowed]
        return super().decide(tool_name, tool_kind, read_only, rule_content, hook)

    def add_rule(self, rule: Rule) -> None:
        self._session.add_rule(rule)

    def remember(self, rule: Rule) -> None:
        self._session.remember(rule)
