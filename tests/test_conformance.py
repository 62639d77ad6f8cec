"""The conformance kit (`python -m agentls.conformance`) against the daemon, as CI runs it,
and against a server that is not one, which must fail."""

from __future__ import annotations

import subprocess
import sys

from agentls.conformance.edits import apply_edits
from agentls.conformance.suite import CHECKS

DAEMON = f"{sys.executable} -m agentls --stdio"


def kit(command: str, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "agentls.conformance", "--cmd", command, *extra],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_the_daemon_passes_every_check() -> None:
    done = kit(DAEMON)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = [line for line in done.stdout.splitlines() if line.startswith(("PASS", "FAIL"))]
    assert len(lines) == len(CHECKS) >= 18
    assert all(line.startswith("PASS") for line in lines), done.stdout
    assert f"{len(CHECKS)} of {len(CHECKS)} checks passed" in done.stdout


def test_the_daemon_passes_over_tcp_too() -> None:
    # The same wire over a socket: a few checks that cover framing, events and positions,
    # and the trust boundary (the token is read from the discovery file and presented).
    tcp = f"{sys.executable} -m agentls --tcp --port {{port}}"
    for only in ("a turn:", "delivery:", "in utf-16", "before the handshake", "HTTP input"):
        done = kit(tcp, "--tcp", "--only", only)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 of 1 check passed" in done.stdout, done.stdout


def test_a_server_that_does_not_answer_fails_the_kit() -> None:
    done = kit(f"{sys.executable} -c pass", "--only", "initialize")
    assert done.returncode == 1
    assert done.stdout.startswith("FAIL  initialize advertises the agentls protocol")
    assert "0 of 1 check passed" in done.stdout


def test_positions_are_counted_in_the_negotiated_encoding() -> None:
    text = "a😀b\n"
    edit = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}}
    after = {"utf-8": 5, "utf-16": 3, "utf-32": 2}
    for encoding, column in after.items():
        at_b = {"line": 0, "character": column}
        change = {**edit, "range": {"start": at_b, "end": {"line": 0, "character": column + 1}}}
        assert apply_edits(text, [{**change, "newText": "B"}], encoding) == "a😀B\n"
