"""The history invariants, beside the messages they are about: every tool_use has exactly
one tool_result in the next message (the loop, the context and the session all keep it),
and a request's roles alternate."""

from __future__ import annotations

from collections.abc import Sequence

from agentls.messages import Message, ToolResultBlock

INTERRUPTED = "Interrupted by user: this tool call did not run to completion."


def pairing_problems(messages: Sequence[Message], start: int = 0) -> list[str]:
    """Every way `messages` breaks the tool_use/tool_result pairing, as readable lines
    (from message `start` on: each message is checked against its neighbours)."""
    problems: list[str] = []
    for i in range(start, len(messages)):
        message = messages[i]
        if message.role == "assistant":
            wanted = [b.id for b in message.tool_uses()]
            if not wanted:
                continue
            nxt = messages[i + 1] if i + 1 < len(messages) else None
            got = [b.tool_use_id for b in nxt.tool_results()] if nxt and nxt.role == "user" else []
            for call_id in wanted:
                count = got.count(call_id)
                if count != 1:
                    problems.append(f"tool_use {call_id} has {count} tool_results")
        else:
            prev = messages[i - 1] if i > 0 else None
            known = {b.id for b in prev.tool_uses()} if prev and prev.role == "assistant" else set()
            problems.extend(
                f"tool_result {r.tool_use_id} answers no tool_use"
                for r in message.tool_results()
                if r.tool_use_id not in known
            )
    return problems


class PairingCheck:
    """`pairing_problems` for a history that grows between model calls: the messages of
    the last well-paired history, while the next one holds the same objects at the same
    places, are not walked again (a whole walk costs about 1.7 µs a message, on every call
    of a turn). Only the last history is remembered, so one compacted, rewritten or
    repaired is walked from where it differs."""

    def __init__(self) -> None:
        self._checked: list[Message] = []
        self.walked = 0

    def problems(self, messages: Sequence[Message]) -> list[str]:
        """The same lines as `pairing_problems(messages)`."""
        same = 0
        limit = min(len(messages), len(self._checked))
        while same < limit and messages[same] is self._checked[same]:
            same += 1
        # The last message kept is checked again: its pairing depends on the one after it.
        start = max(0, same - 1)
        self.walked = len(messages) - start
        problems = pairing_problems(messages, start)
        self._checked = [] if problems else list(messages)
        return problems


def repair_pairing(messages: Sequence[Message]) -> list[Message]:
    """A copy of `messages` in which the pairing holds: orphans dropped, missing results added."""
    repaired: list[Message] = []
    for i, message in enumerate(messages):
        if message.role == "user":
            prev = messages[i - 1] if i > 0 else None
            known = {b.id for b in prev.tool_uses()} if prev and prev.role == "assistant" else set()
            seen: set[str] = set()
            blocks = []
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    if block.tool_use_id not in known or block.tool_use_id in seen:
                        continue
                    seen.add(block.tool_use_id)
                blocks.append(block)
            order = [b.id for b in prev.tool_uses()] if prev and prev.role == "assistant" else []
            missing = [
                ToolResultBlock(call_id, INTERRUPTED, is_error=True)
                for call_id in order
                if call_id not in seen
            ]
            content = tuple(missing) + tuple(blocks)
            if content:
                repaired.append(Message("user", content, message.id))
            continue
        repaired.append(message)
        nxt = messages[i + 1] if i + 1 < len(messages) else None
        calls = message.tool_uses()
        if calls and (nxt is None or nxt.role != "user"):
            results = tuple(ToolResultBlock(c.id, INTERRUPTED, is_error=True) for c in calls)
            repaired.append(Message("user", results))
    return repaired


def alternating(messages: Sequence[Message]) -> list[Message]:
    """`messages` with each run of same-role messages joined into one, for a request.

    A turn that failed or was aborted before the model answered leaves its user message
    unanswered, and the next turn's follows it; strict servers (chat templates that
    require alternation) refuse two in a row. The history itself keeps them apart.
    """
    joined: list[Message] = []
    for message in messages:
        if joined and joined[-1].role == message.role:
            last = joined[-1]
            joined[-1] = Message(last.role, last.content + message.content, last.id)
        else:
            joined.append(message)
    return joined
