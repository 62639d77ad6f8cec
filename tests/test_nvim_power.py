"""The power-user features in the Neovim plugin (issue 29's client side), in a real Neovim.

The editor and daemon are test_nvim.py's (a headless `nvim --embed` through pynvim, the real
daemon, the scripted model). A plan presented with ExitPlanMode is a card in the chat,
answered through vim.ui.select (or the permission keys, "Keep planning" asking feedback
through vim.ui.input); the mode shown follows `permission_mode_changed`; an apply_patch
request lists every file and opens one review tab for all of them; skills complete after
`/`; `!`, `#` and `/context` answers are drawn; `:AgentNew` while a turn runs keeps the old
session out of the new chat. The plan test saves a screen capture (text and SVG) of the plan
card under clients/nvim/.work/artifacts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_client import read_requests
from nvim_screen import Screen
from test_nvim import Editor, open_editor, start, tool_results

ARTIFACTS = Path(__file__).resolve().parent.parent / "clients" / "nvim" / ".work" / "artifacts"

PLAN = "# Add a greeting\n\n1. Write `hello.txt`.\n2. Check it."

# vim.ui.select and vim.ui.input recorded; a plan's select (kind "agentls.plan") waits for
# the test to pick (so the screen shows the card first); any other picks _G.agentls_answer.
PICKERS = """
_G.agentls_prompts = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.agentls_prompts, opts.prompt)
  if opts.kind == 'agentls.plan' or _G.agentls_hold then
    _G.agentls_held = { items = items, choose = on_choice,
      labels = vim.tbl_map(function(item) return opts.format_item(item) end, items) }
    return
  end
  -- A question's choices (strings): the last one.
  if type(items[1]) == 'string' then return on_choice(items[#items]) end
  for _, item in ipairs(items) do
    if item.kind == (_G.agentls_answer or 'allow_once') then return on_choice(item) end
  end
  on_choice(nil)
end
vim.ui.input = function(opts, on_confirm)
  table.insert(_G.agentls_prompts, opts.prompt)
  on_confirm(_G.agentls_feedback)
end
"""

# Pick the held select's item whose field has this value.
PICK = """
local field, value = ...
local held = _G.agentls_held
_G.agentls_held = nil
for _, item in ipairs(held.items) do
  if item[field] == value then return held.choose(item) end
end
error('no item with ' .. field .. ' = ' .. value)
"""

STATUS = "require('agentls').statusline()"


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def present(call_id: str) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": "ExitPlanMode", "input": {"plan": PLAN}}]}


def in_plan_mode(editor: Editor, script: list[dict[str, Any]]) -> None:
    start(editor, script)
    editor.lua(PICKERS)
    editor.lua("require('agentls.config').options.session.permissionMode = 'plan'")


def winbar(editor: Editor) -> str:
    """The chat window's winbar as drawn (its %{%…%} evaluated)."""
    text: str = editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "local win = vim.fn.win_findbuf(chat.buffer.bufnr)[1] "
        "local bar = vim.api.nvim_eval_statusline(vim.wo[win].winbar, "
        "  { winid = win, use_winbar = true }) return bar.str"
    )
    return text


def test_an_approved_plan_is_a_card_then_the_mode_changes_and_the_turn_goes_on(
    editor: Editor,
) -> None:
    write = {"id": "w1", "name": "Write", "input": {"file_path": "hello.txt", "content": "hi\n"}}
    in_plan_mode(editor, [present("p1"), {"tool_calls": [write]}, {"text": "Done."}])
    screen = Screen.attach(editor.nvim, 110, 34)
    (editor.root / "app.py").write_text('def main():\n    print("hello")\n', encoding="utf-8")
    editor.nvim.command("edit app.py")
    editor.nvim.command("AgentAsk greet")
    # The hidden chat opens for the plan, and its options come through vim.ui.select.
    editor.wait("_G.agentls_held ~= nil")
    assert editor.lua("return _G.agentls_held.labels") == [
        "Approve (ask before edits)",
        "Approve, accept edits",
        "Keep planning",
        "Reject",
    ]
    chat = editor.chat_text()
    assert "⚠ Approve the plan\n  ────────\n" + PLAN + "\n  ────────\n" in chat, chat
    # The chat's keys reach the plan's options, by their own names.
    assert "[y] Approve (ask before edits)" in chat and "[n] Keep planning" in chat, chat
    assert editor.lua(f"return {STATUS}").startswith("agentls scripted · plan ·")
    assert "● plan mode" in winbar(editor)
    # The plan's markdown is highlighted by treesitter (its parser ships with Neovim): the
    # heading's line and the inline code of step 1, as extmarks on those lines.
    marks = editor.lua(
        "local chat = require('agentls.chat').all()[1] local out = {} "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do local g = m[4].hl_group "
        "if type(g) == 'string' and g:sub(1, 1) == '@' then "
        "local line = vim.api.nvim_buf_get_lines(chat.buffer.bufnr, m[2], m[2] + 1, false)[1] "
        "out[#out + 1] = { line, g } end end return out"
    )
    assert ["# Add a greeting", "@markup.heading.1.markdown"] in marks, marks
    assert ["1. Write `hello.txt`.", "@markup.raw.markdown_inline"] in marks, marks
    shown = "\n".join(screen.save(ARTIFACTS, "plan-card", "agentls in Neovim: a plan to approve"))
    assert "# Add a greeting" in shown and "● plan mode" in shown, shown
    editor.lua(PICK, "optionId", "plan_approve")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert (editor.root / "hello.txt").read_text(encoding="utf-8") == "hi\n"
    # Approve (ask before edits): the Write of the plan asked once more, in default mode.
    assert editor.lua("return _G.agentls_prompts") == [
        "agentls: Approve the plan",
        "agentls: Write hello.txt",
    ]
    assert editor.lua(f"return {STATUS}").startswith("agentls scripted · default ·")
    assert "● default mode" in winbar(editor)
    chat = editor.chat_text()
    assert "→ Approve (ask before edits)\n" in chat and "· mode: default" in chat, chat
    assert "Done." in chat
    approved = [r for r in tool_results(editor.log) if r["tool_use_id"] == "p1"]
    assert "approved your plan" in approved[0]["content"], approved
    screen.save(ARTIFACTS, "plan-approved", "agentls in Neovim: the plan approved, carried out")
    # Resumed, the history shows the plan under its call, as it was presented.
    editor.lua(
        "local chat = require('agentls.chat').get() "
        "require('agentls.chat').resume(chat.root, chat.session_id)"
    )
    resumed = editor.chat_text()
    assert "▸ • Plan: Add a greeting\n" in resumed, resumed
    assert "  ────────\n" + PLAN + "\n  ────────\n" in resumed, resumed


def test_keep_planning_by_key_sends_the_feedback_and_reject_keeps_plan_mode(
    editor: Editor,
) -> None:
    in_plan_mode(editor, [present("p1"), present("p2"), {"text": "Understood."}])
    editor.lua("_G.agentls_feedback = 'smaller steps please'")
    editor.nvim.command("AgentAsk greet")
    editor.wait("_G.agentls_held ~= nil")
    # Answered by the permission key instead of the select: n is "Keep planning".
    editor.lua("_G.agentls_held = nil")
    assert editor.lua("return require('agentls').permission('n')")
    editor.wait("_G.agentls_held ~= nil")
    editor.lua(PICK, "optionId", "plan_reject")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert editor.lua("return _G.agentls_prompts")[1:3] == [
        "What should the plan change? ",
        "agentls: Approve the plan",
    ]
    results = {r["tool_use_id"]: r["content"] for r in tool_results(editor.log)}
    assert "smaller steps please" in results["p1"], results
    chat = editor.chat_text()
    assert "→ Keep planning" in chat and "→ Reject" in chat and "· mode:" not in chat, chat
    assert editor.lua(f"return {STATUS}").startswith("agentls scripted · plan ·")


APP = "def a():\n    return 1\n"
PATCH = "\n".join(
    [
        "*** Begin Patch",
        "*** Add File: docs/new.md",
        "+# New",
        "*** Update File: src/app.py",
        "@@ def a():",
        "-    return 1",
        "+    return 2",
        "*** End Patch",
    ]
)


def test_a_patch_lists_every_file_reviews_them_in_one_tab_and_approving_writes_both(
    editor: Editor,
) -> None:
    (editor.root / "src").mkdir()
    (editor.root / "src" / "app.py").write_text(APP, encoding="utf-8")
    (editor.root / ".agentls").mkdir()
    # A price for the scripted model: the footer shows what the turn cost.
    prices = {"scripted": {"input": 3.0, "output": 15.0}}
    settings = {"applyPatchTool": True, "prices": prices}
    (editor.root / ".agentls" / "settings.json").write_text(json.dumps(settings))
    call = {"id": "ap", "name": "apply_patch", "input": {"input": PATCH}}
    start(editor, [{"tool_calls": [call]}, {"text": "Patched."}])
    editor.lua(PICKERS)
    editor.lua("_G.agentls_hold = true")
    editor.nvim.command("AgentAsk patch it")
    editor.wait("_G.agentls_held ~= nil")
    assert "Review the 2 files" in editor.lua("return _G.agentls_held.labels")
    chat = editor.chat_text()
    for expected in (
        "  2 files in one change (v shows each diff)",
        "    add    docs/new.md  +1 −0",
        "    update src/app.py  +1 −1",
        "[v] Review",
    ):
        assert expected in chat, chat
    editor.lua(PICK, "kind", "review")
    # One tab: the file list and the first file's diff, before | after.
    tab = editor.lua(
        "local out = {} for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do "
        "local b = vim.api.nvim_win_get_buf(win) table.insert(out, { "
        "name = vim.api.nvim_buf_get_name(b), diff = vim.wo[win].diff, "
        "lines = vim.api.nvim_buf_get_lines(b, 0, -1, false) }) end return out"
    )
    assert len(tab) == 3, tab
    assert tab[0]["lines"] == ["add    docs/new.md  +1 −0", "update src/app.py  +1 −1"]
    assert [w["diff"] for w in tab] == [False, True, True]
    assert tab[1]["lines"] == [""] and tab[2]["lines"] == ["# New"], tab
    assert tab[2]["name"].endswith("/after/docs/new.md"), tab
    # <CR> on the second file shows its diff; y approves the whole patch.
    editor.nvim.input("j<CR>")
    editor.wait("vim.api.nvim_buf_get_lines(vim.fn.winbufnr(3), 0, -1, false)[2] == '    return 2'")
    assert editor.lua("return vim.api.nvim_buf_get_lines(vim.fn.winbufnr(2), 0, -1, false)") == [
        "def a():",
        "    return 1",
    ]
    editor.nvim.input("y")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert (editor.root / "docs" / "new.md").read_text(encoding="utf-8") == "# New\n"
    assert (editor.root / "src" / "app.py").read_text(encoding="utf-8") == APP.replace("1", "2")
    # The request answered, the review tab went.
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1
    assert "→ Allow once" in editor.chat_text()
    assert ended["costUsd"] > 0
    footer = editor.lua(
        "local chat = require('agentls.chat').get() local out = {} "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do local v = m[4].virt_lines "
        "if v and not m[4].virt_lines_above then for _, l in ipairs(v) do "
        "out[#out + 1] = l[1][1] end end end return table.concat(out, ' ')"
    )
    assert f"${ended['costUsd']:.4f} this turn" in footer, footer


SKILL = "---\nname: greet\ndescription: Greets the user warmly.\n---\nSay hello.\n"


def test_skills_complete_and_mode_note_shell_and_context_answers_are_drawn(
    editor: Editor,
) -> None:
    skill = editor.root / ".agentls" / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text(SKILL, encoding="utf-8")
    (editor.root / "AGENTS.md").write_text("# Rules\n", encoding="utf-8")
    # The user has a memory file too: `#` asks which (the test's select picks the user's).
    user_memory = editor.root.parent / "agentls-home" / "AGENTS.md"
    user_memory.parent.mkdir(exist_ok=True)
    user_memory.write_text("# Mine\n", encoding="utf-8")
    start(editor, [{"text": "unused"}])
    editor.lua(PICKERS)
    editor.nvim.command("Agent")
    editor.wait("(require('agentls.chat').all()[1].commands or {})[1] ~= nil")
    found = editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
        "  if vim.b[b].agentls_root == chat.root and vim.bo[b].buftype == 'prompt' then "
        "    vim.api.nvim_set_current_buf(b) end end "
        "return require('agentls.window').complete(0, '/gr')"
    )
    assert [(i["word"], i["kind"], i["menu"]) for i in found] == [
        ("/greet", "skill", "[arguments]  Greets the user warmly.")
    ]
    # /mode sends permission_mode_changed: the winbar and statusline follow it.
    editor.lua("require('agentls').ask('/mode acceptEdits')")
    editor.wait(f"{STATUS}:find('· acceptEdits ·', 1, true) ~= nil")
    assert "● acceptEdits mode" in winbar(editor)
    editor.lua("require('agentls').ask('# run the tests with pytest')")
    editor.lua("require('agentls').ask('!echo hello-from-shell')")
    editor.lua("require('agentls').ask('/context')")
    ended = editor.turn_ended(4)
    assert [e["stopReason"] for e in ended] == ["end_turn"] * 4
    assert user_memory.read_text(encoding="utf-8") == "# Mine\n- run the tests with pytest\n"
    assert (editor.root / "AGENTS.md").read_text(encoding="utf-8") == "# Rules\n"
    chat = editor.chat_text()
    assert f"→ user: {user_memory}" in chat, chat
    assert "Noted in" in chat and "hello-from-shell" in chat, chat
    assert "↳ the output goes to the model with your next message" in chat
    assert chat.count("hello-from-shell") == 2, chat  # the card's title and its output
    # /context: its text, and a bar of what fills the window as virtual lines under it.
    bar = editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do local v = m[4].virt_lines "
        "if v and v[1][2] and v[1][2][1]:find('█') then return v end end"
    )
    assert bar, chat
    groups = {chunk[1] for chunk in bar[0] if len(chunk) > 1}
    assert "AgentlsContextFree" in groups and "AgentlsContext1" in groups, bar
    legend = "".join(chunk[0] for line in bar[1:] for chunk in line)
    assert "System prompt" in legend and "Free space" in legend, legend
    assert not read_requests(editor.log)


def test_agent_new_while_a_turn_runs_keeps_the_old_session_out_of_the_new_chat(
    editor: Editor,
) -> None:
    story = "Once upon a time the story went on and on. " * 6 + "THE END"
    start(editor, [{"text": story, "delay": 0.1, "chunk": 8}, {"text": "unused"}])
    editor.nvim.command("Agent")
    editor.lua("require('agentls').ask('tell me a story')")
    editor.wait("require('agentls.chat').all()[1].buffer:text():find('Once') ~= nil")
    old = editor.lua("return require('agentls.chat').get().session_id")
    editor.nvim.command("AgentNew")
    new = editor.lua("return require('agentls.chat').get().session_id")
    assert new != old
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    texts = editor.lua(
        "local out = {} for _, chat in ipairs(require('agentls.chat').all()) do "
        "out[chat.session_id] = { chat.buffer:text(), #vim.fn.win_findbuf(chat.buffer.bufnr) } "
        "end return out"
    )
    # The new chat is on screen and empty; the old story ended in its own, hidden buffer.
    assert texts[new][1] == 1 and "Once" not in texts[new][0], texts
    assert texts[old][0].rstrip().endswith("THE END") and texts[old][1] == 0, texts
