"""Unit tests of the Neovim plugin's pure module, lua/agentls/lines.lua: event -> lines.

One headless Neovim (`nvim --embed --clean` through pynvim, as in test_nvim.py) serves the
whole module; no daemon and no chat buffer, since lines.lua takes values and returns values.
Each call goes through `call`, which returns every value the Lua function returns.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from test_nvim import bare_nvim


@pytest.fixture(scope="module")
def nvim() -> Iterator[Any]:
    with bare_nvim() as editor:
        yield editor


def call(nvim: Any, name: str, *args: Any) -> list[Any]:
    """All the values `require('agentls.lines')[name](*args)` returns."""
    values: list[Any] = nvim.exec_lua(
        "local name = ... return { require('agentls.lines')[name](select(2, ...)) }", name, *args
    )
    return values


KEYS = {
    "allow_once": "y",
    "allow_always": "a",
    "reject_once": "n",
    "reject_always": "d",
    "view_diff": "v",
}


def test_a_user_message_is_a_quote_ending_in_a_blank_line_without_the_editor_context(
    nvim: Any,
) -> None:
    content = [
        {"type": "text", "text": "<userContext>open: app.py</userContext>"},
        {"type": "text", "text": "fix the port\nplease"},
        {"type": "text", "text": "and the docs"},
    ]
    [quote] = call(nvim, "user_message", content)
    assert quote == ["> fix the port", "> please", "> ", "> and the docs", ""]
    only_context = [{"type": "text", "text": "<userContext>x</userContext>"}]
    assert call(nvim, "user_message", only_context) == []


def test_thinking_keeps_its_prefix_on_every_new_line(nvim: Any) -> None:
    assert call(nvim, "thinking", "one\ntwo\n") == ["one\n  ┊ two\n  ┊ "]


def test_tool_output_is_capped_only_when_final_and_a_failure_is_never_folded(nvim: Any) -> None:
    output = "\n".join(f"line {n}" for n in range(1, 36)) + "\n"
    [capped] = call(nvim, "tool_output", output, False, True)
    assert len(capped) == 31
    assert capped[0] == "  │ line 1" and capped[29] == "  │ line 30"
    assert capped[30] == "  │ … 5 more lines"
    [streamed] = call(nvim, "tool_output", output, False, False)
    assert len(streamed) == 35
    [failed] = call(nvim, "tool_output", "boom\nexit 1", True, True)
    # ┃, not │: window.lua folds runs of │ and ┊ lines, never these.
    assert failed == ["  ┃ boom", "  ┃ exit 1"]
    folded = nvim.exec_lua("return require('agentls.lines').FOLDED_PREFIXES")
    assert not any(line.startswith(prefix) for line in failed for prefix in folded)


def test_a_tool_status_shows_as_a_sign_and_words_and_an_unknown_one_looks_pending(
    nvim: Any,
) -> None:
    [running] = call(nvim, "tool_look", "in_progress")
    assert running == {"sign": "▶", "hl": "AgentlsToolRunning", "label": "in progress"}
    [odd] = call(nvim, "tool_look", "paused")
    assert odd == {"sign": "…", "hl": "AgentlsToolPending", "label": "paused"}


def test_a_diff_is_highlighted_by_line_kind_and_a_new_file_says_so(nvim: Any) -> None:
    [edit] = call(
        nvim,
        "diff",
        {"path": "app.py", "oldText": "A = 1\nB = 2\n", "newText": "A = 1\nB = 3\n"},
        "v",
    )
    assert edit == [
        ["  @@ -1,2 +1,2 @@", "AgentlsDiffHunk"],
        ["   A = 1"],
        ["  -B = 2", "AgentlsDiffDelete"],
        ["  +B = 3", "AgentlsDiffAdd"],
    ]
    [new] = call(nvim, "diff", {"path": "/w/src/new.py", "newText": "x = 1"}, "v")
    # "\ No newline at end of file" is not shown.
    assert new == [
        ["  new file new.py", "AgentlsDiffHunk"],
        ["  @@ -0,0 +1 @@", "AgentlsDiffHunk"],
        ["  +x = 1", "AgentlsDiffAdd"],
    ]


def test_a_long_diff_stops_at_forty_lines_and_names_the_review_key(nvim: Any) -> None:
    new_text = "".join(f"line {n}\n" for n in range(60))
    [diff] = call(nvim, "diff", {"path": "big.py", "oldText": "", "newText": new_text}, "v")
    assert len(diff) == 41
    assert diff[40] == ["  … 21 more lines: v opens the whole change", "AgentlsFooter"]
    [no_key] = call(nvim, "diff", {"path": "big.py", "oldText": "", "newText": new_text}, False)
    assert no_key[40] == ["  … 21 more lines", "AgentlsFooter"]


PERMISSION = {
    "title": "Edit app.py",
    "options": [
        {"optionId": "1", "kind": "allow_once", "name": "Allow"},
        {"optionId": "2", "kind": "allow_always", "name": "Always", "rule": "Edit(app.py)"},
        {"optionId": "3", "kind": "reject_once", "name": "Reject"},
    ],
    "diff": {"path": "app.py", "oldText": "a", "newText": "b"},
}


def test_permission_choices_carry_their_keys_rules_and_a_review_for_a_change(nvim: Any) -> None:
    [items] = call(nvim, "permission_items", PERMISSION, KEYS)
    assert items == [
        {"key": "[y]", "label": "Allow once"},
        {"key": "[a]", "label": "Always allow (Edit(app.py))"},
        {"key": "[n]", "label": "Reject"},
        {"key": "[v]", "label": "Review"},
    ]
    no_diff = {**PERMISSION, "diff": None}
    without_keys = {"allow_once": False, "view_diff": False}
    [bare] = call(nvim, "permission_items", {k: v for k, v in no_diff.items() if v}, without_keys)
    assert bare == [
        {"label": "Allow once"},
        {"label": "Always allow (Edit(app.py))"},
        {"label": "Reject"},
    ]


def test_choices_wrap_between_items_never_inside_one_and_the_keys_are_found(nvim: Any) -> None:
    items = [
        {"key": "[y]", "label": "Allow once"},
        {"key": "[a]", "label": "Älways allow"},
        {"key": "[n]", "label": "Reject"},
    ]
    lines, keys = call(nvim, "layout_items", items, 31)
    assert lines == ["  [y] Allow once", "  [a] Älways allow   [n] Reject"]
    # Byte ranges, as extmarks take them: "[n]" comes after the two bytes of "Ä".
    found = [lines[row].encode()[start:end].decode() for row, start, end in keys]
    assert found == ["[y]", "[a]", "[n]"]
    # One line wide enough holds them all.
    wide, _ = call(nvim, "layout_items", items, 80)
    assert wide == ["  [y] Allow once   [a] Älways allow   [n] Reject"]


def test_a_choice_wider_than_the_window_is_cut_with_an_ellipsis(nvim: Any) -> None:
    items = [{"key": "[a]", "label": "Always allow Bash(npm run build:*) and more"}]
    [line], [key] = call(nvim, "layout_items", items, 20)
    assert line.endswith("…") and nvim.funcs.strdisplaywidth(line) <= 20
    assert line.encode()[key[1] : key[2]] == b"[a]"


def test_a_resolved_request_shows_the_chosen_options_label_or_cancelled(nvim: Any) -> None:
    options = PERMISSION["options"]
    chosen = {"outcome": "selected", "optionId": "2"}
    assert call(nvim, "permission_answer", options, chosen) == ["  → Always allow"]
    cancelled = {"outcome": "cancelled"}
    assert call(nvim, "permission_answer", options, cancelled) == ["  → cancelled"]


def test_the_footer_wraps_its_parts_to_the_width_and_an_error_ends_it_in_red(nvim: Any) -> None:
    usage = {"input": 1200, "output": 80, "context": 5000, "window": 200000, "cost": 0.01234}
    [footer] = call(nvim, "footer", {"stopReason": "end_turn"}, usage, 200)
    assert footer == [[["── end_turn · 1200 in · 80 out · 2% context · $0.0123", "AgentlsFooter"]]]
    error = {"stopReason": "error", "error": {"message": "overloaded"}}
    [narrow] = call(nvim, "footer", error, usage, 30)
    texts = [line[0][0] for line in narrow]
    assert texts == ["── error · 1200 in · 80 out", "   2% context · $0.0123", "   overloaded"]
    assert {line[0][1] for line in narrow} == {"AgentlsFooterError"}
    unknown_window = {"input": 0, "output": 0, "context": 0, "window": 0}
    [plain] = call(nvim, "footer", {"stopReason": "end_turn"}, unknown_window, 80)
    assert plain == [[["── end_turn · 0 in · 0 out · 0% context", "AgentlsFooter"]]]


def test_the_plan_counts_what_is_done_and_marks_each_entry(nvim: Any) -> None:
    entries = [
        {"content": "read", "status": "completed"},
        {"content": "edit", "status": "in_progress"},
        {"content": "test", "status": "pending"},
    ]
    assert call(nvim, "plan", entries) == ["Plan 1/3\n  [x] read\n  [~] edit\n  [ ] test"]


def test_a_resumed_tool_call_is_titled_as_the_daemon_titles_a_live_one(nvim: Any) -> None:
    def title(name: str, tool_input: dict[str, Any]) -> str:
        [text] = call(nvim, "history_title", {"name": name, "input": tool_input})
        assert isinstance(text, str)
        return text

    assert title("Read", {"file_path": "src/app.py"}) == "Read src/app.py"
    assert title("Bash", {"command": "ls   -la\n  src"}) == "ls -la src"
    assert title("Bash", {"command": "ls", "description": "List files"}) == "List files"
    assert (
        title("Task", {"subagent_type": "explore", "description": "find it"})
        == "explore agent: find it"
    )
    assert title("Grep", {"pattern": "PORT", "path": "src"}) == "Grep PORT in src"
    assert title("TodoWrite", {}) == "TodoWrite"
    long = title("Bash", {"command": "é" * 100})
    assert len(long) == 80 and long.endswith("…")


def test_a_resumed_tool_result_is_its_text_parts_joined(nvim: Any) -> None:
    block = {
        "content": [{"type": "text", "text": "a"}, {"type": "image"}, {"type": "text", "text": "b"}]
    }
    assert call(nvim, "tool_result_text", block) == ["a\nb"]
    assert call(nvim, "tool_result_text", {"content": "plain"}) == ["plain"]


def test_notices_say_what_failed_or_came_back_and_stay_quiet_otherwise(nvim: Any) -> None:
    assert call(nvim, "notice", "warning", "careful") == ["! careful", "AgentlsNoticeWarning"]
    assert call(nvim, "notice", "debug", "x") == ["! x", "AgentlsNoticeInfo"]
    assert call(nvim, "mcp_status", {"server": "gh", "status": "ready", "attempt": 1}) == []
    assert call(nvim, "mcp_status", {"server": "gh", "status": "failed"}) == [
        "warning",
        "MCP server gh failed: no reason given",
    ]
    back = {"server": "gh", "status": "ready", "attempt": 2, "toolCount": 1}
    assert call(nvim, "mcp_status", back) == ["info", "MCP server gh is back (1 tool)"]
    hook = {"event": "PreToolUse", "command": "lint", "outcome": "blocked", "message": "no"}
    assert call(nvim, "hook_result", hook) == ["warning", "PreToolUse hook `lint` blocked: no"]
    said = {"event": "Stop", "command": "echo", "outcome": "success"}
    assert call(nvim, "hook_result", said) == ["info", "Stop hook `echo` said"]


def test_a_sub_agent_that_did_not_end_its_turn_is_a_warning(nvim: Any) -> None:
    done = {"stopReason": "end_turn", "turns": 1, "toolCalls": 2, "durationMs": 1500}
    assert call(nvim, "subagent_completed", done) == [
        "  ↳ agent end_turn: 1 model call, 2 tool calls, 1.5 s"
    ]
    cut = {**done, "stopReason": "max_turns"}
    assert call(nvim, "subagent_completed", cut)[1] == "AgentlsNoticeWarning"


def test_the_welcome_lists_only_the_keys_that_are_set(nvim: Any) -> None:
    [lines] = call(nvim, "welcome", "sonnet", "default", {**KEYS, "allow_always": False})
    texts = ["".join(chunk[0] for chunk in line) for line in lines]
    assert texts[0] == "  agentls · sonnet · default"
    assert "    y  Allow once" in texts and "    v  Review the change" in texts
    assert not any("Always allow" in text for text in texts)
    assert texts[-1] == "  :help agentls"


PURITY = """
local lines = require('agentls.lines')
local api = vim.api
-- Any use of the editor's state (buffers, windows, extmarks) goes through vim.api.
vim.api = setmetatable({}, { __index = function(_, name)
  error('lines.lua used vim.api.' .. name)
end })
local ok, err = pcall(function()
  local usage = { input = 1, output = 2, context = 3, window = 4 }
  local permission = { title = 't', options = { { optionId = '1', kind = 'allow_once' } },
    diff = { path = 'a', oldText = 'x', newText = 'y' } }
  lines.welcome('m', 'default', { allow_once = 'y', view_diff = 'v' })
  lines.user_message({ { type = 'text', text = 'hi' } })
  lines.thinking('a\\nb')
  lines.tool_look('failed')
  lines.tool_output('a\\nb', true, true)
  lines.diff(permission.diff, 'v')
  lines.layout_items(lines.permission_items(permission, { allow_once = 'y' }), 40)
  lines.permission_title(permission)
  lines.permission_answer(permission.options, { outcome = 'selected', optionId = '1' })
  lines.notice('error', 'x')
  lines.mcp_status({ server = 's', status = 'failed' })
  lines.hook_result({ event = 'Stop', command = 'c', outcome = 'timeout' })
  lines.compaction({ tokensBefore = 10, tokensAfter = 1 })
  lines.subagent_started({ subagentType = 'explore', description = 'd' })
  lines.agent_tool_call({ title = 't' })
  lines.subagent_completed({ stopReason = 'end_turn', turns = 1, toolCalls = 0, durationMs = 5 })
  lines.plan({ { content = 'c', status = 'pending' } })
  lines.turn_limit({ turns = 3 })
  lines.question({ question = 'q?' })
  lines.question_answer('yes')
  lines.footer({ stopReason = 'end_turn' }, usage, 40)
  lines.history_title({ name = 'Read', input = { file_path = 'a' } })
  lines.tool_result_text({ content = 'x' })
end)
vim.api = api
return { ok, err or "" }
"""


def test_lines_never_reads_or_writes_the_editors_state(nvim: Any) -> None:
    ok, err = nvim.exec_lua(PURITY)
    assert ok, err


def test_small_pieces_read_as_the_chat_shows_them(nvim: Any) -> None:
    assert call(nvim, "permission_title", PERMISSION) == ["⚠ Edit app.py"]
    assert call(nvim, "compaction", {"tokensBefore": 9000, "tokensAfter": 1}) == [
        "· context compacted: 9000 → 1 token"
    ]
    assert call(nvim, "turn_limit", {"turns": 2}) == [
        "reached the turn limit (2 model calls): :AgentContinue goes on"
    ]
    assert call(nvim, "question", {"question": "Which?"}) == ["? Which?"]
    assert call(nvim, "question_answer", "B") == ["  → B"]
    started = {"subagentType": "explore", "description": "look"}
    assert call(nvim, "subagent_started", started) == ["  ↳ explore agent: look"]
    assert call(nvim, "agent_tool_call", {"title": "Grep x"}) == ["    · Grep x"]
