"""Neovim's answer to `agent/diagnostics`: the file's diagnostics, and `watched`, whether
anything looks at the file (a language server attached or serving its type, or a linter's
diagnostics already there). With `watched: false` the daemon does not wait after an edit for
errors that will never come (tests/test_e2e_editor_intel.py has the daemon's side)."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import PLUGIN, Editor, open_editor
from test_nvim_mentions import NAV_SERVER


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        opened.lua("vim.opt.rtp:prepend(...)", str(PLUGIN))
        yield opened


def answer(editor: Editor, path: Path) -> dict[str, object]:
    found = editor.lua(
        "return require('agentls.diagnostics').for_uri(vim.uri_from_fname(...))", str(path)
    )
    assert isinstance(found, dict)
    return found


def test_a_file_nothing_looks_at_is_not_watched_until_a_linter_reports(editor: Editor) -> None:
    notes = editor.root / "notes.txt"
    notes.write_text("draft\n", encoding="utf-8")
    assert answer(editor, notes) == {"diagnostics": [], "watched": False}
    editor.lua(
        "vim.cmd.edit(...); vim.diagnostic.set(vim.api.nvim_create_namespace('lint'), 0,"
        " {{ lnum = 0, col = 0, message = 'typo', severity = vim.diagnostic.severity.WARN }})",
        str(notes),
    )
    found = answer(editor, notes)
    assert found["watched"] is True
    assert [d["message"] for d in found["diagnostics"]] == ["typo"]  # type: ignore[union-attr]


def test_a_running_server_for_the_files_type_watches_it_open_or_not(editor: Editor) -> None:
    lib, other = editor.root / "lib.py", editor.root / "other.py"
    lib.write_text("x = 1\n", encoding="utf-8")
    other.write_text("y = 2\n", encoding="utf-8")
    editor.lua(
        "local cmd = ...; vim.cmd.edit(select(2, ...));"
        " vim.lsp.start({ name = 'fixture', cmd = cmd, root_dir = vim.fn.getcwd(),"
        " filetypes = { 'python' } }, { bufnr = 0 })",
        [sys.executable, str(NAV_SERVER)],
        str(lib),
    )
    editor.wait("#vim.lsp.get_clients({ bufnr = 0, name = 'fixture' }) == 1")
    assert answer(editor, lib)["watched"] is True
    # Not loaded yet: the running server serves Python files, so it will look.
    assert answer(editor, other)["watched"] is True
    assert answer(editor, editor.root / "README.txt")["watched"] is False
