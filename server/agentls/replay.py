"""Replay a recorded session offline: its transcript becomes a script for the scripted
model, its user messages are sent again, and the tools run again against the current code.

A user's bug report (their transcript) so becomes a reproducible run: `agentls replay ID`
on the command line, `replay_transcript` in a test. Before the first message, the files the
session changed are put back as they were before it first changed them (from its
checkpoints), so a session that edited files replays clean. Permission answers and AskUser answers
are taken from the recorded tool results. What a replay cannot bring back: steering typed
during a turn, and the model's side calls (a compaction's summary); compaction is kept
off so the script stays in step.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agentls.events import AskUserRequest, PermissionRequest, SessionEvent, TurnCompleted
from agentls.messages import Message, TextBlock, ThinkingBlock, ToolResultBlock, ToolUseBlock
from agentls.permissions.asking import PermissionAnswer
from agentls.plural import counted
from agentls.session.checkpoints import CheckpointStore, checkpoints_root
from agentls.session.manager import SessionManager
from agentls.session.store import load_transcript
from agentls.tools.exit_plan_mode import recorded_answer
from agentls.wire import event_payload
from agentls.workspace.view import write_bytes_atomically

USER_CONTEXT = "<userContext>"
REJECTED = ("The user rejected this tool call", "The user reviewed this change and rejected")
ANSWERED = "The user answered: "
# Large enough that no replay compacts: a summary call would take a scripted reply.
NO_COMPACTION_WINDOW = 100_000_000


@dataclass(frozen=True, slots=True)
class Recording:
    """What a transcript holds, as a replay needs it."""

    cwd: Path
    prompts: list[str]
    script: list[dict[str, Any]]
    # Tool call id → its recorded result (text, is_error).
    results: dict[str, tuple[str, bool]]
    settings: dict[str, Any]
    data: Any = None


@dataclass(frozen=True, slots=True)
class Mismatch:
    tool_call_id: str
    recorded: str
    replayed: str


@dataclass(slots=True)
class StartFiles:
    """What putting the session's files back as they began did, paths relative to the replay."""

    restored: list[Path] = field(default_factory=list)
    # Files the session created: not there when it began.
    removed: list[Path] = field(default_factory=list)
    # Files outside the session's directory, or whose content is gone: left as they are.
    skipped: list[tuple[Path, str]] = field(default_factory=list)


@dataclass(slots=True)
class ReplayResult:
    events: list[dict[str, Any]] = field(default_factory=list)
    stop_reasons: list[str] = field(default_factory=list)
    mismatches: list[Mismatch] = field(default_factory=list)
    start_files: StartFiles = field(default_factory=StartFiles)


def read_recording(path: Path) -> Recording:
    """A transcript as prompts, model replies and tool results (ValueError if unreadable)."""
    loaded = load_transcript(path)
    prompts: list[str] = []
    script: list[dict[str, Any]] = []
    results: dict[str, tuple[str, bool]] = {}
    for message in loaded.display:
        if message.role == "assistant":
            script.append(script_entry(message))
            continue
        for block in message.content:
            if isinstance(block, ToolResultBlock):
                results[block.tool_use_id] = (block.text(), block.is_error)
        prompt = _prompt_of(message)
        if prompt is not None:
            prompts.append(prompt)
    return Recording(
        Path(loaded.meta.cwd),
        prompts,
        script,
        results,
        loaded.overrides,
        loaded.state.structured_data,
    )


def script_entry(message: Message) -> dict[str, Any]:
    """One assistant message as the scripted model's entry that streams it again."""
    entry: dict[str, Any] = {}
    text = "".join(b.text for b in message.content if isinstance(b, TextBlock))
    thinking = [b for b in message.content if isinstance(b, ThinkingBlock)]
    calls = [b for b in message.content if isinstance(b, ToolUseBlock)]
    if thinking:
        entry["thinking"] = "".join(b.thinking for b in thinking)
        entry["signature"] = thinking[0].signature or "replayed"
    if text:
        entry["text"] = text
    if calls:
        entry["tool_calls"] = [{"id": c.id, "name": c.name, "input": c.input} for c in calls]
    return entry


def _prompt_of(message: Message) -> str | None:
    """The user's words in a message they sent (its first block is the user context)."""
    texts = [b.text for b in message.content if isinstance(b, TextBlock)]
    if len(texts) >= 2 and texts[0].startswith(USER_CONTEXT):
        return texts[1]
    return None


def restore_start_files(transcript: Path, recorded_cwd: Path, cwd: Path) -> StartFiles:
    """The files the session changed, in `cwd`, back to how they were before it first
    changed them; a file outside the session's directory is left alone."""
    # A transcript lives in <home>/sessions/; the store needs home only to watch Bash.
    store = CheckpointStore(checkpoints_root(transcript), transcript.parent.parent)
    roots = (recorded_cwd, recorded_cwd.resolve())
    done = StartFiles()
    for original, blob in store.first_befores().items():
        relative = _relative_to_any(original, roots)
        if relative is None:
            done.skipped.append((original, "outside the session's directory"))
            continue
        target = cwd / relative
        if not target.parent.resolve().is_relative_to(cwd.resolve()):
            # A symlinked folder in the copy: restoring would write outside the replay.
            done.skipped.append((relative, "a symbolic link leads outside the replay"))
            continue
        try:
            data = store.content(blob)
            if data is not None:
                write_bytes_atomically(target, data)
                done.restored.append(relative)
            elif target.exists() or target.is_symlink():
                target.unlink()
                done.removed.append(relative)
        except OSError as exc:
            done.skipped.append((relative, str(exc)))
    return done


def start_files_summary(done: StartFiles) -> str:
    """One line per thing a user should know about the files the replay began with."""
    lines = []
    if done.restored or done.removed:
        changed = counted(len(done.restored) + len(done.removed), "file")
        lines.append(f"{changed} the session changed set back as they were when it began\n")
    lines.extend(f"{path}: left as it is ({why})\n" for path, why in done.skipped)
    return "".join(lines)


def _relative_to_any(path: Path, roots: tuple[Path, ...]) -> Path | None:
    for root in roots:
        if path.is_relative_to(root):
            return path.relative_to(root)
    return None


async def replay_transcript(
    path: Path,
    cwd: Path,
    on_event: Callable[[dict[str, Any]], None] | None = None,
    restore_files: bool = True,
) -> ReplayResult:
    """Run a recorded session again in `cwd` on the scripted model; what happened, and the
    tool results that came out differently from the recording.

    With `restore_files`, the files the session changed start as they were when it began;
    never in the session's own directory, whose files are the user's.
    """
    recording = await asyncio.to_thread(read_recording, path)
    result = ReplayResult()
    if restore_files and cwd.resolve() != recording.cwd.resolve():
        result.start_files = await asyncio.to_thread(restore_start_files, path, recording.cwd, cwd)
    ended: asyncio.Queue[str] = asyncio.Queue()
    manager: SessionManager

    def deliver(envelope: SessionEvent) -> None:
        payload = event_payload(envelope)
        result.events.append(payload)
        if on_event is not None:
            on_event(payload)
        event = envelope.event
        session = manager.get(envelope.session_id)
        if isinstance(event, PermissionRequest):
            recorded = recording.results.get(event.tool_call_id, ("", False))[0]
            session.answers.respond_permission(
                event.request_id, _answer_as_recorded(event, recorded)
            )
        elif isinstance(event, AskUserRequest):
            recorded = recording.results.get(event.tool_call_id, ("", False))[0]
            session.answers.respond_ask_user(event.request_id, recorded.removeprefix(ANSWERED))
        elif isinstance(event, TurnCompleted):
            result.stop_reasons.append(event.stop_reason)
            ended.put_nowait(event.stop_reason)

    manager = SessionManager(deliver)
    overrides = {
        **{k: v for k, v in recording.settings.items() if k not in ("script", "requestLog")},
        "provider": "scripted",
        "script": recording.script,
        "contextWindow": NO_COMPACTION_WINDOW,
    }
    session = await manager.create(cwd, overrides)
    try:
        for number, prompt in enumerate(recording.prompts):
            data = recording.data if number == 0 else None
            session.submit(prompt, data=data)
            await ended.get()
    finally:
        await manager.close_all()
    result.mismatches = _compare(recording.results, result.events)
    return result


def _compare(recorded: dict[str, tuple[str, bool]], events: list[dict[str, Any]]) -> list[Mismatch]:
    replayed = {
        e["toolCallId"]: e.get("content") or ""
        for e in events
        if e["type"] == "tool_call_update" and e["status"] not in ("pending", "in_progress")
    }
    return [
        Mismatch(call_id, text, replayed.get(call_id, "(not called)"))
        for call_id, (text, _is_error) in recorded.items()
        if replayed.get(call_id) != text
    ]


def script_jsonl(recording: Recording) -> str:
    """The scripted model's script of a recording, one entry per line."""
    return "".join(json.dumps(entry, ensure_ascii=False) + "\n" for entry in recording.script)


# Not copied into a replay's scratch copy of the project: big, and no tool needs them.
SKIPPED = (".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".tox")


def scratch_copy(source: Path, into: Path) -> Path:
    """A copy of the project to replay in, so its edits and commands touch nothing real."""
    import shutil

    target = into / (source.name or "project")
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True, ignore=shutil.ignore_patterns(*SKIPPED))
    else:
        target.mkdir(parents=True)
    return target


def _answer_as_recorded(request: PermissionRequest, recorded: str) -> PermissionAnswer:
    """The answer that gives the recorded result again: a plan's (ExitPlanMode) is read
    from its result's words, any other call was allowed or rejected."""
    if request.plan is not None:
        option, feedback = recorded_answer(recorded)
        return PermissionAnswer(option, feedback)
    return PermissionAnswer("reject_once" if recorded.startswith(REJECTED) else "allow_once")
