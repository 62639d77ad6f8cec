"""Neovim: a tool call's card shows the icon of its kind, its title and the files it touches
(relative to the workspace, with the line when given), drawn by one function whether the
call is live (tool_call, tool_call_update) or resumed (DisplayMessage.toolCalls): the same
session resumed shows the same card lines as the live turn did.

lua/agentls/tool_cards.lua alone in a headless Neovim, then the real daemon with the
scripted provider running Read and Bash in a real headless Neovim (test_nvim.py's set-up).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_nvim import Editor, bare_nvim, open_editor, resume_from_list, start


@pytest.fixture(scope="module")
def nvim() -> Iterator[Any]:
    with bare_nvim() as editor:
        yield editor


def card(nvim: Any, call: dict[str, Any], root: str = "/ws", icons: Any = None) -> Any:
    """tool_cards.lines(call, root, icons): the lines' texts and groups, and the icon's range."""
    return nvim.exec_lua(
        "local call, root, icons = ... if icons == vim.NIL then icons = nil end "
        "local shown, icon = require('agentls.tool_cards').lines(call, root, icons) "
        "return { shown, icon }",
        call,
        root,
        icons,
    )


def test_a_card_is_its_kinds_icon_its_title_and_the_files_the_title_does_not_name(
    nvim: Any,
) -> None:
    read = {"title": "Read app.py", "kind": "read", "locations": [{"path": "/ws/app.py"}]}
    # The title names the file already: no line for it; "≡" is three bytes after "▸ ".
    assert card(nvim, read) == [[["▸ ≡ Read app.py"]], [4, 7]]
    # Location lines count from 0: line 11 is the twelfth.
    read["locations"] = [{"path": "/ws/src/app.py", "line": 11}]
    assert card(nvim, read)[0] == [
        ["▸ ≡ Read app.py"],
        ["  @ src/app.py:12", "AgentlsToolLocation"],
    ]
    # Outside the workspace a path stays whole.
    outside = {"title": "Read /etc/hosts", "kind": "read", "locations": [{"path": "/etc/hosts"}]}
    assert card(nvim, outside)[0] == [["▸ ≡ Read /etc/hosts"]]
    assert card(nvim, {"title": "List files", "kind": "execute"})[0] == [["▸ $ List files"]]
    # An unknown kind is "other"'s; no kind at all (an older daemon's history), no icon.
    assert card(nvim, {"title": "mcp__x", "kind": "brand_new"})[0] == [["▸ • mcp__x"]]
    assert card(nvim, {"title": "Read a", "locations": None}) == [[["▸ Read a"]]]
    assert card(nvim, {"kind": "other"}) == [[["▸ • "]], [4, 7]]
    # Icons replaced, or none for a kind set to false.
    icons = {"read": "R", "execute": False}
    assert card(nvim, {"title": "Read a", "kind": "read"}, "/ws", icons)[0] == [["▸ R Read a"]]
    assert card(nvim, {"title": "ls", "kind": "execute"}, "/ws", icons)[0] == [["▸ ls"]]
    # A patch of many files: five, then how many more.
    patch = {
        "title": "apply_patch: 7 files",
        "kind": "edit",
        "locations": [{"path": f"/ws/f{n}.py"} for n in range(7)],
    }
    shown = [line[0] for line in card(nvim, patch)[0]]
    assert shown == ["▸ ✎ apply_patch: 7 files"] + [f"  @ f{n}.py" for n in range(5)] + [
        "  @ … 2 more files"
    ]
    widths = nvim.exec_lua(
        "local out = {} for kind, icon in pairs(require('agentls.tool_cards').ICONS) do "
        "out[kind] = vim.fn.strdisplaywidth(icon) end return out"
    )
    assert set(widths.values()) == {1}, widths


PURITY = """
local tool_cards = require('agentls.tool_cards')
local api = vim.api
vim.api = setmetatable({}, { __index = function(_, name)
  error('tool_cards.lua used vim.api.' .. name)
end })
local ok, err = pcall(tool_cards.lines, { title = 't', kind = 'read',
  locations = { { path = '/ws/a', line = 1 } } }, '/ws')
vim.api = api
return { ok, err or '' }
"""


def test_tool_cards_never_reads_or_writes_the_editors_state(nvim: Any) -> None:
    ok, err = nvim.exec_lua(PURITY)
    assert ok, err


# Each tool's card, then its output lines, in the chat's order; with the card's highlight
# groups and status sign.
CARDS = """
local chat = require('agentls.chat').get(nil, false)
local bufnr, ns = chat.buffer.bufnr, require('agentls.render').ns
local out = {}
for _, tool in pairs(chat.tools) do
  local row = chat.buffer:mark_row(tool.mark)
  -- A card of one line where the plugin knows no other.
  local head = tool.head or 1
  local groups = {}
  local marks = vim.api.nvim_buf_get_extmarks(bufnr, ns, { row, 0 }, { row + head - 1, -1 },
    { details = true })
  for _, m in ipairs(marks) do
    local group = m[4].hl_group or m[4].line_hl_group
    if group then table.insert(groups, ('%d:%d %s'):format(m[2] - row, m[3], group)) end
    if m[4].sign_text then table.insert(groups, 'sign ' .. vim.trim(m[4].sign_text)) end
  end
  table.sort(groups)
  table.insert(out, { row = row, groups = groups, head = head,
    lines = vim.api.nvim_buf_get_lines(bufnr, row, row + head + tool.lines, false) })
end
table.sort(out, function(a, b) return a.row < b.row end)
for _, card in ipairs(out) do card.row = nil end
return out
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def script(root: Path) -> list[dict[str, Any]]:
    read_app = {"file_path": "app.py", "offset": 2, "limit": 2}
    read_lib = {"file_path": str(root / "lib.py")}
    bash = {"command": "printf 'one\\ntwo\\n'", "description": "Print two lines"}
    return [
        {
            "text": "Looking.",
            "tool_calls": [
                {"id": "r1", "name": "Read", "input": read_app},
                {"id": "r2", "name": "Read", "input": read_lib},
            ],
        },
        {"tool_calls": [{"id": "b1", "name": "Bash", "input": bash}]},
        {"text": "Done."},
    ]


def look_around(editor: Editor) -> None:
    """One turn of the script: Read app.py from line 2, Read lib.py, Bash printing two lines."""
    (editor.root / "app.py").write_text("a = 1\nb = 2\nc = 3\n")
    (editor.root / "lib.py").write_text("x = 1\n")
    start(editor, script(editor.root))
    editor.nvim.command("AgentAsk look around")
    editor.turn_ended(1, timeout=40)


def test_live_cards_show_kind_and_locations_as_the_resumed_session_does(editor: Editor) -> None:
    look_around(editor)
    session = editor.lua("return require('agentls.chat').get().session_id")
    live: list[dict[str, Any]] = editor.lua(CARDS)
    heads = [card["lines"][: card["head"]] for card in live]
    assert heads == [
        ["▸ ≡ Read app.py", "  @ app.py:2"],
        [f"▸ ≡ Read {editor.root / 'lib.py'}", "  @ lib.py"],
        ["▸ $ Print two lines"],
    ], live
    assert live[2]["lines"][live[2]["head"] :] == ["  │ one", "  │ two"], live
    for shown in live:
        assert "0:4 AgentlsToolKind" in shown["groups"] and "sign ✓" in shown["groups"], live
    assert "1:0 AgentlsToolLocation" in live[0]["groups"], live
    editor.nvim.command("AgentNew")
    resume_from_list(editor, "look around")
    editor.wait(f"require('agentls.chat').get(nil, false).session_id == '{session}'")
    assert editor.lua(CARDS) == live


def test_an_update_that_renames_a_call_redraws_its_card_above_its_output(editor: Editor) -> None:
    look_around(editor)
    before: list[dict[str, Any]] = editor.lua(CARDS)
    # The daemon names no call anew today; ACP's tool_call_update may, and the card follows.
    update = {
        "type": "tool_call_update",
        "toolCallId": "r1",
        "status": "completed",
        "title": "Read app.py and more",
        "locations": [
            {"path": str(editor.root / "app.py"), "line": 1},
            {"path": str(editor.root / "lib.py")},
        ],
    }
    send(editor, update)
    after: list[dict[str, Any]] = editor.lua(CARDS)
    output = before[0]["lines"][before[0]["head"] :]
    assert output and all(line.startswith("  │ ") for line in output), before
    assert after[0]["lines"] == [
        "▸ ≡ Read app.py and more",
        "  @ app.py:2",
        "  @ lib.py",
        *output,
    ], after
    assert after[0]["head"] == 3
    assert after[0]["groups"] == sorted(
        ["0:4 AgentlsToolKind", "1:0 AgentlsToolLocation", "2:0 AgentlsToolLocation", "sign ✓"]
    ), after
    assert after[1:] == before[1:]
    # The same update again changes nothing; one without files leaves the title alone.
    send(editor, update)
    assert editor.lua(CARDS) == after
    send(editor, {**update, "title": "Read app.py", "locations": []})
    shrunk: list[dict[str, Any]] = editor.lua(CARDS)
    assert shrunk[0]["lines"] == ["▸ ≡ Read app.py", *output], shrunk
    assert shrunk[0]["groups"] == ["0:4 AgentlsToolKind", "sign ✓"], shrunk
    assert shrunk[1:] == before[1:]


def send(editor: Editor, event: dict[str, Any]) -> None:
    """An agent/event of the chat's session, as the daemon's would come."""
    editor.lua(
        "local event = ... local chat = require('agentls.chat').get() "
        "event.sessionId = chat.session_id require('agentls.chat').on_event(event, chat.client_id)",
        event,
    )
