"""Remembered permission rules: what an "always" answer saves, kept in a settings file so
the next session does not ask again.

Rules live where the settings already read them (`permissions.allow` / `deny` / `ask`):
by default the project's personal `.agentls/settings.local.json`, which the daemon keeps
out of git (`.agentls/.gitignore`) so an answer of one user is never committed; the shared
`.agentls/settings.json` with the `permissionRulesScope` setting "project", the user's
`$AGENTLS_HOME/settings.json` with "user" ("session" keeps them in the session only).
The rest of the file is kept as it was; the file is replaced whole, never half written.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agentls.names import RulesScope
from agentls.permissions.gate import PermissionGate
from agentls.permissions.rules import PermissionBehavior, Rule, parse_rule

# In the order the settings read them.
FILE_SCOPES: tuple[RulesScope, ...] = ("user", "project", "local")
LOCAL_FILE_NAME = "settings.local.json"

log = logging.getLogger(__name__)


def settings_path(scope: RulesScope, cwd: Path, home: Path) -> Path | None:
    """The settings file of a scope; None for the session's own."""
    if scope == "user":
        return home / "settings.json"
    if scope == "project":
        return cwd / ".agentls" / "settings.json"
    if scope == "local":
        return cwd / ".agentls" / LOCAL_FILE_NAME
    return None


def keep_out_of_git(folder: Path) -> None:
    """Make `folder/.gitignore` name the personal settings file (added once, the rest kept)."""
    ignore = folder / ".gitignore"
    try:
        text = ignore.read_text(encoding="utf-8")
    except FileNotFoundError:
        text = ""
    if LOCAL_FILE_NAME in (line.strip().lstrip("/") for line in text.splitlines()):
        return
    if text and not text.endswith("\n"):
        text += "\n"
    folder.mkdir(parents=True, exist_ok=True)
    ignore.write_text(text + LOCAL_FILE_NAME + "\n", encoding="utf-8")


def read_rules(path: Path) -> list[Rule]:
    """The rules a settings file holds (unreadable files and bad rules hold none)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    section = data.get("permissions") if isinstance(data, dict) else None
    rules = []
    for behavior in ("allow", "deny", "ask"):
        texts = section.get(behavior) if isinstance(section, dict) else None
        for text in texts if isinstance(texts, list) else ():
            try:
                rules.append(parse_rule(str(text), behavior))
            except ValueError:
                continue
    return rules


def save_rule(path: Path, rule: Rule) -> None:
    """Add `rule` to the file's `permissions.<behavior>` (once)."""
    text = str(rule)
    _change(
        path, lambda texts, behavior: _with(texts, text) if behavior == rule.behavior else texts
    )


def forget_rule(path: Path, rule: Rule) -> bool:
    """Take `rule` out of the file; whether it was there."""
    found = rule in read_rules(path)
    if found:
        _change(
            path,
            lambda texts, behavior: [t for t in texts if not _same(t, rule, behavior)],
        )
    return found


def _with(texts: list[str], text: str) -> list[str]:
    return texts if text in texts else [*texts, text]


def _same(text: str, rule: Rule, behavior: PermissionBehavior) -> bool:
    try:
        return parse_rule(text, behavior) == rule
    except ValueError:
        return False


def _change(path: Path, edit: Any) -> None:
    """Rewrite the file's three rule lists with `edit(texts, behavior)`, the rest kept."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); the rule was not saved") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; the rule was not saved")
    section = data.get("permissions")
    section = dict(section) if isinstance(section, dict) else {}
    for behavior in ("allow", "deny", "ask"):
        current = section.get(behavior)
        texts = [str(t) for t in current] if isinstance(current, list) else []
        changed = edit(texts, behavior)
        if changed:
            section[behavior] = changed
        else:
            section.pop(behavior, None)
    data["permissions"] = section
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".settings-", suffix=".json")
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(json.dumps(data, indent=2, ensure_ascii=False) + "\n")
    os.replace(temporary, path)


class RuleFiles:
    """A session's rules as kept in the settings files (user, project) and in its gate.

    It takes the gate's "always" answers: each is kept where `scope()` says (the
    permissionRulesScope setting, read when the answer comes)."""

    def __init__(
        self, gate: PermissionGate, cwd: Path, home: Path, scope: Callable[[], RulesScope]
    ) -> None:
        self.gate = gate
        self.cwd = cwd
        self.home = home
        self.scope = scope
        gate.on_remember = self.remember

    def remember(self, rule: Rule) -> None:
        """Keep an "always" answer's rule; a file that cannot take it leaves the rule in
        force for this session only."""
        try:
            self.keep(rule, self.scope())
        except (OSError, ValueError) as exc:
            log.warning("rule %s kept for this session only: %s", rule, exc)

    def keep(self, rule: Rule, scope: RulesScope) -> None:
        """Save an "always" answer's rule in the scope's file (ValueError, OSError)."""
        path = settings_path(scope, self.cwd, self.home)
        if path is None:
            return
        if scope == "local":
            keep_out_of_git(path.parent)
        save_rule(path, rule)

    def in_force(self) -> list[tuple[Rule, RulesScope]]:
        """The rules in force, with where each is kept: user file, project file, session."""
        kept: list[tuple[Rule, RulesScope]] = []
        for scope in FILE_SCOPES:
            path = settings_path(scope, self.cwd, self.home)
            kept += [(rule, scope) for rule in read_rules(path)] if path else []
        filed = {rule for rule, _scope in kept}
        return kept + [(rule, "session") for rule in self.gate.rules if rule not in filed]

    def update(
        self, add: list[tuple[Rule, RulesScope]], remove: list[tuple[Rule, RulesScope]]
    ) -> None:
        """Forget and save rules (agent/updatePermissionRules); they apply at once."""
        for rule, scope in remove:
            path = settings_path(scope, self.cwd, self.home)
            if path is not None:
                forget_rule(path, rule)
            if rule in self.gate.rules:
                self.gate.rules.remove(rule)
        for rule, scope in add:
            self.keep(rule, scope)
            self.gate.add_rule(rule)
