"""Isolated agents' worktrees, plugins and interactive shells in the Neovim plugin (issue 29's
client side), in a real headless Neovim driving the real daemon with the scripted model.

An isolated `Task` leaves a card in the chat (branch, files with +/−); `:AgentWorktrees`
views its diff in a read-only tab, merges it into the user's tree (a real git repository in
tmp) or discards it after a confirmation, and the card follows `worktree_resolved`. A plugin
installed in a private AGENTLS_HOME is listed by `:AgentPlugins`, its command completes
after `/` tagged "plugin", and its trust request shows what it would run. A `WriteStdin`
call is drawn as a line typed into the shell, under the shell's command.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from plugin_fixture import make_plugin
from test_nvim import Editor, open_editor, start

# vim.ui.select answered from a queue: each pick is a piece of the label to choose (the
# permission prompts, not queued, are allowed once as test_nvim's SETUP does).
PICKER = """
_G.agentls_picks = {}
_G.agentls_pick_prompts = {}
local allow = vim.ui.select
vim.ui.select = function(items, opts, on_choice)
  if opts.kind == nil or opts.kind == 'agentls.permission' then
    return allow(items, opts, on_choice)
  end
  table.insert(_G.agentls_pick_prompts, opts.prompt)
  local want = table.remove(_G.agentls_picks, 1)
  for _, item in ipairs(items) do
    local label = opts.format_item and opts.format_item(item) or item
    if want and label:find(want, 1, true) then return on_choice(item) end
  end
  on_choice(nil)
end
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def git(cwd: Path, *args: str) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    identity = ("-c", "user.name=Test", "-c", "user.email=test@example.com")
    done = subprocess.run(
        ["git", *identity, *args], cwd=cwd, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def isolated(call_id: str, prompt: str) -> dict[str, Any]:
    arguments = {"description": prompt, "prompt": prompt, "isolation": "worktree"}
    return {"id": call_id, "name": "Task", "input": arguments}


def write(call_id: str, path: str, content: str) -> dict[str, Any]:
    return {"id": call_id, "name": "Write", "input": {"file_path": path, "content": content}}


def pick(editor: Editor, *labels: str) -> None:
    """Run :AgentWorktrees choosing these labels in turn, and wait until all were used."""
    editor.lua("_G.agentls_picks = ...", list(labels))
    editor.nvim.command("AgentWorktrees")
    editor.wait("#_G.agentls_picks == 0")


def make_repo(ws: Path) -> None:
    """The editor's root as a git repository with app.txt committed."""
    shutil.rmtree(ws / ".git")
    (ws / "app.txt").write_text("app\n", encoding="utf-8")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "start")


def line_groups(editor: Editor, text: str) -> list[str]:
    """The line highlight groups of the chat's line that starts with `text`."""
    groups: list[str] = editor.lua(
        "local chat = require('agentls.chat').all()[1] local want = ... "
        "local b = chat.buffer.bufnr local out = {} "
        "for row, line in ipairs(vim.api.nvim_buf_get_lines(b, 0, -1, false)) do "
        "  if vim.startswith(line, want) then "
        "    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(b, -1, {row - 1, 0}, {row - 1, -1}, "
        "      {details = true})) do "
        "      if m[4].line_hl_group then out[#out + 1] = m[4].line_hl_group end end end end "
        "return out",
        text,
    )
    return groups


def test_an_isolated_agents_card_then_merge_view_and_discard_from_agent_worktrees(
    editor: Editor,
) -> None:
    ws = editor.root
    make_repo(ws)
    script = [
        {"tool_calls": [isolated("a", "Write alpha"), isolated("b", "Write beta")]},
        {"for": "Write alpha", "tool_calls": [write("wa", "alpha.txt", "alpha\n")]},
        {"for": "Write beta", "tool_calls": [write("wb", "beta.txt", "beta\nmore\n")]},
        {"for": "Write alpha", "text": "Wrote alpha."},
        {"for": "Write beta", "text": "Wrote beta."},
        {"text": "Both agents are done."},
    ]
    start(editor, script)
    editor.lua(PICKER)
    editor.lua("require('agentls.config').options.session.permissionMode = 'acceptEdits'")
    editor.nvim.command("AgentAsk write both")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    chat = editor.chat_text()
    # One card per agent: its branch, its files with +/−, and how to act on it.
    assert chat.count("  ⎇ agentls/agent_") == 2, chat
    assert "1 file  +1 −0  (:AgentWorktrees views, merges or discards it)" in chat, chat
    assert "    added    alpha.txt  +1 −0" in chat and "    added    beta.txt  +2 −0" in chat
    assert not (ws / "alpha.txt").exists()

    pick(editor, "Write alpha", "Merge into my tree")
    editor.wait(
        "require('agentls.chat').all()[1].buffer:text():find('merged into your tree', 1, true)"
    )
    assert (ws / "alpha.txt").read_text(encoding="utf-8") == "alpha\n"
    chat = editor.chat_text()
    assert "+1 −0  · merged into your tree (1 file written)\n    added    alpha.txt" in chat, chat

    # The diff of the other one, in a read-only tab; q closes it.
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")
    pick(editor, "Write beta", "View diff")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    diff = editor.lua(
        "local b = vim.api.nvim_get_current_buf() "
        "local win = vim.fn.win_findbuf(b)[1] vim.cmd('wincmd l') "
        "local d = vim.api.nvim_get_current_buf() "
        "return { vim.api.nvim_buf_get_lines(b, 0, -1, false), "
        "vim.api.nvim_buf_get_lines(d, 0, -1, false), vim.bo[d].modifiable, vim.bo[d].filetype }"
    )
    files, lines, modifiable, filetype = diff
    assert files == ["beta.txt  +2 −0"], files
    assert "+beta" in lines and "+more" in lines and not modifiable and filetype == "diff"
    editor.nvim.command("normal q")
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == tabs

    # Discard asks first: kept, nothing happens; confirmed, the worktree and branch go.
    pick(editor, "Write beta", "Discard", "Keep it")
    pick(editor, "Write beta", "Discard", "Discard")
    editor.wait("require('agentls.chat').all()[1].buffer:text():find('· discarded', 1, true)")
    assert "discard agentls/agent_" in editor.lua(
        "return _G.agentls_pick_prompts[#_G.agentls_pick_prompts]"
    )
    assert not (ws / "beta.txt").exists()
    assert git(ws, "branch", "--list", "agentls/*") == ""
    # The redrawn cards have their new look only, and the lines after them none of the old.
    chat = editor.chat_text()
    beta_head = next(line for line in chat.split("\n") if "· discarded" in line)
    assert line_groups(editor, beta_head) == ["AgentlsFooter"]
    for line in set(chat.split("\n")):
        if line and not line.startswith(("  ⎇ ", "    added ")):
            assert line_groups(editor, line) == [], line
    assert git(ws, "status", "--porcelain") == "?? alpha.txt\n"


def test_a_plugin_shows_in_agent_plugins_completes_and_its_trust_request_names_its_runs(
    editor: Editor, tmp_path: Path
) -> None:
    marks = tmp_path / "marks.txt"
    plugin = make_plugin(tmp_path / "plugins" / "demo", "demo", marks=marks)
    env = {**os.environ}
    subprocess.run(
        [sys.executable, "-m", "agentls", "plugin", "add", str(plugin)],
        env=env,
        check=True,
        capture_output=True,
    )
    start(editor, [{"text": "Hello."}])
    editor.nvim.command("AgentAsk hi")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    chat = editor.chat_text()
    # The trust question shows the plugin and the hook command it would run.
    assert "⚠ Trust the plugin demo?" in chat, chat
    assert "  plugin demo would run, with your rights:\n    $ " in chat, chat
    assert "/scripts/mark.py demo" in chat
    assert marks.read_text(encoding="utf-8") == "demo\n"
    bufnr = editor.lua("return require('agentls').plugins()")
    shown = editor.lua("return vim.api.nvim_buf_get_lines(..., 0, -1, false)", bufnr)
    assert shown[0] == "1 plugin installed (read when the session opened)", shown
    assert shown[2].startswith("demo 1.2.0  enabled  ("), shown
    assert "  demo tools" in shown and "  hooks: yes" in shown, shown
    assert "  agents: demo:checker" in shown and "  skills: demo:helper" in shown, shown
    assert any(line.startswith("  commands: ") and "demo:greet" in line for line in shown), shown
    editor.nvim.command("close")
    # Its command completes after "/", tagged by its source.
    found = editor.lua(
        "local window = require('agentls.window') "
        "local chat = require('agentls.chat').all()[1] "
        "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
        "  if vim.b[b].agentls_root == chat.root and vim.bo[b].buftype == 'prompt' then "
        "    vim.api.nvim_set_current_buf(b) end end "
        "return window.complete(0, '/demo:')"
    )
    greet = [item for item in found if item["word"] == "/demo:greet"]
    assert greet and greet[0]["kind"] == "plugin", found


def test_write_stdin_is_a_line_typed_into_the_shell_controls_in_caret_notation(
    editor: Editor,
) -> None:
    script = [
        {
            "tool_calls": [
                {"id": "s", "name": "Bash", "input": {"command": "cat", "run_in_background": True}}
            ]
        },
        {
            "tool_calls": [
                {
                    "id": "w1",
                    "name": "WriteStdin",
                    "input": {"shell_id": "shell_1", "input": "hi\n", "wait_ms": 300},
                }
            ]
        },
        {
            "tool_calls": [
                {
                    "id": "w2",
                    "name": "WriteStdin",
                    "input": {"shell_id": "shell_1", "input": "\u0003", "wait_ms": 300},
                }
            ]
        },
        {"text": "Typed."},
    ]
    start(editor, script)
    editor.nvim.command("AgentAsk type into cat")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    chat = editor.chat_text()
    assert "▸ shell_1 (cat) ❯ hi⏎\n" in chat, chat
    assert "▸ shell_1 (cat) ❯ ^C\n" in chat, chat
    # Resumed, the history draws the same lines (the shell's command is not known there).
    editor.lua(
        "local chat = require('agentls.chat').get() "
        "require('agentls.chat').resume(chat.root, chat.session_id)"
    )
    resumed = editor.chat_text()
    assert "▸ shell_1 ❯ hi⏎\n" in resumed and "▸ shell_1 ❯ ^C\n" in resumed, resumed


def test_a_conflicting_merge_names_each_conflict_and_writes_nothing(editor: Editor) -> None:
    ws = editor.root
    make_repo(ws)
    read = {"id": "r", "name": "Read", "input": {"file_path": "app.txt"}}
    edit = {
        "id": "e",
        "name": "Edit",
        "input": {"file_path": "app.txt", "old_string": "app", "new_string": "agent"},
    }
    script = [
        {"tool_calls": [isolated("a", "Change app")]},
        {"for": "Change app", "tool_calls": [read]},
        {"for": "Change app", "tool_calls": [edit]},
        {"for": "Change app", "text": "Changed."},
        {"text": "Done."},
    ]
    start(editor, script)
    editor.lua(PICKER)
    editor.lua(
        "_G.agentls_notes = {} vim.notify = function(msg, level) "
        "table.insert(_G.agentls_notes, { msg, level }) end"
    )
    editor.lua("require('agentls.config').options.session.permissionMode = 'acceptEdits'")
    editor.nvim.command("AgentAsk change it")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "    modified app.txt  +1 −1" in editor.chat_text()
    # Meanwhile the user changed the same line.
    (ws / "app.txt").write_text("mine\n", encoding="utf-8")
    pick(editor, "Change app", "Merge into my tree")
    message = editor.wait(
        "(function() for _, n in ipairs(_G.agentls_notes) do "
        "if n[1]:find('conflict', 1, true) then return n[1] end end end)()"
    )
    assert message.startswith("agentls: agentls/agent_"), message
    assert ": the merge changed nothing: 1 conflict\n  app.txt: " in message, message
    assert (ws / "app.txt").read_text(encoding="utf-8") == "mine\n"
    assert "(:AgentWorktrees views, merges or discards it)" in editor.chat_text()
