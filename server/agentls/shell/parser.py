"""Turning a command line into the simple commands bash would run, following its grammar
as far as it matters: lists and pipelines, subshells and groups, compound commands,
functions, and the scripts that substitutions and commands like `eval` run (read again,
nested up to `MAX_NESTING` deep)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from agentls.shell.inner import inner_scripts
from agentls.shell.lexer import Lexer, WordBuilder
from agentls.shell.words import Redirect, Script, SimpleCommand, Unsure, Word

MAX_NESTING: Final = 3
_KEYWORDS: Final = frozenset(
    {"if", "then", "elif", "else", "fi", "do", "done", "while", "until", "!", "{", "}", "time"}
)
_UNSURE_KEYWORDS: Final = frozenset({"case", "esac", "select", "coproc", "function"})
_OPENERS: Final = frozenset({"{", "if", "while", "until", "for"})
_CLOSERS: Final[dict[str, tuple[str, ...]]] = {"}": ("{",), "fi": ("then", "else"), "done": ("do",)}
_FUNCTION_NAME = re.compile(r"[\w.:+-]+")
_BINARY: Final = frozenset({"&&", "||", "|", "|&"})
_CLOSED: Final = frozenset({")", "}", "fi", "done"})
_MIDDLES: Final = frozenset({"then", "elif", "else", "do", "!", "time"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")


def parse(text: str, depth: int) -> Script:
    if depth > MAX_NESTING:
        return Script((), False, problem="commands nested too deeply")
    parser = _Parser(text, depth)
    try:
        parser.parse()
    except Unsure as why:
        return Script(tuple(parser.commands), False, frozenset(parser.syntax), str(why))
    return Script(tuple(parser.commands), True, frozenset(parser.syntax))


@dataclass(slots=True)
class _Pending:
    words: list[Word] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)
    redirects: list[Redirect] = field(default_factory=list)
    scripts: list[str] = field(default_factory=list)
    skipping: bool = False
    # The first word as written, for telling a function's name from a quoted word.
    raw: str = ""

    def empty(self) -> bool:
        return not (self.words or self.assignments or self.redirects)


class _Parser:
    """Turns a line into simple commands, following bash's grammar as far as it matters."""

    def __init__(self, text: str, depth: int) -> None:
        self.lexer = Lexer(text)
        self.depth = depth
        self.commands: list[SimpleCommand] = []
        self.syntax = self.lexer.syntax
        self.current = _Pending()
        # Open subshells and compound commands, innermost last: `(`, `{`, `if`, `while`, …,
        # each with the count of commands read when its current part began.
        self.open: list[tuple[str, int]] = []
        self.finished = 0
        self.expect_body = False
        # The operator before the current command, to catch `&& &&`, `| ;` and a dangling `|`.
        self.last_operator: str | None = "start"

    def parse(self) -> None:
        lexer = self.lexer
        while True:
            lexer.skip_blanks()
            if lexer.pos >= len(lexer.text):
                break
            operator = lexer.operator()
            if operator is not None:
                self._operator(operator)
                continue
            redirect = lexer.redirect()
            if redirect is not None:
                self._redirect(redirect)
                continue
            self._word(lexer.word())
        self._finish()
        if lexer.heredocs or self.expect_body:
            raise Unsure("a heredoc or a function has no body")
        if self.open:
            raise Unsure(f"a '{self.open[-1][0]}' is not closed")
        if self.last_operator in _BINARY:
            raise Unsure(f"the line ends with {self.last_operator!r}")

    def _operator(self, operator: str) -> None:
        if operator in (";;", ";&", ";;&"):
            raise Unsure("case clauses are not read")
        if operator == "(":
            self._open()
            return
        had_command = self._finish()
        if operator == ")":
            self._close("(", ")")
            self.last_operator = ")"
            return
        if operator == "\n":
            self.syntax.add("\\n")
            if self.last_operator in _BINARY and not had_command:
                # `a |` + newline: the pipeline goes on on the next line.
                return
        elif self.expect_body:
            raise Unsure("a function has no body")
        else:
            self.syntax.add(operator)
            if not had_command and self.last_operator not in (")", "}", "done", "fi"):
                raise Unsure(f"{operator!r} follows no command")
        self.last_operator = operator

    def _open(self) -> None:
        if self.current.words:
            # `name () { …; }`: a function definition; its body is read as commands.
            self.lexer.skip_blanks()
            named = len(self.current.words) == 1 and _FUNCTION_NAME.fullmatch(self.current.raw)
            if not named or self.lexer.operator() != ")":
                raise Unsure("a '(' follows a word")
            self.syntax.add("function")
            self.current = _Pending()
            self.last_operator = "start"
            self.expect_body = True
            return
        self.expect_body = False
        if not self.current.empty():
            raise Unsure("a '(' follows a redirection")
        if self.lexer.peek() == "(":
            raise Unsure("arithmetic commands are not read")
        self.syntax.add("subshell")
        self.open.append(("(", self.finished))
        self.last_operator = "("

    def _redirect(self, operator: str) -> None:
        if self.expect_body:
            raise Unsure("a function has no body")
        self.lexer.skip_blanks()
        built = self.lexer.word()
        if not built.text and not built.quoted and not built.scripts:
            raise Unsure("a redirection has no target")
        self.current.scripts.extend(built.scripts)
        bare = operator.lstrip("0123456789")
        if bare in ("<<", "<<-"):
            self.syntax.add("heredoc")
            delimiter = "".join(built.text)
            self.lexer.heredocs.append((delimiter, built.quoted, bare == "<<-"))
        self.current.redirects.append(Redirect(operator, built.word()))

    def _word(self, built: WordBuilder) -> None:
        word = built.word()
        current = self.current
        if self.expect_body:
            if built.quoted or word.text not in _OPENERS:
                raise Unsure("a function has no body")
            self.expect_body = False
        if not current.words:
            current.raw = built.raw
        closer = word.literal and word.text in _CLOSERS
        if current.empty() and self.last_operator in _CLOSED and not closer:
            raise Unsure(f"a word follows '{self.last_operator}'")
        current.scripts.extend(built.scripts)
        if current.skipping:
            return
        starts_command = not current.words and not current.assignments
        if starts_command and word.literal and not built.quoted and self._keyword(word.text):
            return
        if not current.words and _ASSIGNMENT.match(built.raw):
            current.assignments.append(word)
        else:
            current.words.append(word)

    def _keyword(self, text: str) -> bool:
        if text in _UNSURE_KEYWORDS:
            raise Unsure(f"'{text}' is not read")
        if text != "for" and text not in _KEYWORDS:
            return False
        self.syntax.add("group" if text in ("{", "}") else "compound")
        if text == "for":
            # `for NAME in words;`: none of these words is a command.
            self.current.skipping = True
        if text in _OPENERS:
            self.open.append((text, self.finished))
        elif text in _CLOSERS:
            self._close(_CLOSERS[text], text)
            self.last_operator = text
        elif text in _MIDDLES:
            self._middle(text)
        return True

    def _close(self, opener: str | tuple[str, ...], closer: str) -> None:
        openers = (opener,) if isinstance(opener, str) else opener
        if not self.open or self.open[-1][0] not in openers:
            raise Unsure(f"a '{closer}' closes nothing")
        self._part_done(closer)
        self.open.pop()

    def _middle(self, text: str) -> None:
        inside = self.open[-1][0] if self.open else None
        if text == "do" and inside in ("while", "until", "for"):
            self._part_done(text)
            self.open[-1] = ("do", self.finished)
        elif text in ("then", "elif", "else") and inside in ("if", "then", "elif", "else"):
            self._part_done(text)
            self.open[-1] = (text, self.finished)
        elif text not in ("!", "time"):
            raise Unsure(f"a '{text}' is out of place")

    def _part_done(self, word: str) -> None:
        # `()`, `{ }`, `if then`: bash wants at least one command in every part.
        if self.finished == self.open[-1][1]:
            raise Unsure(f"nothing comes before '{word}'")

    def _finish(self) -> bool:
        """End the current command; returns whether there was one."""
        current, self.current = self.current, _Pending()
        for script in current.scripts:
            self._nested(script)
        if current.skipping:
            self.finished += 1
            return True
        if current.empty():
            return False
        self.finished += 1
        command = SimpleCommand(
            tuple(current.words), tuple(current.assignments), tuple(current.redirects)
        )
        if current.words and not current.words[0].literal:
            self.commands.append(command)
            raise Unsure("the command name is an expansion")
        self.commands.append(command)
        for inner in inner_scripts(command):
            self._nested(inner)
        self.last_operator = None
        return True

    def _nested(self, script: str | tuple[Word, ...]) -> None:
        if isinstance(script, tuple):
            # A command another one runs (`sudo rm`, `find -exec sh -c …`) is read like any.
            command = SimpleCommand(script, nested=True)
            self.commands.append(command)
            if not script[0].literal:
                raise Unsure("the command name is an expansion")
            for inner in inner_scripts(command):
                self._nested(inner)
            return
        read = parse(script, self.depth + 1)
        self.syntax.add("substitution")
        self.commands.extend(_as_nested(c) for c in read.commands)
        if not read.certain:
            raise Unsure(read.problem or "a nested script is not certain")


def _as_nested(command: SimpleCommand) -> SimpleCommand:
    if command.nested:
        return command
    return SimpleCommand(command.words, command.assignments, command.redirects, nested=True)
