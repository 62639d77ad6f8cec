"""What `agentls run` prints and asks, from `agent/event` payloads (plain dicts).

Standard library only: the warm client (agentls.warm) prints with it without importing
the core, and the in-process path (agentls.headless) turns its typed events into the same
payloads first, so both print alike.
"""

from __future__ import annotations

import json
import os
import sys
import time

from agentls.cli_diff import render_diff, render_diffs, wants_colour
from agentls.plural import counted

# `typing` costs the warm path milliseconds at every start: names for the checker only.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

    Event = dict[str, Any]
FINISHED = ("completed", "failed", "declined")


def write(out: TextIO, text: str) -> None:
    try:
        out.write(text)
        out.flush()
    except BrokenPipeError:
        # The reader went away (e.g. `agentls run --json … | head`): stop printing quietly.
        pass


class JsonPrinter:
    """One `agent/event` object per line, exactly as the LSP server sends it (except
    `available_commands`)."""

    def __init__(self, out: TextIO) -> None:
        self._out = out

    def show(self, event: Event) -> None:
        if event.get("type") == "available_commands":
            # For an editor's completion; one turn on the command line has no use for it.
            return
        write(self._out, json.dumps(event, ensure_ascii=False) + "\n")

    def answered(self, request: Event, option: str) -> None:
        """The answer shows up as its permission_resolved event."""


class HumanPrinter:
    """Text as it streams, one line per tool call and result, the stop reason at the end."""

    def __init__(self, out: TextIO, cwd: str | None = None) -> None:
        self._out = out
        # Diffs name files relative to the workspace.
        self.cwd = cwd or os.getcwd()
        self._colour = wants_colour(out)
        self._in_text = False
        # Turns of local slash commands: their output says it all, no stop-reason line.
        self._command_turns: set[str] = set()

    def show(self, event: Event) -> None:
        kind = event.get("type")
        child = "agentId" in event
        if kind == "command_output":
            self._command_turns.add(event.get("turnId", ""))
        elif kind == "turn_completed" and event.get("turnId") in self._command_turns:
            return
        if kind == "text_delta" and not child:
            write(self._out, event["text"])
            self._in_text = True
            return
        line = summary_line(event)
        if line:
            # A sub-agent's steps are indented under its Task call; its text is not shown.
            self._line(f"    {line.strip()}" if child else line)
        if kind == "permission_request" and event.get("diffs"):
            # A patch: every file's change, so the user sees all that they allow.
            write(self._out, render_diffs(event["diffs"], self._colour, self.cwd))
        elif kind == "permission_request" and event.get("diff"):
            # The change comes with the question, so the user sees what they allow.
            write(self._out, render_diff(event["diff"], self._colour, self.cwd))
        elif kind == "permission_request" and event.get("sandboxEscalation"):
            # Why the command should leave the box, and the whole command it would run.
            escalation = event["sandboxEscalation"]
            write(self._out, f"  {escalation['command']}\n  Why: {escalation['reason']}\n")
        elif kind == "permission_request" and event.get("plan"):
            # A plan to approve (ExitPlanMode): its markdown, as the model wrote it.
            write(self._out, "\n" + str(event["plan"]).rstrip() + "\n\n")

    def answered(self, request: Event, option: str) -> None:
        self._line(f"  → {answer_words(request, option)}")

    def _line(self, line: str) -> None:
        write(self._out, ("\n" if self._in_text else "") + line + "\n")
        self._in_text = False


def summary_line(event: Event) -> str | None:
    kind = event.get("type")
    if kind == "tool_call":
        return f"● {event['title']}"
    if kind == "tool_call_update" and event.get("status") in FINISHED:
        first = (event.get("content") or "").strip().splitlines()
        summary = first[0][:100] if first else event["status"]
        return f"  {'✓' if event['status'] == 'completed' else '✗'} {summary}"
    if kind == "permission_request":
        return f"? permission requested: {event['title']}"
    if kind == "ask_user":
        return f"? {event['question']}"
    if kind == "compaction":
        before, after = event["tokensBefore"], event["tokensAfter"]
        return f"[context compacted ({event['trigger']}): {before:,} → {after:,} tokens]"
    if kind == "message_discarded":
        # Printed text cannot be taken back: say it does not count.
        if event.get("reason") == "error":
            return "[the text above was cut short by the error below]"
        return "[the text above was cut short and is asked for again]"
    if kind == "notice":
        return f"[{event['level']}] {event['message']}"
    if kind == "hook_result":
        message = f": {event['message']}" if event.get("message") else ""
        return f"[{event['event']} hook {event['outcome']}: {event['command']}]{message}"
    if kind == "command_output":
        # A local slash command's answer (/cost, /help, …) is the whole output.
        return str(event["text"])
    if kind == "subagent_started":
        return f"  ↳ {event['subagentType']} agent started: {event['description']}"
    if kind == "subagent_completed":
        seconds = event["durationMs"] / 1000
        return (
            f"  ↳ agent {event['stopReason']}: {counted(event['turns'], 'model call')}, "
            f"{counted(event['toolCalls'], 'tool call')}, {seconds:.1f} s{_dollars(event)}"
        )
    if kind == "turn_completed":
        error = event.get("error")
        detail = f": {error['message']}" if error else ""
        calls = counted(event["turns"], "model call")
        tokens = _tokens(event.get("usage") or {}, event["turns"])
        return f"\n[{event['stopReason']} after {calls}, {tokens}{_dollars(event)}]{detail}"
    return None


def _tokens(usage: Event, calls: int) -> str:
    """The turn's tokens; servers that send no usage (llama-cpp-python's, some proxies)
    are said to, rather than shown as a turn that cost nothing."""
    if calls and not any(usage.get(k) for k in USAGE_COUNTS):
        return "token counts not reported by the server"
    return f"{usage.get('inputTokens', 0):,} in / {usage.get('outputTokens', 0):,} out tokens"


def _dollars(event: Event) -> str:
    """What a turn or agent cost, when its model's price is known."""
    cost = event.get("costUsd")
    return "" if cost is None else f", ${cost:.4f}"


USAGE_COUNTS = ("inputTokens", "outputTokens", "cacheReadTokens", "cacheWriteTokens")

# What each kind of answer is called where a user reads it (the same words in every client).
ANSWER_WORDS = {
    "allow_once": "Allow once",
    "allow_always": "Always allow",
    "reject_once": "Reject",
    "reject_always": "Always reject",
}
# The keys, the same in every client; each picks the request's option of that kind (a
# plan's options have their own ids: `plan_approve` is the allow_once one).
ANSWER_KEYS = {"y": "allow_once", "a": "allow_always", "n": "reject_once", "d": "reject_always"}
KEEP_PLANNING = "plan_keep_planning"


def option_of_kind(request: Event, kind: str) -> str:
    """The id of the request's option of `kind` (the kind itself for the usual four)."""
    for offered in request.get("options") or ():
        if offered.get("kind") == kind:
            return str(offered.get("optionId"))
    return kind


def answer_words(request: Event, option: str) -> str:
    """The answer as the request names it, with the rule an "always" answer saves
    (`Always allow Edit(a.py)`)."""
    for offered in request.get("options") or ():
        if offered.get("optionId") == option:
            name = str(offered.get("name") or ANSWER_WORDS.get(option, option))
            rule = offered.get("rule")
            return f"{name} {rule}" if rule else name
    return ANSWER_WORDS.get(option, option)


def offered_kinds(request: Event) -> set[str]:
    """The kinds of the request's options (all four when it names none)."""
    offered = {str(o.get("kind")) for o in request.get("options") or ()}
    return offered or set(ANSWER_KEYS.values())


def answer_keys(request: Event) -> str:
    """`[y] Allow once · [a] Always allow Edit(a.py) · …`: the keys and what each answers."""
    offered = offered_kinds(request)
    return " · ".join(
        f"[{key}] {answer_words(request, option_of_kind(request, kind))}"
        for key, kind in ANSWER_KEYS.items()
        if kind in offered
    )


class Answers:
    """How a headless turn answers permission requests and AskUser questions."""

    def permission(self, request: Event) -> str:
        # A plan is rejected (the model stops), not sent back to be asked again.
        return option_of_kind(request, "reject_always" if request.get("plan") else "reject_once")

    def feedback(self, request: Event, option: str) -> str | None:
        """The text that goes with the answer (what to change in a plan sent back)."""
        return None

    def question(self, request: Event) -> str:
        return "(No answer: agentls run has no terminal to ask on. Decide yourself or stop.)"

    def go_on(self, completed: Event) -> bool:
        """After a turn stopped at the turn limit: run another round of model calls?"""
        return False

    def worktree(self, entry: Event) -> str:
        """At the end, for an isolated agent's worktree: `merge`, `discard` or `keep`."""
        return "keep"


class DemoAnswers(Answers):
    def permission(self, request: Event) -> str:
        # A rerun outside the sandbox offers no "always".
        kind = "allow_always" if "allow_always" in offered_kinds(request) else "allow_once"
        return option_of_kind(request, kind)


class NoTerminal(Answers):
    def permission(self, request: Event) -> str:
        sys.stderr.write(
            "\n[No terminal to ask on: rejected. Rerun with --permission-mode acceptEdits "
            "or bypassPermissions.]\n"
        )
        return super().permission(request)


class Terminal(Answers):
    def permission(self, request: Event) -> str:
        keys = answer_keys(request)
        plain = request.get("plan") or request.get("sandboxEscalation")
        asked = request["title"] if plain else f"Allow {request['title']}"
        while True:
            reply = _ask(f"{asked}?  {keys}: ")
            kind = ANSWER_KEYS.get(reply[:1].lower())
            if kind is not None and kind in offered_kinds(request):
                return option_of_kind(request, kind)
            if not reply:
                return super().permission(request)

    def feedback(self, request: Event, option: str) -> str | None:
        if option != KEEP_PLANNING:
            return None
        return _ask("What should change in the plan? ") or None

    def question(self, request: Event) -> str:
        choices = request.get("choices")
        hint = f" ({' / '.join(choices)})" if choices else ""
        return _ask(f"{request['question']}{hint}: ")

    def go_on(self, completed: Event) -> bool:
        calls = counted(completed.get("turns", 0), "model call")
        reply = _ask(f"Reached the turn limit ({calls}). Go on? [y/N]: ")
        return reply[:1].lower() == "y"

    def worktree(self, entry: Event) -> str:
        reply = _ask("[m] Merge into the working tree · [d] Discard · [k] Keep for later: ")
        return {"m": "merge", "d": "discard"}.get(reply[:1].lower(), "keep")


def _ask(prompt: str) -> str:
    sys.stderr.write("\n" + prompt)
    sys.stderr.flush()
    return _read_line().strip()


def _read_line() -> str:
    """A line of stdin, read from its descriptor a byte at a time: a thread left waiting
    here when Ctrl-C ends the run holds none of sys.stdin's locks, which the interpreter
    takes at exit (and would wait for), and nothing past the line is taken."""
    line = bytearray()
    while not line.endswith(b"\n"):
        byte = os.read(sys.stdin.fileno(), 1)
        if not byte:
            break
        line += byte
    return line.decode("utf-8", "replace")


class ProgressLine:
    """What the turn is doing, on one line of a terminal's stderr, redrawn in place."""

    FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"

    def __init__(self, out: TextIO) -> None:
        self._out = out
        self._started = time.monotonic()
        self._doing = "waiting for the model"
        self._tools = 0
        self._frame = 0
        self._shown = False

    def saw(self, event: Event) -> None:
        kind = event.get("type")
        if kind == "tool_call":
            self._tools += 1
            self._doing = event["title"]
        elif kind in ("text_delta", "thinking_delta"):
            self._doing = "writing" if kind == "text_delta" else "thinking"
        elif kind == "permission_request":
            self._doing = "waiting for your answer"
        elif kind == "tool_call_update" and event.get("status") in FINISHED:
            self._doing = "waiting for the model"

    def draw(self) -> None:
        self._frame += 1
        elapsed = time.monotonic() - self._started
        plural = "" if self._tools == 1 else "s"
        tools = f" · {self._tools} tool call{plural}" if self._tools else ""
        spinner = self.FRAMES[self._frame % len(self.FRAMES)]
        write(self._out, f"\r\x1b[K{spinner} {self._doing[:60]} · {elapsed:.0f}s{tools}")
        self._shown = True

    def clear(self) -> None:
        if self._shown:
            write(self._out, "\r\x1b[K")
            self._shown = False
