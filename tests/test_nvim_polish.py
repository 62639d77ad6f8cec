"""Neovim polish (issue 30, Neovim side), in a real headless Neovim driving the real daemon
with the scripted model: the prompt's `@` and `/` menus open by themselves as keys are typed
(nvim_input), and a long daemon error is notified as one line, so Neovim is not left
waiting at a hit-enter prompt (a UI is attached, as a terminal would be). Tool output written
while the user is in insert mode in the prompt (where Neovim updates no fold) folds once
insert mode ends.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nvim_screen import Screen
from test_nvim import KEEP_PAGES, POINT_AT, Editor, open_editor, start
from test_nvim_mentions import KEEP_SENT, open_prompt, sent_attachments


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def prompt_text(editor: Editor) -> str:
    text: str = editor.lua("return vim.api.nvim_get_current_line():sub(#'❯ ' + 1)")
    return text


def menu_words(editor: Editor) -> list[str]:
    items: list[dict[str, Any]] = editor.lua("return vim.fn.complete_info({ 'matches' }).matches")
    return [item["word"] for item in items]


def test_at_opens_the_mention_menu_by_itself_and_typing_narrows_it(editor: Editor) -> None:
    (editor.root / "alpha.py").write_text("A = 1\n", encoding="utf-8")
    (editor.root / "beta.py").write_text("B = 2\n", encoding="utf-8")
    start(editor, [{"text": "Seen."}])
    editor.lua(KEEP_SENT)
    global_completeopt = editor.lua("return vim.go.completeopt")
    open_prompt(editor)
    editor.nvim.input("look at @")
    editor.wait("vim.fn.pumvisible() == 1")
    assert {"@alpha.py", "@beta.py"} <= set(menu_words(editor))
    # Nothing is inserted by opening it: the prompt still holds what was typed.
    assert prompt_text(editor) == "look at @"
    editor.nvim.input("alp")
    editor.wait("vim.fn.complete_info({ 'matches' }).matches[1] ~= nil")
    editor.wait(
        "not vim.tbl_contains(vim.tbl_map(function(i) return i.word end, "
        "vim.fn.complete_info({ 'matches' }).matches), '@beta.py')"
    )
    assert "@alpha.py" in menu_words(editor)
    assert prompt_text(editor) == "look at @alp"
    editor.nvim.input("<C-n><CR>")
    editor.wait("vim.fn.pumvisible() == 0")
    assert prompt_text(editor) == "look at @alpha.py"
    # The prompt's own 'completeopt'; the user's global one is as it was.
    assert editor.lua("return vim.bo.completeopt") == "menuone,noinsert,noselect"
    assert editor.lua("return vim.go.completeopt") == global_completeopt
    editor.nvim.input(" please<CR>")
    assert sent_attachments(editor) == [{"uri": (editor.root / "alpha.py").as_uri()}]
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "> look at @alpha.py please" in editor.chat_text()


def test_slash_at_the_start_lists_the_commands_and_an_email_opens_nothing(
    editor: Editor,
) -> None:
    start(editor, [{"text": "unused"}])
    open_prompt(editor)
    editor.wait("(require('agentls.chat').all()[1].commands or {})[1] ~= nil")
    editor.nvim.input("/")
    editor.wait("vim.fn.pumvisible() == 1")
    assert {"/compact", "/context", "/cost"} <= set(menu_words(editor))
    editor.nvim.input("co")
    editor.wait("#vim.fn.complete_info({ 'matches' }).matches == 3")
    assert menu_words(editor) == ["/compact", "/context", "/cost"]
    assert prompt_text(editor) == "/co"
    editor.nvim.input("<C-e><C-u>")
    editor.wait("vim.fn.pumvisible() == 0 and vim.api.nvim_get_current_line() == '❯ '")
    # An e-mail typed at once, and a / further on: no menu, nothing but what was typed.
    editor.nvim.input("mail a@b.c or see a/b")
    editor.wait("vim.api.nvim_get_current_line() == '❯ mail a@b.c or see a/b'")
    assert editor.lua("return vim.fn.pumvisible()") == 0
    assert editor.lua("return vim.fn.mode()") == "i"


def test_auto_complete_false_leaves_the_menu_to_ctrl_x_ctrl_o(editor: Editor) -> None:
    (editor.root / "alpha.py").write_text("A = 1\n", encoding="utf-8")
    start(editor, [{"text": "unused"}])
    editor.lua("require('agentls.config').options.auto_complete = false")
    open_prompt(editor)
    editor.nvim.input("see @al")
    editor.wait("vim.api.nvim_get_current_line() == '❯ see @al'")
    assert editor.lua("return vim.fn.pumvisible()") == 0
    editor.nvim.input("<C-x><C-o>")
    editor.wait("vim.fn.pumvisible() == 1 or vim.api.nvim_get_current_line() ~= '❯ see @al'")


# A request the daemon refuses with a long message; each notification is also sent to the
# test (before Neovim shows it: a hit-enter prompt would hold up anything after it).
LONG_ERROR = """
local path = ...
local notify = vim.notify
vim.notify = function(message, level, opts)
  vim.rpcnotify(0, "agentls_notified", message)
  return notify(message, level, opts)
end
local chat = require("agentls.chat").get(nil, true)
chat:request("agent/inlineEdit", {
  uri = vim.uri_from_fname(path),
  range = { start = { line = 0, character = 0 }, ["end"] = { line = 0, character = 1 } },
  instruction = "x",
})
"""


def test_a_long_daemon_error_is_one_line_and_does_not_block_neovim(editor: Editor) -> None:
    start(editor, [{"text": "unused"}])
    editor.wait("require('agentls.chat').get(nil, true).session_id ~= nil")
    screen = Screen.attach(editor.nvim, 80, 24)
    screen.capture()
    outside = "/nowhere/" + "/".join(["a-rather-long-folder-name"] * 12) + "/file.py"
    editor.lua(LONG_ERROR, outside)
    while True:
        message = editor.nvim.next_message()
        if message[0] == "notification" and message[1] == "agentls_notified":
            notified = message[2][0]
            break
    # nvim_get_mode answers even at a hit-enter prompt; a key ends one so the test can end.
    time.sleep(1)
    mode = editor.nvim.request("nvim_get_mode")
    if mode["blocking"]:
        editor.nvim.input("<CR>")
    assert mode == {"mode": "n", "blocking": False}, (mode, notified)
    assert notified.startswith("agentls: agent/inlineEdit: ") and notified.endswith("…")
    assert "\n" not in notified and len(notified) < 80, notified
    lines = screen.capture()
    assert lines[-1].rstrip() == notified, lines
    # The whole text stays readable in the chat.
    chat = editor.chat_text().replace("\n", "")
    assert "outside the session's workspace" in chat and outside in chat, chat


# vim.ui.select answers "Delete" to the question it asks (kept in _G.agentls_asked).
CONFIRM_DELETE = """
_G.agentls_asked = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.agentls_asked, opts.prompt)
  on_choice(vim.tbl_contains(items, "Delete") and "Delete" or nil)
end
"""


def sessions_listed(editor: Editor) -> list[str]:
    lines: list[str] = editor.lua("return _G.agentls_pages[#_G.agentls_pages]")
    return lines


def test_d_in_agent_sessions_deletes_a_session_and_the_open_chats_closes_first(
    editor: Editor,
) -> None:
    start(editor, [{"text": "Kiwi."}, {"text": "Plum."}])
    editor.nvim.command("AgentAsk the word kiwi")
    editor.turn_ended()
    kiwi = editor.lua("return require('agentls.chat').get().session_id")
    editor.nvim.command("AgentNew")
    editor.nvim.command("AgentAsk the word plum")
    editor.turn_ended(2)
    plum = editor.lua("return require('agentls.chat').get().session_id")
    editor.nvim.command("Agent")
    editor.wait("require('agentls.chat').get():visible() and vim.fn.mode() == 'i'")
    editor.nvim.input("<Esc>")
    editor.wait("vim.fn.mode() == 'n'")
    home = editor.root.parent / "agentls-home" / "sessions"
    assert (home / f"{kiwi}.jsonl").exists() and (home / f"{plum}.jsonl").exists()
    editor.lua(KEEP_PAGES)
    editor.lua(CONFIRM_DELETE)
    editor.nvim.command("AgentSessions")
    editor.wait("#_G.agentls_pages > 0")
    assert any(line.startswith("the word kiwi  (") for line in sessions_listed(editor))
    # An earlier session: gone from the list and from disk; the open chat stays.
    assert editor.lua(POINT_AT, "the word kiwi") == "session"
    editor.nvim.input("d")
    editor.wait("#_G.agentls_pages > 1")
    assert editor.lua("return _G.agentls_asked") == [
        'Delete the session "the word kiwi"? Its transcript and worktrees go too.'
    ]
    listed = sessions_listed(editor)
    assert not any("kiwi" in line for line in listed), listed
    assert any(line.startswith("the word plum  (") for line in listed), listed
    assert not (home / f"{kiwi}.jsonl").exists()
    assert editor.lua("return require('agentls.chat').get(nil, false).session_id") == plum
    # The open chat's session: its chat closes first, then the session goes.
    assert editor.lua(POINT_AT, "the word plum") == "session"
    editor.nvim.input("d")
    editor.wait("#_G.agentls_pages > 2")
    assert sessions_listed(editor)[1:] == ["No saved session here."]
    assert editor.lua("return require('agentls.chat').get(nil, false)") is None
    assert editor.lua("return #require('agentls.chat').all()") == 0
    prompt_windows = editor.lua(
        "local n = 0 for _, w in ipairs(vim.api.nvim_list_wins()) do "
        "if vim.w[w].agentls_prompt then n = n + 1 end end return n"
    )
    assert prompt_windows == 0
    assert not (home / f"{plum}.jsonl").exists()


# The chat window's output lines: (fold level, closed) of each line starting with │.
OUTPUT_FOLDS = """
local chat = require('agentls.chat').all()[1]
local win = vim.fn.win_findbuf(chat.buffer.bufnr)[1]
return vim.api.nvim_win_call(win, function()
  local out = {}
  for n = 1, vim.fn.line('$') do
    if vim.startswith(vim.fn.getline(n), '  │ ') then
      table.insert(out, { vim.fn.foldlevel(n), vim.fn.foldclosed(n) > 0 })
    end
  end
  return out
end)
"""


def test_output_written_while_typing_in_the_prompt_folds_once_insert_mode_ends(
    editor: Editor,
) -> None:
    (editor.root / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    read = {"id": "r", "name": "Read", "input": {"file_path": "app.py"}}
    start(editor, [{"text": "Reading.", "tool_calls": [read]}, {"text": "Read."}])
    open_prompt(editor)
    # Sent from the prompt, which stays in insert mode while the turn writes the chat:
    # Neovim updates no fold meanwhile.
    editor.nvim.input("read it<CR>")
    editor.turn_ended()
    assert editor.lua("return vim.fn.mode()") == "i"
    editor.nvim.input("<Esc>")
    editor.wait("vim.fn.mode() == 'n'")
    assert editor.lua(OUTPUT_FOLDS) == [[1, True]] * 3
