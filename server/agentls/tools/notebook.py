"""NotebookEdit: replace, insert or delete one cell of a Jupyter notebook.

It edits the notebook's JSON (tools/notebook_format.py) and writes it through the same
path as Edit: the file must have been read and be unchanged since, the write goes to the
editor's buffer or the disk, and the permission request carries the whole-file diff for
review.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agentls.tool_values import FileDiff, ToolKind
from agentls.tools.base import ChangesReadFile, ToolContext, ToolError, ToolOutput, display_path
from agentls.tools.file_text import resolve_in_workspace
from agentls.tools.files import proposed_rewrite, rewrite_file
from agentls.tools.notebook_format import (
    CellType,
    EditMode,
    NotebookEdit,
    edit_notebook,
    parse_notebook,
)


class NotebookEditInput(BaseModel):
    notebook_path: str = Field(
        description="The .ipynb file: absolute, or relative to the working directory"
    )
    cell_id: str | None = Field(
        default=None,
        description="The id of the cell to replace or delete; with insert, the new cell goes "
        "after it",
    )
    cell_number: int | None = Field(
        default=None,
        ge=0,
        description="Instead of cell_id: the 0-based number of the cell; with insert, the "
        "number the new cell gets",
    )
    new_source: str = Field(description="The cell's new source (ignored by delete)")
    cell_type: CellType | None = Field(
        default=None,
        description="code or markdown: required to insert; with replace, changes the type",
    )
    edit_mode: EditMode = Field(
        default="replace", description="replace (default), insert or delete"
    )

    def edit(self) -> NotebookEdit:
        return NotebookEdit(
            self.edit_mode, self.new_source, self.cell_id, self.cell_number, self.cell_type
        )


class ReviewedNotebookEdit(NotebookEditInput):
    """A call whose change the user edited in review: the file becomes `reviewed_text`.
    Only the executor makes one (the model's input never validates to this class)."""

    reviewed_text: str


def _require_notebook(path: str) -> None:
    if Path(path).suffix.lower() != ".ipynb":
        raise ToolError(f"{path} is not a Jupyter notebook (.ipynb); use Edit for other files.")


class NotebookEditTool(ChangesReadFile[NotebookEditInput]):
    """Changes one cell of a notebook the model has read."""

    name: str = "NotebookEdit"
    description: str = (
        "Changes one cell of a Jupyter notebook (.ipynb, nbformat 4). Read the notebook "
        "first: Read shows each cell's number and id. Name the cell by cell_id or by "
        "cell_number (0-based). edit_mode replace (default) sets the cell's source, and "
        "its type when cell_type is given; a replaced code cell loses its outputs and "
        "execution count. insert adds a new cell of cell_type (required) after cell_id, "
        "at cell_number, or at the start when neither is given. delete removes the cell. "
        "The rest of the file is kept as it was."
    )
    input_model: type[BaseModel] = NotebookEditInput
    kind: ToolKind = "edit"

    def target(self, args: NotebookEditInput) -> str:
        return args.notebook_path

    def proposed_change(self, args: NotebookEditInput, ctx: ToolContext) -> FileDiff | None:
        """The notebook's JSON now and after the edit."""
        if Path(args.notebook_path).suffix.lower() != ".ipynb":
            return None
        return proposed_rewrite(
            ctx, args.notebook_path, lambda old: edit_notebook(old, args.edit(), "")[0]
        )

    def revised_input(
        self, args: NotebookEditInput, old_text: str | None, accepted: str
    ) -> ReviewedNotebookEdit:
        """The call, leaving the text the user accepted in the file instead."""
        return ReviewedNotebookEdit(**args.model_dump(), reviewed_text=accepted)

    async def run(self, args: NotebookEditInput, ctx: ToolContext) -> ToolOutput:
        _require_notebook(args.notebook_path)
        shown = display_path(resolve_in_workspace(ctx, args.notebook_path), ctx.cwd)
        done: list[str] = []

        def change(text: str) -> str:
            if isinstance(args, ReviewedNotebookEdit):
                parse_notebook(args.reviewed_text, f"The reviewed text of {shown}")
                done.append(f"Wrote the reviewed notebook {shown}.")
                return args.reviewed_text
            new_text, message = edit_notebook(text, args.edit(), shown)
            done.append(message)
            return new_text

        diff = await rewrite_file(ctx, args.notebook_path, change)
        return ToolOutput(done[0], diff=diff)
