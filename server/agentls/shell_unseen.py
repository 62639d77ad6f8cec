"""Shell code a command line runs without showing it: what no rule can be checked against.

`shell_syntax` lists every command a line's text runs. Some commands run more code than
the text shows: a shell fed its commands on stdin (`echo 'rm x' | sh`, `bash <<< …`, a
heredoc), from a file (`bash s.sh`, `. ./s.sh`, `source`), or from a variable that bash
evaluates later (`BASH_ENV`, `PS4`, an exported function, a value holding `$(…)` that
arithmetic would run); a command made of xargs's or find's input (`xargs -I X sh -c X`);
builtins that run a callback (`mapfile -C`, `enable -f`, …). A
deny rule cannot see into that code, so the permission gate must not let a rule (or a
mode) allow such a line while a deny or ask rule is in force. Pure; no IO.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Final

from agentls.shell_syntax import SHELLS, Script, SimpleCommand, Word, shell_operands, unwrapped

# Variables whose value bash (or sh) runs as code: at startup, before a prompt, when tracing.
_CODE_VARIABLES: Final = frozenset(
    {"BASH_ENV", "ENV", "PS0", "PS1", "PS2", "PS3", "PS4", "PROMPT_COMMAND"}
)
_DECLARATIONS: Final = frozenset({"export", "declare", "typeset", "local", "readonly"})
_SOURCES: Final = frozenset({".", "source"})
# Builtins that run a command given as an option's value, or load code: the option letter.
_CALLBACKS: Final = {
    "mapfile": "C",
    "readarray": "C",
    "compgen": "C",
    "complete": "C",
    "enable": "f",
    "bind": "x",
}
_SHELL_STARTERS: Final = frozenset({"sudo", "doas"})
_INFORMATION: Final = frozenset({"--version", "--help"})


def unseen_code(script: Script) -> str | None:
    """Why `script` runs shell code its text does not show, or None when it shows it all."""
    return next((why for command in script.commands for why in _unseen(command)), None)


def _unseen(command: SimpleCommand) -> Iterator[str]:
    argv = unwrapped(command.argv)
    wrapper = command.words[: len(command.words) - len(argv)]
    yield from _code_in_assignments((*command.assignments, *wrapper))
    yield from _shell_started_by(command.words, argv)
    yield from _env_split(wrapper)
    yield from _built_from_input(command.words[len(wrapper) :], wrapper)
    if not argv:
        return
    name = posixpath.basename(argv[0])
    args = command.words[len(wrapper) + 1 :]
    if name in SHELLS:
        yield from _shell_input(name, args)
    elif name in _SOURCES:
        shown = args[0].text if args else "a file"
        yield f"`{name}` runs the commands of {shown}, which the command line does not show"
    elif name in _DECLARATIONS:
        yield from _code_in_assignments(args)
    elif name in ("su", "runuser") and not any(
        w.text.startswith(("-c", "--command")) for w in args
    ):
        yield f"{name} starts a shell that reads its commands from its input"
    elif name in _CALLBACKS and any(_has_option(w.text, _CALLBACKS[name]) for w in args):
        yield f"`{name} -{_CALLBACKS[name]}` runs code the command line does not show"
    elif name == "fc":
        yield "fc runs commands from the shell's history"


def _shell_input(name: str, args: tuple[Word, ...]) -> Iterator[str]:
    runs_text, operands = shell_operands(args)
    if runs_text or (args and all(word.text in _INFORMATION for word in args)):
        return
    source = f"the script file {operands[0].text}" if operands else "its input"
    yield f"{name} reads its commands from {source}, which the command line does not show"


def _shell_started_by(words: tuple[Word, ...], argv: tuple[str, ...]) -> Iterator[str]:
    """`sudo -s`, `sudo -i` without a command start a shell that reads stdin."""
    if argv or not words or posixpath.basename(words[0].text) not in _SHELL_STARTERS:
        return
    if any(word.text in ("-s", "-i", "--shell", "--login") for word in words[1:]):
        yield f"{words[0].text} starts a shell that reads its commands from its input"


def _built_from_input(words: tuple[Word, ...], wrapper: tuple[Word, ...]) -> Iterator[str]:
    """`xargs -I{} sh -c {}`, `find … -exec sh -c {} ';'`: the command is made of input."""
    if not words:
        return
    marks = {"{}", *_xargs_replace_strings(wrapper)}
    texts = [words[0].text]
    name = posixpath.basename(words[0].text)
    if name in SHELLS:
        runs_text, operands = shell_operands(words[1:])
        texts += [operands[0].text] if runs_text and operands else []
    elif name in ("eval", *_SOURCES):
        texts += [word.text for word in words[1:]]
    if any(mark in text for text in texts for mark in marks):
        yield "the command it runs is made of its input (xargs -I, find -exec {})"


def _xargs_replace_strings(wrapper: tuple[Word, ...]) -> Iterator[str]:
    for index, word in enumerate(wrapper):
        text = word.text
        if text in ("-I", "-J") and index + 1 < len(wrapper):
            yield wrapper[index + 1].text
        elif text.startswith(("-I", "-J")) and len(text) > 2:
            yield text[2:]
        elif text.startswith("--replace="):
            yield text.removeprefix("--replace=")


def _env_split(wrapper: tuple[Word, ...]) -> Iterator[str]:
    """`env -S 'cmd args'` splits one word into a command the reader does not split."""
    splits = any(w.text.startswith(("-S", "--split-string")) for w in wrapper[1:])
    if splits and any(posixpath.basename(w.text) == "env" for w in wrapper):
        yield "env -S runs a command it splits out of one word"


def _code_in_assignments(words: tuple[Word, ...]) -> Iterator[str]:
    for word in words:
        name, equals, value = word.text.partition("=")
        if not equals:
            continue
        name = name.removesuffix("+")
        if name in _CODE_VARIABLES:
            yield f"{name} holds code that bash runs later"
        elif name.startswith("BASH_FUNC_"):
            yield f"{name} defines a function that the command line does not show"
        elif word.literal and ("$(" in value or "`" in value):
            # Arithmetic (`$((x))`, `a[x]`), `${x@P}` and eval run a value's substitutions.
            yield f"the value of {name} holds a command substitution that bash may run later"


def _has_option(text: str, letter: str) -> bool:
    return text.startswith("-") and not text.startswith("--") and letter in text[1:]
