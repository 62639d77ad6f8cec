"""What the editor knows beyond the text: its language servers' diagnostics and navigation
(definitions, references, workspace symbols), and a way to show the user a place in a
file. The editor offers any of them or none; tools ask it through this seam (the LSP
adapter implements it with server → client requests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

Severity = Literal["error", "warning", "information", "hint"]
# The navigation requests an editor may answer from its language servers.
Navigation = Literal["definition", "references", "workspaceSymbols"]
NAVIGATIONS: tuple[Navigation, ...] = ("definition", "references", "workspaceSymbols")


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One problem the editor reports in a file; line and character are 0-based."""

    line: int
    character: int
    severity: Severity
    message: str
    source: str | None = None
    code: str | None = None

    def text(self) -> str:
        """`12:5 error: message [source code]`, lines and columns 1-based as editors show."""
        where = f"{self.line + 1}:{self.character + 1}"
        origin = " ".join(part for part in (self.source, self.code) if part)
        return f"{where} {self.severity}: {self.message}" + (f" [{origin}]" if origin else "")


@dataclass(frozen=True, slots=True)
class FileProblems:
    """A file's diagnostics as the editor has them, and whether anything in the editor (a
    language server, a linter) looks at the file at all: an unwatched file's empty list
    says nothing about its correctness."""

    problems: list[Diagnostic]
    watched: bool = True


@dataclass(frozen=True, slots=True)
class Place:
    """A place the editor points to: line and character 0-based, the character counted in
    code points of the line; a workspace symbol also has its name, kind and container."""

    path: Path
    line: int
    character: int
    name: str | None = None
    kind: str | None = None
    container: str | None = None


class EditorIntel(Protocol):
    """The editor's answers; `None` / False when it cannot give them."""

    @property
    def has_diagnostics(self) -> bool: ...

    @property
    def can_show(self) -> bool: ...

    @property
    def navigation(self) -> frozenset[Navigation]:
        """The navigation requests the editor answers."""

    async def definition(self, path: Path, line: int, character: int) -> list[Place] | None:
        """Where the symbol at a place (0-based, code points) is defined; None: no answer."""

    async def references(self, path: Path, line: int, character: int) -> list[Place] | None:
        """Where the symbol at a place is used, its declaration included; None: no answer."""

    async def workspace_symbols(self, query: str) -> list[Place] | None:
        """The workspace's symbols matching `query`; None when the editor did not answer."""

    async def diagnostics(self, path: Path) -> FileProblems | None:
        """The file's current diagnostics; None when the editor did not answer."""

    async def show(self, path: Path, line: int | None) -> bool:
        """Open the file in the editor (at a 0-based line) for the user; whether it did."""
