"""A new user's first hour with the Neovim plugin (issue 26), in a real Neovim.

The editor and daemon are test_nvim.py's (a headless `nvim --embed` through pynvim, the real
daemon, the scripted model). What a new user ran into: `:qa` refused after typing in the
prompt, commands typed in the chat window starting a second daemon, the end-of-turn footer
above the answer, a permission that needed a key to show its change and could only be
answered from the chat, choices that wrapped mid-option, a one-line tool error folded away,
`:checkhealth` advice that does not work. The permission test also attaches a UI and saves
screen captures (text and SVG) of the empty chat, a permission with its diff and a finished
turn under clients/nvim/.work/artifacts.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_client import write_script
from nvim_screen import Screen
from test_nvim import (
    DAEMON,
    EDIT,
    PLUGIN,
    Editor,
    open_editor,
    run_headless,
    start,
)

ARTIFACTS = Path(__file__).resolve().parent.parent / "clients" / "nvim" / ".work" / "artifacts"

# vim.notify recorded, so a test sees the messages (and that none is a traceback).
RECORD_NOTES = """
_G.agentls_notes = {}
vim.notify = function(message, level) table.insert(_G.agentls_notes, { message, level or 2 }) end
"""

CHAT_LINES = "vim.api.nvim_buf_get_lines(require('agentls.chat').get().buffer.bufnr, 0, -1, false)"


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def notes(editor: Editor) -> list[tuple[str, int]]:
    return [(text, level) for text, level in editor.lua("return _G.agentls_notes")]


def go_to(editor: Editor, what: str) -> None:
    """Make the chat ("chat"), its prompt ("prompt") or a file's window current."""
    editor.lua(
        """
        local what = ...
        local chat = require('agentls.chat').all()[1]
        for _, win in ipairs(vim.api.nvim_list_wins()) do
          local buf = vim.api.nvim_win_get_buf(win)
          local match = what == 'chat' and buf == chat.buffer.bufnr
            or what == 'prompt' and vim.bo[buf].buftype == 'prompt'
            or vim.api.nvim_buf_get_name(buf):sub(-#what) == what
          if match then vim.api.nvim_set_current_win(win) return end
        end
        error('no window for ' .. what)
        """,
        what,
    )


def test_qa_quits_after_typing_in_the_prompt(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    script = write_script(tmp_path / "script.jsonl", [{"text": "unused"}])
    report = tmp_path / "report.json"
    body = (
        f"local report = [==[{report}]==]\n"
        + """
vim.cmd("Agent")
-- Typed in the prompt, not sent: half a message.
local keys = vim.api.nvim_replace_termcodes("Ahalf a message<Esc>", true, false, true)
vim.api.nvim_feedkeys(keys, "xt", false)
local prompt = vim.api.nvim_get_current_buf()
local state = { buftype = vim.bo[prompt].buftype, line = vim.api.nvim_get_current_line() }
vim.fn.writefile({ vim.json.encode(state) }, report)
local ok, err = pcall(vim.cmd, "qa")
io.stderr:write("qa refused: " .. tostring(err) .. "\\n")
vim.cmd("cquit 3")
"""
    )
    done = run_headless(tmp_path, root, script, body)
    state = json.loads(report.read_text(encoding="utf-8"))
    assert state["buftype"] == "prompt" and "half a message" in state["line"], state
    assert done.returncode == 0, done.stderr


def test_commands_work_from_the_chat_and_its_prompt_on_the_same_daemon(
    editor: Editor, tmp_path: Path
) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    start(editor, [{"text": "Hello from the chat window."}, {"text": "unused"}])
    editor.lua(RECORD_NOTES)
    editor.nvim.command("edit app.py")
    # Neovim's cwd is outside the project: only the session knows the root.
    editor.nvim.command(f"cd {tmp_path}")
    editor.nvim.command("Agent")
    # :Agent leaves the cursor in the prompt, ready to type.
    assert editor.lua("return vim.bo.buftype") == "prompt"
    editor.wait("vim.api.nvim_get_mode().mode == 'i'")
    editor.nvim.input("<Esc>")
    go_to(editor, "chat")
    editor.nvim.command("AgentAsk hello")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "Hello from the chat window." in editor.chat_text()
    go_to(editor, "prompt")
    first = editor.lua("return require('agentls.chat').get().session_id")
    editor.nvim.command("AgentNew")
    chats = editor.lua(
        "local out = {} for _, c in ipairs(require('agentls.chat').all()) do "
        "table.insert(out, {c.root, c.session_id}) end return out"
    )
    assert {root for root, _ in chats} == {str(editor.root)}, chats
    assert editor.lua("return require('agentls.chat').get().session_id") != first
    assert editor.lua("return #require('agentls.client').all()") == 1
    # A bad argument is a clear message, never a Lua error.
    editor.nvim.command("AgentPermission x")
    editor.nvim.command("AgentPermission y")
    said = notes(editor)
    assert said[-2][1] == 4 and '"x" is not a permission answer' in said[-2][0], said
    assert said[-1] == ("agentls: no permission request is waiting", 3), said
    for text, _level in said:
        assert "traceback" not in text and ".lua:" not in text, said


def permission_lines(editor: Editor) -> list[str]:
    lines: list[str] = editor.lua(f"return {CHAT_LINES}")
    return [line for line in lines if line.startswith("  [")]


def test_the_permission_shows_its_diff_and_is_answered_from_the_source_window(
    editor: Editor,
) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    screen = Screen.attach(editor.nvim, 110, 30)
    start(editor, EDIT)
    editor.lua(RECORD_NOTES)
    editor.nvim.command("edit app.py")
    editor.nvim.command("Agent")
    editor.nvim.input("<Esc>")
    empty = "\n".join(screen.save(ARTIFACTS, "empty-chat", "agentls in Neovim: the chat, empty"))
    # The empty chat says what to do (and the prompt's status line how to send).
    for hint in ("Write in the prompt below; Enter sends.", "y  Allow once", "Enter sends"):
        assert hint in empty, empty
    go_to(editor, "app.py")
    editor.nvim.command("AgentAsk change the port to 9000")
    editor.wait("require('agentls.chat').get():pending_permission() ~= nil")
    chat = editor.chat_text()
    # The change is in the chat with the request: no key to press to see it.
    for expected in ("⚠ Edit app.py", "  @@ -1 +1 @@", "  -PORT = 8000", "  +PORT = 9000"):
        assert expected in chat, chat
    choices = " ".join(permission_lines(editor))
    for choice in ("[y] Allow once", "[a] Always allow", "[n] Reject", "[d] Always reject"):
        assert choice in choices, choices
    assert "[v] Review" in choices and "allow_once" not in chat
    highlights = editor.lua(
        "local chat = require('agentls.chat').get() local out = {} "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do if m[4].line_hl_group then "
        "out[vim.api.nvim_buf_get_lines(chat.buffer.bufnr, m[2], m[2] + 1, false)[1]] = "
        "m[4].line_hl_group end end return out"
    )
    assert highlights["  -PORT = 8000"] == "AgentlsDiffDelete", highlights
    assert highlights["  +PORT = 9000"] == "AgentlsDiffAdd", highlights
    # The cursor is in the source window: the message says how to answer from there.
    assert any("asks for permission" in text for text, _ in notes(editor)), notes(editor)
    shown = "\n".join(
        screen.save(ARTIFACTS, "permission", "agentls in Neovim: a permission with its diff")
    )
    assert "+PORT = 9000" in shown and "[y] Allow once" in shown, shown
    assert "Write in the prompt below" not in shown, shown
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") == str(editor.root / "app.py")
    editor.nvim.input("\\apy")  # <leader>ap, then y: allow once
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert (editor.root / "app.py").read_text(encoding="utf-8") == "PORT = 9000\n"
    lines: list[str] = editor.lua(f"return {CHAT_LINES}")
    assert "  → Allow once" in lines and not permission_lines(editor), lines
    # The footer is under the final answer.
    footer = editor.lua(
        "local chat = require('agentls.chat').get() "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do local v = m[4].virt_lines "
        "if v and not m[4].virt_lines_above then return {m[2], v[1][1][1]} end end"
    )
    assert lines[footer[0]] == "Changed the port to 9000.", (footer, lines)
    assert footer[1].startswith("── end_turn"), footer
    screen.save(ARTIFACTS, "finished-turn", "agentls in Neovim: a finished turn")


def test_the_choices_fit_a_narrow_chat_and_follow_its_width(editor: Editor) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    Screen.attach(editor.nvim, 140, 30)  # room to widen the chat
    start(editor, EDIT)
    editor.lua("require('agentls.config').options.chat.size = 30")
    editor.nvim.command("edit app.py")
    editor.nvim.command("Agent")
    editor.nvim.input("<Esc>")
    go_to(editor, "app.py")
    editor.nvim.command("AgentAsk change the port")
    editor.wait("require('agentls.chat').get():pending_permission() ~= nil")

    def layout() -> tuple[list[str], int]:
        width: int = editor.lua(
            "local win = vim.fn.win_findbuf(require('agentls.chat').get().buffer.bufnr)[1] "
            "return vim.api.nvim_win_get_width(win) - vim.fn.getwininfo(win)[1].textoff"
        )
        return permission_lines(editor), width

    def displayed(line: str) -> int:
        shown: int = editor.lua("return vim.fn.strdisplaywidth(...)", line)
        return shown

    lines, width = layout()
    assert width < 40 and len(lines) > 1, (width, lines)
    for line in lines:
        assert displayed(line) <= width, (line, width)
    # Each choice whole on one line: a line starts with a key, and each key's label follows it.
    for choice in ("[y] Allow once", "[n] Reject", "[d] Always reject", "[v] Review"):
        assert any(choice in line for line in lines), lines
    # Wider, the choices take fewer lines.
    editor.lua(
        "vim.api.nvim_win_set_width(vim.fn.win_findbuf(require('agentls.chat').get()"
        ".buffer.bufnr)[1], 100)"
    )
    editor.wait(
        f"#vim.tbl_filter(function(l) return l:find('^  %[') end, {CHAT_LINES}) < {len(lines)}"
    )
    wide, width = layout()
    assert width > 60 and all(displayed(line) <= width for line in wide), (wide, width)
    # The chat's own key answers too.
    go_to(editor, "chat")
    editor.nvim.feedkeys("y")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert (editor.root / "app.py").read_text(encoding="utf-8") == "PORT = 9000\n"


def test_a_one_line_tool_error_is_never_folded_away(editor: Editor) -> None:
    (editor.root / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    script: list[dict[str, Any]] = [
        {
            "tool_calls": [
                {"id": "r1", "name": "Read", "input": {"file_path": "missing.py"}},
                {"id": "r2", "name": "Read", "input": {"file_path": "app.py"}},
            ]
        },
        {"text": "One was missing."},
    ]
    start(editor, script)
    editor.nvim.command("Agent")
    editor.nvim.input("<Esc>")
    editor.nvim.command("AgentAsk read them")
    editor.turn_ended()
    go_to(editor, "chat")
    folds = editor.lua(
        "local out = {} for n, line in ipairs(vim.api.nvim_buf_get_lines(0, 0, -1, false)) do "
        "if vim.startswith(line, '  │ ') or vim.startswith(line, '  ┃ ') then "
        "table.insert(out, {line, vim.fn.foldclosed(n), "
        "vim.fn.foldclosed(n) > 0 and vim.fn.foldtextresult(n) or ''}) end end return out"
    )
    errors = [fold for fold in folds if fold[0].startswith("  ┃ ")]
    assert len(errors) == 1 and "missing.py" in errors[0][0], folds
    assert errors[0][1] == -1, folds  # in sight
    output = [fold for fold in folds if fold[0].startswith("  │ ")]
    assert len(output) == 3 and all(fold[1] > 0 for fold in output), folds
    assert output[0][2].strip() == "⋯ 3 lines", folds


def test_checkhealth_gives_install_advice_that_works_and_no_internal_values(
    editor: Editor,
) -> None:
    editor.lua(
        "vim.opt.runtimepath:prepend(...) vim.cmd('runtime plugin/agentls.lua') "
        "require('agentls').setup({ cmd = { 'agentls-not-installed', '--stdio' }, "
        "provider = 'scripted' })",
        str(PLUGIN),
    )
    editor.nvim.command("checkhealth agentls")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "pipx install /path/to/agentls" in report, report
    assert "pip install agentls" not in report, report
    editor.lua("require('agentls.config').options.cmd = ...", DAEMON)
    editor.nvim.command("checkhealth agentls")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "(nil)" not in report and "provider: scripted, but no script to play" in report, report
    assert "0 daemons running" in report, report


def test_a_missing_daemon_is_a_message_with_install_advice(editor: Editor) -> None:
    editor.lua(
        "vim.opt.runtimepath:prepend(...) vim.cmd('runtime plugin/agentls.lua') "
        "require('agentls').setup({ cmd = { 'agentls-not-installed', '--stdio' } })",
        str(PLUGIN),
    )
    editor.lua(RECORD_NOTES)
    editor.nvim.command("Agent")  # no Lua error reaches the user
    said = notes(editor)
    assert said == [
        (
            'agentls: the daemon command "agentls-not-installed" is not on PATH. Install '
            "agentls from a checkout (pipx install /path/to/agentls) or set cmd in setup(); "
            "see :checkhealth agentls",
            4,
        )
    ], said


def test_highlight_groups_are_default_links_a_colour_scheme_can_replace(editor: Editor) -> None:
    start(editor, [])
    got = editor.lua(
        """
        local function hl(name) return vim.api.nvim_get_hl(0, { name = name }) end
        local out = { diff = hl('AgentlsDiffAdd'), key = hl('AgentlsPermissionKey') }
        -- A scheme's own definition wins over the default link.
        vim.cmd('hi AgentlsDiffAdd guifg=#123456')
        require('agentls.highlights').define()
        out.own = hl('AgentlsDiffAdd').fg
        -- :colorscheme clears every group; the links come back.
        vim.cmd('colorscheme default')
        out.after = hl('AgentlsDiffAdd')
        return out
        """
    )
    assert got["diff"] == {"link": "DiffAdd", "default": True}, got
    assert got["key"] == {"link": "Special", "default": True}, got
    assert got["own"] == 0x123456, got
    assert got["after"] == {"link": "DiffAdd", "default": True}, got
