"""ACP updates for what ACP has no word for: a discarded attempt's streamed answer, and a
patch's several files (one diff block each, live and replayed)."""

from __future__ import annotations

from pathlib import Path

from acp import schema as acp

from agentls.acp.history import replay
from agentls.acp.updates import CUT_NOTES, SessionUpdates
from agentls.events import (
    LoopEvent,
    MessageDiscarded,
    PermissionRequest,
    SessionEvent,
    TextDeltaEvent,
    ThinkingDeltaEvent,
    ToolCallUpdate,
    UsageEvent,
)
from agentls.messages import Message, ToolUseBlock
from agentls.tool_values import FileDiff
from agentls.tools.registry import ToolRegistry, default_tools


def _texts(updates: SessionUpdates, *events: LoopEvent, parent: str | None = None) -> list[str]:
    said = []
    for seq, event in enumerate(events):
        for update in updates.updates(SessionEvent("s", seq, "t", event, parent)):
            assert isinstance(update, acp.AgentMessageChunk | acp.AgentThoughtChunk)
            assert isinstance(update.content, acp.TextContentBlock)
            said.append(f"{update.session_update}:{update.content.text}")
    return said


def test_a_retried_answer_is_marked_where_it_broke_off() -> None:
    said = _texts(
        SessionUpdates(),
        TextDeltaEvent("m1", "The port is 80"),
        MessageDiscarded("m1", "retry"),
        TextDeltaEvent("m2", "The port is 8000."),
    )
    assert said == [
        "agent_message_chunk:The port is 80",
        f"agent_message_chunk:\n\n[{CUT_NOTES['retry']}]\n\n",
        "agent_message_chunk:The port is 8000.",
    ]


def test_an_answer_cut_by_an_error_says_so() -> None:
    said = _texts(SessionUpdates(), TextDeltaEvent("m1", "Half"), MessageDiscarded("m1", "error"))
    assert said[-1] == f"agent_message_chunk:\n\n[{CUT_NOTES['error']}]\n\n"


def test_no_note_when_no_answer_text_was_shown() -> None:
    updates = SessionUpdates()
    assert _texts(updates, ThinkingDeltaEvent("m1", "hmm"), MessageDiscarded("m1", "retry")) == [
        "agent_thought_chunk:hmm"
    ]
    nested = [TextDeltaEvent("m2", "sub"), MessageDiscarded("m2", "retry")]
    assert _texts(updates, *nested, parent="task1") == []
    # A message already marked is not marked twice.
    assert _texts(updates, TextDeltaEvent("m3", "x"), MessageDiscarded("m3", "retry"))[-1:] == [
        f"agent_message_chunk:\n\n[{CUT_NOTES['retry']}]\n\n"
    ]


def test_usage_updates_carry_the_sessions_cost_so_far() -> None:
    # ACP's `cost` is the session's running total; a sub-agent's calls count in it.
    updates = SessionUpdates()
    updates.cost_usd = 1.0  # what the session had cost when it was opened here
    events = [
        SessionEvent("s", 1, "t", UsageEvent(100, 10, 0, 0, 110, 1000, 0.25)),
        SessionEvent("s", 2, "t", UsageEvent(50, 5, 0, 0, 55, 1000, 0.125), "task1", "agent1"),
        SessionEvent("s", 3, "t", UsageEvent(100, 10, 0, 0, 220, 1000, 0.25)),
        SessionEvent("s", 4, "t", UsageEvent(100, 10, 0, 0, 330, 1000, None)),
    ]
    sent = [u for e in events for u in updates.updates(e)]
    assert all(isinstance(u, acp.UsageUpdate) for u in sent)
    costs = [u.cost.amount if u.cost else None for u in sent if isinstance(u, acp.UsageUpdate)]
    assert costs == [1.25, 1.625, None]


def test_a_patch_asks_and_ends_with_one_diff_block_per_file() -> None:
    diffs = (
        FileDiff("/ws/new.md", None, "# New\n", "add"),
        FileDiff("/ws/app.py", "a = 1\n", "a = 2\n", "update"),
        FileDiff("/ws/old.txt", "gone\n", "", "delete"),
        FileDiff("/ws/pkg/b.py", "x\n", "y\n", "move", moved_from="/ws/b.py"),
    )
    updates = SessionUpdates()
    request = PermissionRequest("perm1", "call1", "Patch 4 files", {"input": "…"}, diffs=diffs)
    asked = updates.permission_call(request).content or []
    ended = updates.updates(
        SessionEvent("s", 1, "t", ToolCallUpdate("call1", "completed", "Applied.", diffs=diffs))
    )
    (update,) = ended
    assert isinstance(update, acp.ToolCallProgress)
    for content in (asked, [c for c in update.content or [] if c.type == "diff"]):
        assert [(c.path, c.old_text, c.new_text) for c in content] == [
            (d.path, d.old_text, d.new_text) for d in diffs
        ]


def test_a_recorded_patch_is_replayed_with_one_diff_per_file() -> None:
    patch = "\n".join(
        [
            "*** Begin Patch",
            "*** Add File: new.md",
            "+# New",
            "*** Update File: app.py",
            "@@",
            " keep",
            "-a = 1",
            "+a = 2",
            "*** Delete File: old.txt",
            "*** End Patch",
        ]
    )
    call = ToolUseBlock("call1", "apply_patch", {"input": patch})
    registry = ToolRegistry(default_tools(apply_patch=True))
    (start,) = replay([Message("assistant", (call,))], registry, Path("/ws"), ())
    assert isinstance(start, acp.ToolCallStart)
    assert [(c.path, c.old_text, c.new_text) for c in start.content or []] == [
        ("/ws/new.md", None, "# New\n"),
        ("/ws/app.py", "keep\na = 1\n", "keep\na = 2\n"),
        ("/ws/old.txt", "", ""),
    ]
