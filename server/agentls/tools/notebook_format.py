"""Jupyter notebooks (nbformat 4) as plain JSON: shown to the model cell by cell, edited
cell by cell, and written back the way the file was written.

Jupyter writes a notebook as `json.dumps(nb, indent=1, sort_keys=True,
ensure_ascii=False)` plus a newline; other tools choose other indents. A notebook is
parsed with its key order kept and dumped again with the file's own indent, separators,
escaping and final newline, so every cell an edit does not touch keeps its bytes. No
nbformat dependency: the structure an edit needs is small and stable.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass
from typing import Any, Literal

from agentls.plural import counted
from agentls.tools.base import ToolError

CellType = Literal["code", "markdown", "raw"]
EditMode = Literal["replace", "insert", "delete"]
MAX_OUTPUT_CHARS = 4_000
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
_NON_ASCII_ESCAPE = re.compile(r"\\u(?!00[0-7])[0-9a-fA-F]{4}")


def parse_notebook(text: str, shown: str) -> dict[str, Any]:
    """The notebook's JSON, key order kept; a ToolError unless it is nbformat 4."""
    try:
        notebook = json.loads(text)
    except ValueError as exc:
        raise ToolError(f"{shown} is not valid notebook JSON: {exc}.") from exc
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise ToolError(f"{shown} is not a Jupyter notebook: it has no list of cells.")
    if notebook.get("nbformat") != 4:
        raise ToolError(
            f"{shown} is nbformat {notebook.get('nbformat')}; only nbformat 4 notebooks can "
            "be edited (convert it with `jupyter nbconvert --to notebook`)."
        )
    return notebook


def has_cell_ids(notebook: dict[str, Any]) -> bool:
    """Whether cells carry ids (nbformat 4.5 and later)."""
    minor = notebook.get("nbformat_minor")
    return isinstance(minor, int) and minor >= 5


@dataclass(frozen=True, slots=True)
class JsonStyle:
    """How a notebook file was written, to write it back the same way."""

    indent: int | str | None
    separators: tuple[str, str]
    ensure_ascii: bool
    final_newline: bool

    @classmethod
    def of(cls, text: str) -> JsonStyle:
        lines = text.split("\n", 2)
        indent: int | str | None = None
        if len(lines) > 1:
            second = lines[1]
            lead = second[: len(second) - len(second.lstrip(" \t"))]
            indent = len(lead) if lead.strip("\t") == lead else lead
        # json.dumps's own separators: (",", ": ") with an indent, (", ", ": ") without.
        separators = (",", ": ") if indent is not None else (", ", ": ")
        if indent is None and '": ' not in text:
            separators = (",", ":")
        # Jupyter writes characters as they are; a file holding \\u escapes of non-ASCII
        # characters (and none of them raw) was written with escapes.
        escaped = text.isascii() and _NON_ASCII_ESCAPE.search(text) is not None
        return cls(indent, separators, escaped, text.endswith("\n"))

    def dump(self, notebook: dict[str, Any]) -> str:
        text = json.dumps(
            notebook,
            indent=self.indent,
            separators=self.separators,
            ensure_ascii=self.ensure_ascii,
        )
        return text + "\n" if self.final_newline else text


def source_text(source: Any) -> str:
    """A cell's source (a string, or a list of lines as Jupyter writes it) as one string."""
    return "".join(source) if isinstance(source, list) else str(source or "")


def _source_like(original: Any, text: str) -> str | list[str]:
    """`text` in the form the cell had: a list of lines (Jupyter) or one string."""
    if isinstance(original, str):
        return text
    return text.splitlines(keepends=True)


@dataclass(frozen=True, slots=True)
class NotebookEdit:
    """One cell edit, as NotebookEdit's input gives it."""

    edit_mode: EditMode
    new_source: str
    cell_id: str | None = None
    cell_number: int | None = None
    cell_type: CellType | None = None


def _cell_label(cell: dict[str, Any], number: int) -> str:
    cell_id = cell.get("id")
    return f"{cell_id} (number {number})" if cell_id else f"number {number}"


def _index_of_id(cells: list[Any], cell_id: str, shown: str) -> int:
    for index, cell in enumerate(cells):
        if isinstance(cell, dict) and cell.get("id") == cell_id:
            return index
    ids = [str(c.get("id")) for c in cells if isinstance(c, dict) and c.get("id")]
    listed = ", ".join(ids[:30]) + (" …" if len(ids) > 30 else "")
    known = f"Its cell ids: {listed}." if ids else "Its cells have no ids; use cell_number."
    raise ToolError(f"No cell with id {cell_id!r} in {shown}. {known} Read it to see them.")


def _target(cells: list[Any], edit: NotebookEdit, shown: str) -> int:
    """The index of the cell to replace or delete, or where to insert a new one."""
    if edit.cell_id is not None and edit.cell_number is not None:
        raise ToolError("Give cell_id or cell_number, not both.")
    inserting = edit.edit_mode == "insert"
    if edit.cell_id is not None:
        index = _index_of_id(cells, edit.cell_id, shown)
        return index + 1 if inserting else index
    if edit.cell_number is not None:
        limit = len(cells) if inserting else len(cells) - 1
        if edit.cell_number > limit:
            end = ", and a new cell may go at the end" if inserting else ""
            raise ToolError(
                f"cell_number {edit.cell_number} is out of range: {shown} has {len(cells)} "
                f"cells (numbered from 0{end})."
            )
        return edit.cell_number
    if inserting:
        return 0
    raise ToolError(f"Name the cell to {edit.edit_mode} with cell_id or cell_number.")


def _new_id(cells: list[Any]) -> str:
    taken = {c.get("id") for c in cells if isinstance(c, dict)}
    while True:
        candidate = uuid.uuid4().hex[:8]
        if candidate not in taken:
            return candidate


def _new_cell(cell_type: CellType, source: str, cell_id: str | None) -> dict[str, Any]:
    """A cell as Jupyter writes one (keys sorted, empty outputs for code)."""
    cell: dict[str, Any] = {"cell_type": cell_type}
    if cell_type == "code":
        cell["execution_count"] = None
    if cell_id is not None:
        cell["id"] = cell_id
    cell["metadata"] = {}
    if cell_type == "code":
        cell["outputs"] = []
    cell["source"] = source.splitlines(keepends=True)
    return cell


def _replace(cell: dict[str, Any], edit: NotebookEdit) -> None:
    """New source (and type); a code cell's outputs and count are cleared: they are stale."""
    cell_type = edit.cell_type or cell.get("cell_type", "code")
    cell["cell_type"] = cell_type
    cell["source"] = _source_like(cell.get("source"), edit.new_source)
    if cell_type == "code":
        cell["execution_count"] = None
        cell["outputs"] = []
    else:
        cell.pop("execution_count", None)
        cell.pop("outputs", None)


def edit_notebook(text: str, edit: NotebookEdit, shown: str) -> tuple[str, str]:
    """The notebook's new text after one cell edit, and a sentence saying what was done."""
    notebook = parse_notebook(text, shown)
    cells: list[Any] = notebook["cells"]
    index = _target(cells, edit, shown)
    if edit.edit_mode == "insert":
        if edit.cell_type is None:
            raise ToolError("cell_type (code or markdown) is required to insert a cell.")
        cell_id = _new_id(cells) if has_cell_ids(notebook) else None
        cells.insert(index, _new_cell(edit.cell_type, edit.new_source, cell_id))
        done = f"Inserted a {edit.cell_type} cell {_cell_label(cells[index], index)}"
    elif edit.edit_mode == "delete":
        removed = cells.pop(index)
        done = f"Deleted cell {_cell_label(removed, index)}"
    else:
        cell = cells[index]
        if not isinstance(cell, dict):
            raise ToolError(f"Cell {index} of {shown} is not a JSON object.")
        _replace(cell, edit)
        done = f"Replaced cell {_cell_label(cell, index)}"
    return JsonStyle.of(text).dump(notebook), f"{done} in {shown}."


def _cut(text: str) -> str:
    if len(text) <= MAX_OUTPUT_CHARS:
        return text
    return text[:MAX_OUTPUT_CHARS] + f"\n[... {len(text) - MAX_OUTPUT_CHARS} more characters]"


def _output_text(output: dict[str, Any]) -> tuple[str, str]:
    """An output's attributes and its text, for the model."""
    kind = str(output.get("output_type", "unknown"))
    if kind == "stream":
        return f'type="stream" name="{output.get("name", "stdout")}"', source_text(
            output.get("text")
        )
    if kind == "error":
        traceback = "\n".join(_ANSI.sub("", line) for line in output.get("traceback") or [])
        head = f"{output.get('ename', 'Error')}: {output.get('evalue', '')}"
        return 'type="error"', traceback or head
    data = output.get("data")
    if not isinstance(data, dict):
        data = {}
    parts = [source_text(data["text/plain"])] if "text/plain" in data else []
    hidden = [mime for mime in data if mime != "text/plain"]
    if hidden:
        parts.append(f"[{', '.join(hidden)} output not shown]")
    return f'type="{kind}"', "\n".join(parts)


def _render_cell(cell: Any, number: int) -> list[str]:
    if not isinstance(cell, dict):
        return [f'<cell number="{number}">(not a cell object)</cell>']
    attributes = [f'number="{number}"']
    if cell.get("id"):
        attributes.append(f'id="{cell["id"]}"')
    attributes.append(f'type="{cell.get("cell_type", "unknown")}"')
    if cell.get("execution_count") is not None:
        attributes.append(f'execution_count="{cell["execution_count"]}"')
    source = source_text(cell.get("source")).removesuffix("\n")
    lines = [f"<cell {' '.join(attributes)}>", source]
    for output in cell.get("outputs") or []:
        if isinstance(output, dict):
            attributes_text, body = _output_text(output)
            lines += [f"<output {attributes_text}>", _cut(body.rstrip("\n")), "</output>"]
    lines.append("</cell>")
    return lines


def _language(notebook: dict[str, Any]) -> str | None:
    metadata = notebook.get("metadata")
    if not isinstance(metadata, dict):
        return None
    for key, field in (("kernelspec", "language"), ("language_info", "name")):
        section = metadata.get(key)
        if isinstance(section, dict) and isinstance(section.get(field), str):
            return str(section[field])
    return None


def render_notebook(text: str, shown: str) -> str | None:
    """The notebook for Read: each cell's number, id, type, source and text outputs; None
    when the text is not an nbformat 4 notebook (Read then shows its lines)."""
    try:
        notebook = parse_notebook(text, shown)
    except ToolError:
        return None
    cells = notebook["cells"]
    version = f"{notebook['nbformat']}.{notebook.get('nbformat_minor', 0)}"
    language = _language(notebook)
    head = f"Notebook {shown}: {counted(len(cells), 'cell')}, nbformat {version}"
    lines = [head + (f", {language}" if language else "")]
    for number, cell in enumerate(cells):
        lines += _render_cell(cell, number)
    lines.append(
        "(Change cells with NotebookEdit, by id or number. Read with offset or limit shows "
        "the file's JSON lines.)"
    )
    return "\n".join(lines)
