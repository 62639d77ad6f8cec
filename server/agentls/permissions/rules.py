"""Permission rules: parse `Tool(specifier)` text and find the rules that match a tool call.

Rule matching is the boundary between what the model asks for and what runs on the user's
machine, so it is pure (no IO) and it errs in one direction on purpose. Commands are read
by `agentls.shell_syntax`, the one module that understands shell text. Deny and ask rules
match generously: every command the line runs (nested ones included), also with wrappers
such as `sudo` or `env` stripped and by the program's base name, an expansion matching any
word, and, when the line cannot be read with certainty, the raw text and a crude split.
Allow rules match strictly: every command the line runs must be allowed, an assignment or
a redirection into a file defeats prefix and wildcard rules, and a line that cannot be
read with certainty is never allowed by a rule. Paths compare case-insensitively for deny
and ask, case-sensitively for allow. A wrong answer therefore costs a question, not a file.
"""

from __future__ import annotations

import functools
import logging
import posixpath
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from agentls.shell_syntax import SimpleCommand, Word, command_words, parse_script, unwrapped
from agentls.shell_unseen import unseen_code

log = logging.getLogger(__name__)

PermissionBehavior = Literal["allow", "deny", "ask"]
BEHAVIORS: Final = ("allow", "deny", "ask")

EDIT_KINDS: Final = frozenset({"edit", "delete", "move"})
READ_KINDS: Final = frozenset({"read", "search"})
PATH_KINDS: Final = EDIT_KINDS | READ_KINDS
COMMAND_KIND: Final = "execute"
# Calls that change nothing but reach the network (WebFetch): read-only, yet they ask.
FETCH_KIND: Final = "fetch"

_TOOL_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*|mcp__[A-Za-z0-9_-]+__\*")
MCP_PREFIX: Final = "mcp__"
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


def rules_from(*, deny: Sequence[str], ask: Sequence[str], allow: Sequence[str]) -> list[Rule]:
    """The rules a settings file's lists name, deny first; a malformed one is logged and
    left out (one bad rule must not cost the user the others)."""
    rules = []
    lists: tuple[tuple[PermissionBehavior, Sequence[str]], ...] = (
        ("deny", deny),
        ("ask", ask),
        ("allow", allow),
    )
    for behavior, texts in lists:
        for text in texts:
            try:
                rules.append(parse_rule(text, behavior))
            except ValueError as exc:
                log.warning("permission rule %r ignored: %s", text, exc)
    return rules


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
    if command_words(prefix) is None:
        return f"the prefix {prefix!r} is not one plain command of literal words"
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
    if rule.tool.startswith(MCP_PREFIX):
        # `mcp__server` and `mcp__server__*` cover every tool of that server.
        server = rule.tool.removesuffix("__*")
        return tool_name.startswith(server + "__") and tool_name.count("__") >= 2
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

# Where a line that cannot be read with certainty might be cut into commands.
_CRUDE_SEPARATORS = re.compile(r"&&|\|\||\$\(|[;|&\n()`]")


@dataclass(frozen=True, slots=True)
class _CommandPattern:
    text: str
    kind: Literal["prefix", "exact", "wildcard"]
    words: tuple[str, ...] | None
    regex: re.Pattern[str] | None

    def matches(self, words: tuple[Word, ...], generous: bool) -> bool:
        """Whether a command's words match; a generous match lets an expansion be anything."""
        texts = tuple(word.text for word in words)
        if self.kind == "wildcard":
            literal = all(word.literal for word in words)
            return (
                (generous or literal)
                and self.regex is not None
                and bool(self.regex.fullmatch(" ".join(texts)))
            )
        if self.words is None:
            return False
        if self.kind == "prefix":
            words = words[: len(self.words)]
        if len(words) != len(self.words):
            return False
        return all(
            word.text == expected or (generous and not word.literal)
            for word, expected in zip(words, self.words, strict=True)
        )


@functools.lru_cache(maxsize=1024)
def _command_pattern(specifier: str) -> _CommandPattern:
    text = specifier.strip()
    if text.endswith(":*"):
        return _CommandPattern(text, "prefix", command_words(text[:-2]), None)
    if "*" in text:
        return _CommandPattern(text, "wildcard", None, _wildcard(" ".join(text.split())))
    return _CommandPattern(text, "exact", _spelled_out(text), None)


def _spelled_out(text: str) -> tuple[str, ...] | None:
    """The words of one command with its assignments and redirections, as a rule spells it."""
    script = parse_script(text)
    if not script.certain or len(script.commands) != 1:
        return None
    return tuple(word.text for word in _full_words(script.commands[0]))


def _full_words(command: SimpleCommand) -> tuple[Word, ...]:
    redirects = (w for r in command.redirects for w in (Word(r.operator), r.target))
    return (*command.assignments, *command.words, *redirects)


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
    return any(pattern.matches(words, generous=True) for words in _generous_word_lists(command))


def _generous_word_lists(command: str) -> Iterator[tuple[Word, ...]]:
    """Every way a deny or ask rule might see a command the line runs."""
    script = parse_script(command)
    for part in script.commands:
        yield part.words
        yield _full_words(part)
        inner = unwrapped(part.argv)
        if inner and len(inner) < len(part.words):
            yield part.words[len(part.words) - len(inner) :]
        if part.words and "/" in part.words[0].text:
            name = Word(posixpath.basename(part.words[0].text), part.words[0].literal)
            yield (name, *part.words[1:])
    if not script.certain:
        # Unsure what runs: look at every piece the line could be cut into.
        for piece in (command, *_CRUDE_SEPARATORS.split(command)):
            words = tuple(Word(w.strip("'\"")) for w in piece.split())
            yield words
            yield tuple(Word(w) for w in unwrapped(tuple(w.text for w in words)))


def unknown_commands(command: str) -> str | None:
    """Why agentls cannot tell every command `command` runs (it cannot read the line for
    certain, or the line runs code it does not show), or None when it can."""
    script = parse_script(command)
    if not script.certain:
        return f"agentls cannot read it for certain ({script.problem})"
    return unseen_code(script)


def _command_allowers(rules: Sequence[Rule], command: str) -> tuple[Rule, ...]:
    for rule in rules:
        if rule.specifier is None or _is_exactly(_command_pattern(rule.specifier), command):
            return (rule,)
    script = parse_script(command)
    if not script.certain or not script.commands:
        return ()
    chosen = [_first_allower(rules, part) for part in script.commands]
    if any(rule is None for rule in chosen):
        return ()
    return tuple(dict.fromkeys(rule for rule in chosen if rule is not None))


def _is_exactly(pattern: _CommandPattern, command: str) -> bool:
    # The user approved this exact line, compound or not, so it needs no splitting.
    return pattern.kind == "exact" and pattern.text == command.strip()


def _first_allower(rules: Sequence[Rule], part: SimpleCommand) -> Rule | None:
    for rule in rules:
        if rule.specifier is None:
            return rule
        if _allows(_command_pattern(rule.specifier), part):
            return rule
    return None


def _allows(pattern: _CommandPattern, part: SimpleCommand) -> bool:
    if pattern.kind == "exact":
        # Only an exact rule, which spells assignments and redirections out, allows them.
        return pattern.matches(_full_words(part), generous=False)
    plain = not part.writes_file and not part.assignments and bool(part.words)
    return plain and pattern.matches(part.words, generous=False)


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
