-- What the chat draws for an event: lines of text and their highlight groups, as values.
-- Pure: nothing here reads or writes a buffer, a window or the plugin's state, so each
-- function is tested alone (tests/test_nvim_lines.py); chat.lua puts the result on screen.

local words = require("agentls.text")

local M = {}

---@alias agentls.Chunk [string, string?]   a piece of virtual text and its highlight group
---@alias agentls.VirtLine agentls.Chunk[]    one virtual line
---@alias agentls.Line [string, string?]     a buffer line and the group that highlights it whole

---@class agentls.Usage  the session's spend so far, summed over its turns and agents
---@field input integer
---@field output integer
---@field context integer   tokens in the context at the last model call
---@field window integer    the model's context window (0 while unknown)
---@field cost? number      US dollars, when the provider prices its calls

---@class agentls.KeyRange  a permission key's place on a laid-out line
---@field [1] integer  line index (0-based) among the laid-out lines
---@field [2] integer  first byte
---@field [3] integer  end byte (exclusive)

---@class agentls.ChoiceItem  one choice of a permission request, as shown
---@field key? string   "[y]" when a key answers it
---@field label string

---@class agentls.ToolLook  how a tool call's status shows
---@field sign string
---@field hl string
---@field label string   the status in words ("in progress")

local STATUS = {
  pending = { "…", "AgentlsToolPending" },
  in_progress = { "▶", "AgentlsToolRunning" },
  completed = { "✓", "AgentlsToolDone" },
  failed = { "✗", "AgentlsToolFailed" },
  declined = { "⊘", "AgentlsToolDeclined" },
  cancelled = { "⊘", "AgentlsToolDeclined" },
}

-- Output lines fold away (window.lua folds runs of lines with FOLDED_PREFIXES); a failed
-- tool's output has a prefix of its own so why it failed is never folded.
M.OUTPUT_PREFIX = "  │ "
M.ERROR_PREFIX = "  ┃ "
M.THINKING_PREFIX = "  ┊ "
M.FOLDED_PREFIXES = { M.OUTPUT_PREFIX, M.THINKING_PREFIX }
M.MAX_OUTPUT_LINES = 30
-- A permission request's diff in the chat: at most this many lines (the review has it all).
M.MAX_DIFF_LINES = 40
-- The option kinds a key can answer, in the order the chat lists them.
M.OPTION_KINDS = { "allow_once", "allow_always", "reject_once", "reject_always" }

---@type agentls.VirtLine[]
M.USER_HEADER = { { { "▍You", "AgentlsUser" } } }
---@type agentls.VirtLine[]
M.AGENT_HEADER = { { { "▍agentls", "AgentlsAgent" } } }

--- The empty chat's virtual lines: model and mode, how to send, the permission keys.
---@param model? string
---@param mode? string
---@param keys table<string, string|false>  config.options.keymaps
---@return agentls.VirtLine[]
function M.welcome(model, mode, keys)
  local lines = {
    { { ("  agentls · %s · %s"):format(model or "", mode or ""), "AgentlsAgent" } },
    { { "" } },
    { { "  Write in the prompt below; Enter sends.", "AgentlsFooter" } },
  }
  local answers = {}
  for _, kind in ipairs(M.OPTION_KINDS) do
    if keys[kind] then table.insert(answers, { keys[kind], words.OPTION_LABELS[kind] }) end
  end
  if keys.view_diff then table.insert(answers, { keys.view_diff, "Review the change" }) end
  if #answers > 0 then
    table.insert(lines, { { "  When a change asks for permission:", "AgentlsFooter" } })
    for _, answer in ipairs(answers) do
      table.insert(lines, { { "    " }, { answer[1], "AgentlsPermissionKey" }, { "  " .. answer[2], "AgentlsFooter" } })
    end
  end
  table.insert(lines, { { "  :help agentls", "AgentlsFooter" } })
  return lines
end

--- The user's words as a markdown quote ending in a blank line; nil when only context was sent.
---@param content table[]  the message's content blocks
---@return string[]|nil
function M.user_message(content)
  local parts = {}
  for _, block in ipairs(content) do
    if block.type == "text" and not vim.startswith(block.text, "<userContext>") then table.insert(parts, block.text) end
  end
  if #parts == 0 then return nil end
  local lines = vim.split(table.concat(parts, "\n\n"), "\n", { plain = true })
  -- A quote is set apart and still markdown when yanked; the blank line ends it (else the
  -- answer's first line would continue it).
  for i, line in ipairs(lines) do lines[i] = "> " .. line end
  table.insert(lines, "")
  return lines
end

--- Streamed thinking with every new line under the thinking prefix.
---@param text string
---@return string
function M.thinking(text)
  return (text:gsub("\n", "\n" .. M.THINKING_PREFIX))
end

--- Control characters in caret notation (^C), Enter as ⏎: what was typed, visible.
---@param input string
---@return string
function M.typed(input)
  return (input:gsub("\r?\n", "⏎"):gsub("[%z\1-\31\127]", function(c)
    local byte = c:byte()
    return byte == 127 and "^?" or "^" .. string.char(byte + 64)
  end))
end

--- A WriteStdin call as a line typed into its shell: "▸ shell_1 (python3 -i) ❯ 1 + 1⏎".
---@param input table  the call's input ({shell_id, input})
---@param command? string  the shell's command, when a shell_status named it
---@return string[]
function M.shell_input(input, command)
  local shell = tostring(input.shell_id or "shell")
  if command then shell = ("%s (%s)"):format(shell, command) end
  return { ("▸ %s ❯ %s"):format(shell, M.typed(tostring(input.input or ""))) }
end

--- A tool call's status as a sign and words after its card (unknown ones look pending).
---@param status string
---@return agentls.ToolLook
function M.tool_look(status)
  local look = STATUS[status] or STATUS.pending
  return { sign = look[1], hl = look[2], label = (status:gsub("_", " ")) }
end

--- A tool's output as lines under its card; `cap` cuts it to MAX_OUTPUT_LINES with a count.
---@param output string
---@param failed boolean  a failed tool's lines take the error prefix
---@param cap boolean
---@return string[]
function M.tool_output(output, failed, cap)
  local lines = vim.split((output:gsub("\n$", "")), "\n", { plain = true })
  if cap and #lines > M.MAX_OUTPUT_LINES then
    local more = #lines - M.MAX_OUTPUT_LINES
    lines = vim.list_slice(lines, 1, M.MAX_OUTPUT_LINES)
    table.insert(lines, "… " .. words.count(more, "more line"))
  end
  local prefix = failed and M.ERROR_PREFIX or M.OUTPUT_PREFIX
  for i, line in ipairs(lines) do lines[i] = prefix .. line end
  return lines
end

--- The proposed change as unified diff lines, capped at MAX_DIFF_LINES.
---@param diff { path: string, oldText?: string, newText?: string }
---@param review_key? string|false  named in the cap's line as the way to see it all
---@return agentls.Line[]
function M.diff(diff, review_key)
  local unified = (vim.text and vim.text.diff or vim.diff)(diff.oldText or "", diff.newText or "", {
    result_type = "unified",
    ctxlen = 1,
  })
  local out = {}
  if not diff.oldText then table.insert(out, { "  new file " .. vim.fs.basename(diff.path), "AgentlsDiffHunk" }) end
  for _, line in ipairs(vim.split(unified, "\n", { plain = true })) do
    local first = line:sub(1, 1)
    if line ~= "" and first ~= "\\" then
      local hl = first == "+" and "AgentlsDiffAdd" or first == "-" and "AgentlsDiffDelete" or first == "@" and "AgentlsDiffHunk" or nil
      table.insert(out, { "  " .. line, hl })
    end
  end
  if #out > M.MAX_DIFF_LINES then
    local more = #out - M.MAX_DIFF_LINES
    out = vim.list_slice(out, 1, M.MAX_DIFF_LINES)
    local hint = review_key and (": %s opens the whole change"):format(review_key) or ""
    table.insert(out, { "  … " .. words.count(more, "more line") .. hint, "AgentlsFooter" })
  end
  return out
end

--- The choices of a request as "[y] Allow once" items (and "[v] Review" when it has a diff).
---@param event table  a permission_request event
---@param keys table<string, string|false>  config.options.keymaps
---@return agentls.ChoiceItem[]
function M.permission_items(event, keys)
  local items = {}
  for _, option in ipairs(event.options) do
    local key = keys[option.kind]
    local label = words.option_label(option)
    if option.rule then label = ("%s (%s)"):format(label, option.rule) end
    table.insert(items, { key = key and ("[%s]"):format(key) or nil, label = label })
  end
  if (event.diff or event.diffs) and keys.view_diff then table.insert(items, { key = ("[%s]"):format(keys.view_diff), label = "Review" }) end
  return items
end

--- Cut a choice to `width` display columns (after its two-space indent) with "…".
---@param piece string
---@param width integer
---@return string
local function fit(piece, width)
  if vim.fn.strdisplaywidth("  " .. piece) <= width then return piece end
  piece = vim.fn.strcharpart(piece, 0, math.max(1, width - 3)) .. "…"
  while vim.fn.strdisplaywidth("  " .. piece) > width and vim.fn.strchars(piece) > 2 do
    piece = vim.fn.strcharpart(piece, 0, vim.fn.strchars(piece) - 2) .. "…"
  end
  return piece
end

--- Lay the items out in lines no wider than `width`, an item never split over two lines
--- (one wider than a line is cut with "…").
---@param items agentls.ChoiceItem[]
---@param width integer
---@return string[] lines
---@return agentls.KeyRange[] keys  where each "[y]" is, to highlight it
function M.layout_items(items, width)
  local lines, keys = {}, {}
  local line, line_keys = "", {}
  local function push()
    if line ~= "" then
      table.insert(lines, line)
      for _, k in ipairs(line_keys) do table.insert(keys, { #lines - 1, k[1], k[2] }) end
    end
    line, line_keys = "", {}
  end
  for _, item in ipairs(items) do
    local piece = fit(item.key and (item.key .. " " .. item.label) or item.label, width)
    local candidate = line == "" and ("  " .. piece) or (line .. "   " .. piece)
    if line ~= "" and vim.fn.strdisplaywidth(candidate) > width then
      push()
      candidate = "  " .. piece
    end
    if item.key then
      local start = #candidate - #piece
      table.insert(line_keys, { start, start + math.min(#item.key, #piece) })
    end
    line = candidate
  end
  push()
  return lines, keys
end

--- A permission request's title line.
---@param event table  a permission_request event
---@return string
function M.permission_title(event)
  return "⚠ " .. event.title
end

--- The line that replaces a request's choices once it is resolved: the chosen option's label.
---@param options table[]  the request's options
---@param event table  a permission_resolved event
---@return string
function M.permission_answer(options, event)
  local answer = event.outcome == "cancelled" and "cancelled" or event.optionId
  for _, option in ipairs(options) do
    if option.optionId == event.optionId then answer = words.option_label(option) end
  end
  return "  → " .. answer
end

--- A notice's text and the group that highlights its line.
---@param level string  "error", "warning" or "info"
---@param message string
---@return string text
---@return string hl
function M.notice(level, message)
  local hl = level == "error" and "AgentlsNoticeError" or level == "warning" and "AgentlsNoticeWarning" or "AgentlsNoticeInfo"
  return "! " .. message, hl
end

--- An MCP server's status as a notice: failures and comebacks only, quiet starts are none.
---@param event table  an mcp_status event
---@return string|nil level
---@return string|nil message
function M.mcp_status(event)
  if event.status == "failed" then
    return "warning", ("MCP server %s failed: %s"):format(event.server, event.error or "no reason given")
  elseif event.status == "ready" and (event.attempt or 1) > 1 then
    return "info", ("MCP server %s is back (%s)"):format(event.server, words.count(event.toolCount or 0, "tool"))
  end
  return nil, nil
end

--- A hook's result as a notice.
---@param event table  a hook_result event
---@return string level
---@return string message
function M.hook_result(event)
  local what = ({ success = "said", blocked = "blocked", timeout = "timed out" })[event.outcome] or "failed"
  local detail = event.message and (": " .. event.message) or ""
  return event.outcome == "success" and "info" or "warning", ("%s hook `%s` %s%s"):format(event.event, event.command, what, detail)
end

---@param event table  a compaction event
---@return string
function M.compaction(event)
  return ("· context compacted: %d → %s"):format(event.tokensBefore, words.count(event.tokensAfter, "token"))
end

---@param event table  a sub-agent's subagent_started event
---@return string
function M.subagent_started(event)
  return ("  ↳ %s agent: %s"):format(event.subagentType, event.description)
end

---@param event table  a sub-agent's tool_call event
---@return string
function M.agent_tool_call(event)
  return "    · " .. event.title
end

--- A sub-agent's end, highlighted as a warning unless it ended its turn.
---@param event table  a sub-agent's subagent_completed event
---@return string text
---@return string|nil hl
function M.subagent_completed(event)
  local text = ("  ↳ agent %s: %s, %s, %.1f s"):format(
    event.stopReason, words.count(event.turns, "model call"), words.count(event.toolCalls, "tool call"), event.durationMs / 1000)
  return text, event.stopReason ~= "end_turn" and "AgentlsNoticeWarning" or nil
end

local PLAN_MARKS = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

--- The plan, whole: "Plan 1/3" then a checkbox line per entry.
---@param entries { content: string, status: string }[]
---@return string
function M.plan(entries)
  local lines, done = {}, 0
  for _, entry in ipairs(entries) do
    if entry.status == "completed" then done = done + 1 end
    table.insert(lines, ("  %s %s"):format(PLAN_MARKS[entry.status] or "[ ]", entry.content))
  end
  table.insert(lines, 1, ("Plan %d/%d"):format(done, #entries))
  return table.concat(lines, "\n")
end

---@param event table  a turn_limit_reached event
---@return string
function M.turn_limit(event)
  return ("reached the turn limit (%s): :AgentContinue goes on"):format(words.count(event.turns, "model call"))
end

---@param event table  an ask_user event
---@return string
function M.question(event)
  return "? " .. event.question
end

---@param answer string
---@return string
function M.question_answer(answer)
  return "  → " .. answer
end

--- The end-of-turn footer: stop reason, tokens, context, cost (the turn's and the session's), error; wrapped to `width`
--- because virtual lines do not wrap.
---@param event table  a turn_completed event
---@param usage agentls.Usage
---@param width integer
---@return agentls.VirtLine[]
function M.footer(event, usage, width)
  -- What this turn cost (its costUsd), beside the session's total when they differ.
  local turn_cost = event.costUsd
  local parts = {
    event.stopReason,
    ("%d in"):format(usage.input),
    ("%d out"):format(usage.output),
    ("%d%% context"):format(usage.window > 0 and math.floor(usage.context * 100 / usage.window) or 0),
  }
  if turn_cost then
    table.insert(parts, ("$%.4f this turn"):format(turn_cost))
    if usage.cost and math.abs(usage.cost - turn_cost) > 1e-9 then table.insert(parts, ("$%.4f in all"):format(usage.cost)) end
  elseif usage.cost then
    table.insert(parts, ("$%.4f"):format(usage.cost))
  end
  if event.error then table.insert(parts, event.error.message) end
  local hl = event.error and "AgentlsFooterError" or "AgentlsFooter"
  local lines, line = {}, "──"
  for _, part in ipairs(parts) do
    local next_line = line == "──" and (line .. " " .. part) or (line .. " · " .. part)
    if line ~= "──" and vim.fn.strdisplaywidth(next_line) > width then
      table.insert(lines, { { line, hl } })
      next_line = "   " .. part
    end
    line = next_line
  end
  table.insert(lines, { { line, hl } })
  return lines
end

--- A resumed tool call's title, as the daemon titles a live one (`Read src/app.py`).
---@param block table  a tool_use content block
---@return string
function M.history_title(block)
  local input = type(block.input) == "table" and block.input or {}
  local function field(name)
    local value = input[name]
    if type(value) == "string" and value ~= "" then return value end
  end
  local title = block.name
  local path = field("file_path") or field("notebook_path") or field("path")
  if block.name == "Bash" then
    title = field("description") or (field("command") and vim.trim((field("command"):gsub("%s+", " ")))) or title
  elseif block.name == "Task" and field("subagent_type") then
    title = ("%s agent: %s"):format(field("subagent_type"), field("description") or "")
  elseif block.name == "ExitPlanMode" and field("plan") then
    -- "Plan: <its first line>", its heading marks gone.
    local first = vim.split(vim.trim(field("plan")), "\n", { plain = true })[1]
    title = "Plan: " .. first:gsub("^[#%s]+", "")
  elseif field("pattern") then
    title = ("%s %s"):format(block.name, field("pattern")) .. (field("path") and (" in " .. field("path")) or "")
  elseif path then
    title = ("%s %s"):format(block.name, path)
  end
  if vim.fn.strchars(title) > 80 then title = vim.fn.strcharpart(title, 0, 79) .. "…" end
  return title
end

--- A resumed tool result's text (its text parts joined when it has several).
---@param block table  a tool_result content block
---@return string
function M.tool_result_text(block)
  local content = block.content
  if type(content) ~= "table" then return content end
  local parts = {}
  for _, part in ipairs(content) do
    if part.type == "text" then table.insert(parts, part.text) end
  end
  return table.concat(parts, "\n")
end

return M
