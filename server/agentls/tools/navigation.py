"""Code navigation served by the user's editor, offered only when it answers: where a symbol
is defined, where it is used, and the workspace's symbols by name, from the editor's own
language servers, so the model navigates code as the user's editor does.

Results are `path:line:column: the line's text` lines, 1-based, capped; the text of a
line outside the workspace is not shown (reading it would need the user's approval).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from agentls.textfile import BinaryContent
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
from agentls.tools.file_text import read_current_text, resolve_in_workspace
from agentls.workspace.intel import EditorIntel, Navigation, Place

MAX_PLACES = 50
SNIPPET_CHARS = 160
# The editor's answer for a place: definition or references.
_Ask = Callable[[Path, int, int], Awaitable[list[Place] | None]]


class PositionInput(BaseModel):
    file_path: str = Field(description="The file the symbol is in")
    line: int = Field(ge=1, description="The symbol's line, 1-based")
    column: int | None = Field(
        None, ge=1, description="The symbol's column on the line, 1-based; or give symbol"
    )
    symbol: str | None = Field(
        None, description="The symbol's name, found on the line (its first occurrence)"
    )


class _PositionTool(ReadOnlyTool[PositionInput], PathTool[PositionInput]):
    """A question about the symbol at a place, asked of the editor."""

    input_model: type[BaseModel] = PositionInput
    kind: ToolKind = "search"
    navigation: Navigation = "definition"
    found_none: str = ""

    def target(self, args: PositionInput) -> str:
        return args.file_path

    async def run(self, args: PositionInput, ctx: ToolContext) -> ToolOutput:
        intel = _intel(ctx, self.navigation)
        path = resolve_in_workspace(ctx, args.file_path)
        line, character = _place_of(args, read_current_text(ctx, path), ctx, path)
        ask: _Ask = intel.definition if self.navigation == "definition" else intel.references
        places = await ask(path, line, character)
        where = f"{display_path(path, ctx.cwd)}:{line + 1}:{character + 1}"
        if places is None:
            raise ToolError(f"The editor did not answer for {where}.")
        if not places:
            return ToolOutput(f"The editor found {self.found_none} at {where}.")
        return ToolOutput(_listing(places, ctx, lambda place: ""))


class GoToDefinitionTool(_PositionTool):
    """Where the symbol at a place is defined, as the editor's language servers say."""

    name: str = "GoToDefinition"
    description: str = (
        "Finds where a symbol is defined, through the user's editor and its language "
        "servers (as go-to-definition there). Give file_path and line (1-based) and either "
        "column (1-based) or symbol (its name on that line). Returns path:line:column: and "
        "the line's text for each definition."
    )
    navigation: Navigation = "definition"
    found_none: str = "no definition"


class FindReferencesTool(_PositionTool):
    """Where the symbol at a place is used, as the editor's language servers say."""

    name: str = "FindReferences"
    description: str = (
        "Finds every use of a symbol (its declaration included), through the user's editor "
        "and its language servers (as find-references there): more exact than a text "
        "search. Give file_path and line (1-based) and either column (1-based) or symbol "
        "(its name on that line). Returns path:line:column: and the line's text for each."
    )
    navigation: Navigation = "references"
    found_none: str = "no references"


class WorkspaceSymbolsInput(BaseModel):
    query: str = Field(description="The symbol's name or part of it")


class WorkspaceSymbolsTool(ReadOnlyTool[WorkspaceSymbolsInput]):
    """The workspace's symbols matching a name, as the editor's language servers list them."""

    name: str = "WorkspaceSymbols"
    description: str = (
        "Finds classes, functions, methods and other symbols by name across the workspace, "
        "through the user's editor and its language servers (as its workspace symbol "
        "search). Returns path:line:column: kind name (in its container): the line's text."
    )
    input_model: type[BaseModel] = WorkspaceSymbolsInput
    kind: ToolKind = "search"

    def title(self, args: WorkspaceSymbolsInput) -> str:
        return f"WorkspaceSymbols {args.query}"

    def rule_content(self, args: WorkspaceSymbolsInput, cwd: Path) -> str | None:
        return args.query

    async def run(self, args: WorkspaceSymbolsInput, ctx: ToolContext) -> ToolOutput:
        places = await _intel(ctx, "workspaceSymbols").workspace_symbols(args.query)
        if places is None:
            raise ToolError("The editor did not answer.")
        if not places:
            return ToolOutput(f"The editor found no symbols matching {args.query!r}.")
        return ToolOutput(_listing(places, ctx, _symbol_label))


def navigation_tools(intel: EditorIntel | None) -> list[Tool[Any]]:
    """The navigation tools this editor serves (none without an editor)."""
    offered = intel.navigation if intel is not None else frozenset()
    tools: list[Tool[Any]] = []
    if "definition" in offered:
        tools.append(GoToDefinitionTool())
    if "references" in offered:
        tools.append(FindReferencesTool())
    if "workspaceSymbols" in offered:
        tools.append(WorkspaceSymbolsTool())
    return tools


def _intel(ctx: ToolContext, navigation: Navigation) -> EditorIntel:
    intel = ctx.workspace.intel
    if intel is None or navigation not in intel.navigation:
        raise ToolError(f"The editor this session is attached to does not answer {navigation}.")
    return intel


def _place_of(args: PositionInput, text: str, ctx: ToolContext, path: Path) -> tuple[int, int]:
    """The 0-based line and character the model means: its column, or its symbol's place."""
    lines = text.split("\n")
    shown = display_path(path, ctx.cwd)
    if args.line > len(lines):
        raise ToolError(f"{shown} has {len(lines)} lines; line {args.line} is past its end.")
    line = lines[args.line - 1].rstrip("\r")
    if args.column is not None:
        return args.line - 1, min(args.column - 1, len(line))
    if not args.symbol:
        raise ToolError("Give column or symbol: which symbol on the line to look up.")
    match = re.search(rf"(?<!\w){re.escape(args.symbol)}(?!\w)", line)
    at = match.start() if match else line.find(args.symbol)
    if at < 0:
        raise ToolError(f"{args.symbol!r} is not on line {args.line} of {shown}: {line.strip()}")
    return args.line - 1, at


def _listing(places: list[Place], ctx: ToolContext, label: Callable[[Place], str]) -> str:
    """One `path:line:column: text` line a place, in order, at most MAX_PLACES."""
    texts: dict[Path, list[str] | None] = {}
    out = []
    for place in places[:MAX_PLACES]:
        if place.path not in texts:
            texts[place.path] = _lines_if_inside(ctx, place.path)
        lines = texts[place.path]
        snippet = lines[place.line].strip() if lines and place.line < len(lines) else ""
        if len(snippet) > SNIPPET_CHARS:
            snippet = snippet[: SNIPPET_CHARS - 1] + "…"
        where = f"{display_path(place.path, ctx.cwd)}:{place.line + 1}:{place.character + 1}:"
        out.append(" ".join(part for part in (where, label(place), snippet) if part))
    more = len(places) - len(out)
    return "\n".join(out + ([f"… {more} more"] if more else []))


def _lines_if_inside(ctx: ToolContext, path: Path) -> list[str] | None:
    if not ctx.workspace.policy.contains(path):
        return None
    try:
        return ctx.workspace.read_text(path).split("\n")
    except (OSError, BinaryContent):
        return None


def _symbol_label(place: Place) -> str:
    inside = f" (in {place.container})" if place.container else ""
    return f"{place.kind or 'symbol'} {place.name}{inside}:"
