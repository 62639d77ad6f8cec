"""Reading a command line one word, operator or redirection at a time, as bash's tokenizer
does: quotes and escapes (`'…'`, `"…"`, `$'…'`), line continuations, comments, heredocs,
and the scripts that command and process substitutions hold (kept for the parser)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Final

from agentls.shell.words import Unsure, Word

_SEPARATORS: Final = ("&&", "||", ";;&", ";;", ";&", "|&", "&", "|", ";")
_REDIRECTS: Final = ("&>>", "<<<", "<<-", "&>", ">>", "<<", "<>", ">|", ">&", "<&", ">", "<")
_META: Final = frozenset("|&;()<> \t\n")
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(slots=True)
class WordBuilder:
    text: list[str] = field(default_factory=list)
    literal: bool = True
    quoted: bool = False
    scripts: list[str] = field(default_factory=list)
    raw: str = ""

    def word(self) -> Word:
        return Word("".join(self.text), self.literal)


class Lexer:
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

    def word(self) -> WordBuilder:
        """One word: quotes removed, expansions kept as written and marked non-literal."""
        built = WordBuilder()
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

    def _word_piece(self, built: WordBuilder, at_start: bool) -> None:
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

    def _escape(self, built: WordBuilder) -> None:
        nxt = self.peek(1)
        if nxt == "":
            raise Unsure("a backslash ends the text")
        self.pos += 2
        if nxt != "\n":
            built.quoted = True
            built.text.append(nxt)

    def _until(self, end: str, start: int) -> str:
        close = self.text.find(end, start)
        if close < 0:
            raise Unsure("a quote is not closed")
        self.pos = close + 1
        return self.text[start:close]

    def _double_quoted(self, built: WordBuilder) -> None:
        """Inside "…": only $, ` and \\ are special."""
        while True:
            char = self.peek()
            if char == "":
                raise Unsure("a quote is not closed")
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

    def _dollar(self, built: WordBuilder) -> None:
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
                raise Unsure("an arithmetic expansion holds a substitution")
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
        raise Unsure("a $'…' quote is not closed")

    def _parameter(self, built: WordBuilder) -> None:
        start = self.pos
        self.pos += 1
        inner = self._balanced("{", "}")
        if "$(" in inner or "`" in inner or "<(" in inner or ">(" in inner:
            raise Unsure("a parameter expansion holds a substitution")
        built.text.append(self.text[start : self.pos])
        built.literal = False

    def _backtick(self, built: WordBuilder) -> None:
        self.syntax.add("substitution")
        self.pos += 1
        script: list[str] = []
        while True:
            char = self.peek()
            if char == "":
                raise Unsure("a backquote is not closed")
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
                raise Unsure(f"a {opening!r} is not closed")
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
                raise Unsure("a quote is not closed")
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
                raise Unsure("a heredoc body substitutes commands")

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
        raise Unsure(f"a heredoc is not closed by {delimiter!r}")


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
        raise Unsure("a $'…' escape is out of range")
    return chr(value)
