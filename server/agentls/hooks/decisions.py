"""What a hook's exit code and output mean, per event, as Claude Code defines them.

Exit 0 is success: stdout that is a JSON object may carry a decision; otherwise, for
UserPromptSubmit and SessionStart, stdout is context for the model. Exit 2 blocks, with
stderr as the reason, where the event can be blocked. Any other exit, a hook that cannot
start, and a timeout are errors that block nothing.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from agentls.hooks.runner import HookRun
from agentls.names import HookEvent

Outcome = Literal["success", "blocked", "error", "timeout"]
# Events whose hooks may block what is about to happen (exit 2, or a "block" decision).
_BLOCKABLE: frozenset[HookEvent] = frozenset(
    {"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SubagentStop"}
)
# Events whose plain stdout is context for the model.
_CONTEXT_EVENTS: frozenset[HookEvent] = frozenset({"UserPromptSubmit", "SessionStart"})
MESSAGE_LIMIT = 2_000


@dataclass(frozen=True, slots=True)
class HookReply:
    """One run read for its event."""

    run: HookRun
    outcome: Outcome
    # stdout, when it is a JSON object.
    output: dict[str, Any] | None
    # Why it blocked (stderr for exit 2, else the JSON's reason), or what went wrong.
    reason: str | None = None

    def specific(self, key: str) -> Any:
        """A field of `hookSpecificOutput`."""
        specific = (self.output or {}).get("hookSpecificOutput")
        return specific.get(key) if isinstance(specific, dict) else None

    def context(self, event: HookEvent) -> str | None:
        """Text for the model: `additionalContext`, or plain stdout where the event takes it."""
        extra = self.specific("additionalContext")
        if isinstance(extra, str) and extra.strip():
            return extra.strip()
        if self.output is None and self.outcome == "success" and event in _CONTEXT_EVENTS:
            return self.run.stdout.strip() or None
        return None

    def message(self) -> str | None:
        """What clients are shown, if anything: the reason, the hook's systemMessage, or
        its plain output."""
        system = (self.output or {}).get("systemMessage")
        text = self.reason or (system if isinstance(system, str) else None)
        if text is None and self.output is None:
            text = self.run.stdout
        text = (text or "").strip()
        if not text:
            return None
        return text if len(text) <= MESSAGE_LIMIT else text[:MESSAGE_LIMIT] + "…"

    def visible(self) -> bool:
        """Quiet on a plain success: shown only when it blocked, failed or said something."""
        return self.outcome != "success" or bool(self.run.stdout.strip())


def read_run(run: HookRun, event: HookEvent) -> HookReply:
    """A run's outcome for `event`, with its JSON output and reason."""
    if run.timed_out:
        return HookReply(run, "timeout", None, run.stderr)
    if run.exit_code == 2:
        reason = run.stderr.strip() or f"A {event} hook exited with code 2."
        if event in _BLOCKABLE:
            return HookReply(run, "blocked", None, reason)
        return HookReply(run, "error", None, f"{reason} (a {event} hook cannot block)")
    if run.exit_code != 0:
        stated = run.stderr.strip() or run.stdout.strip()
        code = "it could not start" if run.exit_code is None else f"exit code {run.exit_code}"
        return HookReply(run, "error", None, f"{stated} ({code})" if stated else code.capitalize())
    output = _json_object(run.stdout)
    blocked = _blocking_reason(output, event) if output is not None else None
    if blocked is not None and event in _BLOCKABLE:
        return HookReply(run, "blocked", output, blocked)
    return HookReply(run, "success", output)


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _blocking_reason(output: dict[str, Any], event: HookEvent) -> str | None:
    """The reason of a JSON "block" (or a PreToolUse "deny"), else None."""
    decision = output.get("decision")
    if event == "PreToolUse":
        specific = output.get("hookSpecificOutput")
        permission = specific.get("permissionDecision") if isinstance(specific, dict) else None
        if permission == "deny" or (permission is None and decision == "block"):
            stated = (
                specific.get("permissionDecisionReason") if isinstance(specific, dict) else None
            )
            return (
                _text(stated)
                or _text(output.get("reason"))
                or "A PreToolUse hook denied this call."
            )
        return None
    if decision == "block":
        return _text(output.get("reason")) or f"A {event} hook blocked this."
    return None


def _text(value: Any) -> str | None:
    return value.strip() if isinstance(value, str) and value.strip() else None


def first_block(replies: Sequence[HookReply]) -> str | None:
    """The reasons of the replies that blocked, joined; None when none did."""
    reasons = [r.reason or "" for r in replies if r.outcome == "blocked"]
    return "\n".join(reasons) if reasons else None


def contexts(replies: Sequence[HookReply], event: HookEvent) -> list[str]:
    """The context the replies add for the model, in settings order."""
    return [text for reply in replies if (text := reply.context(event)) is not None]


@dataclass(frozen=True, slots=True)
class ToolVerdict:
    """The PreToolUse hooks' word on one call: a decision (deny over ask over allow), its
    reason, and an input to run instead."""

    behavior: Literal["allow", "deny", "ask"] | None = None
    reason: str = ""
    updated_input: dict[str, Any] | None = None


def tool_verdict(replies: Sequence[HookReply]) -> ToolVerdict:
    """Every PreToolUse reply folded into one verdict; the strictest decision wins."""
    blocked = first_block(replies)
    if blocked is not None:
        return ToolVerdict("deny", blocked)
    verdict = ToolVerdict()
    for reply in replies:
        decision = _permission_decision(reply)
        updated = reply.specific("updatedInput")
        if verdict.updated_input is None and isinstance(updated, dict):
            verdict = ToolVerdict(verdict.behavior, verdict.reason, updated)
        if decision is not None and _RANK[decision] > _RANK.get(verdict.behavior or "", 0):
            stated = _text(reply.specific("permissionDecisionReason")) or _text(
                (reply.output or {}).get("reason")
            )
            verdict = ToolVerdict(decision, stated or "", verdict.updated_input)
    return verdict


_RANK = {"allow": 1, "ask": 2, "deny": 3}


def _permission_decision(reply: HookReply) -> Literal["allow", "ask"] | None:
    decision = reply.specific("permissionDecision")
    if decision == "ask":
        return "ask"
    if decision == "allow":
        return "allow"
    if decision is None and (reply.output or {}).get("decision") == "approve":
        return "allow"
    return None
