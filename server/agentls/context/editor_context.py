"""The editor's part of <userContext>: active file, selections and open editors, on a budget.

Editor state is input the client sends, not history the model wrote: however much of it
arrives (megabytes of selections, thousands of open buffers), it takes at most
`EDITOR_BUDGET_CHARS` of the prompt, so it can never push a turn over the context window.
Only the session's own project is shown: buffers and an active file outside its workspace
roots belong to another project open in the same editor. The most relevant parts come
first (the active file and its selections, then buffers with unsaved changes, then the
other open editors), each cut with a marker that says so.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from xml.sax.saxutils import escape, quoteattr

from agentls.workspace.view import OpenDocument, Position, Range, WorkspaceView

EDITOR_BUDGET_CHARS = 24_000
SELECTION_CHARS = 8_000
MAX_SELECTIONS = 20
MAX_EDITORS = 50
# Comparing a buffer with its file costs a read; only this many of the newest are compared.
DIRTY_CHECKS = 50
_BREAK = re.compile(r"\r\n|\r|\n")


def editor_parts(view: WorkspaceView, cwd: Path, budget: int = EDITOR_BUDGET_CHARS) -> list[str]:
    """The <activeFile> and <openEditors> elements, together at most `budget` characters."""
    # The active file may take two thirds, so the list of open editors is never crowded out.
    active = _active_file(view, cwd, budget * 2 // 3)
    left = budget - len(active) - 1
    editors = _open_editors(view, cwd, left)
    return [part for part in (editors, active) if part]


class LineIndex:
    """Where lines start in a text, as LSP counts lines (at \n, \r\n and \r).

    Built lazily: a selection near the top of a 10 MB buffer scans only that far.
    """

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = [0]
        self._breaks = _BREAK.finditer(text)
        self._scanned = False

    def start(self, line: int, bound: int | None = None) -> int | None:
        """Where `line` starts; None past the text's end, or once the scan passes `bound`."""
        starts = self._starts
        while len(starts) <= line:
            if bound is not None and starts[-1] > bound:
                return None
            found = next(self._breaks, None)
            if found is None:
                self._scanned = True
                return None
            starts.append(found.end())
        return starts[line]

    def offset(self, pos: Position, bound: int | None = None) -> int | None:
        """The offset of `pos` (a code point column), clamped to its line's end as LSP does."""
        begin = self.start(pos.line, bound)
        if begin is None:
            return len(self.text) if self._scanned else None
        following = self.start(pos.line + 1)
        end = len(self.text) if following is None else following
        while end > begin and self.text[end - 1] in "\r\n":
            end -= 1
        return min(begin + pos.character, end)


def slice_range(
    text: str, rng: Range, limit: int, index: LineIndex | None = None
) -> tuple[str, bool]:
    """The text of `rng` (code point columns) and whether it was cut at `limit` characters."""
    index = index or LineIndex(text)
    begin = index.offset(rng.start)
    assert begin is not None
    end = index.offset(rng.end, bound=begin + limit)
    if end is None or end - begin > limit:
        return text[begin : begin + limit], True
    return text[begin : max(begin, end)], False


def display_path(path: Path, cwd: Path) -> str:
    """`path` relative to cwd when it lies inside it, else absolute."""
    return str(path.relative_to(cwd)) if path.is_relative_to(cwd) else str(path)


def _inside(view: WorkspaceView, path: Path) -> bool:
    # Editor paths arrive with symlinks resolved, so no realpath per buffer is needed.
    return any(path.is_relative_to(root) for root in view.roots)


def _active_file(view: WorkspaceView, cwd: Path, budget: int) -> str:
    path = view.editor.active_path
    if path is None or not _inside(view, path):
        return ""
    selections = view.editor.selections
    cursor = selections[0].start if selections else None
    cursor_attr = f' cursorLine="{cursor.line + 1}"' if cursor else ""
    head = f"<activeFile path={quoteattr(display_path(path, cwd))}{cursor_attr}>"
    tail = "</activeFile>"
    body = _selections(view, path, budget - len(head) - len(tail) - 2)
    return f"{head}\n{body}\n{tail}" if body else head + tail


def _selections(view: WorkspaceView, path: Path, budget: int) -> str:
    ranges = [sel for sel in view.editor.selections if sel.start != sel.end]
    if not ranges or budget <= 0:
        return ""
    try:
        text = view.read_text(path)
    except (OSError, ValueError):
        return ""
    lines = LineIndex(text)
    parts: list[str] = []
    used = 0
    for shown, sel in enumerate(ranges[:MAX_SELECTIONS]):
        # Room for this element's tags and marker, and a "more selections" line after it.
        room = min(SELECTION_CHARS, budget - used - 300)
        if room <= 0:
            parts.append(f"… {len(ranges) - shown} more selections not shown")
            break
        element = _selection(text, lines, sel, room)
        parts.append(element)
        used += len(element) + 1
    else:
        if len(ranges) > MAX_SELECTIONS:
            parts.append(f"… {len(ranges) - MAX_SELECTIONS} more selections not shown")
    return "\n".join(parts)


def _selection(text: str, index: LineIndex, sel: Range, room: int) -> str:
    picked, cut = slice_range(text, sel, room, index)
    attrs = (
        f'startLine="{sel.start.line + 1}" startCharacter="{sel.start.character}" '
        f'endLine="{sel.end.line + 1}" endCharacter="{sel.end.character}"'
    )
    body = escape(picked)
    if len(body) > room:
        body = body[:room]
    marker = "\n… (selection cut to fit the editor context budget)" if cut else ""
    return f"<selection {attrs}>{body}{marker}</selection>"


@dataclass(frozen=True, slots=True)
class _Editor:
    path: Path
    doc: OpenDocument
    unsaved: bool


def _open_editors(view: WorkspaceView, cwd: Path, budget: int) -> str:
    documents = [(p, d) for p, d in view.documents.items() if _inside(view, p)]
    if not documents:
        return ""
    ordered = _by_relevance(view, documents)
    head = f'<openEditors count="{len(documents)}">'
    lines: list[str] = []
    used = len(head) + len("</openEditors>") + 80
    for index, editor in enumerate(ordered):
        line = _editor_line(editor, cwd)
        if index >= MAX_EDITORS or used + len(line) + 1 > budget:
            lines.append(f"… {len(ordered) - index:,} more open editors not listed")
            break
        lines.append(line)
        used += len(line) + 1
    if not lines:
        return ""
    return head + "\n" + "\n".join(lines) + "\n</openEditors>"


def _by_relevance(view: WorkspaceView, documents: list[tuple[Path, OpenDocument]]) -> list[_Editor]:
    """Active file first, then buffers with unsaved changes, then the rest, newest first."""
    newest_first = documents[::-1]
    checked = {path for path, _doc in newest_first[:DIRTY_CHECKS]}
    editors = [_Editor(p, d, p in checked and _unsaved(d)) for p, d in newest_first]
    active = view.editor.active_path
    return sorted(editors, key=lambda e: (e.path != active, not e.unsaved))


def _editor_line(editor: _Editor, cwd: Path) -> str:
    path = quoteattr(display_path(editor.path, cwd))
    unsaved = ' unsaved="true"' if editor.unsaved else ""
    return f'<editor path={path} version="{editor.doc.version}"{unsaved}/>'


def _unsaved(doc: OpenDocument) -> bool:
    """Whether the buffer differs from its file (a cheap size check first)."""
    try:
        size = os.stat(doc.path).st_size
    except OSError:
        return True
    if size != len(doc.text.encode("utf-8", "surrogatepass")):
        return True
    try:
        with open(doc.path, encoding="utf-8", errors="surrogateescape", newline="") as handle:
            return handle.read() != doc.text
    except OSError:
        return True
