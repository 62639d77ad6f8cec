"""Rules, MCP servers and a resumed history in sight from Neovim (issue 30 items 4 and 1,
Neovim side), in a real headless Neovim driving the real daemon with the scripted model.

A resumed history's user messages carry the turn they began (`DisplayMessage.turnId`), so
`:AgentChanges` and `:AgentRewind` work from them as from a live turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import Editor, open_editor
from test_nvim_rewind import picks, session_texts, two_turns


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def resume_again(editor: Editor) -> str:
    """The chat's session opened again from the daemon's history (a fresh chat, as after a
    restart of Neovim), its id."""
    session: str = editor.lua(
        "local chat = require('agentls.chat').get() "
        "local resumed = require('agentls.chat').resume(chat.root, chat.session_id) "
        "return resumed.session_id"
    )
    editor.wait("require('agentls.chat').get().buffer:text():find('Rewritten.', 1, true)")
    return session


def test_changes_and_rewind_work_from_a_resumed_history(editor: Editor) -> None:
    two_turns(editor)
    session = resume_again(editor)
    turns = editor.lua(
        "local out = {} for _, m in ipairs(require('agentls.rewind').messages("
        "require('agentls.chat').get())) do out[#out + 1] = m.turn ~= nil end return out"
    )
    assert turns == [True, True]
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")
    editor.nvim.command("AgentChanges 2")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    listed = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert listed == ["> rewrite the notes", "", "modified notes.txt  +1 −1"], listed
    editor.nvim.command("normal q")

    picks(editor, "rewrite the notes", "Code and conversation")
    editor.nvim.command("AgentRewind")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    editor.nvim.feedkeys("y", "x")
    editor.wait(
        "not require('agentls.chat').get().buffer:text():find('rewrite the notes', 1, true)"
    )
    assert (editor.root / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    assert session_texts(editor, session) == ["say hello"]
