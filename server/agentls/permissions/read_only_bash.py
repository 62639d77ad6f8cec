"""Which Bash commands count as read-only: the deliberately tight allow-list that lets a few
inspection commands run in the concurrent read lane, and without asking in plan mode.

A command is read-only only if every part of it is a known inspection program with no
flag that writes or runs something else, joined by pipes and lists, with nothing it
expands that could hide a command.
"""

from __future__ import annotations

from collections.abc import Callable

from agentls.shell_syntax import SimpleCommand, parse_script

_FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-ok", "-okdir", "-delete", "-fprint", "-fprint0", "-fprintf", "-fls"}
)
_GIT_READ_ONLY = frozenset(
    {"status", "diff", "log", "show", "branch", "rev-parse", "ls-files", "blame", "grep"}
)
_GIT_BRANCH_LIST_FLAGS = frozenset(
    {"-a", "-r", "-v", "-vv", "--all", "--remotes", "--verbose", "--show-current"}
)
_PLAIN_PROGRAMS = frozenset(
    {
        "ls",
        "cat",
        "head",
        "tail",
        "wc",
        "grep",
        "pwd",
        "echo",
        "which",
        "stat",
        "du",
        "df",
        "cut",
        "diff",
    }
)


def _no_flag(args: list[str], *flags: str) -> bool:
    """None of `args` is one of `flags`, alone or with an attached value."""
    return not any(arg == flag or arg.startswith(flag + "=") for arg in args for flag in flags)


def _short_flag_free(args: list[str], letter: str) -> bool:
    """No short-option cluster (`-o`, `-no`, `-ofile`) contains `letter`."""
    return not any(
        arg.startswith("-") and not arg.startswith("--") and letter in arg[1:] for arg in args
    )


def _git_branch_is_listing(args: list[str]) -> bool:
    if "--list" in args or "-l" in args:
        return _no_flag(args, "-d", "-D", "-m", "-M", "-c", "-C", "--delete", "--move", "--copy")
    return all(arg in _GIT_BRANCH_LIST_FLAGS for arg in args)


def _git_is_read_only(args: list[str]) -> bool:
    # Global options (-c, -C, --exec-path, ...) come before the subcommand and are refused.
    if not args or args[0] not in _GIT_READ_ONLY:
        return False
    subcommand, rest = args[0], args[1:]
    if subcommand == "branch":
        return _git_branch_is_listing(rest)
    if subcommand == "grep":
        return _no_flag(rest, "--open-files-in-pager") and _short_flag_free(rest, "O")
    return _no_flag(rest, "--output", "--ext-diff")


def _program_is_read_only(program: str, args: list[str], expands: bool) -> bool:
    if program in _PLAIN_PROGRAMS:
        return True
    # These programs have flags that write or run things; an expansion (a glob matching a
    # file named `--output=x`, say) could smuggle one past the checks below.
    if expands:
        return False
    checks: dict[str, Callable[[list[str]], bool]] = {
        "find": lambda a: not any(arg in _FIND_ACTIONS for arg in a),
        "rg": lambda a: _no_flag(a, "--pre"),
        "sort": lambda a: (
            _no_flag(a, "--output", "--compress-program") and _short_flag_free(a, "o")
        ),
        "tree": lambda a: _short_flag_free(a, "o") and _short_flag_free(a, "R"),
        "file": lambda a: _no_flag(a, "--compile") and _short_flag_free(a, "C"),
        "uniq": lambda a: sum(not arg.startswith("-") for arg in a) <= 1,
        "git": _git_is_read_only,
    }
    check = checks.get(program)
    return check is not None and check(args)


# The only shell syntax a read-only line may use: plain commands joined by these.
_READ_ONLY_SYNTAX = frozenset({"|", "||", "&&", ";"})


def is_read_only_command(command: str) -> bool:
    """Whether every program in the command is on the inspection allow-list."""
    script = parse_script(command)
    if not script.certain or not script.commands or script.syntax - _READ_ONLY_SYNTAX:
        return False
    return all(_command_is_read_only(part) for part in script.commands)


def _command_is_read_only(part: SimpleCommand) -> bool:
    if part.nested or part.redirects or part.assignments or not part.words:
        return False
    program = part.words[0]
    if not program.literal or "/" in program.text:
        return False
    expands = not all(word.literal for word in part.words[1:])
    return _program_is_read_only(program.text, list(part.argv[1:]), expands)
