"""Rules, MCP servers and a resumed history in sight from Neovim (issue 30 items 4 and 1,
Neovim side), in a real headless Neovim driving the real daemon with the scripted model.

`:AgentRules` lists the rules by behavior with their scopes and adds (`a`) or removes (`d`)
one through agent/updatePermissionRules: checked in the settings files. `:AgentMcp` lists the
MCP servers (the tests' real stdio server), follows their mcp_status, and restarts, disables
(remembered in `.agentls/settings.local.json`, its tools gone from the model's request) and
enables one.

A resumed history's user messages carry the turn they began (`DisplayMessage.turnId`), so
`:AgentChanges` and `:AgentRewind` work from them as from a live turn.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_client import read_requests
from nvim_screen import Screen
from test_nvim import Editor, open_editor, start
from test_nvim_power import ARTIFACTS
from test_nvim_rewind import picks, session_texts, two_turns
from test_nvim_worktrees import PICKER


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


# vim.ui.input answered from a queue, as vim.ui.select is by PICKER.
INPUTS = """
_G.agentls_inputs = {}
vim.ui.input = function(opts, on_confirm) on_confirm(table.remove(_G.agentls_inputs, 1)) end
"""


def view_lines(editor: Editor) -> list[str]:
    lines: list[str] = editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
    return lines


def settings(path: Path) -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return loaded


def test_agent_rules_lists_adds_and_removes_rules_in_their_files(editor: Editor) -> None:
    shared = editor.root / ".agentls" / "settings.json"
    shared.parent.mkdir()
    shared.write_text(json.dumps({"permissions": {"deny": ["Bash(rm:*)"]}}), encoding="utf-8")
    start(editor, [])
    editor.lua(PICKER)
    editor.lua(INPUTS)
    editor.nvim.command("AgentRules")
    editor.wait("vim.api.nvim_buf_get_name(0):find('agentls://rules/', 1, true) ~= nil")
    editor.wait("vim.api.nvim_buf_get_lines(0, 0, -1, false)[2] == 'allow (0)'")
    assert view_lines(editor) == [
        "a add · d remove · q close",
        "allow (0)",
        "  (none)",
        "ask (0)",
        "  (none)",
        "deny (1)",
        "  Bash(rm:*)  project",
    ]
    # a: the rule, its behavior and where it is kept.
    editor.lua("table.insert(_G.agentls_inputs, 'Bash(npm test:*)')")
    picks(editor, "allow", "local:")
    editor.nvim.feedkeys("a", "x")
    editor.wait("vim.api.nvim_buf_get_lines(0, 0, -1, false)[2] == 'allow (1)'")
    assert view_lines(editor)[2] == "  Bash(npm test:*)  local"
    personal = editor.root / ".agentls" / "settings.local.json"
    assert settings(personal)["permissions"]["allow"] == ["Bash(npm test:*)"]
    assert editor.lua("return _G.agentls_pick_prompts") == [
        "agentls: Bash(npm test:*)",
        "agentls: keep it in",
    ]
    # A malformed rule: the daemon's reason at the top, nothing changed.
    editor.lua("table.insert(_G.agentls_inputs, 'not a rule')")
    picks(editor, "deny", "project:")
    editor.nvim.feedkeys("a", "x")
    editor.wait("vim.startswith(vim.api.nvim_buf_get_lines(0, 1, 2, false)[1], '! ')")
    problem = view_lines(editor)[1]
    assert "Malformed permission rule 'not a rule'" in problem, problem
    assert settings(shared)["permissions"]["deny"] == ["Bash(rm:*)"]
    # d on a rule's line removes it from its file.
    editor.lua(
        "for row, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do "
        "if line:find('rm:', 1, true) then vim.api.nvim_win_set_cursor(0, { row, 0 }) end end"
    )
    editor.nvim.feedkeys("d", "x")
    editor.wait("vim.api.nvim_buf_get_lines(0, 0, -1, false)[6] == 'deny (0)'")
    assert settings(shared)["permissions"].get("deny", []) == []
    assert settings(personal)["permissions"]["allow"] == ["Bash(npm test:*)"]
    # A UI only now: the refusal's message above would wait for Enter on a screen.
    screen = Screen.attach(editor.nvim, 110, 30)
    shown = "\n".join(screen.save(ARTIFACTS, "rules-view", "agentls in Neovim: :AgentRules"))
    assert "Bash(npm test:*)  local" in shown, shown
    editor.nvim.feedkeys("q", "x")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)").find("agentls://rules/") < 0


MCP_SERVER = Path(__file__).with_name("mcp_fixture_server.py")


def cursor_on(editor: Editor, text: str) -> None:
    """The cursor on the view's first line that starts with `text`, once there is one."""
    editor.wait(
        f"(function() local want = {json.dumps(text)} "
        "for row, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do "
        "if vim.startswith(line, want) then vim.api.nvim_win_set_cursor(0, { row, 0 }) "
        "return true end end end)()"
    )


def server_line(editor: Editor, condition: str) -> str:
    """The MCP view's line of the fx server, once it satisfies the Lua `condition` on `line`."""
    line: str = editor.wait(
        "(function() for _, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do "
        f"if vim.startswith(line, 'fx  ') and ({condition}) then return line end end end)()",
        timeout=30,
    )
    return line


def mcp_tools(request: dict[str, Any]) -> list[str]:
    return [name for name in request["tools"] if name.startswith("mcp__fx__")]


def test_agent_mcp_restarts_disables_and_enables_a_server(editor: Editor) -> None:
    start(editor, [{"text": "With fx."}, {"text": "Without fx."}])
    servers = [{"name": "fx", "command": sys.executable, "args": [str(MCP_SERVER)]}]
    editor.lua("require('agentls.config').options.session.mcpServers = ...", servers)
    editor.nvim.command("AgentMcp")
    editor.wait("vim.api.nvim_buf_get_name(0):find('agentls://mcp/', 1, true) ~= nil")
    line = server_line(editor, "line:find('  ready  ', 1, true)")
    assert line == "fx  ready  stdio  8 tools  (agent/newSession)", line
    assert view_lines(editor)[0] == "r restart · e enable · x disable · l log · q close"
    # A restart from anywhere: the list follows the server's mcp_status events.
    editor.lua("require('agentls.chat').get():request('agent/restartMcpServer', { name = 'fx' })")
    line = server_line(editor, "line:find('2 starts', 1, true) and line:find('  ready  ', 1, true)")
    assert line == "fx  ready  stdio  8 tools  2 starts  (agent/newSession)", line
    # r on its line restarts it once more.
    cursor_on(editor, "fx  ")
    editor.nvim.feedkeys("r", "x")
    server_line(editor, "line:find('3 starts', 1, true) and line:find('  ready  ', 1, true)")
    editor.nvim.command("AgentAsk hello")
    editor.turn_ended()
    assert "mcp__fx__echo" in mcp_tools(read_requests(editor.log)[-1])
    # x disables it: stopped, its tools gone, and the project remembers it.
    editor.nvim.command("AgentMcp")
    cursor_on(editor, "fx  ")
    editor.nvim.feedkeys("x", "x")
    screen = Screen.attach(editor.nvim, 110, 30)
    line = server_line(editor, "line:find('  disabled  ', 1, true)")
    shown = "\n".join(screen.save(ARTIFACTS, "mcp-view", "agentls in Neovim: :AgentMcp"))
    assert "fx  disabled  stdio" in shown and "r restart · e enable" in shown, shown
    personal = editor.root / ".agentls" / "settings.local.json"
    assert settings(personal)["disabledMcpServers"] == ["fx"]
    editor.nvim.command("AgentAsk and now?")
    editor.turn_ended(2)
    assert mcp_tools(read_requests(editor.log)[-1]) == []
    # e enables it again.
    editor.nvim.command("AgentMcp")
    cursor_on(editor, "fx  ")
    editor.nvim.feedkeys("e", "x")
    server_line(editor, "line:find('  ready  ', 1, true)")
    assert settings(personal).get("disabledMcpServers", []) == []
    # l opens its stderr log in a tab.
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")
    cursor_on(editor, "fx  ")
    editor.nvim.feedkeys("l", "x")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    session = editor.lua("return require('agentls.chat').get().session_id")
    log = editor.root.parent / "agentls-home" / "sessions" / session / "mcp" / "fx.stderr.log"
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") == str(log)
