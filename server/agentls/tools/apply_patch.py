"""apply_patch: Codex's patch format as a tool, one reviewed change across several files.

The whole patch is planned before anything is written: every path checked against the
workspace, every hunk located, every new text computed. A patch that does not apply
changes nothing, and its error names the file, the hunk and why. The plan then goes
through the write lane as one change (see `agentls.workspace.operations`).

Reading first is not required (models trained on this format look at files through the
shell): an Update's context lines prove it knows the text where it changes, and it applies
to the file as it is now, so changes elsewhere survive. A Delete or a Move of a file the
model read, which changed since, is refused: that would throw away text it has not seen.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path

from pydantic import BaseModel, Field

from agentls.plural import counted
from agentls.textfile import BinaryContent, UnencodableText
from agentls.tool_values import FileDiff, Location, ToolKind
from agentls.tools.base import (
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    absolute_path,
    display_path,
)
from agentls.tools.file_text import read_current_text
from agentls.tools.patch_apply import HunkFailed, apply_hunks
from agentls.tools.patch_format import (
    AddFile,
    DeleteFile,
    FileSection,
    PatchSyntaxError,
    UpdateFile,
    parse_patch,
)
from agentls.workspace.operations import PlannedChange, apply_operations, prepare
from agentls.workspace.paths import PathOutsideWorkspace
from agentls.workspace.view import EditRejected

_REFUSAL = "apply_patch changes text files only."
_NOTHING = "The patch was not applied; no file was changed."
_LETTERS = {"add": "A", "update": "M", "delete": "D", "move": "R"}

DESCRIPTION = """\
Edits files with a patch: one call can add, change, delete and rename several files, and \
either all of it applies or none of it. The input is the whole patch:

*** Begin Patch
*** Add File: path/new.py
+every line of the new file, each starting with +
*** Update File: path/app.py
*** Move to: path/main.py   (optional: renames the file)
@@ def greet():
 context line (a space, then the line as it is)
-removed line
+added line
*** Delete File: path/old.txt
*** End Patch

In an Update, each hunk starts with @@, optionally followed by a line of the file (a def \
or class) the change lies after. Show 3 lines of context above and below each change; if \
that is not unique in the file, add an @@ line naming the function or class, or several \
@@ lines in a row to narrow it further. Hunks go in file order. End a hunk with \
*** End of File when it changes the end of the file. Paths are relative to the working \
directory. Context and removed lines must match the file (whitespace at line ends is \
forgiven); read the file first if you are not sure of its text."""


class ApplyPatchInput(BaseModel):
    input: str = Field(description="The entire patch, from *** Begin Patch to *** End Patch")


@dataclass(frozen=True, slots=True)
class _Planned:
    change: PlannedChange
    diff: FileDiff


class ApplyPatchTool(Tool[ApplyPatchInput]):
    """Several files added, changed, deleted or moved as one change."""

    name: str = "apply_patch"
    description: str = DESCRIPTION
    input_model: type[BaseModel] = ApplyPatchInput
    kind: ToolKind = "edit"

    def title(self, args: ApplyPatchInput) -> str:
        paths = _paths(args)
        if not paths:
            return self.name
        shown = ", ".join(paths[:3])
        more = f" and {counted(len(paths) - 3, 'more file')}" if len(paths) > 3 else ""
        return f"Patch {shown}{more}"

    def locations(self, args: ApplyPatchInput, cwd: Path) -> list[Location]:
        return [Location(str(absolute_path(path, cwd))) for path in _paths(args)]

    def rule_content(self, args: ApplyPatchInput, cwd: Path) -> str | None:
        contents = self.rule_contents(args, cwd)
        return contents[0] if len(contents) == 1 else None

    def rule_contents(self, args: ApplyPatchInput, cwd: Path) -> tuple[str | None, ...]:
        """Every path the patch touches (a move's both), as Edit rules see paths."""
        paths = _paths(args)
        return tuple(display_path(absolute_path(p, cwd), cwd) for p in paths) or (None,)

    def refusal_before_asking(self, args: ApplyPatchInput, ctx: ToolContext) -> str | None:
        try:
            plan(args.input, ctx)
        except ToolError as exc:
            return str(exc)
        return None

    def proposed_changes(
        self, args: ApplyPatchInput, ctx: ToolContext
    ) -> tuple[FileDiff, ...] | None:
        """Every file's text now (buffer first) and after the patch."""
        try:
            return tuple(p.diff for p in plan(args.input, ctx))
        except ToolError:
            return None

    async def run(self, args: ApplyPatchInput, ctx: ToolContext) -> ToolOutput:
        """Plan the whole patch against the files as they are now, then apply it at once."""
        planned = plan(args.input, ctx)
        changes = [p.change for p in planned]
        try:
            operations = prepare(ctx.workspace, changes)
            for change in changes:
                ctx.checkpoints.before_write(change.path)
                if change.move_to is not None:
                    ctx.checkpoints.before_write(change.move_to)
            await apply_operations(ctx.workspace, operations)
        except UnencodableText as exc:
            raise ToolError(f"{_NOTHING} A file cannot hold the new text: {exc}.") from exc
        except EditRejected as exc:
            raise ToolError(f"The editor rejected the patch: {exc}. Read the files again.") from exc
        except OSError as exc:
            raise ToolError(f"{_NOTHING} Cannot write {exc.filename}: {exc.strerror}") from exc
        for op in operations:
            if op.kind == "delete":
                ctx.checkpoints.deleted(op.edit.path)
                continue
            ctx.read_cache.record(op.target, op.edit.new_text)
            ctx.checkpoints.written(replace(op.edit, path=op.target))
            if op.kind == "move":
                ctx.checkpoints.deleted(op.edit.path)
        diffs = tuple(p.diff for p in planned)
        return ToolOutput(
            _summary(planned, ctx.cwd),
            diff=diffs[0] if len(diffs) == 1 else None,
            diffs=diffs,
        )


def _paths(args: ApplyPatchInput) -> list[str]:
    """The paths the patch names, a move's destination after its source; [] if unparsable."""
    try:
        sections = parse_patch(args.input)
    except PatchSyntaxError:
        return []
    paths: list[str] = []
    for section in sections:
        paths.append(section.path)
        if isinstance(section, UpdateFile) and section.move_to is not None:
            paths.append(section.move_to)
    return paths


def _summary(planned: list[_Planned], cwd: Path) -> str:
    lines = [f"Applied the patch: {counted(len(planned), 'file')} changed."]
    for p in planned:
        shown = display_path(p.change.path, cwd)
        if p.change.move_to is not None:
            shown += f" → {display_path(p.change.move_to, cwd)}"
        lines.append(f"{_LETTERS[p.change.kind]} {shown}")
    return "\n".join(lines)


def plan(patch: str, ctx: ToolContext) -> list[_Planned]:
    """Every file's change, computed from the files as they are now; a ToolError naming
    the file and hunk when any part does not apply (then nothing is written)."""
    if ctx.file_writes_refused is not None:
        raise ToolError(f"{_NOTHING} {ctx.file_writes_refused}")
    try:
        sections = parse_patch(patch)
    except PatchSyntaxError as exc:
        raise ToolError(f"{_NOTHING} The patch is malformed: {exc}") from exc
    planned: list[_Planned] = []
    seen: set[Path] = set()
    for section in sections:
        try:
            item = _plan_section(section, ctx)
        except ToolError as exc:
            raise ToolError(
                f"{_NOTHING} {section.path} (patch line {section.line}): {exc}"
            ) from exc
        for path in (item.change.path, item.change.move_to):
            if path is None:
                continue
            if path in seen:
                raise ToolError(
                    f"{_NOTHING} {display_path(path, ctx.cwd)} appears twice in the patch; "
                    "put all of a file's hunks under one *** Update File."
                )
            seen.add(path)
        planned.append(item)
    return planned


def _plan_section(section: FileSection, ctx: ToolContext) -> _Planned:
    path = _resolve(section.path, ctx)
    if path.is_dir():
        raise ToolError("it is a directory, not a file.")
    exists = ctx.workspace.exists(path)
    if isinstance(section, AddFile):
        if exists:
            raise ToolError(
                "the file already exists (Add File creates new files only; use Update File)."
            )
        _check_text(section.text)
        return _Planned(
            PlannedChange("add", path, section.text), FileDiff(str(path), None, section.text, "add")
        )
    if not exists:
        raise ToolError("the file does not exist.")
    current = _current_text(ctx, path)
    if isinstance(section, DeleteFile):
        _check_unseen_changes(ctx, path, current)
        diff = FileDiff(str(path), current, "", "delete")
        return _Planned(PlannedChange("delete", path), diff)
    return _plan_update(section, ctx, path, current)


def _plan_update(section: UpdateFile, ctx: ToolContext, path: Path, current: str) -> _Planned:
    try:
        new_text = apply_hunks(current, section.hunks)
    except HunkFailed as exc:
        raise ToolError(str(exc)) from exc
    _check_text(new_text)
    if section.move_to is None:
        diff = FileDiff(str(path), current, new_text, "update")
        return _Planned(PlannedChange("update", path, new_text), diff)
    target = _resolve(section.move_to, ctx)
    if target != path and (ctx.workspace.exists(target) or target.is_dir()):
        raise ToolError(f"Move to: {section.move_to} already exists.")
    _check_unseen_changes(ctx, path, current)
    diff = FileDiff(str(target), current, new_text, "move", moved_from=str(path))
    return _Planned(PlannedChange("move", path, new_text, target), diff)


def _resolve(raw: str, ctx: ToolContext) -> Path:
    try:
        return ctx.workspace.policy.resolve(raw, ctx.cwd)
    except PathOutsideWorkspace as exc:
        raise ToolError(str(exc)) from exc


def _current_text(ctx: ToolContext, path: Path) -> str:
    try:
        return read_current_text(ctx, path, _REFUSAL)
    except BinaryContent as exc:
        raise ToolError(f"it is a binary file ({exc}). {_REFUSAL}") from exc


def _check_text(text: str) -> None:
    if "\x00" in text:
        raise ToolError(f"the new text contains NUL characters. {_REFUSAL}")


def _check_unseen_changes(ctx: ToolContext, path: Path, current: str) -> None:
    """A file the model read must not have changed since it is deleted or moved."""
    if ctx.read_cache.has_read(path):
        reason = ctx.read_cache.stale_reason(path, current)
        if reason is not None:
            raise ToolError(reason)
