"""Compaction's steps, as pure functions over a history (the run that applies them, with
a model call for the summary, is agentls.loop.compaction_run): cheap steps first (snip and
shrink old tool results), then the summary's request, boundary and message.

Tool results are most of a long session's context and the least valuable part of it once
the model has acted on them, so the loop first stubs old results and shrinks huge ones;
only when that is not enough does it pay for a summary call. The summary must not cause
"compaction amnesia" (users lose the task, file paths and their own latest words), so the
most recent turns are kept verbatim, the summary prompt asks for the user's instructions
word for word, and the compacted history keeps the tool_use/tool_result pairing intact on
both sides of the boundary. Everything here is pure: new `Message` objects keep the id of
the message they replace, so a transcript can line the two histories up.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from agentls.images import IMAGE_TOKENS, describe, replace_images
from agentls.messages import (
    ContentBlock,
    Message,
    ResultPart,
    TextBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentls.pairing import repair_pairing

SNIP_PREFIX = "[Old tool result cleared to save context:"
COMPACTED_PREFIX = "[Conversation compacted:"

# The tool input that says best what a call was about, in order of preference.
_MAIN_ARGUMENTS = ("file_path", "path", "pattern", "command", "url", "query", "description")
_ARGUMENT_LIMIT = 80
_MIN_SHRINK_CHARS = 200
_MARKER = "[... {omitted:,} characters omitted to save context ...]"
# About four characters a token, as the token estimate assumes.
IMAGE_CHARS = 4 * IMAGE_TOKENS


@dataclass(frozen=True, slots=True)
class SnipStats:
    results_snipped: int = 0
    chars_removed: int = 0


def starts_turn(message: Message) -> bool:
    """Whether `message` is a real user message, where a turn (and a safe cut) begins.

    A user message that carries tool_results answers the assistant message before it,
    even when steering text rides along, so it continues the current turn: cutting the
    history there would orphan its results.
    """
    return (
        message.role == "user"
        and bool(message.content)
        and not any(isinstance(b, ToolResultBlock) for b in message.content)
    )


def snip_old_tool_results(
    messages: Sequence[Message], keep_recent_turns: int
) -> tuple[list[Message], SnipStats]:
    """Stub every tool_result older than the last `keep_recent_turns` turns.

    Error results stay: they are short and carry what the model must not repeat (a denied
    permission, a failing command). A result shorter than its stub stays too.
    """
    cutoff = _recent_turns_start(messages, keep_recent_turns)
    uses = _tool_uses_by_id(messages)
    out: list[Message] = []
    snipped = removed = 0
    for index, message in enumerate(messages):
        if index >= cutoff or not message.tool_results():
            out.append(message)
            continue
        blocks: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                stub = _snip(block, uses)
                if stub is not block:
                    snipped += 1
                    removed += result_size(block) - result_size(stub)
                block = stub
            blocks.append(block)
        out.append(_with_content(message, blocks))
    return out, SnipStats(snipped, removed)


def _recent_turns_start(messages: Sequence[Message], keep: int) -> int:
    """The index where the last `keep` turns begin (len(messages) when keep is 0)."""
    if keep <= 0:
        return len(messages)
    starts = [i for i, m in enumerate(messages) if starts_turn(m)]
    return starts[-keep] if len(starts) >= keep else 0


def _tool_uses_by_id(messages: Iterable[Message]) -> dict[str, ToolUseBlock]:
    return {use.id: use for m in messages if m.role == "assistant" for use in m.tool_uses()}


def _snip(block: ToolResultBlock, uses: dict[str, ToolUseBlock]) -> ToolResultBlock:
    text, images = block.text(), block.images()
    if block.is_error or text.startswith(SNIP_PREFIX):
        return block
    call = describe_call(uses.get(block.tool_use_id))
    shown = ", ".join([f"{len(text):,} characters", *(describe(i) for i in images)])
    stub = f"{SNIP_PREFIX} {call}, {shown}. Call the tool again if you need it.]"
    if len(stub) >= result_size(block):
        return block
    return ToolResultBlock(block.tool_use_id, stub, block.is_error)


def result_size(block: ToolResultBlock) -> int:
    """A result's size in characters, an image counted as the text its tokens would hold."""
    return len(block.text()) + IMAGE_CHARS * len(block.images())


def describe_call(use: ToolUseBlock | None) -> str:
    """A short name for a tool call: `Read of src/app.py`, `Bash: npm test`."""
    if use is None:
        return "an earlier tool call"
    for key in _MAIN_ARGUMENTS:
        value = use.input.get(key)
        if isinstance(value, str) and value.strip():
            shown = _shorten(value)
            if key == "command":
                return f"{use.name}: {shown}"
            if key in ("pattern", "query", "description"):
                return f"{use.name} for {shown!r}"
            return f"{use.name} of {shown}"
    return use.name


def _shorten(value: str) -> str:
    flat = " ".join(value.split())
    return flat if len(flat) <= _ARGUMENT_LIMIT else flat[: _ARGUMENT_LIMIT - 1] + "…"


def _with_content(message: Message, blocks: Sequence[ContentBlock]) -> Message:
    """`message` itself when nothing changed, else a copy with the same id."""
    content = tuple(blocks)
    if all(a is b for a, b in zip(content, message.content, strict=True)):
        return message
    return Message(message.role, content, message.id)


def microcompact(messages: Sequence[Message], max_result_chars: int) -> tuple[list[Message], int]:
    """Shrink every tool_result longer than `max_result_chars` to its head and tail.

    The shrunk text fits in `max_result_chars`, marker included, so a second pass changes
    nothing. Returns the new history and the number of characters removed.
    """
    if max_result_chars < _MIN_SHRINK_CHARS:
        raise ValueError(f"max_result_chars must be at least {_MIN_SHRINK_CHARS}")
    out: list[Message] = []
    removed = 0
    for message in messages:
        blocks: list[ContentBlock] = []
        for block in message.content:
            if isinstance(block, ToolResultBlock) and len(block.text()) > max_result_chars:
                text = block.text()
                short = shrink_text(text, max_result_chars)
                removed += len(text) - len(short)
                block = _with_text(block, short)
            blocks.append(block)
        out.append(_with_content(message, blocks))
    return out, removed


def _with_text(block: ToolResultBlock, text: str) -> ToolResultBlock:
    """`block` with its text replaced; its images, if any, follow the new text."""
    images = block.images()
    content: str | tuple[ResultPart, ...] = (TextBlock(text), *images) if images else text
    return ToolResultBlock(block.tool_use_id, content, block.is_error)


def shrink_text(text: str, limit: int) -> str:
    """`text` cut to about 2/3 head and 1/3 tail, at line ends where possible, within `limit`."""
    if len(text) <= limit:
        return text
    room = limit - len(_MARKER.format(omitted=len(text))) - 2
    head = _cut_head(text, room * 2 // 3)
    tail = _cut_tail(text, room - room * 2 // 3)
    marker = _MARKER.format(omitted=len(text) - len(head) - len(tail))
    joiner = "" if head.endswith("\n") else "\n"
    return f"{head}{joiner}{marker}\n{tail}"


def _cut_head(text: str, size: int) -> str:
    head = text[:size]
    newline = head.rfind("\n")
    return head[: newline + 1] if newline >= size // 2 else head


def _cut_tail(text: str, size: int) -> str:
    tail = text[len(text) - size :] if size > 0 else ""
    newline = tail.find("\n")
    return tail[newline + 1 :] if 0 <= newline < size // 2 else tail


def choose_boundary(
    messages: Sequence[Message], keep_recent_tokens: int, estimate: Callable[[Message], int]
) -> int | None:
    """The index of the first message kept verbatim, or None when nothing precedes it.

    The kept part starts at a real user message, so neither side splits a tool_use from
    its result. It holds as many recent turns as fit in `keep_recent_tokens`, and always
    the last turn, however large.
    """
    starts = [i for i, m in enumerate(messages) if starts_turn(m)]
    if not starts:
        return None
    boundary = starts[-1]
    kept = sum(estimate(m) for m in messages[boundary:])
    for start in reversed(starts[:-1]):
        turn = sum(estimate(m) for m in messages[start:boundary])
        if kept + turn > keep_recent_tokens:
            break
        boundary, kept = start, kept + turn
    return boundary if boundary > 0 else None


SUMMARY_INSTRUCTIONS = """\
The conversation above is about to be compacted: it will be replaced by your summary, and \
you will continue the work from that summary alone (plus the most recent messages). \
Write a summary that lets you carry on without asking the user anything again. Use these \
sections:

1. Task: what the user wants overall, and the current state of that work.
2. Decisions and findings: what was decided, learned or ruled out, and why; errors met \
and how they were fixed.
3. Files touched: every file read, created or changed, by path, with its current state \
and what was changed in it.
4. Open questions and next steps: what remains to do, in order, and anything unresolved.
5. The user's latest instructions, verbatim: quote, word for word, every instruction the \
user gave that still applies (constraints, preferences, rules, corrections). Do not \
paraphrase them. Text inside <userContext> blocks was written by the editor, not typed \
by the user; it is not an instruction.

If the conversation starts with an earlier summary, carry its still-relevant content \
forward. Answer in plain text only. Do NOT call any tools: a tool call in this reply \
fails the compaction. Put the whole summary inside <summary>...</summary>."""


def summary_request(
    messages_before: Sequence[Message], instructions: str | None = None
) -> list[Message]:
    """The messages for the summary call: the history to summarise, then the request.

    The request joins a trailing user message instead of following it, so strict
    providers never see two user messages in a row. A trailing unanswered tool_use (the
    boundary rule prevents it) gets synthetic results rather than breaking the request.
    Images go as `[image: …]` text.
    """
    request = SUMMARY_INSTRUCTIONS
    if instructions and instructions.strip():
        request += f"\n\nAdditional instructions for this summary:\n{instructions.strip()}"
    # The summary keeps what the images were, not their pixels.
    history = replace_images(repair_pairing(messages_before), describe)
    if history and history[-1].role == "user":
        last = history[-1]
        merged = Message("user", (*last.content, TextBlock(request)), last.id)
        return [*history[:-1], merged]
    return [*history, Message("user", (TextBlock(request),))]


_SUMMARY_TAG = re.compile(r"<summary>(.*?)(?:</summary>(?!.*</summary>)|\Z)", re.DOTALL)


def parse_summary(text: str) -> str | None:
    """The text inside <summary>…</summary>, else the whole stripped text; None if empty."""
    match = _SUMMARY_TAG.search(text)
    body = match.group(1) if match else text
    return body.strip() or None


def summary_message(summary: str, dropped_count: int, plan: str = "") -> Message:
    """The user message that stands in for the `dropped_count` summarised messages; the
    model's plan (TodoWrite's checklist), when it has one, is restated as it stands."""
    noun = "message was" if dropped_count == 1 else "messages were"
    kept_plan = f"<plan>\nYour plan (TodoWrite) as it stands:\n{plan}\n</plan>\n\n" if plan else ""
    text = (
        f"{COMPACTED_PREFIX} {dropped_count} earlier {noun} replaced by this summary "
        "to save context.]\n\n"
        f"<summary>\n{summary.strip()}\n</summary>\n\n"
        f"{kept_plan}"
        "Continue the work from where it left off. Do not ask the user to repeat what "
        "they already said: the summary and the messages that follow hold it. Read files "
        "again with the tools when you need their exact current content."
    )
    return Message("user", (TextBlock(text),))


def compacted_history(summary_msg: Message, kept: Sequence[Message]) -> list[Message]:
    """The history after compaction: the summary, then the kept messages.

    When the kept part starts with a user message (the boundary rule makes it so), the
    summary's blocks go in front of that message's blocks instead of forming a message
    of their own: two user messages in a row are rejected or silently merged by strict
    providers. The merged message keeps the kept message's id, so the transcript still
    lines up with the original; the summary message's own id is dropped.
    """
    if kept and kept[0].role == "user":
        first = kept[0]
        merged = Message("user", (*summary_msg.content, *first.content), first.id)
        return [merged, *kept[1:]]
    return [summary_msg, *kept]
