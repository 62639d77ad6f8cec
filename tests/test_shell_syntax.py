"""The one shell reader: what it says a line runs is what bash really runs.

Unit cases pin each construct; property tests generate command lines from a grammar of
quotes, escapes, continuations, operators, comments, redirections, heredocs, subshells and
groups, and compare the reader with real bash (`bash -n` for syntax, a trace of the
commands bash executes for the words). A line bash rejects must never be read as certain.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agentls.shell_syntax import Redirect, Word, command_words, parse_script, unwrapped
from bash_oracle import BashOracle


@pytest.fixture(scope="module")
def oracle() -> Iterator[BashOracle]:
    bash = BashOracle()
    yield bash
    bash.close()


def argvs(line: str) -> list[tuple[str, ...]]:
    return [c.argv for c in parse_script(line).commands]


@pytest.mark.parametrize(
    ("line", "commands"),
    [
        ("echo \\\\\nrm -f victim.txt", [("echo", "\\"), ("rm", "-f", "victim.txt")]),
        ("echo \\\nrm -f victim.txt", [("echo", "rm", "-f", "victim.txt")]),
        ("r\\\nm x", [("rm", "x")]),
        ("echo 'a && rm x'", [("echo", "a && rm x")]),
        ('echo "a\\"; rm x"', [("echo", 'a"; rm x')]),
        ("echo $'it\\'s\\x41\\n'", [("echo", "it'sA\n")]),
        ("ls a#b # c; rm x", [("ls", "a#b")]),
        ("ls;#x\nrm y", [("ls",), ("rm", "y")]),
        ("a | b && c || d; e & f", [("a",), ("b",), ("c",), ("d",), ("e",), ("f",)]),
        ("(a; (b)) && { c; }", [("a",), ("b",), ("c",)]),
        ("if a; then b; elif c; then d; else e; fi", [(x,) for x in "abcde"]),
        ("while a; do b; done; until c; do d; done", [(x,) for x in "abcd"]),
        ("for x in a b; do c $x; done", [("c", "$x")]),
        ("f() { a; }; f", [("a",), ("f",)]),
        ("cat <<'EOF'\n$(rm x)\nEOF\nb", [("cat",), ("b",)]),
        ("cat <<-EOF\n\tplain\n\tEOF\nb", [("cat",), ("b",)]),
        ("x <<< 'rm y'", [("x",)]),
        ("echo $(a $(b))", [("b",), ("a", "$(b)"), ("echo", "$(a $(b))")]),
        ("echo `a`", [("a",), ("echo", "`a`")]),
        ("diff <(a) >(b)", [("a",), ("b",), ("diff", "<(a)", ">(b)")]),
        ("V=$(a) b", [("a",), ("b",)]),
        ("eval 'a; b'", [("eval", "a; b"), ("a",), ("b",)]),
        ("bash -lc 'a && b'", [("bash", "-lc", "a && b"), ("a",), ("b",)]),
        (
            "find . -exec a {} \\; -ok b +",
            [("find", ".", "-exec", "a", "{}", ";", "-ok", "b", "+"), ("a", "{}"), ("b",)],
        ),
        (
            "sudo -u me env A=1 nice -n 2 a b",
            [("sudo", "-u", "me", "env", "A=1", "nice", "-n", "2", "a", "b"), ("a", "b")],
        ),
        ("[ -f x ] && a", [("[", "-f", "x", "]"), ("a",)]),
        ("bash -o pipefail -c 'a'", [("bash", "-o", "pipefail", "-c", "a"), ("a",)]),
        ("sh -c -e 'a'", [("sh", "-c", "-e", "a"), ("a",)]),
        ("bash -eo pipefail -c 'a'", [("bash", "-eo", "pipefail", "-c", "a"), ("a",)]),
        (
            "find . -exec sh -c 'a' \\;",
            [("find", ".", "-exec", "sh", "-c", "a", ";"), ("sh", "-c", "a"), ("a",)],
        ),
        ("trap 'a b' EXIT", [("trap", "a b", "EXIT"), ("a", "b")]),
        ("trap - EXIT; trap -p", [("trap", "-", "EXIT"), ("trap", "-p")]),
        ("alias t='a -x'", [("alias", "t=a -x"), ("a", "-x")]),
        ("watch -n 1 a b", [("watch", "-n", "1", "a", "b"), ("a", "b")]),
        ("su -c 'a' me", [("su", "-c", "a", "me"), ("a",)]),
        ("env 'BASH_FUNC_f%%=() { a; }' b", [("env", "BASH_FUNC_f%%=() { a; }", "b"), ("b",)]),
        ("command -v a", [("command", "-v", "a")]),
    ],
)
def test_the_commands_a_line_runs(line: str, commands: list[tuple[str, ...]]) -> None:
    script = parse_script(line)
    assert script.certain, script.problem
    assert argvs(line) == commands


@pytest.mark.parametrize(
    "line",
    [
        "echo 'open",
        'echo "open',
        "echo $(open",
        "echo `open",
        "echo \\",
        "$CMD x",
        "${CMD} x",
        "{a,b} x",
        "case x in a) b;; esac",
        "select x in a; do b; done",
        "coproc a",
        "((x++))",
        "cat <<EOF\n$(a)\nEOF\n",
        "cat <<EOF\nno end",
        "eval $X",
        "bash -c $X",
        "a &&",
        "a |",
        "&& a",
        "; a",
        "a && && b",
        "(a",
        "a)",
        "echo $((1 + $(a)))",
        "echo ${x:-$(a)}",
    ],
)
def test_what_cannot_be_read_for_certain_says_so(line: str) -> None:
    script = parse_script(line)
    assert not script.certain
    assert script.problem


def test_words_know_whether_bash_expands_them() -> None:
    (command,) = parse_script("a $HOME '$HOME' *.py '*.py' ~/x [ab] [ {x,y} {x} \\*").commands
    assert [w.literal for w in command.words] == [
        True,
        False,
        True,
        False,
        True,
        False,
        False,
        True,
        False,
        True,
        True,
    ]


def test_redirections_are_told_apart_from_writes() -> None:
    (command,) = parse_script("a > out 2>&1 >/dev/null 3>>log <in &>both 1>&- <<<x").commands
    assert [(r.operator, r.target.text, r.writes_file) for r in command.redirects] == [
        (">", "out", True),
        ("2>&", "1", False),
        (">", "/dev/null", False),
        ("3>>", "log", True),
        ("<", "in", False),
        ("&>", "both", True),
        ("1>&", "-", False),
        ("<<<", "x", False),
    ]
    assert Redirect(">&", Word("file")).writes_file


def test_assignments_are_not_commands() -> None:
    (command,) = parse_script('A=1 B="x y" C=$(d) e f').commands[1:]
    assert [w.text for w in command.assignments] == ["A=1", "B=x y", "C=$(d)"]
    assert command.argv == ("e", "f")


def test_plain_command_words_and_unwrapping() -> None:
    assert command_words("git  'status'  -s") == ("git", "status", "-s")
    assert command_words("git status > x") is None
    assert command_words("a; b") is None
    assert unwrapped(("sudo", "-u", "x", "timeout", "-s", "KILL", "5", "rm", "y")) == ("rm", "y")
    assert unwrapped(("env", "-i", "A=1", "xargs", "-n", "1", "rm")) == ("rm",)


@given(st.text(max_size=60))
def test_any_text_is_read_without_an_exception(line: str) -> None:
    script = parse_script(line)
    assert script.certain or script.problem


# --- against real bash -------------------------------------------------------------------

_NAMES = st.sampled_from(["aa", "bb", "cc", "rm", "git"])
_PLAIN = st.from_regex(r"[a-z0-9._/=:,-]{1,6}", fullmatch=True).filter(lambda w: w[0] != "-")
_SINGLE = st.text(
    st.characters(blacklist_characters="'", blacklist_categories=("Cc", "Cs")), max_size=6
).map(lambda t: f"'{t}'")
_DOUBLE_CHARS = st.one_of(
    st.text(
        st.characters(blacklist_characters='"\\$`!', blacklist_categories=("Cc", "Cs")),
        min_size=1,
        max_size=4,
    ),
    st.sampled_from(['\\"', "\\\\", "\\$", "\\`", "\\\n", "\\a"]),
)
_DOUBLE = st.lists(_DOUBLE_CHARS, max_size=3).map(lambda parts: '"' + "".join(parts) + '"')
_ANSI = st.lists(
    st.sampled_from(["a", " ", ";", "\\n", "\\t", "\\x41", "\\\\", "\\'", "\\101", '"']),
    max_size=4,
).map(lambda parts: "$'" + "".join(parts) + "'")
_ESCAPED = st.sampled_from(list(" ;&|()<>'\"#\\$`*?[{~")).map(lambda c: "\\" + c)
_PIECE = st.one_of(_PLAIN, _SINGLE, _DOUBLE, _ANSI, _ESCAPED, st.just("a\\\nb"))
_WORD = st.lists(_PIECE, min_size=1, max_size=3).map("".join)
_REDIRECT = st.sampled_from(["", "", " >/dev/null", " 2>&1", " > out.txt", " <<< 'x y'"])


@st.composite
def _command(draw: st.DrawFn) -> str:
    words = draw(st.lists(_WORD, max_size=3))
    return " ".join([draw(_NAMES), *words]) + draw(_REDIRECT)


_JOIN = st.sampled_from([" ; ", " && ", " | ", "\n", " & ", ";", " \\\n&& ", " \\\\\n", "\n\n"])


@st.composite
def _line(draw: st.DrawFn, depth: int = 0) -> str:
    parts = [draw(_part(depth)) for _ in range(draw(st.integers(1, 3)))]
    joined = parts[0]
    for part in parts[1:]:
        joiner = draw(_JOIN)
        if joiner == " \\\\\n":
            # An escaped backslash, then a newline: the newline separates commands.
            joined += " x" + joiner + part
        else:
            joined += joiner + part
    if draw(st.booleans()):
        joined += draw(st.sampled_from([" # note; rm -rf x", "  #", " #a\\"]))
    return joined


@st.composite
def _part(draw: st.DrawFn, depth: int) -> str:
    kind = draw(
        st.sampled_from(["command"] * 4 + (["subshell", "group", "heredoc"] if depth < 2 else []))
    )
    if kind == "subshell":
        return f"( {draw(_line(depth + 1))} )"
    if kind == "group":
        return f"{{ {draw(_line(depth + 1))}\n}}"
    if kind == "heredoc":
        quote = draw(st.sampled_from(["", "'", '"']))
        body = draw(st.lists(st.from_regex(r"[a-z ;&|#]{0,8}", fullmatch=True), max_size=2))
        # The delimiter line must be the last of the part: anything after it is the next line.
        return "\n".join([f"{draw(_command())} <<{quote}END{quote}", *body, "END\n"])
    return draw(_command())


@given(_line())
def test_the_reader_agrees_with_bash_on_what_runs(oracle: BashOracle, line: str) -> None:
    script = parse_script(line)
    if not oracle.accepts(line):
        assert not script.certain, f"bash rejects {line!r}, the reader did not"
        return
    assert script.certain, (line, script.problem)
    assert Counter(c.argv for c in script.commands if c.words) == oracle.runs(line)


@given(st.text(alphabet="ab \"'\\$()`;&|<>#\n{}", max_size=14))
def test_a_line_the_reader_calls_certain_runs_nothing_else(oracle: BashOracle, line: str) -> None:
    script = parse_script(line)
    if not script.certain:
        return
    assert oracle.accepts(line), f"the reader is certain of {line!r}, bash rejects it"
    # What bash runs is among what the reader listed (a redirection that fails at run time
    # may stop a listed command from running; nothing unlisted ever runs). An expansion may
    # change a command's arguments, never its name.
    listed = [c for c in script.commands if c.words]
    ran = oracle.runs(line)
    assert Counter(argv[0] for argv in ran) <= Counter(c.argv[0] for c in listed)
    literal = {c.argv for c in listed if all(w.literal for w in c.words)}
    names = {c.argv[0] for c in listed if c.argv in literal}
    assert all(argv in literal for argv in ran if argv[0] in names)
