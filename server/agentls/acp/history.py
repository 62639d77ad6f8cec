"""A session's history as the `session/update`s that rebuild its thread (`session/load`).

Every message comes back, tool calls included, with the kind, title and places they had
when they ran and the result they gave, so a loaded thread reads as the live one did.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import schema as acp

from agentls.acp.updates import (
    ToolContent,
    Update,
    chunk,
    diff_content,
    plan_update,
    text,
    text_content,
    tool_call_start,
)
from agentls.loop.executor import recorded_call_event
from agentls.messages import (
    ContentBlock,
    ImageBlock,
    Message,
    TextBlock,
    ThinkingBlock,
    ToolResultBlock,
    ToolUseBlock,
)
from agentls.tool_values import FileDiff, PlanEntry
from agentls.tools.patch_format import AddFile, PatchSyntaxError, UpdateFile, parse_patch
from agentls.tools.registry import ToolRegistry

USER_CONTEXT = "<userContext>"
# A replayed result keeps its head: the thread shows it, the model already read it all.
RESULT_CHARS = 20_000


def replay(
    display: list[Message], registry: ToolRegistry, cwd: Path, plan: tuple[PlanEntry, ...]
) -> list[Update]:
    """The updates that show `display` (and the plan as it stands) in order."""
    updates: list[Update] = []
    for message in display:
        for block in message.content:
            updates.extend(_block_updates(block, message, registry, cwd))
    if plan:
        updates.append(plan_update(plan))
    return updates


def _block_updates(
    block: ContentBlock, message: Message, registry: ToolRegistry, cwd: Path
) -> list[Update]:
    user = message.role == "user"
    if isinstance(block, TextBlock):
        if user and block.text.startswith(USER_CONTEXT):
            return []  # the editor's context the daemon wrote, not what the user typed
        return [chunk("user" if user else "agent", text(block.text), message.id)]
    if isinstance(block, ImageBlock):
        image = acp.ImageContentBlock(type="image", data=block.data, mime_type=block.media_type)
        return [chunk("user" if user else "agent", image, message.id)]
    if isinstance(block, ThinkingBlock):
        return [chunk("thought", text(block.thinking), message.id)]
    if isinstance(block, ToolUseBlock):
        event = recorded_call_event(registry, block, cwd)
        start = tool_call_start(event, status="in_progress")
        diff = _input_diff(block.input, cwd)
        if diff is not None:
            start.content = [diff_content(diff)]
        elif block.name == "apply_patch":
            start.content = [diff_content(d) for d in _patch_diffs(block.input, cwd)] or None
        return [start]
    if isinstance(block, ToolResultBlock):
        return [_result(block)]
    return []


def _result(block: ToolResultBlock) -> acp.ToolCallProgress:
    if isinstance(block.content, str):
        said = block.content
    else:
        said = "\n".join(part.text for part in block.content if isinstance(part, TextBlock))
    if len(said) > RESULT_CHARS:
        said = said[:RESULT_CHARS] + "\n… (shortened in the replay)"
    content: list[ToolContent] = [text_content(said)] if said else []
    return acp.ToolCallProgress(
        session_update="tool_call_update",
        tool_call_id=block.tool_use_id,
        status="failed" if block.is_error else "completed",
        content=content,
    )


def _patch_diffs(raw: dict[str, Any], cwd: Path) -> list[FileDiff]:
    """What a recorded apply_patch asked for, one diff per file: an added file's text, and
    an update's hunks (their old lines against their new ones)."""
    try:
        sections = parse_patch(str(raw.get("input", "")))
    except PatchSyntaxError:
        return []
    diffs = []
    for section in sections:
        where = str(cwd / section.path)
        if isinstance(section, AddFile):
            diffs.append(FileDiff(where, None, section.text, "add"))
        elif isinstance(section, UpdateFile):
            old = "".join(f"{line}\n" for hunk in section.hunks for line in hunk.old)
            new = "".join(f"{line}\n" for hunk in section.hunks for line in hunk.new)
            if section.move_to is None:
                diffs.append(FileDiff(where, old, new, "update"))
            else:
                diffs.append(FileDiff(str(cwd / section.move_to), old, new, "move", where))
        else:
            diffs.append(FileDiff(where, "", "", "delete"))
    return diffs


def _input_diff(raw: dict[str, Any], cwd: Path) -> FileDiff | None:
    """What a recorded Edit or Write asked for, as a diff of the part it changed (the
    whole files of the time are not kept)."""
    path = raw.get("file_path")
    if not isinstance(path, str):
        return None
    where = str(Path(path) if Path(path).is_absolute() else cwd / path)
    old, new, content = raw.get("old_string"), raw.get("new_string"), raw.get("content")
    if isinstance(old, str) and isinstance(new, str):
        return FileDiff(where, old, new)
    if isinstance(content, str):
        return FileDiff(where, None, content)
    return None
