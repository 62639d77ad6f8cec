"""Code a command line runs without showing it, and what the gate does about it per mode."""

from __future__ import annotations

import pytest

from agentls.names import PermissionMode
from agentls.permissions.gate import PermissionGate
from agentls.permissions.rules import parse_rule
from agentls.shell_syntax import parse_script
from agentls.shell_unseen import unseen_code

# Each line runs `touch M` in bash, through code the line's text does not show as a command.
HIDDEN = [
    "echo 'touch M' | sh",
    "echo 'touch M' | bash -s",
    "echo 'touch M' | env bash",
    "echo 'touch M' | xargs -0 sh",
    "echo 'touch M' | /bin/dash",
    "bash <<< 'touch M'",
    "sh <<'EOF'\ntouch M\nEOF",
    "printf 'touch M\\n' > s.sh && . ./s.sh",
    "printf 'touch M\\n' > s.sh; source s.sh",
    "printf 'touch M\\n' > s.sh; bash s.sh",
    "printf 'touch M\\n' > s.sh; BASH_ENV=s.sh bash -c true",
    "PS4='$(touch M)' bash -xc true",
    "x='a[$(touch M)]'; echo $((x))",
    "env 'BASH_FUNC_f%%=() { touch M; }' bash -c f",
    "env -S 'touch M'",
    "echo 'touch M' > c; mapfile -C 'bash c' -c 1 x < c",
    "sudo -s <<< 'touch M'",
    "echo 'touch M' > c; xargs -a c -I{} bash -c '{}'",
    "echo 'touch M' | xargs -I X sh -c X",
    "echo > 'touch M'; find 'touch M' -maxdepth 0 -exec sh -c {} \\;",
]
# Each line runs `touch M` where the reader can see it: a deny rule matches it directly.
VISIBLE = [
    "bash -o pipefail -c 'touch M'",
    "sh -c -e 'touch M'",
    "find . -maxdepth 0 -exec bash -c 'touch M' \\;",
    "trap 'touch M' EXIT",
    "shopt -s expand_aliases\nalias t=touch\nt M",
    "watch -n 1 touch M",
    "sudo -u me nohup time touch M",
    "T=touch; $T M",
]
PLAIN = [
    "find . -exec ls {} +",
    "echo a | xargs -I{} cp {} b",
    "bash --version",
    "command -v bash",
    "ls | grep x",
    'x=1; echo "$x"',
    "sh -c 'ls'",
]
MODES: list[PermissionMode] = ["default", "acceptEdits", "plan", "bypassPermissions"]


@pytest.mark.parametrize("line", HIDDEN)
def test_code_fed_to_a_shell_or_kept_for_later_is_unseen(line: str) -> None:
    assert unseen_code(parse_script(line)) is not None


@pytest.mark.parametrize("line", [*PLAIN, *VISIBLE[:-1]])
def test_code_on_the_line_itself_is_seen(line: str) -> None:
    assert unseen_code(parse_script(line)) is None


def decide(mode: PermissionMode, line: str, *rules: tuple[str, str]) -> str:
    gate = PermissionGate(
        mode,
        [parse_rule(text, behavior) for text, behavior in rules],
        cwd="/w",
        home="/h",  # type: ignore[arg-type]
    )
    return gate.decide("Bash", "execute", False, line).behavior


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("line", HIDDEN)
def test_unseen_code_is_refused_in_bypass_and_asked_about_elsewhere(
    mode: PermissionMode, line: str
) -> None:
    deny = ("Bash(touch:*)", "deny")
    expected = "ask" if mode in ("default", "acceptEdits") else "deny"
    assert decide(mode, line, deny) == expected
    # An allow rule never lets it past the deny rule it hides from.
    assert decide(mode, line, deny, ("Bash", "allow")) == expected


@pytest.mark.parametrize("line", HIDDEN)
def test_an_ask_rule_alone_asks_in_bypass_too(line: str) -> None:
    assert decide("bypassPermissions", line, ("Bash(touch:*)", "ask")) == "ask"


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("line", VISIBLE)
def test_a_deny_rule_sees_the_command_wherever_the_line_shows_it(
    mode: PermissionMode, line: str
) -> None:
    assert decide(mode, line, ("Bash(touch:*)", "deny")) == "deny"


@pytest.mark.parametrize("line", HIDDEN)
def test_without_deny_or_ask_rules_unseen_code_is_the_modes_business(line: str) -> None:
    assert decide("bypassPermissions", line) == "allow"
    assert decide("default", line, ("Bash", "allow")) == "allow"


@pytest.mark.parametrize("line", PLAIN)
def test_plain_lines_keep_their_decisions(line: str) -> None:
    assert decide("bypassPermissions", line, ("Bash(touch:*)", "deny")) == "allow"
