"""A session's permission gate for one turn with tools pre-approved (a slash command's
`allowed-tools`) or narrowed to a skill's.

The turn's calls meet the session's own mode and rules, read at each decision (so
`agent/setPermissionMode` or an "always" answer during the turn applies at once), plus
the command's allow rules, which take the place of session allow rules: a deny rule, plan
mode, an ask rule or a command that cannot be read for certain still wins over them. The
rules live only in this object, so they end with the turn.

A skill started in the turn (`ActiveSkill`) with `allowed-tools` narrows it: until the turn
ends or another skill starts, a call its rules allow runs without asking (as a command's
allowed tools), and any other call but `Skill` itself is refused, so the model can only
leave the skill's tools by starting another skill. A skill without `allowed-tools` changes
nothing. Deny rules, plan mode and ask rules still win over a skill's rules.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePath

from agentls.permissions.gate import Decision, PermissionGate
from agentls.permissions.rules import CallTarget, Rule, matching_rules

# The tool that starts skills: never narrowed away, so another skill can always start.
SKILL_TOOL = "Skill"


@dataclass(slots=True)
class ActiveSkill:
    """The skill a turn is in, if any, and the tools it allows (empty: no narrowing)."""

    name: str | None = None
    allowed: tuple[Rule, ...] = ()
    allowed_text: str = ""

    def start(self, name: str, allowed: Sequence[Rule]) -> None:
        self.name, self.allowed = name, tuple(allowed)
        self.allowed_text = ", ".join(str(rule) for rule in allowed)

    def end(self) -> None:
        self.name, self.allowed, self.allowed_text = None, (), ""


class TurnGate(PermissionGate):
    """The session's gate, a turn's extra allow rules, and the narrowing of its active skill."""

    def __init__(
        self,
        session: PermissionGate,
        allowed: Sequence[Rule],
        *,
        cwd: str | PurePath,
        skill: ActiveSkill | None = None,
    ) -> None:
        super().__init__(session.mode, session.rules, cwd=cwd)
        self._session = session
        self._allowed = tuple(allowed)
        self._skill = skill or ActiveSkill()

    def decide(
        self,
        tool_name: str,
        tool_kind: str,
        read_only: bool,
        rule_content: str | None,
        hook: Decision | None = None,
    ) -> Decision:
        self.mode = self._session.mode
        self.rules = [*self._session.rules, *self._allowed, *self._skill.allowed]
        decision = super().decide(tool_name, tool_kind, read_only, rule_content, hook)
        outside = self._outside_skill(tool_name, tool_kind, rule_content)
        if decision.behavior == "deny" or not outside:
            return decision
        return Decision(
            "deny",
            f"Refused: the skill {self._skill.name} is active, and while it is, only these "
            f"tools may be called: {self._skill.allowed_text} (and Skill, to start another "
            "skill). Do the task with them, or tell the user what else is needed.",
        )

    def _outside_skill(self, tool_name: str, tool_kind: str, rule_content: str | None) -> bool:
        """Whether an active skill narrows this call away."""
        if not self._skill.allowed or tool_name == SKILL_TOOL:
            return False
        call = CallTarget(tool_name, tool_kind, rule_content)
        return not matching_rules(self._skill.allowed, "allow", call, self._base)

    def add_rule(self, rule: Rule) -> None:
        self._session.add_rule(rule)

    def remember(self, rule: Rule) -> None:
        self._session.remember(rule)
