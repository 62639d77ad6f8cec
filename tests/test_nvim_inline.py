"""Inline edit from Neovim (issue 30 item 2, Neovim side), in a real headless Neovim driving
the real daemon with the scripted model.

Lines are selected in app.py and `:'<,'>AgentEdit` sends agent/inlineEdit; a "working"
virtual line shows above the selection (above line 1 too) while the model works, and goes
when its proposal is drawn or the turn ends. The scripted model answers with one Edit that
changes two separate lines: its permission_request (`inlineEdit: true`) is shown in app.py's
own buffer, removed lines highlighted DiffDelete and the proposed ones as DiffAdd virtual
lines (screen captures of the working line and of the review saved under
clients/nvim/.work/artifacts), and the hunk keys decide it there: `ca` on the first hunk,
`cr` on the second answers allow_once with only the first hunk's text, which lands on disk;
the chat shows the turn like any other and :AgentRewind takes it back. `cR` rejects every
hunk: reject_once, the file unchanged. <C-c> in the buffer stops a turn that hangs.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from nvim_screen import Screen
from test_nvim import Editor, open_editor, start, tool_results
from test_nvim_power import ARTIFACTS
from test_nvim_worktrees import PICKER

SOURCE = "a = 1\nb = 2\nc = 3\nd = 4\n"

TWO_HUNKS = [
    {
        "tool_calls": [
            {
                "id": "e",
                "name": "Edit",
                "input": {
                    "file_path": "app.py",
                    "old_string": "a = 1\nb = 2\nc = 3",
                    "new_string": "a = 10\nb = 2\nc = 30",
                },
            }
        ]
    },
    {"text": "Made a and c ten times bigger."},
    {"text": "Again."},
]

# Every inline review opened and answered, as the plugin announces them.
RECORD = """
_G.inline_opened, _G.inline_answered = {}, {}
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsInlineReviewOpen",
  callback = function(args) table.insert(_G.inline_opened, args.data) end })
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsInlineReviewAnswer",
  callback = function(args) table.insert(_G.inline_answered, args.data) end })
"""

# The inline review's marks in the current buffer: rows with a line highlight, the text of
# virtual lines, and the end-of-line labels.
MARKS = """
local ns = vim.api.nvim_get_namespaces()["agentls-inline-review"]
local out = { deleted = {}, added = {}, labels = {} }
if not ns then return out end
for _, m in ipairs(vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })) do
  local d = m[4]
  if d.line_hl_group == "DiffDelete" then
    for row = m[2], d.end_row or m[2] do table.insert(out.deleted, row) end
  end
  for _, line in ipairs(d.virt_lines or {}) do
    table.insert(out.added, { vim.trim(line[1][1]), line[1][2] })
  end
  if d.virt_text then table.insert(out.labels, vim.trim(d.virt_text[1][1])) end
end
return out
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def keys(editor: Editor, typed: str) -> None:
    editor.nvim.feedkeys(editor.nvim.replace_termcodes(typed), "x")


def open_source(editor: Editor, script: list[dict[str, Any]], text: str = SOURCE) -> Path:
    source = editor.root / "app.py"
    source.write_text(text, encoding="utf-8")
    start(editor, script)
    editor.lua(PICKER)
    editor.lua(RECORD)
    editor.nvim.command("edit app.py")
    return source


def review_opened(editor: Editor) -> dict[str, Any]:
    """The inline review that opened (the chat in the message when none did)."""
    try:
        editor.wait("#_G.inline_opened == 1")
    except AssertionError as timeout:
        chat = editor.lua("local c = require('agentls.chat').get() return c and c.buffer:text()")
        raise AssertionError(f"no inline review opened; the chat:\n{chat}") from timeout
    opened: dict[str, Any] = editor.lua("return _G.inline_opened[1]")
    return opened


def marks(editor: Editor) -> dict[str, Any]:
    found: dict[str, Any] = editor.lua(MARKS)
    return found


# The "working" line's marks in the current buffer: row, whether above, its text.
WORKING = """
local ns = vim.api.nvim_get_namespaces()["agentls-inline-edit"]
local out = {}
for _, m in ipairs(ns and vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true }) or {}) do
  table.insert(out, { m[2], m[4].virt_lines_above or false, m[4].virt_lines[1][1][1] })
end
return out
"""


def working_marks(editor: Editor) -> list[list[Any]]:
    found: list[list[Any]] = editor.lua(WORKING)
    return found


def test_hunks_accepted_one_by_one_land_on_disk_and_the_turn_rewinds(editor: Editor) -> None:
    source = open_source(editor, TWO_HUNKS)
    screen = Screen.attach(editor.nvim, 100, 24)
    keys(editor, "ggVjj:AgentEdit make a and c ten times bigger<CR>")
    opened = review_opened(editor)
    assert opened["path"] == str(source) and opened["hunks"] == 2, opened
    # In app.py's own buffer, not in the chat or a tab: nothing asked through a picker.
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") == str(source)
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1
    assert editor.lua("return _G.agentls_selects") == []
    shown = marks(editor)
    assert shown["deleted"] == [0, 2], shown
    assert shown["added"] == [["a = 10", "DiffAdd"], ["c = 30", "DiffAdd"]], shown
    assert len(shown["labels"]) == 2 and "hunk 1/2" in shown["labels"][0], shown
    # The buffer itself still holds the file as it is.
    assert editor.buffer("app.py") == (SOURCE.splitlines(), False)
    grid = "\n".join(
        screen.save(
            ARTIFACTS, "inline-edit", "agentls in Neovim: an inline edit's hunks in the buffer"
        )
    )
    assert "a = 10" in grid and "hunk 2/2" in grid, grid
    # The proposal is drawn: the "working" line is gone (it sat between old and new lines).
    assert working_marks(editor) == [], working_marks(editor)
    assert "agentls working" not in grid, grid
    assert grid.splitlines()[0].startswith("a = 1 "), grid
    # The cursor starts on the first hunk: accept it, then reject the second.
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 1
    keys(editor, "ca")
    shown = marks(editor)
    assert "accepted" in shown["labels"][0], shown
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 3
    keys(editor, "cr")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn", editor.chat_text()
    assert editor.lua("return _G.inline_answered")[0]["accepted"] == 1
    assert source.read_text(encoding="utf-8") == "a = 10\nb = 2\nc = 3\nd = 4\n"
    assert editor.buffer("app.py") == (["a = 10", "b = 2", "c = 3", "d = 4"], False)
    # The marks and keys are gone from the buffer; the working line too.
    assert marks(editor) == {"deleted": [], "added": [], "labels": []}
    assert editor.lua("return vim.fn.maparg('ca', 'n', false, true).buffer") is None
    assert editor.lua("return next(require('agentls.inline').running()) == nil")
    # The chat shows it as a turn: the instruction, the allowed edit, the answer.
    chat = editor.chat_text()
    for expected in ("make a and c ten times bigger", "→ Allow once", "Made a and c ten"):
        assert expected in chat, chat
    # The model is told what was applied: its proposal less the rejected hunk.
    result = [r for r in tool_results(editor.log) if r["tool_use_id"] == "e"][-1]
    assert "applied it with revisions" in result["content"], result
    assert "-c = 30" in result["content"] and "+c = 3" in result["content"], result
    # The transcript holds the turn: the instruction, the selection attached.
    user = editor.lua(
        "local chat = require('agentls.chat').get() "
        "local result = require('agentls.client').request_sync(chat:client(), "
        "'agent/getMessages', { sessionId = chat.session_id }) "
        "for _, m in ipairs(result.messages) do if m.role == 'user' then return m end end"
    )
    texts = [block.get("text", "") for block in user["content"]]
    assert "make a and c ten times bigger" in texts, texts
    assert any('<attachment path="app.py" lines="1-3">' in text for text in texts), texts
    # :AgentRewind takes the inline turn back like any other.
    editor.lua("_G.agentls_picks = ...", ["make a and c", "Code and conversation"])
    tabs = editor.lua("return #vim.api.nvim_list_tabpages()")
    editor.nvim.command("AgentRewind")
    editor.wait(f"#vim.api.nvim_list_tabpages() == {tabs + 1}")
    keys(editor, "y")
    editor.wait(f"vim.fn.readfile('{source}')[1] == 'a = 1'")
    assert source.read_text(encoding="utf-8") == SOURCE
    editor.wait("not require('agentls.chat').get().buffer:text():find('ten times', 1, true)")


def test_the_keymap_asks_for_the_instruction_and_reject_all_leaves_the_file(
    editor: Editor,
) -> None:
    source = open_source(editor, TWO_HUNKS)
    editor.lua(
        "_G.inline_prompts = {} vim.ui.input = function(opts, done) "
        "table.insert(_G.inline_prompts, opts.prompt) done('bigger numbers') end"
    )
    # <leader> is the default backslash.
    keys(editor, "ggVjj\\ae")
    review_opened(editor)
    assert editor.lua("return _G.inline_prompts") == ["agentls edit: "]
    # ]h and [h move between the hunks, wrapping around.
    keys(editor, "]h")
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 3
    keys(editor, "]h")
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 1
    keys(editor, "[h")
    assert editor.lua("return vim.api.nvim_win_get_cursor(0)[1]") == 3
    keys(editor, "cR")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn", editor.chat_text()
    assert editor.lua("return _G.inline_answered")[0]["accepted"] == 0
    assert source.read_text(encoding="utf-8") == SOURCE
    assert editor.buffer("app.py") == (SOURCE.splitlines(), False)
    assert marks(editor) == {"deleted": [], "added": [], "labels": []}
    chat = editor.chat_text()
    assert "bigger numbers" in chat and "→ Reject" in chat, chat


def test_ctrl_c_in_the_buffer_stops_the_inline_turn(editor: Editor) -> None:
    # The last selected line is not ASCII: its end is sent in the negotiated encoding, here
    # UTF-16 (the only one this Neovim offers).
    editor.lua(
        "local make = vim.lsp.protocol.make_client_capabilities "
        "vim.lsp.protocol.make_client_capabilities = function() local c = make() "
        "c.general.positionEncodings = { 'utf-16' } return c end"
    )
    open_source(editor, [{"text": "Thinking about it", "hang": True}], "a = 1\nb = 2\nç = 'é'\n")
    editor.lua(
        "_G.inline_sent, _G.inline_started = {}, {} "
        "vim.api.nvim_create_autocmd('User', { pattern = 'AgentlsInlineEditSent', "
        "callback = function(a) table.insert(_G.inline_sent, a.data) end }) "
        "vim.api.nvim_create_autocmd('User', { pattern = 'AgentlsEvent', callback = function(a) "
        "if a.data.type == 'turn_started' then table.insert(_G.inline_started, a.data) end end })"
    )
    editor.nvim.command("2,3AgentEdit swap them")
    editor.wait("#_G.inline_sent == 1")
    [started] = editor.wait("#_G.inline_started == 1 and _G.inline_started")
    assert editor.lua("return require('agentls.chat').get():client().offset_encoding") == "utf-16"
    assert started["inlineEdit"]["range"] == {
        "start": {"line": 1, "character": 0},
        "end": {"line": 2, "character": 7},
    }, started
    working = editor.lua(
        "local ns = vim.api.nvim_get_namespaces()['agentls-inline-edit'] "
        "local m = vim.api.nvim_buf_get_extmarks(0, ns, 0, -1, { details = true })[1] "
        "return { m[2], m[4].virt_lines[1][1][1] }"
    )
    assert working[0] == 1 and "swap them" in working[1] and "<C-c> stops it" in working[1], working
    keys(editor, "<C-c>")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "aborted"
    assert (
        editor.lua(
            "return #vim.api.nvim_buf_get_extmarks(0, "
            "vim.api.nvim_get_namespaces()['agentls-inline-edit'], 0, -1, {})"
        )
        == 0
    )
    assert editor.lua("return vim.fn.maparg('<C-c>', 'n', false, true).buffer") is None


@pytest.mark.parametrize("ending", ["aborted", "error"])
def test_the_working_line_sits_above_a_selection_at_line_1_until_the_turn_ends(
    editor: Editor, ending: str
) -> None:
    if ending == "aborted":
        script: list[dict[str, Any]] = [{"text": "Thinking about it", "hang": True}]
    else:
        failure = {"kind": "overloaded", "message": "try later", "retryable": False}
        script = [{"text": "Thinking about it", "hang": True}, {"error": failure}]
    open_source(editor, script)
    screen = Screen.attach(editor.nvim, 80, 10)
    editor.lua(
        "_G.inline_sent = {} vim.api.nvim_create_autocmd('User', { "
        "pattern = 'AgentlsInlineEditSent', "
        "callback = function(a) table.insert(_G.inline_sent, a.data) end })"
    )
    editor.nvim.command("1,2AgentEdit swap them")
    editor.wait("#_G.inline_sent == 1")
    # Above line 1 (not under it, where the proposal's new lines go), and in sight.
    [[row, above, text]] = working_marks(editor)
    assert row == 0 and above is True and "agentls working: swap them" in text, text
    title = "agentls in Neovim: an inline edit at work"
    grid = screen.save(ARTIFACTS, "inline-edit-working", title) if ending == "aborted" else []
    grid = grid or screen.capture()
    assert "agentls working: swap them" in grid[0] and grid[1] == "a = 1", grid
    if ending == "aborted":
        keys(editor, "<C-c>")
    else:
        # The hanging call is stopped; the next one fails: the turn ends in an error.
        editor.nvim.command("AgentAbort")
        editor.turn_ended()
        editor.nvim.command("1,2AgentEdit swap them")
        editor.wait("#_G.inline_sent == 2")
    ended = editor.turn_ended(1 if ending == "aborted" else 2)[-1]
    assert ended["stopReason"] == ending, ended
    assert working_marks(editor) == []
    grid = screen.capture()
    assert "agentls working" not in "\n".join(grid) and grid[0] == "a = 1", grid


def test_accepted_text_keeps_only_the_accepted_hunks(editor: Editor) -> None:
    """The pure part: hunks of a proposal and the text a choice among them leaves."""
    start(editor, [])
    cases = editor.lua(
        """
        local h = require('agentls.inline_hunks')
        local old = 'top\\nx\\nkeep\\ny\\n'
        local new = 'new top\\ntop\\nX\\nkeep\\n'
        local out = {}
        for _, pick in ipairs({ { 'accepted', 'rejected', 'rejected' },
            { 'rejected', 'accepted', 'accepted' }, { 'accepted', 'accepted', 'accepted' },
            { 'rejected', 'rejected', 'accepted' } }) do
          local hunks = h.compute(old, new)
          for i, d in ipairs(pick) do hunks[i].decision = d end
          table.insert(out, h.accepted_text(old, new, hunks))
        end
        table.insert(out, #h.compute(old, new))
        table.insert(out, h.accepted_text('a\\nb', 'a\\nc', { { old_start = 2, old_count = 1,
          new_lines = { 'c' }, decision = 'accepted' } }))
        return out
        """
    )
    assert cases == [
        "new top\ntop\nx\nkeep\ny\n",
        "top\nX\nkeep\n",
        "new top\ntop\nX\nkeep\n",
        "top\nx\nkeep\n",
        3,
        "a\nc",
    ], cases


def test_answered_from_the_chat_the_review_leaves_the_buffer(editor: Editor) -> None:
    source = open_source(editor, TWO_HUNKS)
    editor.nvim.command("1,3AgentEdit make a and c ten times bigger")
    review_opened(editor)
    assert marks(editor)["deleted"] == [0, 2]
    # y from any window (as in the chat) takes the whole proposal.
    editor.nvim.command("AgentPermission y")
    [ended] = editor.turn_ended()
    assert ended["stopReason"] == "end_turn", editor.chat_text()
    assert source.read_text(encoding="utf-8") == "a = 10\nb = 2\nc = 30\nd = 4\n"
    assert marks(editor) == {"deleted": [], "added": [], "labels": []}
    assert editor.lua("return vim.fn.maparg('cr', 'n', false, true).buffer") is None
    assert editor.lua("return _G.inline_answered") == []


def test_a_line_added_above_the_first_one_is_in_sight(editor: Editor) -> None:
    header = {"file_path": "app.py", "old_string": "a = 1", "new_string": "# values\na = 1"}
    script = [{"tool_calls": [{"id": "e", "name": "Edit", "input": header}]}, {"text": "Done."}]
    source = open_source(editor, script)
    screen = Screen.attach(editor.nvim, 100, 12)
    editor.nvim.command("1AgentEdit add a comment on top")
    assert review_opened(editor)["hunks"] == 1
    grid = screen.capture()
    # Neovim shows lines above the first one only when scrolled to them: the review does.
    assert grid[0].strip() == "# values", grid
    keys(editor, "ca")
    editor.turn_ended()
    assert source.read_text(encoding="utf-8") == "# values\n" + SOURCE
