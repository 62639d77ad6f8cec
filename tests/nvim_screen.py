"""Screen captures of an embedded Neovim, through its UI protocol.

`Screen.attach` attaches the test's pynvim session as a UI (`nvim_ui_attach` with
`ext_linegrid`); `capture()` redraws, takes every `redraw` event up to a marker
notification, and keeps the grid as it stands: its text and the colours of each cell (from
`hl_attr_define` and `default_colors_set`). `text()` gives the grid as plain lines, `svg()`
draws it with its colours, so a README can show what a user sees.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MARKER = "agentls_screen_captured"
CELL_WIDTH = 8.4
CELL_HEIGHT = 18
FONT_SIZE = 14


@dataclass
class Cell:
    text: str = " "
    hl: int = 0


@dataclass
class Screen:
    """The grid of one attached UI, kept up to date from `redraw` events."""

    nvim: Any
    width: int
    height: int
    rows: list[list[Cell]] = field(default_factory=list)
    attrs: dict[int, dict[str, Any]] = field(default_factory=dict)
    foreground: int = 0xD0D0D0
    background: int = 0x101010

    @classmethod
    def attach(cls, nvim: Any, width: int, height: int) -> Screen:
        screen = cls(nvim, width, height)
        screen.resize(width, height)
        nvim.ui_attach(width, height, rgb=True, ext_linegrid=True)
        return screen

    def resize(self, width: int, height: int) -> None:
        self.width, self.height = width, height
        self.rows = [[Cell() for _ in range(width)] for _ in range(height)]

    def capture(self) -> list[str]:
        """Redraw now, apply what the UI was sent, and return the grid's text."""
        self.nvim.command("redraw!")
        self.nvim.command(f'call rpcnotify(0, "{MARKER}")')
        while True:
            message = self.nvim.next_message()
            if message[0] != "notification":
                continue
            if message[1] == MARKER:
                return self.text()
            if message[1] == "redraw":
                for event in message[2]:
                    self.apply(event[0], event[1:])

    def apply(self, name: str, calls: list[list[Any]]) -> None:
        for args in calls:
            if name == "grid_resize":
                self.resize(args[1], args[2])
            elif name == "grid_clear":
                self.resize(self.width, self.height)
            elif name == "default_colors_set":
                if args[0] >= 0:
                    self.foreground = args[0]
                if args[1] >= 0:
                    self.background = args[1]
            elif name == "hl_attr_define":
                self.attrs[args[0]] = args[1]
            elif name == "grid_line":
                self.line(args[1], args[2], args[3])
            elif name == "grid_scroll":
                self.scroll(*args[1:6])

    def line(self, row: int, col: int, cells: list[list[Any]]) -> None:
        hl = 0
        for cell in cells:
            text = cell[0]
            if len(cell) > 1:
                hl = cell[1]
            repeat = cell[2] if len(cell) > 2 else 1
            for _ in range(repeat):
                if 0 <= row < self.height and 0 <= col < self.width:
                    self.rows[row][col] = Cell(text, hl)
                col += 1

    def scroll(self, top: int, bottom: int, left: int, right: int, count: int) -> None:
        # Rows [top, bottom) move up by `count` (down when negative) between left and right.
        span = range(top, bottom - count) if count > 0 else range(bottom - 1, top - count - 1, -1)
        for row in span:
            source = row + count
            self.rows[row][left:right] = [Cell(c.text, c.hl) for c in self.rows[source][left:right]]

    def text(self) -> list[str]:
        return ["".join(cell.text for cell in row).rstrip() for row in self.rows]

    def colours(self, hl: int) -> tuple[int, int, dict[str, Any]]:
        attr = self.attrs.get(hl, {})
        fg = attr.get("foreground", self.foreground)
        bg = attr.get("background", self.background)
        if attr.get("reverse"):
            fg, bg = bg, fg
        return fg, bg, attr

    def svg(self, title: str) -> str:
        """The grid drawn with its colours: a background run and a text run per highlight."""
        width, height = self.width * CELL_WIDTH, self.height * CELL_HEIGHT
        out = [
            f'<svg xmlns="http://www.w3.org/2000/svg" width="{width:.0f}" height="{height}" '
            f'viewBox="0 0 {width:.1f} {height}" font-family="DejaVu Sans Mono, Menlo, '
            f'Consolas, monospace" font-size="{FONT_SIZE}">',
            f"<title>{html.escape(title)}</title>",
            f'<rect width="100%" height="100%" fill="#{self.background:06x}"/>',
        ]
        for y, row in enumerate(self.rows):
            x = 0
            while x < len(row):
                start, hl = x, row[x].hl
                while x < len(row) and row[x].hl == hl:
                    x += 1
                fg, bg, attr = self.colours(hl)
                left, top = start * CELL_WIDTH, y * CELL_HEIGHT
                if bg != self.background:
                    out.append(
                        f'<rect x="{left:.1f}" y="{top}" width="{(x - start) * CELL_WIDTH:.1f}" '
                        f'height="{CELL_HEIGHT}" fill="#{bg:06x}"/>'
                    )
                text = "".join(cell.text for cell in row[start:x])
                if text.strip():
                    style = ' font-weight="bold"' if attr.get("bold") else ""
                    style += ' font-style="italic"' if attr.get("italic") else ""
                    style += ' text-decoration="underline"' if attr.get("underline") else ""
                    out.append(
                        f'<text x="{left:.1f}" y="{top + CELL_HEIGHT - 5}" fill="#{fg:06x}"'
                        f' xml:space="preserve" textLength="{(x - start) * CELL_WIDTH:.1f}"'
                        f"{style}>{html.escape(text)}</text>"
                    )
        out.append("</svg>")
        return "\n".join(out) + "\n"

    def save(self, folder: Path, name: str, title: str) -> list[str]:
        """Capture now; write `name`.txt (the grid's text) and `name`.svg into `folder`."""
        lines = self.capture()
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")
        (folder / f"{name}.svg").write_text(self.svg(title), encoding="utf-8")
        return lines
