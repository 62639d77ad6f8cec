"""Codex's patch format, parsed: `*** Begin Patch`, file sections, `*** End Patch`.

The grammar the OpenAI models are trained on (openai/codex, codex-rs/apply-patch):

    *** Begin Patch
    *** Add File: <path>        every following line starts with "+"
    *** Delete File: <path>
    *** Update File: <path>
    *** Move to: <new path>     optional, right after Update File
    @@ <optional header>        a line of the file (a def, a class) the hunk lies after
     context / -removed / +added
    *** End of File             optional: the hunk ends at the end of the file
    *** End Patch

Parsing is lenient where models slip (markers padded with spaces, a heredoc around the
patch, a first hunk without `@@`, blank lines between hunks, several `@@` headers in a row)
and strict where a guess could change the wrong text. Pure: no files are touched here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BEGIN = "*** Begin Patch"
END = "*** End Patch"
ADD = "*** Add File: "
DELETE = "*** Delete File: "
UPDATE = "*** Update File: "
MOVE = "*** Move to: "
END_OF_FILE = "*** End of File"
_HEREDOC_OPENERS = ("<<EOF", "<<'EOF'", '<<"EOF"')

LineOp = Literal[" ", "-", "+"]


class PatchSyntaxError(ValueError):
    """The patch text is not in the format; the message names the patch line."""


@dataclass(frozen=True, slots=True)
class Hunk:
    """One `@@` block of an Update: its headers and lines, as the model wrote them."""

    number: int
    # The patch's line number where the hunk starts (1-based), for error messages.
    line: int
    headers: tuple[str, ...]
    lines: tuple[tuple[LineOp, str], ...]
    end_of_file: bool = False

    @property
    def old(self) -> list[str]:
        """The lines the hunk expects in the file (context and removed)."""
        return [text for op, text in self.lines if op != "+"]

    @property
    def new(self) -> list[str]:
        """The lines the hunk leaves (context and added)."""
        return [text for op, text in self.lines if op != "-"]

    def first_lines(self, count: int = 2) -> str:
        """How the hunk begins, for an error message."""
        shown = [f"@@ {h}" for h in self.headers] + [op + text for op, text in self.lines]
        return " / ".join(repr(line) for line in shown[:count])


@dataclass(frozen=True, slots=True)
class AddFile:
    path: str
    text: str
    line: int
    kind: Literal["add"] = "add"


@dataclass(frozen=True, slots=True)
class DeleteFile:
    path: str
    line: int
    kind: Literal["delete"] = "delete"


@dataclass(frozen=True, slots=True)
class UpdateFile:
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]
    line: int
    kind: Literal["update"] = "update"


FileSection = AddFile | DeleteFile | UpdateFile


def parse_patch(text: str) -> tuple[FileSection, ...]:
    """The file sections of a patch, in order; PatchSyntaxError naming the line if it is
    not one."""
    lines = _body(text.strip().split("\n"))
    sections: list[FileSection] = []
    index = 1  # lines[0] is BEGIN
    while index < len(lines) - 1:
        if lines[index].strip() == "":
            index += 1
            continue
        section, index = _section(lines, index)
        sections.append(section)
    if not sections:
        raise PatchSyntaxError("The patch changes no file: it has no Add, Delete or Update.")
    return tuple(sections)


def _body(lines: list[str]) -> list[str]:
    """The patch's lines from BEGIN to END, a heredoc wrapper (`<<'EOF'` … `EOF`) removed."""
    lines = [line.removesuffix("\r") for line in lines]
    if len(lines) >= 4 and lines[0].strip() in _HEREDOC_OPENERS and lines[-1].strip() == "EOF":
        lines = lines[1:-1]
    if not lines or lines[0].strip() != BEGIN:
        raise PatchSyntaxError(f"The first line of the patch must be '{BEGIN}'.")
    if len(lines) < 2 or lines[-1].strip() != END:
        raise PatchSyntaxError(f"The last line of the patch must be '{END}'.")
    return lines


def _section(lines: list[str], index: int) -> tuple[FileSection, int]:
    """The file section starting at `index`, and the index after it."""
    # Padded, so a marker whose path is missing still reads as that marker.
    head = lines[index].strip() + " "
    number = index + 1
    if head.startswith(ADD):
        path = _path(head, ADD, number)
        end = index + 1
        while end < len(lines) - 1 and lines[end].startswith("+"):
            end += 1
        text = "".join(line[1:] + "\n" for line in lines[index + 1 : end])
        return AddFile(path, text, number), end
    if head.startswith(DELETE):
        return DeleteFile(_path(head, DELETE, number), number), index + 1
    if head.startswith(UPDATE):
        return _update(lines, index, _path(head, UPDATE, number))
    raise PatchSyntaxError(
        f"Line {number}: {head.strip()!r} is not a file header. Each file starts with "
        f"'{ADD}<path>', '{DELETE}<path>' or '{UPDATE}<path>'."
    )


def _path(head: str, marker: str, number: int) -> str:
    path = head[len(marker) :].strip()
    if not path:
        raise PatchSyntaxError(f"Line {number}: '{marker.strip()}' names no file.")
    return path


def _update(lines: list[str], index: int, path: str) -> tuple[UpdateFile, int]:
    start = index + 1
    index += 1
    move_to = None
    if index < len(lines) - 1 and lines[index].strip().startswith(MOVE):
        move_to = _path(lines[index].strip(), MOVE, index + 1)
        index += 1
    hunks: list[Hunk] = []
    while index < len(lines) - 1:
        line = lines[index]
        if line.strip() == "":
            index += 1
            continue
        if line.startswith("***") and line.strip() != END_OF_FILE:
            break
        hunk, index = _hunk(lines, index, len(hunks) + 1, first=not hunks)
        hunks.append(hunk)
    if not hunks and move_to is None:
        raise PatchSyntaxError(f"Line {start}: Update File {path} has no hunks.")
    return UpdateFile(path, move_to, tuple(hunks), start), index


def _hunk(lines: list[str], index: int, number: int, first: bool) -> tuple[Hunk, int]:
    start = index + 1
    headers: list[str] = []
    while index < len(lines) - 1 and lines[index].strip().startswith("@@"):
        header = lines[index].strip()[2:].strip()
        if header:
            headers.append(header)
        index += 1
    if start == index + 1 and not first:
        raise PatchSyntaxError(
            f"Line {start}: expected '@@' to start hunk {number}, got {lines[index]!r}. Every "
            "hunk line starts with ' ' (context), '-' (removed) or '+' (added)."
        )
    body: list[tuple[LineOp, str]] = []
    end_of_file = False
    while index < len(lines) - 1:
        line = lines[index]
        if line.strip() == END_OF_FILE:
            end_of_file = True
            index += 1
            break
        op = line[:1]
        if line == "":
            body.append((" ", ""))
        elif op in (" ", "-", "+"):
            body.append((op, line[1:]))  # type: ignore[arg-type]
        elif not body:
            raise PatchSyntaxError(
                f"Line {index + 1}: unexpected line {line!r} in hunk {number}. Every hunk "
                "line starts with ' ' (context), '-' (removed) or '+' (added)."
            )
        else:
            break
        index += 1
    if not body:
        raise PatchSyntaxError(f"Line {start}: hunk {number} has no lines.")
    return Hunk(number, start, tuple(headers), tuple(body), end_of_file), index
