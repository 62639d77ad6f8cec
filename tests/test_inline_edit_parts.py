"""The pure parts of an inline edit: its gate (every file change asks, whatever the mode)
and the file listing the model reads (the region marked, a long file cut around it)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agentls.context.inline_edit import InlineEdit, inline_edit_block
from agentls.events import InlineEditTarget, TextPosition, TextRange
from agentls.names import PermissionMode
from agentls.permissions.gate import Decision, PermissionGate
from agentls.permissions.inline_edit import InlineEditGate
from agentls.permissions.rules import parse_rule
from agentls.workspace.view import Position, Range

MODES: list[PermissionMode] = ["default", "acceptEdits", "plan", "bypassPermissions"]


@pytest.mark.parametrize("mode", MODES)
def test_every_file_change_asks_in_every_mode(mode: PermissionMode) -> None:
    session = PermissionGate(mode, [parse_rule("Edit", "allow")], cwd="/w")
    gate = InlineEditGate(session, cwd="/w")
    for tool in ("Edit", "MultiEdit", "Write"):
        assert gate.decide(tool, "edit", False, "/w/a.py").behavior == "ask", (mode, tool)
    # A hook's allow does not skip the review either.
    hook = Decision("allow", "hook says yes")
    assert gate.decide("Edit", "edit", False, "/w/a.py", hook).behavior == "ask"
    # Reads meet the session's gate as usual (plan mode allows them too).
    assert gate.decide("Read", "read", True, "/w/a.py").behavior == "allow"


def test_a_deny_rule_or_a_hooks_deny_still_refuses_a_change() -> None:
    session = PermissionGate("bypassPermissions", [parse_rule("Edit(/w/secret.py)", "deny")])
    gate = InlineEditGate(session, cwd="/w")
    assert gate.decide("Edit", "edit", False, "/w/secret.py").behavior == "deny"
    hook = Decision("deny", "not this file")
    assert gate.decide("Write", "edit", False, "/w/a.py", hook).behavior == "deny"
    # The session's mode and rules are read at each decision.
    session.add_rule(parse_rule("Edit(/w/a.py)", "deny"))
    assert gate.decide("MultiEdit", "edit", False, "/w/a.py").behavior == "deny"


def block(text: str, start: tuple[int, int], end: tuple[int, int]) -> str:
    region = Range(Position(*start), Position(*end))
    target = InlineEditTarget("file:///w/a.py", TextRange(TextPosition(0, 0), TextPosition(0, 0)))
    return inline_edit_block(InlineEdit(Path("/w/a.py"), region, target), text, Path("/w"), "Edit")


def test_the_region_is_marked_in_the_numbered_file_and_code_is_not_escaped() -> None:
    shown = block("a = 1\nif a < 2 & b:\n    pass\nz = 0\n", (1, 3), (2, 8))
    listing = shown.split("<file>\n")[1].split("\n</file>")[0].splitlines()
    assert listing == [
        "     1\ta = 1",
        "----- selection starts (line 2, column 4) -----",
        "     2\tif a < 2 & b:",
        "     3\t    pass",
        "----- selection ends (line 3, column 9) -----",
        "     4\tz = 0",
    ]
    assert '<inlineEdit path="a.py" lines="2-3">' in shown


def test_a_long_file_is_shown_around_the_region() -> None:
    text = "".join(f"x{n}\n" for n in range(1, 5001))
    listing = block(text, (2499, 0), (2500, 0)).split("<file>\n")[1].split("\n</file>")[0]
    lines = listing.splitlines()
    assert lines[0] == "… lines 1-2199 not shown (Read them if needed)"
    assert lines[1] == "  2200\tx2200"
    assert lines[-2] == "  2801\tx2801"
    assert lines[-1] == "… lines 2802-5000 not shown (Read them if needed)"


def test_a_region_after_the_last_newline_is_marked_at_the_end() -> None:
    listing = block("a\n", (1, 0), (1, 0)).split("<file>\n")[1].split("\n</file>")[0]
    assert listing.splitlines() == [
        "     1\ta",
        "----- selection starts (line 2, column 1) -----",
        "----- selection ends (line 2, column 1) -----",
    ]
