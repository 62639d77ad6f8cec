"""Rewind, fork and a turn's changes from the Neovim chat (issue 30 item 1, client side), in a
real headless Neovim driving the real daemon with the scripted model.

A turn writes a file; `:AgentRewind` picks its user message and "Code and conversation"
(vim.ui.select answered from a queue), previews the rewind in a tab (agent/rewind with
dryRun: the file's diff, how many messages go; nothing changed yet, a screen capture saved
under clients/nvim/.work/artifacts), and `y` in the tab applies it: the file is back on disk
and the chat is redrawn without the turn's messages (captured too). `:AgentFork` from a user
message opens a new chat whose session lacks it and whose prompt holds its text;
`:AgentChanges` shows the files a turn changed in a read-only tab.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nvim_screen import Screen
from test_nvim import Editor, open_editor, start
from test_nvim_power import ARTIFACTS
from test_nvim_worktrees import PICKER


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def write(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {"id": call_id, "name": "Write", "input": {"file_path": path, "content": content}}


def two_turns(editor: Editor) -> None:
    """A first turn that answers, then a second one that rewrites notes.txt."""
    (editor.root / "notes.txt").write_text("mine\n", encoding="utf-8")
    script = [
        {"text": "Hello."},
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "notes.txt"}}]},
        {"tool_calls": [write("w", "notes.txt", "the agent's\n")]},
        {"text": "Rewritten."},
        {"text": "Again."},
    ]
    start(editor, script)
    editor.lua(PICKER)
    editor.lua("require('agentls.config').options.session.permissionMode = 'acceptEdits'")
    editor.nvim.command("AgentAsk say hello")
    editor.turn_ended(1)
    editor.nvim.command("AgentAsk rewrite the notes")
    [_, ended] = editor.turn_ended(2)
    assert ended["stopReason"] == "end_turn"
    assert (editor.root / "notes.txt").read_text(encoding="utf-8") == "the agent's\n"


def picks(editor: Editor, *labels: str) -> None:
    editor.lua("_G.agentls_picks = ...", list(labels))


def session_texts(editor: Editor, session_id: str) -> list[str]:
    """The user texts of a session's history, as agent/getMessages answers them."""
    texts: list[str] = editor.lua(
        "local chat = require('agentls.chat').get() "
        "local result = require('agentls.client').request_sync(chat:client(), "
        "'agent/getMessages', { sessionId = ... }) local out = {} "
        "for _, m in ipairs(result.messages) do if m.role == 'user' then "
        "for _, b in ipairs(m.content) do "
        "if b.type == 'text' and not vim.startswith(b.text, '<userContext>') then "
        "out[#out + 1] = b.text end end "
        "end end return out",
        session_id,
    )
    return texts


def test_rewind_both_previews_then_restores_the_file_and_drops_the_messages(
    editor: Editor,
) -> None:
    two_turns(editor)
    screen = Screen.attach(editor.nvim, 110, 30)
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")
    picks(editor, "rewrite the notes", "Code and conversation")
    editor.nvim.command("AgentRewind")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    listed = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert listed[:2] == ["Rewind code and conversation", "to before this message:"], listed
    # The user message, two tool calls with their results, and the answer.
    assert "  6 messages leave the conversation" in listed, listed
    assert "  1 file goes back" in listed, listed
    assert listed[-1] == "modified notes.txt  +1 −1", listed
    diff = editor.lua(
        "vim.cmd('wincmd l') local b = vim.api.nvim_get_current_buf() "
        "vim.cmd('wincmd h') return vim.api.nvim_buf_get_lines(b, 0, -1, false)"
    )
    assert "-the agent's" in diff and "+mine" in diff, diff
    # A preview changes nothing.
    assert (editor.root / "notes.txt").read_text(encoding="utf-8") == "the agent's\n"
    shown = "\n".join(
        screen.save(ARTIFACTS, "rewind-preview", "agentls in Neovim: a rewind previewed")
    )
    assert "modified notes.txt" in shown, shown
    editor.nvim.feedkeys("y", "x")
    editor.wait(
        "not require('agentls.chat').get().buffer:text():find('rewrite the notes', 1, true)"
    )
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == tabs
    assert (editor.root / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    chat = editor.chat_text()
    assert "> say hello" in chat and "Hello." in chat, chat
    assert "Rewritten." not in chat, chat
    session = editor.lua("return require('agentls.chat').get().session_id")
    assert session_texts(editor, session) == ["say hello"]
    # The chat on screen, as the rewind left it.
    editor.nvim.command("Agent")
    editor.nvim.command("stopinsert")
    rewound = "\n".join(
        screen.save(ARTIFACTS, "rewound", "agentls in Neovim: the chat after the rewind")
    )
    assert "say hello" in rewound and "Rewritten." not in rewound, rewound
    # The redrawn chat goes on.
    editor.nvim.command("AgentAsk once more")
    editor.turn_ended(3)
    assert "Again." in editor.chat_text()


def test_a_file_the_user_changed_is_listed_kept_by_y_and_overwritten_by_f(
    editor: Editor,
) -> None:
    two_turns(editor)
    (editor.root / "notes.txt").write_text("edited by hand\n", encoding="utf-8")
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")

    def preview() -> list[str]:
        picks(editor, "rewrite the notes", "Code only")
        editor.nvim.command("AgentRewind")
        editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
        listed: list[str] = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
        return listed

    listed = preview()
    assert listed[:2] == ["Rewind code only", "to before this message:"], listed
    warning = "  ⚠ notes.txt: changed since the agent last wrote it (kept; F overwrites it)"
    assert warning in listed, listed
    assert not any("messages leave" in line for line in listed), listed
    editor.nvim.feedkeys("y", "x")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs}")
    assert (editor.root / "notes.txt").read_text(encoding="utf-8") == "edited by hand\n"
    preview()
    editor.nvim.feedkeys("F", "x")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs}")
    notes = editor.root / "notes.txt"
    editor.wait(f"vim.fn.readfile('{notes}')[1] == 'mine'")
    # Code only: the conversation keeps the turn.
    assert "rewrite the notes" in editor.chat_text()


def test_fork_from_a_user_message_opens_a_chat_without_it_and_its_text_in_the_prompt(
    editor: Editor,
) -> None:
    two_turns(editor)
    source = editor.lua("return require('agentls.chat').get().session_id")
    picks(editor, "rewrite the notes")
    editor.nvim.command("AgentFork")
    forked = editor.wait(
        f"require('agentls.chat').get().session_id ~= '{source}' "
        "and require('agentls.chat').get().session_id"
    )
    assert session_texts(editor, forked) == ["say hello"]
    assert session_texts(editor, source) == ["say hello", "rewrite the notes"]
    chat = editor.lua("return require('agentls.chat').get().buffer:text()")
    assert "> say hello" in chat and "rewrite the notes" not in chat, chat
    prompt = editor.lua(
        "local root = require('agentls.chat').get().root "
        "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
        "if vim.b[b].agentls_root == root and vim.bo[b].buftype == 'prompt' then "
        "return vim.api.nvim_buf_get_lines(b, -2, -1, false)[1] end end"
    )
    assert prompt == "❯ rewrite the notes", prompt


def test_agent_changes_shows_the_files_a_turn_changed(editor: Editor) -> None:
    two_turns(editor)
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")
    editor.nvim.command("AgentChanges 2")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    listed, modifiable = editor.lua(
        "return { vim.api.nvim_buf_get_lines(0, 0, -1, false), vim.bo.modifiable }"
    )
    assert listed == ["> rewrite the notes", "", "modified notes.txt  +1 −1"], listed
    assert not modifiable
    diff = editor.lua("vim.cmd('wincmd l') return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    assert "-mine" in diff and "+the agent's" in diff, diff
    editor.nvim.command("normal q")
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == tabs
    # The same from the chat: the key on the answer under the user message.
    editor.nvim.command("Agent")
    editor.lua(
        "local chat = require('agentls.chat').get() "
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.buffer.bufnr)[1]) "
        "for row, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do "
        "if line == 'Rewritten.' then vim.api.nvim_win_set_cursor(0, { row, 0 }) end end"
    )
    editor.nvim.feedkeys(editor.nvim.replace_termcodes("<leader>ac"), "x")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    assert editor.lua("return vim.api.nvim_buf_get_lines(0, 0, 1, false)") == [listed[0]]
    editor.nvim.command("normal q")
    # The first turn changed nothing: said, no tab.
    editor.lua(
        "_G.agentls_notes = {} vim.notify = function(msg) table.insert(_G.agentls_notes, msg) end"
    )
    editor.nvim.command("AgentChanges 1")
    editor.wait("#_G.agentls_notes > 0")
    assert editor.lua("return _G.agentls_notes") == ["agentls: that turn changed no file"]
