"""The permission gate: rules first, then the mode, decide whether a tool call runs, asks the
user or is refused.

The order is fixed so no setting can weaken a deny: deny rules, then plan mode's refusal of
anything that is not read-only, then ask rules, then allow rules, then the mode. Deciding
is pure; asking the user and remembering an "always" answer belong to the caller, which
turns that answer into a session rule with `rule_for_always`.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path, PurePath

from agentls.names import PermissionMode
from agentls.permissions.rules import (
    COMMAND_KIND,
    EDIT_KINDS,
    FETCH_KIND,
    PATH_KINDS,
    READ_KINDS,
    CallTarget,
    PathBase,
    PermissionBehavior,
    Rule,
    matching_rules,
    rule_applies,
    unknown_commands,
)
from agentls.shell_syntax import command_words

_SUBJECT_LIMIT = 120
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")


@dataclass(frozen=True, slots=True)
class Decision:
    """What to do with one call, a sentence the model can read, and the rule that decided."""

    behavior: PermissionBehavior
    reason: str
    rule: Rule | None = None


class PermissionGate:
    """A session's permission mode and rules; `decide` is pure and may be called freely."""

    def __init__(
        self,
        mode: PermissionMode = "default",
        rules: Iterable[Rule] = (),
        *,
        cwd: str | PurePath | None = None,
        home: str | PurePath | None = None,
    ) -> None:
        self.mode: PermissionMode = mode
        self.rules: list[Rule] = list(rules)
        # Told of each rule an "always" answer saves (the session keeps it for next time).
        self.on_remember: Callable[[Rule], None] | None = None
        home_path = Path.home() if home is None else home
        # Without a cwd, cwd-relative rules match relative paths and absolute rules absolute ones.
        self._base = PathBase(_posix(cwd), _posix(home_path))

    def add_rule(self, rule: Rule) -> None:
        """Add a rule for the rest of the session; a duplicate is ignored."""
        if rule not in self.rules:
            self.rules.append(rule)

    def remember(self, rule: Rule) -> None:
        """An "always" answer's rule: for this session, and beyond it through on_remember."""
        self.add_rule(rule)
        if self.on_remember is not None:
            self.on_remember(rule)

    def decide(
        self,
        tool_name: str,
        tool_kind: str,
        read_only: bool,
        rule_content: str | None,
        hook: Decision | None = None,
    ) -> Decision:
        """Allow, deny or ask for one call; `rule_content` is its path or command, `hook`
        the PreToolUse hooks' decision: its deny wins over everything but a deny rule, its
        ask and allow over allow rules and the mode, never over plan mode or ask rules."""
        call = CallTarget(tool_name, tool_kind, rule_content)
        return (
            self._by_rules("deny", call)
            or _by_hook(hook, ("deny",))
            or self._plan_refusal(call, read_only)
            or self._unsure_command(call)
            or self._by_rules("ask", call)
            or _by_hook(hook, ("ask", "allow"))
            or self._by_rules("allow", call)
            or _by_mode(self.mode, call, read_only)
        )

    def decide_all(
        self,
        tool_name: str,
        tool_kind: str,
        read_only: bool,
        rule_contents: Sequence[str | None],
        hook: Decision | None = None,
    ) -> Decision:
        """One decision for a call on several paths: a deny of any one denies it, an ask of
        any one asks, and it is allowed only when every one is."""
        decisions = [
            self.decide(tool_name, tool_kind, read_only, content, hook) for content in rule_contents
        ]
        for behavior in ("deny", "ask"):
            for decision in decisions:
                if decision.behavior == behavior:
                    return decision
        return decisions[0]

    def _by_rules(self, behavior: PermissionBehavior, call: CallTarget) -> Decision | None:
        rules = matching_rules(self.rules, behavior, call, self._base)
        if not rules:
            return None
        return Decision(behavior, _rule_reason(behavior, rules, call), rules[0])

    def _unsure_command(self, call: CallTarget) -> Decision | None:
        """A command that runs code agentls cannot see might be what a rule forbids.

        With a deny rule in force, bypassPermissions refuses it: that mode promises not to
        ask, and a deny rule holds in every mode. Otherwise the user is asked.
        """
        if call.tool_kind != COMMAND_KIND or call.content is None:
            return None
        guards = [
            rule
            for rule in self.rules
            if rule.behavior in ("deny", "ask")
            and rule_applies(rule, call.tool_name, call.tool_kind)
        ]
        why = unknown_commands(call.content) if guards else None
        if why is None:
            return None
        deny = next((rule for rule in guards if rule.behavior == "deny"), None)
        if self.mode == "bypassPermissions" and deny is not None:
            return Decision(
                "deny",
                f"Refused: {why}, so deny rule {deny} cannot be checked against it. Write "
                "every command out in the command line itself.",
                deny,
            )
        return Decision(
            "ask",
            f"The user must approve {_subject(call)}: {why}, so its deny and ask rules "
            "cannot be checked.",
        )

    def _plan_refusal(self, call: CallTarget, read_only: bool) -> Decision | None:
        if self.mode != "plan" or read_only:
            return None
        return Decision(
            "deny",
            f"Refused: you are in plan mode, so you must not change anything and "
            f"{_subject(call)} would. Keep to read-only tools, then present your plan to the "
            "user and wait for approval instead.",
        )


def _by_hook(hook: Decision | None, behaviors: tuple[PermissionBehavior, ...]) -> Decision | None:
    if hook is None or hook.behavior not in behaviors:
        return None
    if hook.behavior == "deny":
        return Decision("deny", hook.reason or "Denied by a PreToolUse hook.")
    said = f" It said: {hook.reason}" if hook.reason else ""
    if hook.behavior == "ask":
        return Decision("ask", f"A PreToolUse hook asks the user to approve this call.{said}")
    return Decision("allow", f"Allowed by a PreToolUse hook.{said}")


def _by_mode(mode: PermissionMode, call: CallTarget, read_only: bool) -> Decision:
    if mode == "bypassPermissions":
        return Decision("allow", "Allowed: bypassPermissions mode runs every call.")
    if read_only and call.tool_kind != FETCH_KIND:
        return Decision("allow", "Allowed: read-only calls run without asking.")
    if mode == "acceptEdits" and call.tool_kind in EDIT_KINDS:
        return Decision("allow", "Allowed: acceptEdits mode accepts file edits without asking.")
    return Decision("ask", f"The user must approve {_subject(call)}.")


def _rule_reason(behavior: PermissionBehavior, rules: tuple[Rule, ...], call: CallTarget) -> str:
    if behavior == "deny":
        return f"Denied by rule {rules[0]}."
    if behavior == "ask":
        return f"The user must approve {_subject(call)}: rule {rules[0]} asks for approval."
    names = ", ".join(str(rule) for rule in rules)
    return f"Allowed by rule{'s' if len(rules) > 1 else ''} {names}."


def _subject(call: CallTarget) -> str:
    content = (call.content or "").strip()
    if not content:
        return call.tool_name
    lines = content.splitlines()
    text = lines[0]
    if len(lines) > 1 or len(text) > _SUBJECT_LIMIT:
        text = text[:_SUBJECT_LIMIT] + "…"
    return f"{call.tool_name} {text}"


def _posix(path: str | PurePath | None) -> str | None:
    return None if path is None else PurePath(path).as_posix()


def rule_for_always(
    tool_name: str, tool_kind: str, rule_content: str | None, behavior: PermissionBehavior
) -> Rule:
    """The session rule for an allow_always / reject_always answer to this call."""
    if rule_content is None or not rule_content.strip():
        return Rule(tool_name, None, behavior)
    if tool_kind == COMMAND_KIND:
        return Rule(tool_name, _command_specifier(rule_content), behavior)
    if tool_kind in PATH_KINDS:
        return Rule(_path_rule_tool(tool_name, tool_kind), _exact_path(rule_content), behavior)
    if tool_kind == FETCH_KIND:
        # The content is already the narrowest thing to remember: `domain:example.com`.
        return Rule(tool_name, rule_content.strip(), behavior)
    return Rule(tool_name, None, behavior)


def _command_specifier(command: str) -> str:
    """A prefix on the command's first word(s); the exact line when it is not one plain command."""
    words = command_words(command)
    if words is None:
        return command.strip()
    keep = 2 if len(words) > 1 and _SUBCOMMAND.fullmatch(words[1]) else 1
    return f"{shlex.join(words[:keep])}:*"


def _path_rule_tool(tool_name: str, tool_kind: str) -> str:
    if tool_kind == "edit":
        return "Edit"
    return "Read" if tool_kind in READ_KINDS else tool_name


def _exact_path(content: str) -> str:
    path = content.strip()
    if path.startswith(("/", "~")):
        return path
    normal = posixpath.normpath(path)
    # `./` anchors the rule to cwd; a bare name would match that name at any depth.
    return normal if normal == "." else "./" + normal
