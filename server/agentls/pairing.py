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
    return Alternation()(messages)


# A joined run: the messages it was made of, and the one message that stands for them.
_Joined = tuple[tuple[Message, ...], Message]


class Alternation:
    """`alternating` for a history that grows between model calls: a run joined at one
    call is handed back as the same Message object while the history holds the same run.

    The request bodies keep each message's JSON by the identity of its object
    (providers/anthropic_body.py, history_json.py): a new joined object at every call made
    every request after an unanswered message convert and encode the history from there on
    again (5 ms a call at 1,000 messages against 0.5). Only the last call's runs are kept."""

    def __init__(self) -> None:
        # By the id of a run's first message (alive: the run is held with it).
        self._joined: dict[int, _Joined] = {}

    def __call__(self, messages: Sequence[Message]) -> list[Message]:
        joined: list[Message] = []
        kept: dict[int, _Joined] = {}
        start, count = 0, len(messages)
        while start < count:
            first = messages[start]
            end = start + 1
            while end < count and messages[end].role == first.role:
                end += 1
            if end == start + 1:
                joined.append(first)
            else:
                run = tuple(messages[start:end])
                known = self._joined.get(id(first))
                if known is None or not _same_run(known[0], run):
                    known = (run, _join(run))
                kept[id(first)] = known
                joined.append(known[1])
            start = end
        self._joined = kept
        return joined


def _same_run(a: tuple[Message, ...], b: tuple[Message, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))


def _join(run: tuple[Message, ...]) -> Message:
    """One message for a run of the same role: the first one's role and id, every block."""
    content = run[0].content
    for message in run[1:]:
        content += message.content
    return Message(run[0].role, content, run[0].id)
