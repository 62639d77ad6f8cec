"""The `hooks` settings, in the shape Claude Code users already write, parsed once per session.

    "hooks": {"PreToolUse": [{"matcher": "Edit|Write",
                              "hooks": [{"type": "command", "command": "…", "timeout": 30}]}]}

Every settings layer may hold some; they add up. Hooks from the project's settings file are
marked as such: they run only once the user trusted the workspace (agentls.hooks.trust).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from agentls.names import HOOK_EVENTS, HookEvent

DEFAULT_TIMEOUT = 60.0


@dataclass(frozen=True, slots=True)
class HookCommand:
    command: str
    timeout: float = DEFAULT_TIMEOUT
    # From the project's settings file: runs only in a workspace the user trusted.
    project: bool = False
    # The plugin that brought it: runs only once the user trusts that plugin.
    plugin: str | None = None


@dataclass(frozen=True, slots=True)
class HookMatcher:
    """Commands for the calls (tool names, or a trigger or source) the pattern matches."""

    pattern: re.Pattern[str] | None
    commands: tuple[HookCommand, ...]

    def matches(self, subject: str | None) -> bool:
        return self.pattern is None or subject is None or bool(self.pattern.fullmatch(subject))


@dataclass(frozen=True, slots=True)
class HookConfig:
    matchers: dict[HookEvent, tuple[HookMatcher, ...]] = field(default_factory=dict)
    # A digest of the project's own hooks (None: it has none); trust is remembered for it.
    project_digest: str | None = None
    project_hooks: Any = None

    def commands(self, event: HookEvent, subject: str | None) -> list[HookCommand]:
        """The event's commands for `subject`, in settings order, each command once."""
        found: dict[str, HookCommand] = {}
        for matcher in self.matchers.get(event, ()):
            if matcher.matches(subject):
                for command in matcher.commands:
                    found.setdefault(command.command, command)
        return list(found.values())

    def project_commands(self) -> list[str]:
        """The commands the project's own settings file configures."""
        return sorted(
            {
                c.command
                for found in self.matchers.values()
                for m in found
                for c in m.commands
                if c.project
            }
        )


def parse_hooks(
    layers: Sequence[tuple[str, Any]], project_source: str, problems: list[str]
) -> HookConfig:
    """Every layer's hooks (`project_source` names the project file's layer); a malformed
    entry is reported in `problems` and skipped."""
    matchers: dict[HookEvent, list[HookMatcher]] = {}
    project: Any = None
    for source, value in layers:
        is_project = source == project_source
        if is_project:
            project = value
        if not isinstance(value, dict):
            problems.append(f"{source}: hooks must map event names to lists of matchers")
            continue
        for event, entries in value.items():
            if event not in HOOK_EVENTS:
                problems.append(
                    f"{source}: hooks.{event} is not a hook event ({', '.join(HOOK_EVENTS)})"
                )
                continue
            where = f"{source}: hooks.{event}"
            matchers.setdefault(event, []).extend(_matchers(entries, is_project, where, problems))
    return HookConfig(
        {event: tuple(found) for event, found in matchers.items() if found},
        _digest(project) if project is not None else None,
        project,
    )


def _matchers(entries: Any, project: bool, where: str, problems: list[str]) -> list[HookMatcher]:
    if not isinstance(entries, list):
        problems.append(f"{where} must be a list of {{matcher, hooks}} objects")
        return []
    found = []
    for index, entry in enumerate(entries):
        here = f"{where}[{index}]"
        if not isinstance(entry, dict):
            problems.append(f"{here} must be an object with matcher and hooks")
            continue
        pattern = _pattern(entry.get("matcher"), here, problems)
        if pattern is False:
            continue
        commands = _commands(entry.get("hooks"), project, here, problems)
        if commands:
            found.append(HookMatcher(pattern, tuple(commands)))
    return found


def _pattern(
    value: Any, where: str, problems: list[str]
) -> re.Pattern[str] | Literal[False] | None:
    """The matcher's regular expression; None matches everything; False: unusable."""
    if value is None or value in ("", "*"):
        return None
    if not isinstance(value, str):
        problems.append(f"{where}.matcher must be a string (a regular expression over names)")
        return False
    try:
        return re.compile(value)
    except re.error as exc:
        problems.append(f"{where}.matcher {value!r} is not a regular expression: {exc}")
        return False


def _commands(value: Any, project: bool, where: str, problems: list[str]) -> list[HookCommand]:
    if not isinstance(value, list):
        problems.append(f"{where}.hooks must be a list of {{type: command, command}} objects")
        return []
    commands = []
    for index, hook in enumerate(value):
        here = f"{where}.hooks[{index}]"
        if not isinstance(hook, dict) or hook.get("type", "command") != "command":
            problems.append(f'{here} must be {{"type": "command", "command": …}}; skipped')
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            problems.append(f"{here}.command must be a non-empty string; skipped")
            continue
        commands.append(
            HookCommand(command, _timeout(hook.get("timeout"), here, problems), project)
        )
    return commands


def _timeout(value: Any, where: str, problems: list[str]) -> float:
    if value is None:
        return DEFAULT_TIMEOUT
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        problems.append(f"{where}.timeout must be a positive number of seconds; 60 is used")
        return DEFAULT_TIMEOUT
    return float(value)


def _digest(value: Any) -> str:
    """A stable digest of the project's hooks: a changed hooks section asks for trust again."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
