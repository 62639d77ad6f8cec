"""Shell command text, understood once: every simple command bash would run, or "unsure".

Permission rules and Bash's read-only policy both decide about a command line, so both read
it through this one pure module, and they can never disagree about what a line runs. It
follows bash's own reading: quotes and escapes (`'…'`, `"…"`, `$'…'`, backslashes, line
continuations, where `\\\\` + newline is an escaped backslash and then a new command),
comments, operators, redirections, heredocs, subshells and groups, compound commands,
command and process substitution, and the scripts that `eval`, `bash -c` / `sh -c` and
`find -exec` run. What it cannot read with certainty (an unterminated quote, `case`, a
command name that is an expansion, a heredoc whose body substitutes commands, …) makes
the script uncertain: callers then never allow on a rule's say-so, they ask.
"""

from __future__ import annotations

import functools

from agentls.shell.inner import SHELLS, shell_operands, unwrapped
from agentls.shell.parser import parse
from agentls.shell.words import Redirect, Script, SimpleCommand, Word

__all__ = [
    "SHELLS",
    "Redirect",
    "Script",
    "SimpleCommand",
    "Word",
    "command_words",
    "parse_script",
    "shell_operands",
    "unwrapped",
]


@functools.lru_cache(maxsize=512)
def parse_script(text: str) -> Script:
    """Every simple command `text` runs, as bash would read it."""
    return parse(text, 0)


def command_words(text: str) -> tuple[str, ...] | None:
    """The words of `text` when it is one plain command of literal words, else None."""
    script = parse_script(text)
    if not script.certain or len(script.commands) != 1 or script.syntax:
        return None
    command = script.commands[0]
    if command.assignments or command.redirects or not command.words:
        return None
    if not all(word.literal for word in command.words):
        return None
    return command.argv
