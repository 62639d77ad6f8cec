"""Permission rules: parse `Tool(specifier)` text and find the rules that match a tool call.

Rule matching is the boundary between what the model asks for and what runs on the user's
machine, so it is pure (no IO) and it errs in one direction on purpose. Deny and ask rules
match generously: any subcommand of a compound command, with leading `VAR=x`, `sudo`, `{`
and the like stripped, the raw text and a crude split when the shell text does not parse,
paths compared case-insensitively. Allow rules match strictly: every subcommand must be
allowed, command substitution or a file redirection defeats prefix and wildcard rules,
paths compare case-sensitively. A wrong answer therefore costs a question, not a file.
"""

from __future__ import annotations

import functools
import posixpath
import re
import shlex
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

PermissionBehavior = Literal["allow", "deny", "ask"]
BEHAVIORS: Final = ("allow", "deny", "ask")

EDIT_KINDS: Final = frozenset({"edit", "delete", "move"})
READ_KINDS: Final = frozenset({"read", "search"})
PATH_KINDS: Final = EDIT_KINDS | READ_KINDS
COMMAND_KIND: Final = "execute"

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
_RULE_TEXT = re.compile(r"(?P<tool>[^()\s]+)(?:\((?P<specifier>.*)\))?", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Rule:
    """`tool` or `tool(specifier)` with what to do when it matches."""

    tool: str
    specifier: str | None
    behavior: PermissionBehavior

    def __post_init__(self) -> None:
        problem = _rule_problem(self)
        if problem is not None:
            raise ValueError(f"Malformed permission rule {str(self)!r}: {problem}.")

    def __str__(self) -> str:
        return self.tool if self.specifier is None else f"{self.tool}({self.specifier})"


def parse_rule(text: str, behavior: PermissionBehavior) -> Rule:
    """Parse rule text such as `Bash(npm test:*)`, `Edit(src/**)` or `Read`."""
    match = _RULE_TEXT.fullmatch(text.strip())
    if match is None:
        raise ValueError(
            f"Malformed permission rule {text!r}: expected Tool or Tool(specifier), "
            "e.g. Bash(npm test:*) or Edit(src/**)."
        )
    specifier = match["specifier"]
    return Rule(match["tool"], None if specifier is None else specifier.strip(), behavior)


def _rule_problem(rule: Rule) -> str | None:
    if rule.behavior not in BEHAVIORS:
        return f"the behavior must be allow, deny or ask, not {rule.behavior!r}"
    if not _TOOL_NAME.fullmatch(rule.tool):
        return "a tool name is letters, digits, '_' and '-', and starts with a letter or '_'"
    if rule.specifier is None:
        return None
    if not rule.specifier.strip():
        return f"the specifier is empty; write {rule.tool} alone to match every call"
    if rule.tool == "Bash" and rule.specifier.strip().endswith(":*"):
        return _prefix_problem(rule.specifier.strip()[:-2])
    return None


def _prefix_problem(prefix: str) -> str | None:
    if not prefix.strip():
        return "':*' needs a command before it, e.g. Bash(npm test:*)"
    try:
        shlex.split(prefix)
    except ValueError as error:
        return f"the prefix {prefix!r} is not valid shell text ({error})"
    return None


@dataclass(frozen=True, slots=True)
class PathBase:
    """What rule paths are relative to: posix paths, or None when unknown."""

    cwd: str | None
    home: str | None


@dataclass(frozen=True, slots=True)
class CallTarget:
    """The facts about one tool call that rules match against."""

    tool_name: str
    tool_kind: str
    content: str | None


def rule_applies(rule: Rule, tool_name: str, tool_kind: str) -> bool:
    """Whether `rule` is about this tool: by name, or Edit/Read rules for their tool families."""
    if rule.tool == tool_name:
        return True
    if rule.tool == "Edit":
        return tool_kind in EDIT_KINDS
    return rule.tool == "Read" and tool_kind in READ_KINDS


def matching_rules(
    rules: Iterable[Rule], behavior: PermissionBehavior, call: CallTarget, base: PathBase
) -> tuple[Rule, ...]:
    """The rules of `behavior` that decide `call`; empty when none does.

    Deny and ask need one rule. Allow for a command needs a rule for every subcommand, so
    it returns each rule that contributed.
    """
    candidates = [
        rule
        for rule in rules
        if rule.behavior == behavior and rule_applies(rule, call.tool_name, call.tool_kind)
    ]
    if behavior == "allow" and call.tool_kind == COMMAND_KIND and call.content is not None:
        return _command_allowers(candidates, call.content)
    strict = behavior == "allow"
    return next(((rule,) for rule in candidates if _matches(rule, call, base, strict)), ())


def _matches(rule: Rule, call: CallTarget, base: PathBase, strict: bool) -> bool:
    if rule.specifier is None:
        return True
    if call.content is None:
        return False
    if call.tool_kind == COMMAND_KIND:
        return _command_matches_generously(_command_pattern(rule.specifier), call.content)
    if call.tool_kind in PATH_KINDS:
        return _path_matches(rule.specifier.strip(), call.content, base, fold=not strict)
    return _wildcard(rule.specifier.strip()).fullmatch(call.content) is not None


# --- shell commands -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """One simple command of a shell line, and whether it redirects output into a file."""

    text: str
    writes_file: bool


@dataclass(frozen=True, slots=True)
class ShellSplit:
    """A shell line cut at its control operators.

    `exact` is False when quotes are unbalanced or the line has command or process
    substitution: then `commands` may not be all that runs.
    """

    commands: tuple[ShellCommand, ...]
    exact: bool


_SHELL_PIECE = re.compile(
    r"""
    (?P<substitution>\$\(|`|[<>]\()
    | (?P<quoted>'[^']*'|"(?:\\.|[^"\\])*")
    | (?P<escaped>\\.)
    | (?P<redirect>\d*(?:&>>?|[<>]{1,3}[&|]?))[ \t]*(?P<target>[^\s;&|()<>'"`]*)
    | (?P<operator>&&|\|\||;;|\|&|[;|&\n()])
    | (?P<plain>[^'"\\`$;&|()<>\n]+|\$)
    | (?P<stray>['"\\])
    """,
    re.VERBOSE | re.DOTALL,
)
_CRUDE_SEPARATORS = re.compile(r"&&|\|\||\$\(|[;|&\n()`]")
_FD = re.compile(r"\d+|-")
# Words that run the next word as the command; deny rules look past them.
_PREFIX_WORDS: Final = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "do", "while", "until", "time"}
    | {"env", "nohup", "sudo", "command", "exec", "builtin", "xargs", "nice"}
)
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_SHELLS: Final = frozenset({"sh", "bash", "zsh", "dash", "ksh"})
_SCRIPT_FLAG = re.compile(r"-[A-Za-z]*c[A-Za-z]*")
_MAX_NESTING: Final = 3


def split_command(command: str) -> ShellSplit:
    """Split shell text at `&&`, `||`, `;`, `|`, `&`, newlines and parentheses, outside quotes."""
    splitter = _Splitter()
    for piece in _SHELL_PIECE.finditer(command.replace("\\\n", "")):
        splitter.take(piece)
    return splitter.finish()


class _Splitter:
    def __init__(self) -> None:
        self.commands: list[ShellCommand] = []
        self.text: list[str] = []
        self.writes_file = False
        self.exact = True

    def take(self, piece: re.Match[str]) -> None:
        kind, text = piece.lastgroup, piece.group()
        if kind in ("substitution", "stray") or (kind == "quoted" and _substitutes(text)):
            self.exact = False
        if kind in ("substitution", "operator"):
            self.cut()
            return
        if kind == "target":
            self.writes_file |= _writes_file(piece["redirect"], piece["target"])
        self.text.append(text)

    def cut(self) -> None:
        text = "".join(self.text).strip()
        if text:
            self.commands.append(ShellCommand(text, self.writes_file))
        self.text, self.writes_file = [], False

    def finish(self) -> ShellSplit:
        self.cut()
        return ShellSplit(tuple(self.commands), self.exact)


def _substitutes(quoted: str) -> bool:
    return quoted.startswith('"') and ("$(" in quoted or "`" in quoted)


def _writes_file(operator: str, target: str) -> bool:
    if ">" not in operator or target == "/dev/null":
        return False
    return not (operator.endswith("&") and _FD.fullmatch(target))


def _words(text: str) -> tuple[str, ...] | None:
    try:
        words = tuple(shlex.split(text))
    except ValueError:
        return None
    return words or None


def _lenient_words(text: str) -> tuple[str, ...]:
    return _words(text) or tuple(text.split())


def _strip_prefix_words(words: tuple[str, ...]) -> tuple[str, ...]:
    index = 0
    while index < len(words) and (
        words[index] in _PREFIX_WORDS or _ASSIGNMENT.fullmatch(words[index])
    ):
        index += 1
    return words[index:]


@dataclass(frozen=True, slots=True)
class _CommandPattern:
    text: str
    kind: Literal["prefix", "exact", "wildcard"]
    words: tuple[str, ...] | None
    regex: re.Pattern[str] | None

    def matches_words(self, words: tuple[str, ...]) -> bool:
        if self.kind == "prefix":
            return self.words is not None and words[: len(self.words)] == self.words
        if self.kind == "exact":
            return words == self.words
        return self.regex is not None and self.regex.fullmatch(" ".join(words)) is not None


@functools.lru_cache(maxsize=1024)
def _command_pattern(specifier: str) -> _CommandPattern:
    text = specifier.strip()
    if text.endswith(":*"):
        return _CommandPattern(text, "prefix", _words(text[:-2]), None)
    if "*" in text:
        return _CommandPattern(text, "wildcard", None, _wildcard(" ".join(text.split())))
    return _CommandPattern(text, "exact", _words(text), None)


@functools.lru_cache(maxsize=1024)
def _wildcard(text: str) -> re.Pattern[str]:
    # `ls *` also matches a bare `ls`, but never `lsof`: the space is a word boundary.
    body, tail = (text[:-2], "(?: .*)?") if text.endswith(" *") else (text, "")
    return re.compile(".*".join(re.escape(part) for part in body.split("*")) + tail, re.DOTALL)


def _command_matches_generously(pattern: _CommandPattern, command: str) -> bool:
    if _is_exactly(pattern, command):
        return True
    if pattern.regex is not None and pattern.regex.fullmatch(command.strip()):
        return True
    return any(pattern.matches_words(words) for words in _generous_commands(command))


def _generous_commands(command: str, depth: int = 0) -> Iterator[tuple[str, ...]]:
    for words in _generous_word_lists(command):
        yield words
        script = _inline_script(words)
        if script is not None and depth < _MAX_NESTING:
            yield from _generous_commands(script, depth + 1)


def _generous_word_lists(command: str) -> Iterator[tuple[str, ...]]:
    split = split_command(command)
    texts = [part.text for part in split.commands]
    if not split.exact:
        texts += [command, *_CRUDE_SEPARATORS.split(command)]
    for text in texts:
        words = _lenient_words(text)
        stripped = _strip_prefix_words(words)
        yield words
        yield stripped
        if stripped and "/" in stripped[0]:
            yield (posixpath.basename(stripped[0]), *stripped[1:])


def _inline_script(words: tuple[str, ...]) -> str | None:
    """The script of `eval …` or `bash -c '…'`, which deny rules must see through."""
    if words[:1] == ("eval",):
        return " ".join(words[1:])
    if not words or posixpath.basename(words[0]) not in _SHELLS:
        return None
    flag = next((i for i, word in enumerate(words) if _SCRIPT_FLAG.fullmatch(word)), None)
    return words[flag + 1] if flag is not None and flag + 1 < len(words) else None


def _command_allowers(rules: Sequence[Rule], command: str) -> tuple[Rule, ...]:
    for rule in rules:
        if rule.specifier is None or _is_exactly(_command_pattern(rule.specifier), command):
            return (rule,)
    split = split_command(command)
    if not split.exact or not split.commands:
        return ()
    chosen = [_first_allower(rules, part) for part in split.commands]
    if any(rule is None for rule in chosen):
        return ()
    return tuple(dict.fromkeys(rule for rule in chosen if rule is not None))


def _is_exactly(pattern: _CommandPattern, command: str) -> bool:
    # The user approved this exact line, compound or not, so it needs no splitting.
    return pattern.kind == "exact" and pattern.text == command.strip()


def _first_allower(rules: Sequence[Rule], part: ShellCommand) -> Rule | None:
    words = _words(part.text)
    if words is None:
        return None
    for rule in rules:
        if rule.specifier is None:
            return rule
        pattern = _command_pattern(rule.specifier)
        # A redirection into a file is a write the rule's author never saw; only an
        # exact rule, which spells the redirection out, may allow it.
        if (pattern.kind == "exact" or not part.writes_file) and pattern.matches_words(words):
            return rule
    return None


# --- paths ----------------------------------------------------------------------------------

_GLOB_PIECE = re.compile(
    r"(?P<inner>/\*\*/)|(?P<tail>/\*\*\Z)|(?P<head>\A\*\*/)|(?P<star>\*+)|(?P<one>\?)|.",
    re.DOTALL,
)
_GLOB_REGEX: Final = {
    "inner": "/(?:.*/)?",
    "tail": "(?:/.*)?",
    "head": "(?:.*/)?",
    "star": "[^/]*",
    "one": "[^/]",
}


def _path_matches(specifier: str, content: str, base: PathBase, fold: bool) -> bool:
    pattern = _path_pattern(specifier, base)
    target = _target_path(content, base)
    if pattern is None or target is None or pattern.startswith("/") != target.startswith("/"):
        return False
    return _glob(pattern, fold).fullmatch(target) is not None


def _path_pattern(specifier: str, base: PathBase) -> str | None:
    """The rule's glob as an absolute posix pattern, or relative to cwd when cwd is unknown."""
    if specifier.endswith("/"):
        specifier += "**"
    anchor, rest = _split_anchor(specifier)
    if anchor == "root":
        return _normalize("/" + rest)
    root = base.home if anchor == "home" else base.cwd
    if root is None:
        return None if anchor == "home" else _normalize(rest)
    return _normalize(posixpath.join(root, rest))


def _split_anchor(specifier: str) -> tuple[Literal["root", "home", "cwd"], str]:
    if specifier.startswith("/"):
        return "root", specifier.lstrip("/")
    if specifier == "~" or specifier.startswith("~/"):
        return "home", specifier[2:]
    if specifier == "." or specifier.startswith("./"):
        return "cwd", specifier[2:]
    # gitignore: a pattern with no inner slash matches its name at any depth.
    return "cwd", specifier if "/" in specifier else "**/" + specifier


def _target_path(content: str, base: PathBase) -> str | None:
    path = content.strip()
    if base.home is not None and (path == "~" or path.startswith("~/")):
        path = base.home + path[1:]
    if not path.startswith("/") and base.cwd is not None:
        path = posixpath.join(base.cwd, path)
    path = _normalize(path)
    outside_cwd = path == ".." or path.startswith("../")
    return None if outside_cwd else path


def _normalize(path: str) -> str:
    normal = posixpath.normpath(path)
    # normpath keeps exactly two leading slashes (POSIX allows it); rules treat them as one.
    return "/" + normal.lstrip("/") if normal.startswith("/") else normal


@functools.lru_cache(maxsize=1024)
def _glob(pattern: str, fold: bool) -> re.Pattern[str]:
    regex = "".join(
        _GLOB_REGEX.get(piece.lastgroup or "") or re.escape(piece.group())
        for piece in _GLOB_PIECE.finditer(pattern)
    )
    return re.compile(regex, re.DOTALL | (re.IGNORECASE if fold else 0))
