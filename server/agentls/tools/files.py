"""Read, Write and Edit: the file tools models already know, over the WorkspaceView.

They see the editor's unsaved buffers, never write files directly (the EditSink does),
and refuse to change a file whose current text the model has not read: that is what keeps
an agent from clobbering a user's newer edits. Files keep their own encoding (the
WorkspaceView writes them back byte for byte); binary files are refused, except that Read
shows an image file to the model as an image.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from agentls.images import ImageRefused, image_block, sniff_image
from agentls.plural import counted
from agentls.textfile import BinaryContent, UnencodableText
from agentls.tool_values import FileDiff, Location, ToolKind
from agentls.tools.base import (
    ChangesReadFile,
    PathTool,
    ReadOnlyTool,
    ToolContext,
    ToolError,
    ToolOutput,
    absolute_path,
    display_path,
)
from agentls.tools.file_text import (
    READ_REFUSAL,
    decoded,
    disk_bytes,
    format_numbered,
    missing_file_error,
    read_current_text,
    resolve_in_workspace,
)
from agentls.tools.notebook_format import render_notebook
from agentls.workspace.paths import PathOutsideWorkspace
from agentls.workspace.view import EditRejected

_CHANGE_REFUSAL = "Write and Edit change text files only."


class ReadInput(BaseModel):
    file_path: str = Field(
        description="The file to read: absolute, or relative to the working directory"
    )
    offset: int | None = Field(
        default=None, ge=0, description="The 1-based line number to start reading from"
    )
    limit: int | None = Field(
        default=None, ge=1, description="How many lines to read (default 2000)"
    )


class ReadTool(ReadOnlyTool[ReadInput], PathTool[ReadInput]):
    """Shows a text file with line numbers, as the editor has it."""

    name: str = "Read"
    description: str = (
        "Reads a text file from the workspace. file_path may be absolute or relative to the "
        "working directory. Reads up to 2000 lines from the start by default; for long files "
        "pass offset (1-based line number) and limit. Output is numbered like `cat -n`: the "
        "line number, a tab, then the line; the numbers are not part of the file, so leave "
        "them out of Edit strings. Lines longer than 2000 characters are truncated. If the "
        "file is open in the editor, you see its unsaved text. Read a file before you Edit or "
        "overwrite it. An image file (PNG, JPEG, GIF, WebP) is shown to you as an image; "
        "other binary files are refused. A Jupyter notebook (.ipynb) is shown cell by cell "
        "with each cell's number, id, type, source and text outputs (with offset or limit, "
        "its JSON lines). To list a directory use Glob, or `ls` with Bash."
    )
    input_model: type[BaseModel] = ReadInput
    kind: ToolKind = "read"

    def target(self, args: ReadInput) -> str:
        return args.file_path

    def locations(self, args: ReadInput, cwd: Path) -> list[Location]:
        """The file, at the first line shown."""
        # Location lines count from 0, as LSP's and ACP's do; offset counts from 1.
        line = args.offset - 1 if args.offset else None
        return [Location(str(absolute_path(args.file_path, cwd)), line=line)]

    async def run(self, args: ReadInput, ctx: ToolContext) -> ToolOutput:
        """Show the file's lines (or the image) and remember what the model has now seen."""
        path = resolve_in_workspace(ctx, args.file_path)
        if path in ctx.workspace.documents:
            text = ctx.workspace.read_text(path)
        else:
            data = disk_bytes(ctx, path)
            image = _image_output(data, display_path(path, ctx.cwd))
            if image is not None:
                return image
            text = decoded(data, path, ctx.cwd, READ_REFUSAL)
        ctx.read_cache.record(path, text)
        if text == "":
            return ToolOutput(f"(The file {display_path(path, ctx.cwd)} exists but is empty.)")
        if path.suffix.lower() == ".ipynb" and args.offset is None and args.limit is None:
            notebook = render_notebook(text, display_path(path, ctx.cwd))
            if notebook is not None:
                return ToolOutput(notebook)
        body, truncated = format_numbered(text, args.offset, args.limit)
        return ToolOutput(body, truncated=truncated)


def _image_output(data: bytes, shown: str) -> ToolOutput | None:
    """The image in `data` for the model, a ToolError when it cannot go, None if no image."""
    try:
        info = sniff_image(data)
        if info is None:
            return None
        block = image_block(data, info, shown)
    except ImageRefused as exc:
        raise ToolError(f"Cannot show {shown}: {exc}.") from exc
    size = f"{len(data) / 1024:,.1f} KB"
    return ToolOutput(f"Image {shown} ({info.describe()}, {size}).", images=(block,))


def _check_not_stale(ctx: ToolContext, path: Path, current_text: str) -> None:
    reason = ctx.read_cache.stale_reason(path, current_text)
    if reason is not None:
        raise ToolError(reason)


async def _write(ctx: ToolContext, path: Path, new_text: str) -> FileDiff:
    if ctx.file_writes_refused is not None:
        raise ToolError(ctx.file_writes_refused)
    shown = display_path(path, ctx.cwd)
    if "\x00" in new_text:
        raise ToolError(f"The new text for {shown} contains NUL characters. {_CHANGE_REFUSAL}")
    try:
        ctx.checkpoints.before_write(path)
        edit = await ctx.workspace.write(path, new_text)
    except UnencodableText as exc:
        raise ToolError(
            f"Cannot write {shown}: {exc}. The file keeps its encoding; use characters it "
            "has, or ask the user before converting the file to UTF-8."
        ) from exc
    except BinaryContent as exc:
        raise ToolError(f"{shown} is a binary file ({exc}). {_CHANGE_REFUSAL}") from exc
    except EditRejected as exc:
        raise ToolError(
            f"The editor rejected the change to {shown}: {exc}. Read the file again and retry."
        ) from exc
    except OSError as exc:
        raise ToolError(f"Cannot write {shown}: {exc.strerror}") from exc
    ctx.read_cache.record(path, new_text)
    ctx.checkpoints.written(edit)
    return FileDiff(str(path), edit.old_text, new_text)


def _proposed(
    ctx: ToolContext, file_path: str, change: Callable[[str | None], str]
) -> FileDiff | None:
    """What a write would do to the file, or None when the call would fail anyway."""
    try:
        path = resolve_in_workspace(ctx, file_path)
        old = read_current_text(ctx, path, _CHANGE_REFUSAL) if ctx.workspace.exists(path) else None
        return FileDiff(str(path), old, change(old))
    except (ToolError, PathOutsideWorkspace, OSError):
        return None


def _why_replacement_fails(
    ctx: ToolContext, file_path: str, creates: bool, replace: Callable[[str, str], object]
) -> str | None:
    """Why an Edit or MultiEdit would fail whatever the user answers, by the checks its run
    makes, in their order (so the user is never asked to allow a change that cannot apply):
    the path, a missing file, unreadable or binary text, a stale read, old_string not found
    or not unique. None when it would apply."""
    if ctx.file_writes_refused is not None:
        return ctx.file_writes_refused
    try:
        path = resolve_in_workspace(ctx, file_path)
        _refuse_directory(path, ctx.cwd)
        if not ctx.workspace.exists(path):
            if not creates:
                raise missing_file_error(path, ctx.cwd)
            current = ""
        else:
            current = read_current_text(ctx, path, _CHANGE_REFUSAL)
            _check_not_stale(ctx, path, current)
        replace(current, display_path(path, ctx.cwd))
    except ToolError as exc:
        return str(exc)
    except OSError:
        return None  # the run says what is wrong
    return None


def _refuse_directory(path: Path, cwd: Path) -> None:
    if path.is_dir():
        raise ToolError(f"{display_path(path, cwd)} is a directory, not a file.")


class WriteInput(BaseModel):
    file_path: str = Field(
        description="The file to write: absolute, or relative to the working directory"
    )
    content: str = Field(description="The complete new text of the file")


class WriteTool(ChangesReadFile[WriteInput]):
    """Creates a file or replaces all of its text."""

    name: str = "Write"
    description: str = (
        "Writes a whole file: creates it (with any missing parent directories) or replaces "
        "all of its text. Overwriting an existing file requires that you Read it first, and "
        "again if it changed since. Prefer Edit to change part of an existing file. Do not "
        "create documentation files unless asked."
    )
    input_model: type[BaseModel] = WriteInput
    kind: ToolKind = "edit"

    def target(self, args: WriteInput) -> str:
        return args.file_path

    def proposed_change(self, args: WriteInput, ctx: ToolContext) -> FileDiff | None:
        """The current text (buffer first) and the new content."""
        return _proposed(ctx, args.file_path, lambda _old: args.content)

    def revised_input(self, args: WriteInput, old_text: str | None, accepted: str) -> WriteInput:
        """The same file with the accepted text."""
        return WriteInput(file_path=args.file_path, content=accepted)

    async def run(self, args: WriteInput, ctx: ToolContext) -> ToolOutput:
        """Write the file unless that would clobber text the model has not seen."""
        path = resolve_in_workspace(ctx, args.file_path)
        _refuse_directory(path, ctx.cwd)
        existed = ctx.workspace.exists(path)
        if existed:
            _check_not_stale(ctx, path, read_current_text(ctx, path, _CHANGE_REFUSAL))
        diff = await _write(ctx, path, args.content)
        shown = display_path(path, ctx.cwd)
        message = f"The file {shown} has been overwritten." if existed else f"Created {shown}."
        return ToolOutput(message, diff=diff)


class EditInput(BaseModel):
    file_path: str = Field(
        description="The file to change: absolute, or relative to the working directory"
    )
    old_string: str = Field(description="The exact text to replace")
    new_string: str = Field(description="The text to replace it with (must differ)")
    replace_all: bool = Field(
        default=False, description="Replace every occurrence of old_string (default false)"
    )


def _with_file_line_endings(text: str, args: EditInput) -> tuple[str, str]:
    """old/new strings in the file's CRLF endings when the model sent bare \\n."""
    old, new = args.old_string, args.new_string
    if old not in text and "\r\n" in text and "\n" in old and "\r\n" not in old:
        return old.replace("\n", "\r\n"), new.replace("\n", "\r\n")
    return old, new


def apply_edit(text: str, args: EditInput, shown: str) -> tuple[str, int]:
    """The new text and the number of replacements, or a ToolError saying why not."""
    old, new = _with_file_line_endings(text, args)
    if old == "":
        if text != "":
            raise ToolError(
                f"old_string is empty but {shown} is not; give the exact text to replace, "
                "or use Write to replace the whole file."
            )
        return new, 1
    count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {shown}. It must match the file exactly, including "
            "whitespace and indentation; Read the file to see its current text."
        )
    if count > 1 and not args.replace_all:
        raise ToolError(
            f"Found {count} matches of old_string in {shown}, but replace_all is false. Add "
            "more surrounding context to old_string to make it unique, or set replace_all "
            "to true to replace every occurrence."
        )
    return (text.replace(old, new) if args.replace_all else text.replace(old, new, 1)), count


class EditTool(ChangesReadFile[EditInput]):
    """Replaces exact text in a file the model has read."""

    name: str = "Edit"
    description: str = (
        "Replaces exact text in a file. You must Read the file first, and again if it changed "
        "since. old_string must match the file exactly, including whitespace and indentation; "
        "copy it from the Read output without the line-number prefix. The edit fails when "
        "old_string is not found, or is found more than once: then add surrounding lines to "
        "make it unique, or set replace_all to replace every occurrence (useful for renames). "
        "An empty old_string creates a new file with new_string as its text."
    )
    input_model: type[BaseModel] = EditInput
    kind: ToolKind = "edit"

    def target(self, args: EditInput) -> str:
        return args.file_path

    def proposed_change(self, args: EditInput, ctx: ToolContext) -> FileDiff | None:
        """The current text (buffer first) and the text after the replacement."""
        return _proposed(ctx, args.file_path, lambda old: apply_edit(old or "", args, "")[0])

    def refusal_before_asking(self, args: EditInput, ctx: ToolContext) -> str | None:
        if args.old_string == args.new_string:
            return "No changes to make: old_string and new_string are exactly the same."
        return _why_replacement_fails(
            ctx,
            args.file_path,
            args.old_string == "",
            lambda text, shown: apply_edit(text, args, shown),
        )

    def revised_input(self, args: EditInput, old_text: str | None, accepted: str) -> EditInput:
        """One replacement of the whole reviewed text: it still fails if the file moved on."""
        return EditInput(file_path=args.file_path, old_string=old_text or "", new_string=accepted)

    async def run(self, args: EditInput, ctx: ToolContext) -> ToolOutput:
        """Replace old_string with new_string in the text the model last read."""
        if args.old_string == args.new_string:
            raise ToolError("No changes to make: old_string and new_string are exactly the same.")
        path = resolve_in_workspace(ctx, args.file_path)
        _refuse_directory(path, ctx.cwd)
        shown = display_path(path, ctx.cwd)
        if not ctx.workspace.exists(path):
            if args.old_string != "":
                raise missing_file_error(path, ctx.cwd)
            diff = await _write(ctx, path, args.new_string)
            return ToolOutput(f"Created {shown}.", diff=diff)
        current = read_current_text(ctx, path, _CHANGE_REFUSAL)
        _check_not_stale(ctx, path, current)
        new_text, count = apply_edit(current, args, shown)
        diff = await _write(ctx, path, new_text)
        plural = "" if count == 1 else "s"
        return ToolOutput(
            f"The file {shown} has been updated ({count} replacement{plural}).", diff=diff
        )


class EditStep(BaseModel):
    old_string: str = Field(description="The exact text to replace")
    new_string: str = Field(description="The text to replace it with (must differ)")
    replace_all: bool = Field(default=False, description="Replace every occurrence")


class MultiEditInput(BaseModel):
    file_path: str = Field(
        description="The file to change: absolute, or relative to the working directory"
    )
    edits: list[EditStep] = Field(
        min_length=1,
        description="Replacements applied in order, each to the result of the one before",
    )


def apply_edits(text: str, args: MultiEditInput, shown: str) -> tuple[str, int]:
    """The text after every step, in order, and the replacements made; a ToolError naming
    the step that failed (and then nothing is applied)."""
    total = 0
    for number, step in enumerate(args.edits, 1):
        where = f"Edit {number} of {len(args.edits)}"
        if step.old_string == step.new_string:
            raise ToolError(f"{where}: old_string and new_string are the same. Nothing changed.")
        edit = EditInput(file_path=args.file_path, **step.model_dump())
        try:
            text, count = apply_edit(text, edit, shown)
        except ToolError as exc:
            raise ToolError(f"{where}: {exc} Nothing was changed.") from exc
        total += count
    return text, total


class MultiEditTool(ChangesReadFile[MultiEditInput]):
    """Several replacements in one file, all or none."""

    name: str = "MultiEdit"
    description: str = (
        "Makes several exact-text replacements in one file in one call: the edits apply in "
        "order, each to the text the one before left, and either all of them apply or none "
        "does (the error names the edit that failed). Each edit follows Edit's rules: "
        "old_string must match exactly and once unless replace_all. Read the file first. "
        "Prefer it to several Edit calls on one file. A first edit with an empty old_string "
        "creates a new file."
    )
    input_model: type[BaseModel] = MultiEditInput
    kind: ToolKind = "edit"

    def target(self, args: MultiEditInput) -> str:
        return args.file_path

    def proposed_change(self, args: MultiEditInput, ctx: ToolContext) -> FileDiff | None:
        """The current text (buffer first) and the text after every edit."""
        return _proposed(ctx, args.file_path, lambda old: apply_edits(old or "", args, "")[0])

    def refusal_before_asking(self, args: MultiEditInput, ctx: ToolContext) -> str | None:
        creates = args.edits[0].old_string == ""
        return _why_replacement_fails(
            ctx, args.file_path, creates, lambda text, shown: apply_edits(text, args, shown)
        )

    def revised_input(
        self, args: MultiEditInput, old_text: str | None, accepted: str
    ) -> MultiEditInput:
        """One replacement of the whole reviewed text: it still fails if the file moved on."""
        step = EditStep(old_string=old_text or "", new_string=accepted)
        return MultiEditInput(file_path=args.file_path, edits=[step])

    async def run(self, args: MultiEditInput, ctx: ToolContext) -> ToolOutput:
        path = resolve_in_workspace(ctx, args.file_path)
        _refuse_directory(path, ctx.cwd)
        shown = display_path(path, ctx.cwd)
        if ctx.workspace.exists(path):
            current = read_current_text(ctx, path, _CHANGE_REFUSAL)
            _check_not_stale(ctx, path, current)
        elif args.edits[0].old_string == "":
            current = ""
        else:
            raise missing_file_error(path, ctx.cwd)
        new_text, count = apply_edits(current, args, shown)
        diff = await _write(ctx, path, new_text)
        return ToolOutput(
            f"The file {shown} has been updated ({counted(len(args.edits), 'edit')}, "
            f"{counted(count, 'replacement')}).",
            diff=diff,
        )


# Changes computed from a file's whole text, for tools beyond Write and Edit (NotebookEdit).
Rewrite = Callable[[str], str]


def proposed_rewrite(ctx: ToolContext, file_path: str, change: Rewrite) -> FileDiff | None:
    """What `change` would make of an existing file, or None when the call would fail."""

    def existing(old: str | None) -> str:
        if old is None:
            raise ToolError("missing")
        return change(old)

    return _proposed(ctx, file_path, existing)


async def rewrite_file(ctx: ToolContext, file_path: str, change: Rewrite) -> FileDiff:
    """Apply `change` to an existing file the model has read (and that has not changed
    since), through the same write path as Edit."""
    path = resolve_in_workspace(ctx, file_path)
    _refuse_directory(path, ctx.cwd)
    if not ctx.workspace.exists(path):
        raise missing_file_error(path, ctx.cwd)
    current = read_current_text(ctx, path, _CHANGE_REFUSAL)
    _check_not_stale(ctx, path, current)
    return await _write(ctx, path, change(current))
