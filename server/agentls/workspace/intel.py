"""What the editor knows beyond the text: its language servers' diagnostics, and a way to
show the user a place in a file. The editor offers either or neither; tools ask it through
this seam (the LSP adapter implements it with server → client requests)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

Severity = Literal["error", "warning", "information", "hint"]


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


class EditorIntel(Protocol):
    """The editor's answers; `None` / False when it cannot give them."""

    @property
    def has_diagnostics(self) -> bool: ...

    @property
    def can_show(self) -> bool: ...

    async def diagnostics(self, path: Path) -> list[Diagnostic] | None:
        """The file's current diagnostics; None when the editor did not answer."""

    async def show(self, path: Path, line: int | None) -> bool:
        """Open the file in the editor (at a 0-based line) for the user; whether it did."""
