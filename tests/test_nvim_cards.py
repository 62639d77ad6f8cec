"""Unit tests of the Neovim plugin's pure module lua/agentls/cards.lua (a plan, a patch's
files, the /context bar) and of the footer's cost of a turn (lines.lua), in one headless
Neovim as test_nvim_lines.py does: values in, values out, no daemon and no buffer."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from test_nvim import bare_nvim


@pytest.fixture(scope="module")
def nvim() -> Iterator[Any]:
    with bare_nvim() as editor:
        yield editor


def call(nvim: Any, module: str, name: str, *args: Any) -> list[Any]:
    """All the values `require('agentls.<module>')[name](*args)` returns."""
    values: list[Any] = nvim.exec_lua(
        "local module, name = ... return { require('agentls.' .. module)[name](select(3, ...)) }",
        module,
        name,
        *args,
    )
    return values


def test_a_plan_is_its_markdown_between_two_rules(nvim: Any) -> None:
    [lines] = call(nvim, "cards", "plan", "# Title\n\n1. Step\n\n")
    assert lines == [
        ["  ────────", "AgentlsFooter"],
        ["# Title"],
        [""],
        ["1. Step"],
        ["  ────────", "AgentlsFooter"],
    ]


def test_a_patch_lists_each_file_with_its_kind_and_counts_relative_to_the_root(
    nvim: Any,
) -> None:
    diffs = [
        {"path": "/ws/new.md", "kind": "add", "newText": "a\nb\n"},
        {"path": "/ws/app.py", "kind": "update", "oldText": "x = 1\ny\n", "newText": "x = 2\ny\n"},
        {"path": "/ws/old.txt", "kind": "delete", "oldText": "gone\n", "newText": ""},
        {
            "path": "/ws/pkg/m.py",
            "kind": "move",
            "movedFrom": "/ws/m.py",
            "oldText": "a\n",
            "newText": "a\n",
        },
        {"path": "/elsewhere/f", "oldText": "", "newText": "z\n"},
    ]
    [lines] = call(nvim, "cards", "patch", diffs, "v", "/ws")
    assert lines == [
        ["  5 files in one change (v shows each diff)", "AgentlsFooter"],
        ["    add    new.md  +2 −0", "AgentlsDiffAdd"],
        ["    update app.py  +1 −1"],
        ["    delete old.txt  +0 −1", "AgentlsDiffDelete"],
        ["    move   m.py → pkg/m.py  +0 −0", "AgentlsDiffHunk"],
        ["    update /elsewhere/f  +1 −0"],
    ]
    [plain] = call(nvim, "cards", "patch", diffs[:1], False, "/ws")
    assert plain[0] == ["  1 file in one change", "AgentlsFooter"]


REPORT = "\n".join(
    [
        "Context of m: about 1,000 of 10,000 tokens (10%)",
        "  System prompt        500 tokens   5.0%",
        "  Tools                500 tokens   5.0%",
        "  MCP tools              0 tokens   0.0%",
        "  Messages               0 tokens   0.0%  (0 messages)",
        "  Free space         9,000 tokens  90.0%",
    ]
)


def test_the_context_report_becomes_a_bar_in_proportion_and_a_wrapped_legend(nvim: Any) -> None:
    [parts] = call(nvim, "cards", "context_parts", REPORT)
    assert [(p["name"], p["tokens"], p["percent"]) for p in parts] == [
        ("System prompt", 500, 5.0),
        ("Tools", 500, 5.0),
        ("MCP tools", 0, 0.0),
        ("Messages", 0, 0.0),
        ("Free space", 9000, 90.0),
    ]
    [bar] = call(nvim, "cards", "context_bar", parts, 42)
    cells = [(chunk[0], chunk[1]) for chunk in bar[0][1:]]
    # 40 cells: 5% is 2 of them; empty parts take none; the rest is free.
    assert cells == [
        ("██", "AgentlsContext1"),
        ("██", "AgentlsContext2"),
        ("░" * 36, "AgentlsContextFree"),
    ]
    legend = ["".join(chunk[0] for chunk in line) for line in bar[1:]]
    assert legend == ["  █ System prompt 5.0%   █ Tools 5.0%", "  ░ Free space 90.0%"]
    assert all(len(line) <= 42 for line in legend)
    # A part too small for a cell still gets one, so it is seen.
    tiny = [
        {"name": "Skills", "tokens": 3, "percent": 0.01},
        {"name": "Free space", "tokens": 9, "percent": 99.9},
    ]
    [small] = call(nvim, "cards", "context_bar", tiny, 22)
    assert small[0][1] == ["█", "AgentlsContext1"]


def test_the_footer_shows_the_turns_cost_and_the_sessions_when_they_differ(nvim: Any) -> None:
    usage = {"input": 10, "output": 2, "context": 0, "window": 0, "cost": 0.5}
    [first] = call(nvim, "lines", "footer", {"stopReason": "end_turn", "costUsd": 0.5}, usage, 200)
    assert first[0][0][0] == "── end_turn · 10 in · 2 out · 0% context · $0.5000 this turn"
    [later] = call(nvim, "lines", "footer", {"stopReason": "end_turn", "costUsd": 0.25}, usage, 200)
    assert later[0][0][0].endswith("$0.2500 this turn · $0.5000 in all")


def test_a_plans_options_keep_their_names_others_read_by_kind(nvim: Any) -> None:
    plan = {"optionId": "plan_keep_planning", "kind": "reject_once", "name": "Keep planning"}
    assert call(nvim, "text", "option_label", plan) == ["Keep planning"]
    other = {"optionId": "reject_once", "kind": "reject_once", "name": "Reject"}
    assert call(nvim, "text", "option_label", other) == ["Reject"]


def test_a_merge_that_ran_into_conflicts_names_each_with_its_reason(nvim: Any) -> None:
    conflicts = [
        {"path": "/ws/app.txt", "reason": "both changed the same lines"},
        {"path": "/elsewhere/logo.png", "reason": "a binary file changed on both sides"},
    ]
    [text] = call(nvim, "cards", "conflicts", conflicts, "/ws")
    assert text == (
        "the merge changed nothing: 2 conflicts\n"
        "  app.txt: both changed the same lines\n"
        "  /elsewhere/logo.png: a binary file changed on both sides"
    )


def test_a_rerun_outside_the_sandbox_says_so_under_its_title(nvim: Any) -> None:
    event = {
        "requestId": "r1",
        "toolCallId": "toolu_1",
        "title": "Run outside the sandbox?",
        "input": {"command": "touch /etc/x"},
        "options": [],
        "sandboxEscalation": {
            "command": "touch /etc/x",
            "reason": "Read-only file system",
            "trigger": "failed_in_sandbox",
        },
    }
    [body] = call(nvim, "cards", "request_body", event)
    assert body == [
        ["    $ touch /etc/x", "AgentlsNoticeWarning"],
        ["  runs OUTSIDE the sandbox, once: Read-only file system", "AgentlsNoticeWarning"],
    ]
    # A request with neither has no body of its own.
    assert call(nvim, "cards", "request_body", {**event, "sandboxEscalation": None}) == []


def test_typed_input_shows_enter_and_controls_in_caret_notation(nvim: Any) -> None:
    [line] = call(nvim, "lines", "shell_input", {"shell_id": "shell_2", "input": "q\t\x04\x7f\r\n"})
    assert line == ["▸ shell_2 ❯ q^I^D^?⏎"]
