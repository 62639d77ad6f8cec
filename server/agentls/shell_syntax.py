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
import posixpath
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final

MAX_NESTING: Final = 3
_SEPARATORS: Final = ("&&", "||", ";;&", ";;", ";&", "|&", "&", "|", ";")
_REDIRECTS: Final = ("&>>", "<<<", "<<-", "&>", ">>", "<<", "<>", ">|", ">&", "<&", ">", "<")
_META: Final = frozenset("|&;()<> \t\n")
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
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\[[^]]*\])?\+?=")
SHELLS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "posh", "fish"}
)
# Shell options whose value is the next word (`-o pipefail`, `-O extglob`, `--rcfile f`).
_SHELL_LONG_VALUES: Final = frozenset({"--rcfile", "--init-file"})
_SHELL_VALUE_LETTERS: Final = frozenset("oO")
_FD = re.compile(r"\d+|-")
# Programs that run the rest of their arguments as a command, with their options that take a
# value. Deny and ask rules look through them.
_WRAPPERS: Final[dict[str, frozenset[str]]] = {
    "env": frozenset({"-u", "--unset", "-C", "--chdir"}),
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-T"}),
    "doas": frozenset({"-u", "-C"}),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "nohup": frozenset(),
    "time": frozenset(),
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "setsid": frozenset(),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "--signal", "-k", "--kill-after"}),
    "xargs": frozenset({"-I", "-n", "-L", "-P", "-s", "-d", "-E", "-a", "--delimiter"}),
    "busybox": frozenset(),
    "chroot": frozenset({"--userspec", "--groups"}),
    "fakeroot": frozenset({"-l", "--lib", "--faked", "-s", "-i"}),
    "unbuffer": frozenset(),
    "strace": frozenset({"-e", "-o", "-p", "-s", "-u", "-E", "-P", "-I", "-b", "-a", "-X"}),
    "ltrace": frozenset({"-e", "-o", "-p", "-s", "-u", "-n", "-a"}),
}
# Of these, the first word that is not an option is not the command yet.
_WRAPPER_POSITIONALS: Final = {"timeout": 1, "chroot": 1}
# `watch` runs its words joined as an `sh -c` script; these of its options take a value.
_WATCH_VALUES: Final = frozenset({"-n", "--interval", "-q", "--equexit"})


class _Unsure(Exception):
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


@functools.lru_cache(maxsize=512)
def parse_script(text: str) -> Script:
    """Every simple command `text` runs, as bash would read it."""
    return _parse(text, 0)


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


def unwrapped(words: tuple[str, ...]) -> tuple[str, ...]:
    """`words` without the wrappers that run the rest (`sudo -u x rm` → `rm`)."""
    index = 0
    while index < len(words) and posixpath.basename(words[index]) in _WRAPPERS:
        name = posixpath.basename(words[index])
        if name == "command" and words[index + 1 : index + 2] in (("-v",), ("-V",)):
            break  # `command -v rm` names rm without running it.
        index = _skip_options(words, index + 1, name)
    return words[index:]


def _skip_options(words: tuple[str, ...], index: int, wrapper: str) -> int:
    takes_value = _WRAPPERS[wrapper]
    positionals = _WRAPPER_POSITIONALS.get(wrapper, 0)
    while index < len(words):
        word = words[index]
        if word == "--":
            return index + 1
        if wrapper == "env" and "=" in word and not word.startswith("-"):
            # env takes any NAME=VALUE, `BASH_FUNC_f%%=() { …; }` (a function) too.
            index += 1
        elif word.startswith("-") and len(word) > 1:
            index += 2 if word in takes_value else 1
        elif positionals:
            positionals -= 1
            index += 1
        else:
            break
    return index


def _parse(text: str, depth: int) -> Script:
    if depth > MAX_NESTING:
        return Script((), False, problem="commands nested too deeply")
    parser = _Parser(text, depth)
    try:
        parser.parse()
    except _Unsure as why:
        return Script(tuple(parser.commands), False, frozenset(parser.syntax), str(why))
    return Script(tuple(parser.commands), True, frozenset(parser.syntax))


# --- reading words ----------------------------------------------------------------------


@dataclass(slots=True)
class _WordBuilder:
    text: list[str] = field(default_factory=list)
    literal: bool = True
    quoted: bool = False
    scripts: list[str] = field(default_factory=list)
    raw: str = ""

    def word(self) -> Word:
        return Word("".join(self.text), self.literal)


class _Lexer:
    """Reads one word, operator or redirection at a time, as bash's tokenizer does."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.pos = 0
        self.heredocs: list[tuple[str, bool, bool]] = []
        self.syntax: set[str] = set()

    def peek(self, ahead: int = 0) -> str:
        index = self.pos + ahead
        return self.text[index] if index < len(self.text) else ""

    def skip_blanks(self) -> None:
        while True:
            char = self.peek()
            if char in (" ", "\t"):
                self.pos += 1
            elif char == "\\" and self.peek(1) == "\n":
                self.pos += 2
            elif char == "#":
                self.syntax.add("comment")
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
            else:
                return

    def operator(self) -> str | None:
        """A separator, parenthesis or newline at the current position, consumed."""
        if self.peek() == "\n":
            self.pos += 1
            self.read_heredocs()
            return "\n"
        for op in (*_SEPARATORS, "(", ")"):
            if self.text.startswith(op, self.pos) and not self._redirect_follows(op):
                self.pos += len(op)
                return op
        return None

    def _redirect_follows(self, op: str) -> bool:
        # `&>` and `&>>` are redirections, not `&` then `>`.
        return op == "&" and self.peek(1) == ">"

    def redirect(self) -> str | None:
        """A redirection operator (with its descriptor number) at the current position."""
        start = self.pos
        while self.peek().isdigit():
            self.pos += 1
        if self.peek() == "{":
            close = self.text.find("}", self.pos)
            if close > 0 and _NAME.fullmatch(self.text[self.pos + 1 : close]):
                self.pos = close + 1
        for op in _REDIRECTS:
            if self.text.startswith(op, self.pos) and not self._substitutes(op):
                self.pos += len(op)
                return self.text[start : self.pos]
        self.pos = start
        return None

    def _substitutes(self, op: str) -> bool:
        # `<(` and `>(` are process substitutions: words, not redirections.
        return op in ("<", ">") and self.peek(1) == "("

    def word(self) -> _WordBuilder:
        """One word: quotes removed, expansions kept as written and marked non-literal."""
        built = _WordBuilder()
        start = self.pos
        while self.pos < len(self.text):
            char = self.peek()
            if char in _META and not self._process_substitution():
                break
            self._word_piece(built, self.pos == start)
        built.raw = self.text[start : self.pos]
        return built

    def _process_substitution(self) -> bool:
        return self.peek() in "<>" and self.peek(1) == "("

    def _word_piece(self, built: _WordBuilder, at_start: bool) -> None:
        char = self.peek()
        if char == "\\":
            self._escape(built)
        elif char == "'":
            built.quoted = True
            built.text.append(self._until("'", self.pos + 1))
        elif char == '"':
            built.quoted = True
            self.pos += 1
            self._double_quoted(built)
        elif char == "$":
            self._dollar(built)
        elif char == "`":
            self._backtick(built)
        elif char in "<>":
            self.syntax.add("substitution")
            start = self.pos
            self.pos += 1
            built.scripts.append(self._balanced("(", ")"))
            built.text.append(self.text[start : self.pos])
            built.literal = False
        else:
            self.pos += 1
            built.text.append(char)
            if char in "*?" or (char == "~" and at_start) or self._expands(char):
                built.literal = False

    def _expands(self, char: str) -> bool:
        """A `[…]` pattern or a `{a,b}` / `{1..3}` brace expansion starts here."""
        if char not in "[{":
            return False
        rest = self.text[self.pos : self._word_end()]
        if char == "[":
            return "]" in rest
        inner = rest[: rest.find("}")] if "}" in rest else ""
        return "," in inner or ".." in inner

    def _word_end(self) -> int:
        end = self.pos
        while end < len(self.text) and self.text[end] not in _META:
            end += 1
        return end

    def _escape(self, built: _WordBuilder) -> None:
        nxt = self.peek(1)
        if nxt == "":
            raise _Unsure("a backslash ends the text")
        self.pos += 2
        if nxt != "\n":
            built.quoted = True
            built.text.append(nxt)

    def _until(self, end: str, start: int) -> str:
        close = self.text.find(end, start)
        if close < 0:
            raise _Unsure("a quote is not closed")
        self.pos = close + 1
        return self.text[start:close]

    def _double_quoted(self, built: _WordBuilder) -> None:
        """Inside "…": only $, ` and \\ are special."""
        while True:
            char = self.peek()
            if char == "":
                raise _Unsure("a quote is not closed")
            if char == '"':
                self.pos += 1
                return
            if char == "\\" and self.peek(1) in ("$", "`", '"', "\\", "\n"):
                if self.peek(1) != "\n":
                    built.text.append(self.peek(1))
                self.pos += 2
            elif char == "$" and self.peek(1) not in ("'", '"'):
                self._dollar(built)
            elif char == "`":
                self._backtick(built)
            else:
                built.text.append(char)
                self.pos += 1

    def _dollar(self, built: _WordBuilder) -> None:
        nxt = self.peek(1)
        if nxt == "'":
            built.quoted = True
            self.pos += 2
            built.text.append(_ansi_c(self._ansi_body()))
        elif nxt == '"':
            built.quoted = True
            self.pos += 2
            self._double_quoted(built)
        elif nxt == "(" and self.peek(2) == "(":
            self.pos += 1
            start = self.pos
            inner = self._balanced("(", ")")
            if "$" in inner or "`" in inner:
                raise _Unsure("an arithmetic expansion holds a substitution")
            built.text.append("$" + self.text[start : self.pos])
            built.literal = False
        elif nxt == "(":
            self.syntax.add("substitution")
            self.pos += 1
            start = self.pos
            built.scripts.append(self._balanced("(", ")"))
            built.text.append("$" + self.text[start : self.pos])
            built.literal = False
        elif nxt == "{":
            self._parameter(built)
        elif nxt and (nxt.isalnum() or nxt in "_@*#?$!-"):
            match = _NAME.match(self.text, self.pos + 1)
            length = match.end() - self.pos if match else 2
            built.text.append(self.text[self.pos : self.pos + length])
            self.pos += length
            built.literal = False
        else:
            built.text.append("$")
            self.pos += 1

    def _ansi_body(self) -> str:
        start = self.pos
        while self.pos < len(self.text):
            char = self.peek()
            if char == "\\":
                self.pos += 2
            elif char == "'":
                self.pos += 1
                return self.text[start : self.pos - 1]
            else:
                self.pos += 1
        raise _Unsure("a $'…' quote is not closed")

    def _parameter(self, built: _WordBuilder) -> None:
        start = self.pos
        self.pos += 1
        inner = self._balanced("{", "}")
        if "$(" in inner or "`" in inner or "<(" in inner or ">(" in inner:
            raise _Unsure("a parameter expansion holds a substitution")
        built.text.append(self.text[start : self.pos])
        built.literal = False

    def _backtick(self, built: _WordBuilder) -> None:
        self.syntax.add("substitution")
        self.pos += 1
        script: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise _Unsure("a backquote is not closed")
            if char == "`":
                self.pos += 1
                break
            if char == "\\" and self.peek(1) in ("`", "\\", "$"):
                script.append(self.peek(1))
                self.pos += 2
            else:
                script.append(char)
                self.pos += 1
        built.scripts.append("".join(script))
        built.text.append("`" + "".join(script) + "`")
        built.literal = False

    def _balanced(self, opening: str, closing: str) -> str:
        """The text up to the parenthesis (or brace) that closes the one at `pos`."""
        assert self.peek() == opening
        self.pos += 1
        start = self.pos
        level = 1
        while level:
            char = self.peek()
            if char == "":
                raise _Unsure(f"a {opening!r} is not closed")
            if char == "\\":
                self.pos += 2
                continue
            if char in ("'", '"', "`"):
                self._skip_quote(char)
                continue
            if closing == ")" and char == "#" and self._comment_starts():
                end = self.text.find("\n", self.pos)
                self.pos = len(self.text) if end < 0 else end
                continue
            level += (char == opening) - (char == closing)
            self.pos += 1
        return self.text[start : self.pos - 1]

    def _comment_starts(self) -> bool:
        return self.pos == 0 or self.text[self.pos - 1] in " \t\n;&|("

    def _skip_quote(self, quote: str) -> None:
        self.pos += 1
        while True:
            char = self.peek()
            if char == "":
                raise _Unsure("a quote is not closed")
            if char == "\\" and quote != "'":
                self.pos += 2
                continue
            self.pos += 1
            if char == quote:
                return

    def read_heredocs(self) -> None:
        """After a newline: the bodies of the heredocs its line opened."""
        pending, self.heredocs = self.heredocs, []
        for delimiter, quoted, strip_tabs in pending:
            body = self._heredoc_body(delimiter, strip_tabs)
            if not quoted and any(mark in body for mark in ("$(", "`", "${")):
                raise _Unsure("a heredoc body substitutes commands")

    def _heredoc_body(self, delimiter: str, strip_tabs: bool) -> str:
        lines: list[str] = []
        while self.pos < len(self.text):
            end = self.text.find("\n", self.pos)
            end = len(self.text) if end < 0 else end
            line = self.text[self.pos : end]
            self.pos = min(end + 1, len(self.text))
            if (line.lstrip("\t") if strip_tabs else line) == delimiter:
                return "\n".join(lines)
            lines.append(line)
        raise _Unsure(f"a heredoc is not closed by {delimiter!r}")


def _ansi_c(body: str) -> str:
    """The text of a `$'…'` quote, its escapes decoded as bash does."""
    simple = {"a": "\a", "b": "\b", "e": "\x1b", "E": "\x1b", "f": "\f", "n": "\n"}
    simple |= {"r": "\r", "t": "\t", "v": "\v", "\\": "\\", "'": "'", '"': '"', "?": "?"}
    out: list[str] = []
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\" or index + 1 >= len(body):
            out.append(char)
            index += 1
            continue
        code = body[index + 1]
        if code in simple:
            out.append(simple[code])
            index += 2
        else:
            decoded, index = _numeric_escape(body, index)
            out.append(decoded)
    return "".join(out)


def _numeric_escape(body: str, index: int) -> tuple[str, int]:
    code = body[index + 1]
    specs = {"x": (16, 2), "u": (16, 4), "U": (16, 8)}
    if code in specs:
        base, width = specs[code]
        digits = re.match(f"[0-9A-Fa-f]{{1,{width}}}", body[index + 2 :])
        if digits is None:
            return "\\" + code, index + 2
        value = int(digits.group(), base)
        return _char(value), index + 2 + len(digits.group())
    if code in "01234567":
        digits = re.match(r"[0-7]{1,3}", body[index + 1 :])
        assert digits is not None
        return _char(int(digits.group(), 8) & 0xFF), index + 1 + len(digits.group())
    if code == "c" and index + 2 < len(body):
        return chr(ord(body[index + 2]) & 0x1F), index + 3
    return "\\" + code, index + 2


def _char(value: int) -> str:
    if value > 0x10FFFF:
        raise _Unsure("a $'…' escape is out of range")
    return chr(value)


# --- reading commands ---------------------------------------------------------------------


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
        self.lexer = _Lexer(text)
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
            raise _Unsure("a heredoc or a function has no body")
        if self.open:
            raise _Unsure(f"a '{self.open[-1][0]}' is not closed")
        if self.last_operator in _BINARY:
            raise _Unsure(f"the line ends with {self.last_operator!r}")

    def _operator(self, operator: str) -> None:
        if operator in (";;", ";&", ";;&"):
            raise _Unsure("case clauses are not read")
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
            raise _Unsure("a function has no body")
        else:
            self.syntax.add(operator)
            if not had_command and self.last_operator not in (")", "}", "done", "fi"):
                raise _Unsure(f"{operator!r} follows no command")
        self.last_operator = operator

    def _open(self) -> None:
        if self.current.words:
            # `name () { …; }`: a function definition; its body is read as commands.
            self.lexer.skip_blanks()
            named = len(self.current.words) == 1 and _FUNCTION_NAME.fullmatch(self.current.raw)
            if not named or self.lexer.operator() != ")":
                raise _Unsure("a '(' follows a word")
            self.syntax.add("function")
            self.current = _Pending()
            self.last_operator = "start"
            self.expect_body = True
            return
        self.expect_body = False
        if not self.current.empty():
            raise _Unsure("a '(' follows a redirection")
        if self.lexer.peek() == "(":
            raise _Unsure("arithmetic commands are not read")
        self.syntax.add("subshell")
        self.open.append(("(", self.finished))
        self.last_operator = "("

    def _redirect(self, operator: str) -> None:
        if self.expect_body:
            raise _Unsure("a function has no body")
        self.lexer.skip_blanks()
        built = self.lexer.word()
        if not built.text and not built.quoted and not built.scripts:
            raise _Unsure("a redirection has no target")
        self.current.scripts.extend(built.scripts)
        bare = operator.lstrip("0123456789")
        if bare in ("<<", "<<-"):
            self.syntax.add("heredoc")
            delimiter = "".join(built.text)
            self.lexer.heredocs.append((delimiter, built.quoted, bare == "<<-"))
        self.current.redirects.append(Redirect(operator, built.word()))

    def _word(self, built: _WordBuilder) -> None:
        word = built.word()
        current = self.current
        if self.expect_body:
            if built.quoted or word.text not in _OPENERS:
                raise _Unsure("a function has no body")
            self.expect_body = False
        if not current.words:
            current.raw = built.raw
        closer = word.literal and word.text in _CLOSERS
        if current.empty() and self.last_operator in _CLOSED and not closer:
            raise _Unsure(f"a word follows '{self.last_operator}'")
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
            raise _Unsure(f"'{text}' is not read")
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
            raise _Unsure(f"a '{closer}' closes nothing")
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
            raise _Unsure(f"a '{text}' is out of place")

    def _part_done(self, word: str) -> None:
        # `()`, `{ }`, `if then`: bash wants at least one command in every part.
        if self.finished == self.open[-1][1]:
            raise _Unsure(f"nothing comes before '{word}'")

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
            raise _Unsure("the command name is an expansion")
        self.commands.append(command)
        for inner in _inner_scripts(command):
            self._nested(inner)
        self.last_operator = None
        return True

    def _nested(self, script: str | tuple[Word, ...]) -> None:
        if isinstance(script, tuple):
            # A command another one runs (`sudo rm`, `find -exec sh -c …`) is read like any.
            command = SimpleCommand(script, nested=True)
            self.commands.append(command)
            if not script[0].literal:
                raise _Unsure("the command name is an expansion")
            for inner in _inner_scripts(command):
                self._nested(inner)
            return
        read = _parse(script, self.depth + 1)
        self.syntax.add("substitution")
        self.commands.extend(_as_nested(c) for c in read.commands)
        if not read.certain:
            raise _Unsure(read.problem or "a nested script is not certain")


def _as_nested(command: SimpleCommand) -> SimpleCommand:
    if command.nested:
        return command
    return SimpleCommand(command.words, command.assignments, command.redirects, nested=True)


def _inner_scripts(command: SimpleCommand) -> Iterator[str | tuple[Word, ...]]:
    """The scripts (text) and commands (words) a command runs itself."""
    words = command.words
    argv = unwrapped(command.argv)
    offset = len(words) - len(argv)
    if not argv:
        return
    name = posixpath.basename(argv[0])
    rest = words[offset + 1 :]
    if name == "eval":
        yield _literal_script(rest, "eval runs an expansion")
    elif name in SHELLS:
        yield from _shell_script(rest)
    elif name == "find":
        yield from _find_exec(rest)
    elif name == "trap":
        yield from _trap_action(rest)
    elif name == "alias":
        yield from _alias_values(rest)
    elif name == "watch":
        yield from _watch_command(rest)
    elif name in ("su", "runuser"):
        yield from _su_command(rest)
    if offset:
        # A wrapped command (`sudo rm x`, `xargs rm`) also runs as itself.
        yield words[offset:]


def _literal_script(words: tuple[Word, ...], problem: str) -> str:
    """Words joined into the script a command runs, as bash would join them."""
    if not all(word.literal for word in words):
        raise _Unsure(problem)
    return " ".join(word.text for word in words)


def shell_operands(args: tuple[Word, ...]) -> tuple[bool, tuple[Word, ...]]:
    """Whether a shell's options include `-c`, and its words after the options (with `-c`
    the first is the script; without, a script file, or none: it reads stdin)."""
    runs_text = False
    index = 0
    while index < len(args):
        text = args[index].text
        index += 1
        if text in ("--", "-"):
            break
        if text in _SHELL_LONG_VALUES:
            index += 1
        elif text[:1] in ("-", "+") and len(text) > 1 and not text.startswith("--"):
            runs_text = runs_text or (text[0] == "-" and "c" in text)
            # `-o pipefail`, `-eo pipefail`: each o or O takes the next word.
            index += sum(letter in _SHELL_VALUE_LETTERS for letter in text[1:])
        elif not text.startswith("--"):
            return runs_text, args[index - 1 :]
    return runs_text, args[index:]


def _shell_script(rest: tuple[Word, ...]) -> Iterator[str]:
    runs_text, operands = shell_operands(rest)
    if not runs_text:
        return
    if not operands:
        raise _Unsure("a shell's -c has no script")
    if not operands[0].literal:
        raise _Unsure("a shell runs an expanded script")
    yield operands[0].text


def _find_exec(args: tuple[Word, ...]) -> Iterator[tuple[Word, ...]]:
    index = 0
    while index < len(args):
        if args[index].text in ("-exec", "-execdir", "-ok", "-okdir"):
            end = index + 1
            while end < len(args) and args[end].text not in (";", "+"):
                end += 1
            if end > index + 1:
                yield args[index + 1 : end]
            index = end
        index += 1


def _trap_action(args: tuple[Word, ...]) -> Iterator[str]:
    """`trap ACTION SIGNAL…`: the action is a script bash runs when the signal comes."""
    if args and args[0].text == "--":
        args = args[1:]
    if len(args) < 2 or args[0].text in ("-", "-l", "-p", "-lp", "-pl"):
        return
    if not args[0].literal:
        raise _Unsure("trap runs an expanded script")
    yield args[0].text


def _alias_values(args: tuple[Word, ...]) -> Iterator[str]:
    """`alias name=value`: the value is code bash may run in place of the name."""
    for word in args:
        name, equals, value = word.text.partition("=")
        if not equals or not name:
            continue
        if not word.literal:
            raise _Unsure("an alias is defined as an expansion")
        yield value


def _watch_command(args: tuple[Word, ...]) -> Iterator[str | tuple[Word, ...]]:
    """`watch CMD…`: its words joined as an `sh -c` script, or run as they are with -x."""
    index = 0
    direct = False
    while index < len(args) and args[index].text.startswith("-"):
        text = args[index].text
        direct = direct or text in ("-x", "--exec")
        index += 2 if text in _WATCH_VALUES else 1
    command = args[index:]
    if command:
        yield command if direct else _literal_script(command, "watch runs an expansion")


def _su_command(args: tuple[Word, ...]) -> Iterator[str]:
    """`su -c CMD`: the command is a script for the user's shell."""
    for index, word in enumerate(args):
        if word.text in ("-c", "--command") and index + 1 < len(args):
            script = args[index + 1]
        elif word.text.startswith("--command="):
            script = Word(word.text.removeprefix("--command="), word.literal)
        else:
            continue
        if not script.literal:
            raise _Unsure("su runs an expanded script")
        yield script.text
