"""What a command line is made of, once read: words, redirections, simple commands, scripts."""

from __future__ import annotations

import re
from dataclasses import dataclass

_FD = re.compile(r"\d+|-")


class Unsure(Exception):
    """The text cannot be read with certainty."""


@dataclass(frozen=True, slots=True)
class Word:
    """One word after quote removal; `literal` is False when bash would expand it further."""

    text: str
    literal: bool = True


@dataclass(frozen=True, slots=True)
class Redirect:
    operator: str
    target: Word

    @property
    def writes_file(self) -> bool:
        """Whether it sends output into a file (not /dev/null, not another descriptor)."""
        operator = self.operator.lstrip("0123456789")
        if ">" not in operator or self.target.text == "/dev/null":
            return False
        duplicates = operator in (">&", "<&") or operator.endswith("&")
        return not (duplicates and _FD.fullmatch(self.target.text) is not None)


@dataclass(frozen=True, slots=True)
class SimpleCommand:
    """One command bash may run: its words, leading assignments and redirections.

    `nested` is True for a command run from inside another one (a substitution, `eval`,
    `bash -c`, `find -exec`).
    """

    words: tuple[Word, ...]
    assignments: tuple[Word, ...] = ()
    redirects: tuple[Redirect, ...] = ()
    nested: bool = False

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(word.text for word in self.words)

    @property
    def writes_file(self) -> bool:
        return any(r.writes_file for r in self.redirects)


@dataclass(frozen=True, slots=True)
class Script:
    """A command line as bash reads it.

    `commands` are every simple command that may run, nested ones included. `syntax` names
    the constructs the line uses: its operators (`|`, `&&`, `;`, `&`, newline as `\\n`, …)
    and `subshell`, `group`, `compound`, `comment`, `heredoc`, `substitution`, `function`.
    When `certain` is False, `problem` says why and `commands` may not be all that runs.
    """

    commands: tuple[SimpleCommand, ...]
    certain: bool
    syntax: frozenset[str] = frozenset()
    problem: str | None = None
