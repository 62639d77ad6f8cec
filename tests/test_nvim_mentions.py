"""Mentions and editor intelligence from Neovim (issue 30 item 3, Neovim side), in a real
headless Neovim driving the real daemon with the scripted model.

Navigation: the plugin announces `experimental.agentls.definition`, `references` and
`workspaceSymbols` and answers them from Neovim's other language servers, here a real pygls
server (tests/nvim_nav_server.py) started by Neovim's own LSP client for Python buffers. It
negotiates UTF-16 while the daemon's connection is in UTF-8, so each position is converted on
the way out and back (an emoji on the line tells them apart).
"""

from __future__ import annotations

import json
import re
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from agent_client import read_requests
from test_nvim import Editor, open_editor, start, tool_results

NAV_SERVER = Path(__file__).with_name("nvim_nav_server.py")
LIB = 'def greet(name):\n    return "héllo 😀 " + name\n'
APP = 'from lib import greet\ns = "😀"; print(greet("a"))\ngreet("b")\n'

# Neovim's client starts the fixture server for Python buffers, in UTF-16 only.
NAV_SETUP = """
local cmd, log = ...
vim.api.nvim_create_autocmd("FileType", { pattern = "python", callback = function(args)
  local capabilities = vim.lsp.protocol.make_client_capabilities()
  capabilities.general.positionEncodings = { "utf-16" }
  vim.lsp.start({ name = "nav-fixture", cmd = cmd, root_dir = vim.fn.getcwd(),
    cmd_env = { NAV_SERVER_LOG = log }, capabilities = capabilities }, { bufnr = args.buf })
end })
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def tool(call_id: str, name: str, **tool_input: Any) -> dict[str, Any]:
    return {"tool_calls": [{"id": call_id, "name": name, "input": tool_input}]}


def nav_server(editor: Editor) -> Path:
    """The fixture language server, running for lib.py (open); its requests' log."""
    log = editor.root.parent / "nav-requests.jsonl"
    editor.lua(NAV_SETUP, [sys.executable, str(NAV_SERVER)], str(log))
    editor.nvim.command("edit lib.py")
    editor.wait(
        "(function() local c = vim.lsp.get_clients({ name = 'nav-fixture' })[1] "
        "return c and c.initialized end)()",
        timeout=30,
    )
    return log


def test_the_model_navigates_through_neovims_language_servers(editor: Editor) -> None:
    (editor.root / "lib.py").write_text(LIB, encoding="utf-8")
    (editor.root / "app.py").write_text(APP, encoding="utf-8")
    script = [
        tool("d", "GoToDefinition", file_path="app.py", line=2, symbol="greet"),
        tool("r", "FindReferences", file_path="lib.py", line=1, column=5),
        tool("s", "WorkspaceSymbols", query="gre"),
        {"text": "Found it."},
    ]
    start(editor, script)
    log = nav_server(editor)
    editor.nvim.command("AgentAsk where is greet?")
    [ended] = editor.turn_ended(timeout=40)
    assert ended["stopReason"] == "end_turn", editor.chat_text()

    results = {r["tool_use_id"]: r["content"] for r in tool_results(editor.log)}
    assert results["d"] == "lib.py:1:5: def greet(name):"
    assert results["r"] == (
        "app.py:1:17: from lib import greet\n"
        'app.py:2:16: s = "😀"; print(greet("a"))\n'
        'app.py:3:1: greet("b")\n'
        "lib.py:1:5: def greet(name):"
    )
    assert results["s"] == "lib.py:1:5: function greet (in lib): def greet(name):"
    # The two connections count columns differently, so both ways were converted.
    encodings = editor.lua(
        "return { vim.lsp.get_clients({ name = 'agentls' })[1].offset_encoding, "
        "vim.lsp.get_clients({ name = 'nav-fixture' })[1].offset_encoding }"
    )
    assert encodings == ["utf-8", "utf-16"]
    asked = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    definition = next(a for a in asked if a["method"] == "definition")
    assert definition["params"]["textDocument"]["uri"] == (editor.root / "app.py").as_uri()
    # "greet" after the emoji: code point 15, UTF-16 column 16.
    assert definition["params"]["position"] == {"line": 1, "character": 16}
    assert [a["method"] for a in asked] == ["definition", "references", "workspace/symbol"]
    # app.py was loaded for the question (its server attached to it) and wiped after.
    assert editor.lua("return vim.fn.bufnr(...)", str(editor.root / "app.py")) == -1


def test_navigation_with_no_language_server_answers_none_found(editor: Editor) -> None:
    (editor.root / "notes.txt").write_text("alpha beta\n", encoding="utf-8")
    script = [
        tool("d", "GoToDefinition", file_path="notes.txt", line=1, symbol="beta"),
        tool("s", "WorkspaceSymbols", query="beta"),
        {"text": "Nothing."},
    ]
    start(editor, script)
    editor.nvim.command("AgentAsk where is beta?")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn", editor.chat_text()
    results = {r["tool_use_id"]: r for r in tool_results(editor.log)}
    assert not results["d"]["is_error"], results
    assert results["d"]["content"].startswith("The editor found no definition"), results
    assert not results["s"]["is_error"], results


# The submitMessage params the plugin sends, kept for the test.
KEEP_SENT = """
local client_mod = require("agentls.client")
local request = client_mod.request
_G.agentls_sent = {}
client_mod.request = function(client, method, params, callback)
  if method == "agent/submitMessage" then table.insert(_G.agentls_sent, vim.deepcopy(params)) end
  return request(client, method, params, callback)
end
"""


def open_prompt(editor: Editor) -> None:
    """The chat open, the cursor in its prompt in insert mode."""
    editor.nvim.command("Agent")
    editor.wait("vim.bo.buftype == 'prompt' and vim.fn.mode() == 'i'")


# Pick the menu's item of that word and kind, if offered now: one call, so the menu cannot
# change between finding the item and picking it. The menu's items, or nil.
PICK_ITEM = """
local word, kind = ...
local items = vim.fn.complete_info({ "items" }).items
for i, item in ipairs(items) do
  if item.word == word and item.kind == kind then
    vim.api.nvim_select_popupmenu_item(i - 1, true, true, {})
    return items
  end
end
"""


def complete(editor: Editor, typed: str, word: str, kind: str) -> list[dict[str, Any]]:
    """Type `typed` in the prompt, <C-x><C-o>, and pick `word` of `kind` once it is offered
    (symbols and sessions come a moment later); the menu's items."""
    editor.nvim.input(typed + "<C-x><C-o>")
    deadline = time.monotonic() + 20
    while (menu := editor.lua(PICK_ITEM, word, kind)) is None:
        assert time.monotonic() < deadline, f"{word} ({kind}) was never offered"
        time.sleep(0.05)
    editor.wait("vim.fn.pumvisible() == 0")
    items: list[dict[str, Any]] = menu
    return items


def sent_attachments(editor: Editor) -> list[dict[str, Any]]:
    editor.wait("#_G.agentls_sent > 0")
    attachments: list[dict[str, Any]] = editor.lua(
        "return _G.agentls_sent[#_G.agentls_sent].attachments or {}"
    )
    return attachments


def test_at_completes_symbols_files_folders_and_problems_and_the_message_attaches_them(
    editor: Editor,
) -> None:
    (editor.root / "lib.py").write_text(LIB, encoding="utf-8")
    (editor.root / "app.py").write_text(APP, encoding="utf-8")
    (editor.root / "src" / "deep").mkdir(parents=True)
    (editor.root / "src" / "util.py").write_text("X = 1\n", encoding="utf-8")
    (editor.root / "src" / "deep" / "leaf.txt").write_text("leaf\n", encoding="utf-8")
    start(editor, [{"text": "Seen."}])
    editor.lua(KEEP_SENT)
    nav_server(editor)
    editor.lua(
        "vim.diagnostic.set(vim.api.nvim_create_namespace('t'), vim.fn.bufnr('lib.py'), "
        "{{ lnum = 1, col = 4, severity = 1, message = 'greet returns a str' }})"
    )
    open_prompt(editor)
    menu = complete(editor, "see @gree", "@greet", "symbol")
    assert any(item["menu"] == "Function lib.py:1" for item in menu), menu
    menu = complete(editor, " and @sr", "@src/", "folder")
    words = {(item["word"], item["kind"]) for item in menu}
    assert {("@src/deep/", "folder"), ("@src/util.py", "file")} <= words, words
    menu = complete(editor, " with @probl", "@problems:lib.py", "problems")
    assert ("@problems", "problems") in {(item["word"], item["kind"]) for item in menu}
    editor.nvim.input(" and @app.py<CR>")
    root = editor.root
    assert sent_attachments(editor) == [
        {
            "uri": (root / "lib.py").as_uri(),
            # The symbol's lines, not only its name's range.
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 16}},
            "name": "greet",
        },
        {"uri": (root / "src").as_uri()},
        {"uri": "agentls:diagnostics?uri=" + quote((root / "lib.py").as_uri(), safe="")},
        {"uri": (root / "app.py").as_uri()},
    ]
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn", editor.chat_text()
    assert "> see @greet and @src/ with @problems:lib.py and @app.py" in editor.chat_text()
    context = user_text(editor)
    assert re.search(r'<attachment path="lib.py" lines="1-1"[^>]*>\ndef greet\(name\):', context)
    assert '<attachment path="app.py">\nfrom lib import greet' in context, context
    # The folder as a listing, the file's problems as Neovim has them.
    listing = context[context.index('<attachment path="src/"') :]
    listing = listing[: listing.index("</attachment>")]
    assert "deep/leaf.txt" in listing and "util.py" in listing, context
    assert "2:5 error: greet returns a str" in context, context
    # The transcript keeps the message as the model got it, listing included.
    session = editor.lua("return require('agentls.chat').get().session_id")
    transcript = root.parent / "agentls-home" / "sessions" / f"{session}.jsonl"
    assert "deep/leaf.txt" in transcript.read_text(encoding="utf-8")


def user_text(editor: Editor, index: int = 0) -> str:
    """The text of the last user message of model request `index`."""
    request = read_requests(editor.log)[index]
    blocks = request["messages"][-1]["content"]
    return "\n".join(b["text"] for b in blocks if b["type"] == "text")


def test_at_session_attaches_another_session_of_the_project(editor: Editor) -> None:
    start(editor, [{"text": "Kiwi it is."}, {"text": "Noted."}])
    editor.lua(KEEP_SENT)
    editor.nvim.command("AgentAsk remember the word kiwi")
    editor.turn_ended()
    earlier = editor.lua("return require('agentls.chat').get().session_id")
    editor.nvim.command("AgentNew")
    open_prompt(editor)
    menu = complete(
        editor, "what did we say in @sess", "@session:remember-the-word-kiwi", "session"
    )
    [offered] = [item for item in menu if item["kind"] == "session"]
    assert offered["menu"] == "remember the word kiwi (1 turn)", offered
    editor.nvim.input("?<CR>")
    assert sent_attachments(editor) == [
        {"uri": f"agentls:session/{earlier}", "name": "remember the word kiwi"}
    ]
    editor.turn_ended(2)
    context = user_text(editor, -1)
    assert "Kiwi it is." in context, context
