"""Transcript records: what a session writes to disk, as typed values with one codec.

Every line of a transcript is one of these records. They are written by `Transcript` and
read back by `load_transcript` only, through `record_to_json` and `record_from_json`, so
the on-disk shape lives in this one module. The JSON keys are camelCase and stable:
transcripts written by earlier versions read back unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, TypeAlias, get_args

from agentls.messages import Message, message_from_dict, message_to_dict
from agentls.tool_values import PlanEntry, PlanPriority, PlanStatus


@dataclass(frozen=True, slots=True)
class SessionStarted:
    """The first line: who the session is and the settings it was opened with."""

    session_id: str
    cwd: str
    provider: str | None = None
    model: str | None = None
    # The session's own agent/newSession params, applied again on resume.
    settings: dict[str, Any] = field(default_factory=dict)
    type: Literal["session"] = "session"


@dataclass(frozen=True, slots=True)
class MessageRecord:
    """One complete message of the history; `copy` marks a re-write after a compaction."""

    message: Message
    turn_id: str | None = None
    copy: bool = False
    type: Literal["message"] = "message"


@dataclass(frozen=True, slots=True)
class TurnEnded:
    """A turn's end, whatever ended it (also an abort or an internal error)."""

    turn_id: str
    stop_reason: str
    turns: int
    error_code: str | None = None
    type: Literal["turn"] = "turn"


@dataclass(frozen=True, slots=True)
class StateSaved:
    """The session's structured data, intent, completed steps and open questions."""

    structured_data: Any = None
    user_intent: str | None = None
    completed_steps: tuple[str, ...] = ()
    pending_questions: tuple[dict[str, Any], ...] = ()
    plan: tuple[PlanEntry, ...] = ()
    type: Literal["state"] = "state"


@dataclass(frozen=True, slots=True)
class CompactBoundary:
    """A compaction: the messages after it (written with `copy`) are the whole history."""

    trigger: str
    tokens_before: int
    tokens_after: int
    steps: tuple[str, ...] = ()
    type: Literal["compact_boundary"] = "compact_boundary"


@dataclass(frozen=True, slots=True)
class TurnBegan:
    """A turn started: what comes after it (state, messages) belongs to it or later ones."""

    turn_id: str
    type: Literal["turn_start"] = "turn_start"


@dataclass(frozen=True, slots=True)
class Rewound:
    """agent/rewind to before `turn_id`. A rewind of the conversation is followed by the
    whole history the model sees from now on (written with `copy`), as a compaction is."""

    turn_id: str
    what: str
    messages_removed: int = 0
    type: Literal["rewind"] = "rewind"

    @property
    def conversation(self) -> bool:
        return self.what != "files"


@dataclass(frozen=True, slots=True)
class HistoryCleared:
    """A /clear: the conversation starts afresh; what came before is neither the model's
    history nor shown on resume, and the session state starts empty."""

    type: Literal["clear"] = "clear"


TranscriptRecord: TypeAlias = (
    SessionStarted
    | MessageRecord
    | TurnEnded
    | StateSaved
    | CompactBoundary
    | TurnBegan
    | Rewound
    | HistoryCleared
)


def record_to_json(record: TranscriptRecord) -> dict[str, Any]:
    """The record as the JSON object written on its line (without the timestamp)."""
    if isinstance(record, SessionStarted):
        return {
            "type": "session",
            "sessionId": record.session_id,
            "cwd": record.cwd,
            "provider": record.provider,
            "model": record.model,
            "settings": record.settings,
        }
    if isinstance(record, MessageRecord):
        out: dict[str, Any] = {
            "type": "message",
            "turnId": record.turn_id,
            "message": message_to_dict(record.message),
        }
        if record.copy:
            out["copy"] = True
        return out
    if isinstance(record, TurnEnded):
        turn: dict[str, Any] = {
            "type": "turn",
            "turnId": record.turn_id,
            "stopReason": record.stop_reason,
            "turns": record.turns,
        }
        if record.error_code is not None:
            turn["errorCode"] = record.error_code
        return turn
    if isinstance(record, StateSaved):
        return {
            "type": "state",
            "data": {
                "structuredData": record.structured_data,
                "userIntent": record.user_intent,
                "completedSteps": list(record.completed_steps),
                "pendingQuestions": list(record.pending_questions),
                "plan": [
                    {"content": e.content, "status": e.status, "priority": e.priority}
                    for e in record.plan
                ],
            },
        }
    if isinstance(record, TurnBegan):
        return {"type": "turn_start", "turnId": record.turn_id}
    if isinstance(record, Rewound):
        return {
            "type": "rewind",
            "turnId": record.turn_id,
            "what": record.what,
            "messagesRemoved": record.messages_removed,
        }
    if isinstance(record, HistoryCleared):
        return {"type": "clear"}
    return {
        "type": "compact_boundary",
        "trigger": record.trigger,
        "tokensBefore": record.tokens_before,
        "tokensAfter": record.tokens_after,
        "steps": list(record.steps),
    }


def record_from_json(data: dict[str, Any]) -> TranscriptRecord | None:
    """The record a line holds; None for a type this version does not know.

    Raises KeyError, TypeError or ValueError for a known type with a broken body.
    """
    kind = data.get("type")
    if kind == "message":
        message = message_from_dict(data["message"])
        return MessageRecord(message, _opt_str(data.get("turnId")), bool(data.get("copy")))
    if kind == "turn":
        return TurnEnded(
            str(data["turnId"]),
            str(data["stopReason"]),
            int(data.get("turns") or 0),
            _opt_str(data.get("errorCode")),
        )
    if kind == "state":
        return _state(data.get("data"))
    if kind == "compact_boundary":
        return CompactBoundary(
            str(data.get("trigger") or "auto"),
            int(data.get("tokensBefore") or 0),
            int(data.get("tokensAfter") or 0),
            tuple(str(s) for s in data.get("steps") or ()),
        )
    if kind == "turn_start":
        return TurnBegan(str(data["turnId"]))
    if kind == "rewind":
        removed = int(data.get("messagesRemoved") or 0)
        return Rewound(str(data["turnId"]), str(data.get("what") or "both"), removed)
    if kind == "clear":
        return HistoryCleared()
    if kind == "session":
        settings = data.get("settings")
        return SessionStarted(
            str(data["sessionId"]),
            str(data.get("cwd") or ""),
            _opt_str(data.get("provider")),
            _opt_str(data.get("model")),
            settings if isinstance(settings, dict) else {},
        )
    return None


def _state(data: Any) -> StateSaved:
    body = data if isinstance(data, dict) else {}
    questions = [q for q in body.get("pendingQuestions") or () if isinstance(q, dict)]
    return StateSaved(
        body.get("structuredData"),
        _opt_str(body.get("userIntent")),
        tuple(str(s) for s in body.get("completedSteps") or ()),
        tuple(questions),
        _plan(body.get("plan")),
    )


def _plan(value: Any) -> tuple[PlanEntry, ...]:
    """A saved plan; entries a hand-edited or older transcript garbled are left out."""
    entries = []
    for item in value if isinstance(value, list) else ():
        if not isinstance(item, dict) or not isinstance(item.get("content"), str):
            continue
        status: Any = item.get("status")
        priority: Any = item.get("priority", "medium")
        if status in get_args(PlanStatus) and priority in get_args(PlanPriority):
            entries.append(PlanEntry(item["content"], status, priority))
    return tuple(entries)


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)
