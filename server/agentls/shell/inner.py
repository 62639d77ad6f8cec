"""The commands a command runs itself: `eval`'s and `bash -c`'s scripts, `find -exec`'s
command, `trap`'s and `alias`'s text, `watch`'s and `su -c`'s, and what wrappers such as
`sudo`, `env` or `xargs` run (`unwrapped`)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterator
from typing import Final

from agentls.shell.words import SimpleCommand, Unsure, Word

SHELLS: Final = frozenset(
    {"sh", "bash", "zsh", "dash", "ksh", "mksh", "ash", "rbash", "yash", "posh", "fish"}
)
# Shell options whose value is the next word (`-o pipefail`, `-O extglob`, `--rcfile f`).
_SHELL_LONG_VALUES: Final = frozenset({"--rcfile", "--init-file"})
_SHELL_VALUE_LETTERS: Final = frozenset("oO")
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


def inner_scripts(command: SimpleCommand) -> Iterator[str | tuple[Word, ...]]:
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
        raise Unsure(problem)
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
        raise Unsure("a shell's -c has no script")
    if not operands[0].literal:
        raise Unsure("a shell runs an expanded script")
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
        raise Unsure("trap runs an expanded script")
    yield args[0].text


def _alias_values(args: tuple[Word, ...]) -> Iterator[str]:
    """`alias name=value`: the value is code bash may run in place of the name."""
    for word in args:
        name, equals, value = word.text.partition("=")
        if not equals or not name:
            continue
        if not word.literal:
            raise Unsure("an alias is defined as an expansion")
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
            raise Unsure("su runs an expanded script")
        yield script.text
