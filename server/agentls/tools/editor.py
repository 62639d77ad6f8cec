"""Tools on the editor itself, offered only when the client provides them: its language
servers' diagnostics, and showing the user a place in a file.

After a file change the model also hears of new errors without asking (`new_problems`,
called by the executor), the way a developer sees red squiggles appear.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentls.tool_values import ToolKind
from agentls.tools.base import (
    PathTool,
    ReadOnlyTool,
    Tool,
    ToolContext,
    ToolError,
    ToolOutput,
    display_path,
)
from agentls.tools.file_text import resolve_in_workspace
from agentls.workspace.intel import Diagnostic, EditorIntel
from agentls.workspace.view import WorkspaceView

# Files and problems listed at most, so a broken build cannot flood the context.
MAX_FILES = 20
MAX_PROBLEMS = 50
NEW_ERRORS_SHOWN = 10
# An empty list from an editor where nothing looks at the file is not a clean bill.
UNCHECKED = "nothing in the editor checks this file (no language server or linter serves it)"


class DiagnosticsInput(BaseModel):
    file_path: str | None = Field(
        None, description="The file to check; without it, every file open in the editor"
    )


class DiagnosticsTool(ReadOnlyTool[DiagnosticsInput]):
    """The editor's errors and warnings for a file (or for its open files)."""

    name: str = "Diagnostics"
    description: str = (
        "Returns the errors, warnings and hints the user's editor shows for a file (from "
        "its language servers, linters and type checkers), with line:column, 1-based. "
        "Without file_path, for every file open in the editor. Use it to check code "
        "without running a build."
    )
    input_model: type[BaseModel] = DiagnosticsInput
    kind: ToolKind = "read"

    def title(self, args: DiagnosticsInput) -> str:
        return f"Diagnostics {args.file_path}" if args.file_path else "Diagnostics (open files)"

    async def run(self, args: DiagnosticsInput, ctx: ToolContext) -> ToolOutput:
        intel = _intel(ctx)
        if args.file_path is not None:
            paths = [resolve_in_workspace(ctx, args.file_path)]
        else:
            paths = open_files(ctx.workspace)
        if not paths:
            return ToolOutput("No files are open in the editor; give file_path.")
        return ToolOutput(await problems_report(intel, paths, ctx.cwd))


def open_files(workspace: WorkspaceView) -> list[Path]:
    """The files open in the editor that lie in the workspace."""
    return [p for p in workspace.documents if workspace.policy.contains(p)]


async def problems_report(intel: EditorIntel, paths: list[Path], cwd: Path) -> str:
    """The editor's problems in `paths` (the first MAX_FILES, asked at once), file by file."""
    chosen = sorted(paths)[:MAX_FILES]
    answers = await asyncio.gather(*(intel.diagnostics(path) for path in chosen))
    sections = []
    for path, answer in zip(chosen, answers, strict=True):
        shown = display_path(path, cwd)
        if answer is None:
            sections.append(f"{shown}: the editor did not answer")
        elif answer.problems:
            found = answer.problems
            listed = sorted(found, key=lambda d: (d.line, d.character))[:MAX_PROBLEMS]
            more = len(found) - len(listed)
            lines = [f"  {d.text()}" for d in listed]
            sections.append(
                "\n".join([f"{shown}:", *lines] + ([f"  … {more} more"] if more else []))
            )
        elif not answer.watched:
            sections.append(f"{shown}: {UNCHECKED}")
    return "\n".join(sections) or "The editor reports no problems."


class OpenFileInput(BaseModel):
    file_path: str = Field(description="The file to show the user")
    line: int | None = Field(None, ge=1, description="The line to put the cursor on, 1-based")


class OpenFileTool(ReadOnlyTool[OpenFileInput], PathTool[OpenFileInput]):
    """Shows the user a file in their editor, at a line."""

    name: str = "OpenFile"
    description: str = (
        "Opens a file in the user's editor, at a line, to show them something (the place "
        "of a bug, the code you are talking about). It changes nothing."
    )
    input_model: type[BaseModel] = OpenFileInput
    kind: ToolKind = "read"

    def target(self, args: OpenFileInput) -> str:
        return args.file_path

    async def run(self, args: OpenFileInput, ctx: ToolContext) -> ToolOutput:
        intel = ctx.workspace.intel
        path = resolve_in_workspace(ctx, args.file_path)
        shown = display_path(path, ctx.cwd)
        if not path.is_file():
            raise ToolError(f"{shown} is not a file.")
        line = None if args.line is None else args.line - 1
        if intel is None or not await intel.show(path, line):
            raise ToolError(f"The editor did not open {shown}.")
        at = f" at line {args.line}" if args.line else ""
        return ToolOutput(f"Opened {shown}{at} in the user's editor.")


def _intel(ctx: ToolContext) -> EditorIntel:
    intel = ctx.workspace.intel
    if intel is None or not intel.has_diagnostics:
        raise ToolError("The editor this session is attached to does not report diagnostics.")
    return intel


def editor_tools(intel: EditorIntel | None) -> list[Tool[Any]]:
    """The tools this editor can serve (none without an editor)."""
    tools: list[Tool[Any]] = []
    if intel is not None and intel.has_diagnostics:
        tools.append(DiagnosticsTool())
    if intel is not None and intel.can_show:
        tools.append(OpenFileTool())
    return tools


class ProblemsWatch:
    """A file's diagnostics before a change, to tell the model which errors it added."""

    def __init__(self, intel: EditorIntel, path: Path, before: list[Diagnostic], wait: float):
        self._intel = intel
        self._path = path
        self._before = before
        self._wait = wait

    @classmethod
    async def start(cls, ctx: ToolContext, path: Path, wait: float) -> ProblemsWatch | None:
        intel = ctx.workspace.intel
        if wait <= 0 or intel is None or not intel.has_diagnostics:
            return None
        # A file no language server or linter looks at gets no new errors: no wait for them.
        before = await intel.diagnostics(path)
        if before is None or not before.watched:
            return None
        return cls(intel, path, before.problems, wait)

    async def new_errors(self, cwd: Path) -> str | None:
        """After the editor had `wait` seconds to look again: the errors the change added."""
        await asyncio.sleep(self._wait)
        after = await self._intel.diagnostics(self._path)
        if after is None or not after.problems:
            return None
        added = _added(
            [d for d in self._before if d.severity == "error"],
            [d for d in after.problems if d.severity == "error"],
        )
        if not added:
            return None
        shown = display_path(self._path, cwd)
        lines = [f"  {d.text()}" for d in added[:NEW_ERRORS_SHOWN]]
        more = len(added) - len(lines)
        tail = [f"  … {more} more"] if more else []
        noun = "error" if len(added) == 1 else "errors"
        head = f"The editor now reports {len(added)} new {noun} in {shown}:"
        return "\n".join([head, *lines, *tail])


def _added(before: list[Diagnostic], after: list[Diagnostic]) -> list[Diagnostic]:
    """The problems of `after` that `before` did not have: the same problem at the same
    place is old; then, since an edit moves lines, the same problem anywhere else is too."""
    at_place = Counter(before)
    moved: list[Diagnostic] = []
    for problem in after:
        if at_place[problem]:
            at_place[problem] -= 1
        else:
            moved.append(problem)
    elsewhere = Counter(_identity(d) for d, n in at_place.items() for _ in range(n))
    added = []
    for problem in moved:
        if elsewhere[_identity(problem)]:
            elsewhere[_identity(problem)] -= 1
        else:
            added.append(problem)
    return added


def _identity(problem: Diagnostic) -> tuple[str, str | None, str | None]:
    return problem.message, problem.source, problem.code
