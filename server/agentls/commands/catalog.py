"""The slash commands a session offers, collected from their sources.

A source is anything with a `commands()` method (`CommandSource`): the built-ins, a folder
of markdown files (`.agentls/commands/` of the project, `~/.agentls/commands/` of the
user), and, through `CommandCatalog.add_source`, any later kind such as an MCP server's
prompts (`/mcp__server__prompt`: a `SlashCommand` whose `render` fetches the prompt).
Later sources win on a name, except that a local built-in (`/clear`, `/cost`, …) can never
be replaced: those names always mean what the daemon does.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from agentls.front_matter import comma_list, split_front_matter

log = logging.getLogger(__name__)
# A command name: words of letters, digits, `-` and `_`, namespaces joined by `:`.
NAME = re.compile(r"[A-Za-z0-9_-]+(?::[A-Za-z0-9_-]+)*")
_PART = re.compile(r"[A-Za-z0-9_-]+")

# Turns the text after a command's name into the user message its turn sends.
PromptRenderer = Callable[[str], Awaitable[str]]


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command: local (the daemon answers it) or a prompt (a model turn runs it)."""

    name: str
    description: str
    argument_hint: str | None = None
    # builtin, project, user (and whatever later sources call themselves, such as mcp).
    source: str = "builtin"
    local: bool = False
    # A prompt command's text, with $ARGUMENTS and $1, $2… for the text after the name.
    template: str | None = None
    # For sources whose prompt is not a template (an MCP server's): makes the message.
    render: PromptRenderer | None = field(default=None, compare=False)
    # Tools the command's turn may use without asking (permission rules, `Bash(git add:*)`).
    allowed_tools: tuple[str, ...] = ()
    # Another model (of the same provider) for the command's turn.
    model: str | None = None


class CommandSource(Protocol):
    """Where commands come from; asked again whenever the catalog is refreshed."""

    def commands(self) -> Sequence[SlashCommand]: ...


@dataclass(frozen=True, slots=True)
class FixedCommands:
    """A source whose commands never change (the built-ins)."""

    listed: tuple[SlashCommand, ...]

    def commands(self) -> Sequence[SlashCommand]:
        return self.listed


class CommandFolder:
    """The `*.md` files of a folder, subfolders becoming namespaces (`frontend/button.md`
    is `/frontend:button`). The files are read again only when a name, size or time in
    the folder changed, so asking on every message costs a directory walk."""

    def __init__(self, folder: Path, source: str) -> None:
        self.folder = folder
        self.source = source
        self._stamp: tuple[tuple[str, int, int], ...] | None = None
        self._commands: tuple[SlashCommand, ...] = ()

    def commands(self) -> Sequence[SlashCommand]:
        files = sorted(self.folder.rglob("*.md")) if self.folder.is_dir() else []
        stamp = tuple(_stamp(path) for path in files)
        if stamp != self._stamp:
            self._stamp = stamp
            self._commands = tuple(c for c in map(self._read, files) if c is not None)
        return self._commands

    def _read(self, path: Path) -> SlashCommand | None:
        parts = path.relative_to(self.folder).with_suffix("").parts
        if not all(_PART.fullmatch(part) for part in parts):
            log.warning("command file %s ignored: use letters, digits, - and _ in names", path)
            return None
        try:
            text = path.read_text(encoding="utf-8")
            return parse_command_file(text, ":".join(parts), self.source)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            log.warning("command file %s ignored: %s", path, exc)
            return None


def _stamp(path: Path) -> tuple[str, int, int]:
    try:
        status = path.stat()
    except OSError:
        return str(path), -1, -1
    return str(path), status.st_size, status.st_mtime_ns


def parse_command_file(text: str, name: str, source: str) -> SlashCommand:
    """A prompt command from a markdown file (ValueError when malformed or empty)."""
    fields, body = split_front_matter(text)
    template = body.strip()
    if not template:
        raise ValueError("the body (the command's prompt) is empty")
    description = fields.get("description") or template.splitlines()[0][:200]
    return SlashCommand(
        name,
        description,
        fields.get("argument-hint") or None,
        source,
        template=template,
        allowed_tools=comma_list(fields.get("allowed-tools", "")),
        model=fields.get("model") or None,
    )


class CommandCatalog:
    """The commands of one session: collected from its sources, refreshed on demand."""

    def __init__(self, sources: Sequence[CommandSource]) -> None:
        self._sources = list(sources)
        self._commands: dict[str, SlashCommand] = {}
        self.refresh()

    def add_source(self, source: CommandSource) -> None:
        """A later source (MCP prompts); `refresh` picks its commands up."""
        self._sources.append(source)

    def refresh(self) -> bool:
        """Ask every source again; whether the set of commands changed."""
        found: dict[str, SlashCommand] = {}
        for source in self._sources:
            for command in source.commands():
                kept = found.get(command.name)
                if kept is not None and kept.local:
                    log.warning(
                        "the %s command /%s is ignored: /%s is built in",
                        command.source,
                        command.name,
                        command.name,
                    )
                    continue
                found[command.name] = command
        changed = _advertised(found) != _advertised(self._commands)
        self._commands = found
        return changed

    def find(self, name: str) -> SlashCommand | None:
        return self._commands.get(name)

    def listed(self) -> list[SlashCommand]:
        """Every command, by name."""
        return sorted(self._commands.values(), key=lambda c: c.name)


def _advertised(commands: dict[str, SlashCommand]) -> list[tuple[str, str, str | None, str]]:
    """What clients are told of the commands (a changed prompt body is not news to them)."""
    return sorted((c.name, c.description, c.argument_hint, c.source) for c in commands.values())
