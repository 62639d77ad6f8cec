"""Reading a message as a slash command, and expanding a command's prompt.

A message is a command when it starts, with no space before it, with `/` and a command
name (letters, digits, `-`, `_`; namespaces joined by `:`) followed by a space, a line
break or the end. So `/usr/bin is slow` (a second `/`) or ` /review` (a space first) is
never one. The caller decides what a `/name` that names no command means.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass

from agentls.commands.catalog import NAME

_COMMAND = re.compile(rf"/({NAME.pattern})(?=\s|$)")
_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9][0-9]*)")


@dataclass(frozen=True, slots=True)
class Invocation:
    name: str
    # The text after the name, stripped ("" when there is none).
    arguments: str


def parse_invocation(text: str) -> Invocation | None:
    """The command a message invokes, or None when it does not look like one."""
    match = _COMMAND.match(text)
    if match is None:
        return None
    return Invocation(match.group(1), text[match.end() :].strip())


def expand(template: str, arguments: str) -> str:
    """`template` with `$ARGUMENTS` made the whole argument text and `$1`, `$2`… its
    words (shell quoting groups words; a missing one is empty). A template that uses
    neither gets the arguments appended, so what the user typed is never lost."""
    words = _words(arguments)
    used = False

    def fill(match: re.Match[str]) -> str:
        nonlocal used
        used = True
        key = match.group(1)
        if key == "ARGUMENTS":
            return arguments
        index = int(key) - 1
        return words[index] if index < len(words) else ""

    text = _PLACEHOLDER.sub(fill, template)
    if arguments and not used:
        text = f"{text}\n\nARGUMENTS: {arguments}"
    return text


def _words(arguments: str) -> list[str]:
    try:
        return shlex.split(arguments)
    except ValueError:
        # An unclosed quote: the words as typed rather than an error.
        return arguments.split()
