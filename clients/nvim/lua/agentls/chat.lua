-- A chat: one daemon session, its buffer, and what each agent/event does to it.

local client_mod = require("agentls.client")
local config = require("agentls.config")
local render = require("agentls.render")
local words = require("agentls.text")

local M = {}

local STATUS = {
  pending = { "…", "AgentlsToolPending" },
  in_progress = { "▶", "AgentlsToolRunning" },
  completed = { "✓", "AgentlsToolDone" },
  failed = { "✗", "AgentlsToolFailed" },
  declined = { "⊘", "AgentlsToolDeclined" },
  cancelled = { "⊘", "AgentlsToolDeclined" },
}
-- Output lines fold away (window.lua folds runs of lines with these prefixes); a failed
-- tool's output has a prefix of its own so why it failed is never folded.
local OUTPUT_PREFIX = "  │ "
local ERROR_PREFIX = "  ┃ "
local THINKING_PREFIX = "  ┊ "
local MAX_OUTPUT_LINES = 30
-- A permission request's diff in the chat: at most this many lines (the review has it all).
local MAX_DIFF_LINES = 40
-- Extmarks of the permission keys' highlights, cleared whenever the options are laid out again.
local keys_ns = vim.api.nvim_create_namespace("agentls-permission-keys")

local Chat = {}
Chat.__index = Chat

-- Session id -> chat; root -> the chat shown for it.
local by_session = {}
local shown = {}

--- The chat of a root (the current buffer's by default); `create` starts its session.
function M.get(root, create)
  root = root or client_mod.root_of(0)
  local chat = shown[root]
  if chat or not create then return chat end
  return M.new(root)
end

function M.new(root)
  local client = client_mod.get(root)
  local params = vim.tbl_extend("force", { cwd = root }, config.options.session or {})
  local result, err = client_mod.request_sync(client, "agent/newSession", params)
  if not result then error("agentls: " .. (err and err.message or "newSession failed"), 0) end
  local previous = shown[root]
  local chat = setmetatable({
    root = root,
    client_id = client.id,
    session_id = result.sessionId,
    model = result.model,
    mode = result.permissionMode,
    sandbox = result.sandbox,
    buffer = previous and previous.buffer or render.new("agentls://chat/" .. root),
    running = nil,
    usage = { input = 0, output = 0, context = 0, window = 0 },
    messages = {},
    tools = {},
    permissions = {},
    stream_id = nil,
  }, Chat)
  if previous then
    chat.buffer:clear()
    vim.api.nvim_buf_clear_namespace(chat.buffer.bufnr, keys_ns, 0, -1)
  end
  by_session[chat.session_id] = chat
  shown[root] = chat
  -- Commands typed in the chat window act on this root, never on the cwd's.
  vim.b[chat.buffer.bufnr].agentls_root = root
  chat:keymaps()
  chat:load_commands()
  chat:welcome()
  return chat
end

--- Go on in an earlier session: its history rendered, then live again.
function M.resume(root, session_id)
  local client = client_mod.get(root)
  local result, err = client_mod.request_sync(client, "agent/resumeSession", { sessionId = session_id })
  if not result then error("agentls: " .. (err and err.message or "resumeSession failed"), 0) end
  local chat = shown[root]
  if chat and chat.session_id ~= result.sessionId then
    by_session[chat.session_id] = nil
  end
  chat = setmetatable({
    root = root,
    client_id = client.id,
    session_id = result.sessionId,
    model = result.model,
    mode = result.permissionMode,
    sandbox = result.sandbox,
    buffer = chat and chat.buffer or render.new("agentls://chat/" .. root),
    usage = { input = 0, output = 0, context = 0, window = 0 },
    messages = {},
    tools = {},
    permissions = {},
  }, Chat)
  chat.buffer:clear()
  vim.api.nvim_buf_clear_namespace(chat.buffer.bufnr, keys_ns, 0, -1)
  by_session[chat.session_id] = chat
  shown[root] = chat
  -- Commands typed in the chat window act on this root, never on the cwd's.
  vim.b[chat.buffer.bufnr].agentls_root = root
  chat:keymaps()
  chat:load_commands()
  for _, message in ipairs(result.messages) do chat:history(message) end
  return chat
end

-- A sub-agent's events that still reach the chat as they are: what the user must answer.
local FROM_AGENTS = { permission_request = true, permission_resolved = true, ask_user = true, ask_user_resolved = true, notice = true }

function M.on_event(event, client_id)
  local chat = by_session[event.sessionId]
  if not chat or chat.client_id ~= client_id then return end
  local handler = Chat["on_" .. event.type]
  if event.agentId and not FROM_AGENTS[event.type] then handler = Chat["agent_" .. event.type] end
  if handler then handler(chat, event) end
  vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsEvent", data = event, modeline = false })
end

function M.on_exit(client_id, code, signal)
  for id, chat in pairs(by_session) do
    if chat.client_id == client_id then
      if chat.running then chat:notice("error", ("the agentls daemon stopped (code %s, signal %s)"):format(code, signal)) end
      chat.running = nil
      by_session[id] = nil
      if shown[chat.root] == chat then shown[chat.root] = nil end
    end
  end
end

--- All chats, for the statusline and tests.
function M.all()
  return vim.tbl_values(by_session)
end

-- The slash commands, asked for once the chat exists: the `available_commands` that follows
-- the session's creation may have arrived while the request was still being waited for.
function Chat:load_commands()
  self:request("agent/listCommands", {}, function(err, result)
    if not err and result and not self.commands then self.commands = result.commands end
  end)
end

function Chat:client()
  return vim.lsp.get_client_by_id(self.client_id)
end

function Chat:request(method, params, callback)
  local client = self:client()
  if not client then
    vim.notify("agentls: the daemon is not running", vim.log.levels.ERROR)
    return
  end
  params.sessionId = self.session_id
  client_mod.request(client, method, params, function(err, result)
    if err then vim.notify(("agentls: %s: %s"):format(method, err.message), vim.log.levels.ERROR) end
    if callback then callback(err, result) end
  end)
end

-- Sending ---------------------------------------------------------------------------

function Chat:send(text, attachments)
  require("agentls.editor_state").flush()
  local params = { text = text }
  if attachments and #attachments > 0 then params.attachments = attachments end
  self:request("agent/submitMessage", params, function(_, result)
    if result and result.queued then self:notice("info", "queued: runs when the current turn ends") end
  end)
end

function Chat:abort()
  self:request("agent/abort", {})
end

-- Events --------------------------------------------------------------------------------

function Chat:on_turn_started(event)
  self.running = event.turnId
  self:spinner(true)
end

--- The empty chat says what to do (virtual lines, gone with the first message).
function Chat:welcome()
  local keys = config.options.keymaps
  local lines = {
    { { ("  agentls · %s · %s"):format(self.model or "", self.mode or ""), "AgentlsAgent" } },
    { { "" } },
    { { "  Write in the prompt below; Enter sends.", "AgentlsFooter" } },
  }
  local answers = {}
  for _, kind in ipairs({ "allow_once", "allow_always", "reject_once", "reject_always" }) do
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
  self.welcome_mark = self.buffer:mark(0, 0, { virt_lines = lines })
end

function Chat:on_message_completed(event)
  if self.welcome_mark then
    pcall(vim.api.nvim_buf_del_extmark, self.buffer.bufnr, render.ns, self.welcome_mark)
    self.welcome_mark = nil
  end
  if event.role ~= "user" then
    self.stream_id = nil
    return
  end
  local parts = {}
  for _, block in ipairs(event.content) do
    if block.type == "text" and not vim.startswith(block.text, "<userContext>") then table.insert(parts, block.text) end
  end
  if #parts == 0 then return end
  local lines = vim.split(table.concat(parts, "\n\n"), "\n", { plain = true })
  -- Who speaks is virtual text above each part, so the buffer holds only the conversation.
  -- The user's words as a markdown quote: set apart, and still markdown when yanked.
  -- A blank line ends the quote (else the answer's first line would continue it).
  for i, line in ipairs(lines) do lines[i] = "> " .. line end
  table.insert(lines, "")
  local row = self.buffer:block(lines)
  self.buffer:mark(row, 0, { virt_lines_above = true, virt_lines = { { { "▍You", "AgentlsUser" } } } })
  local answer = self.buffer:tail()
  self.buffer:mark(answer, 0, {
    virt_lines_above = true,
    virt_lines = { { { "▍agentls", "AgentlsAgent" } } },
    right_gravity = false,
  })
end

--- Streamed text or thinking of an assistant message.
function Chat:stream(message_id, kind, text)
  local id = message_id .. ":" .. kind
  if self.stream_id ~= id then
    self.buffer:break_line()
    if not self.messages[message_id] then
      local row, col = self.buffer:tail()
      self.messages[message_id] = self.buffer:mark(row, col)
    end
    self.stream_id = id
    if kind == "thinking" then self.buffer:stream(THINKING_PREFIX) end
  end
  if kind == "thinking" then text = text:gsub("\n", "\n" .. THINKING_PREFIX) end
  self.buffer:stream(text)
end

function Chat:on_text_delta(event)
  self:stream(event.messageId, "text", event.text)
end

function Chat:on_thinking_delta(event)
  self:stream(event.messageId, "thinking", event.text)
end

function Chat:on_message_discarded(event)
  local mark = self.messages[event.messageId]
  if not mark then return end
  local row, col = self.buffer:mark_row(mark)
  self.buffer:cut_from(row, col)
  self.messages[event.messageId] = nil
  self.stream_id = nil
end

function Chat:on_tool_call(event)
  self.stream_id = nil
  local row = self.buffer:block({ "▸ " .. event.title })
  local tool = { lines = 0, status = "pending", name = event.name }
  tool.mark = self.buffer:mark(row, 0)
  self.tools[event.toolCallId] = tool
  self:tool_status(tool, "pending")
end

function Chat:tool_status(tool, status)
  tool.status = status
  local row = self.buffer:mark_row(tool.mark)
  local look = STATUS[status] or STATUS.pending
  tool.status_mark = vim.api.nvim_buf_set_extmark(self.buffer.bufnr, render.ns, row, 0, {
    id = tool.status_mark,
    sign_text = look[1],
    sign_hl_group = look[2],
    virt_text = { { " " .. status:gsub("_", " "), look[2] } },
    virt_text_pos = "eol",
  })
end

--- Output lines under a tool's card (folded when they are several, unless the tool failed).
function Chat:tool_output(tool, output, replace)
  local row = self.buffer:mark_row(tool.mark) + 1
  if replace and tool.lines > 0 then
    self.buffer:replace(row, row + tool.lines, {})
    tool.lines = 0
  end
  local lines = vim.split(output:gsub("\n$", ""), "\n", { plain = true })
  if replace and #lines > MAX_OUTPUT_LINES then
    local more = #lines - MAX_OUTPUT_LINES
    lines = vim.list_slice(lines, 1, MAX_OUTPUT_LINES)
    table.insert(lines, "… " .. words.count(more, "more line"))
  end
  local failed = tool.status == "failed"
  local prefix = failed and ERROR_PREFIX or OUTPUT_PREFIX
  for i, line in ipairs(lines) do lines[i] = prefix .. line end
  self.buffer:insert(row + tool.lines, lines)
  if failed then
    for i = 0, #lines - 1 do
      self.buffer:mark(row + tool.lines + i, 0, { line_hl_group = "AgentlsToolError" })
    end
  end
  tool.lines = tool.lines + #lines
end

function Chat:on_tool_call_update(event)
  local tool = self.tools[event.toolCallId]
  if not tool then return end
  self:tool_status(tool, event.status)
  if event.content and event.content ~= "" then
    -- Bash streams its output in pieces while in progress; the final content replaces them.
    self:tool_output(tool, event.content, event.status ~= "in_progress")
  end
  if event.diff then tool.diff = event.diff end
end

--- The proposed change as unified diff lines ({ text, highlight group }), capped.
local function diff_lines(diff, review_key)
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
  if #out > MAX_DIFF_LINES then
    local more = #out - MAX_DIFF_LINES
    out = vim.list_slice(out, 1, MAX_DIFF_LINES)
    local hint = review_key and (": %s opens the whole change"):format(review_key) or ""
    table.insert(out, { "  … " .. words.count(more, "more line") .. hint, "AgentlsFooter" })
  end
  return out
end

--- The choices of a request as "[y] Allow once" items, with the byte length of each key part.
function Chat:permission_items(event)
  local keys = config.options.keymaps
  local items = {}
  for _, option in ipairs(event.options) do
    local key = keys[option.kind]
    local label = words.option_label(option)
    if option.rule then label = ("%s (%s)"):format(label, option.rule) end
    table.insert(items, { key = key and ("[%s]"):format(key) or nil, label = label })
  end
  if event.diff and keys.view_diff then table.insert(items, { key = ("[%s]"):format(keys.view_diff), label = "Review" }) end
  return items
end

--- Text columns the chat window shows before it wraps (80 while it is not on screen).
function Chat:text_width()
  local win = vim.fn.win_findbuf(self.buffer.bufnr)[1]
  if not win then return 80 end
  local info = vim.fn.getwininfo(win)[1]
  return math.max(20, vim.api.nvim_win_get_width(win) - (info and info.textoff or 0))
end

--- Lay the items out in lines no wider than `width`, an item never split over two lines
--- (one wider than a line is cut with "…"). Returns the lines and the keys' byte ranges.
local function layout_items(items, width)
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
    local piece = item.key and (item.key .. " " .. item.label) or item.label
    if vim.fn.strdisplaywidth("  " .. piece) > width then
      piece = vim.fn.strcharpart(piece, 0, math.max(1, width - 3)) .. "…"
      while vim.fn.strdisplaywidth("  " .. piece) > width and vim.fn.strchars(piece) > 2 do
        piece = vim.fn.strcharpart(piece, 0, vim.fn.strchars(piece) - 2) .. "…"
      end
    end
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

--- (Re)write a pending request's choice lines to fit the chat window as it is now.
function Chat:layout_permission(permission)
  if permission.state ~= "pending" or not self.buffer:valid() then return end
  local first = self.buffer:mark_row(permission.mark) + 1 + permission.diff_count
  local lines, keys = layout_items(self:permission_items(permission.event), self:text_width())
  local now = vim.api.nvim_buf_get_lines(self.buffer.bufnr, first, first + permission.option_count, false)
  if permission.option_count > 0 and vim.deep_equal(now, lines) then return end
  self.buffer:replace(first, first + permission.option_count, lines)
  vim.api.nvim_buf_clear_namespace(self.buffer.bufnr, keys_ns, first, first + math.max(#lines, permission.option_count))
  for _, k in ipairs(keys) do
    vim.api.nvim_buf_set_extmark(self.buffer.bufnr, keys_ns, first + k[1], k[2], { end_col = k[3], hl_group = "AgentlsPermissionKey" })
  end
  permission.option_count = #lines
end

--- Lay out every pending request again (the chat window was opened or resized).
function M.relayout()
  for _, chat in pairs(shown) do
    local permission = chat:pending_permission()
    if permission then chat:layout_permission(permission) end
  end
end

--- A permission request: its title, the change it would make (for file tools) and the
--- choices with their keys, all in the chat; vim.ui.select when the chat is not on screen.
function Chat:on_permission_request(event)
  self.stream_id = nil
  local keys = config.options.keymaps
  local diff = event.diff and diff_lines(event.diff, keys.view_diff) or {}
  local lines = { "⚠ " .. event.title }
  for _, line in ipairs(diff) do table.insert(lines, line[1]) end
  local row = self.buffer:block(lines)
  local permission = {
    event = event,
    state = "pending",
    mark = self.buffer:mark(row, 0, { line_hl_group = "AgentlsPermission" }),
    diff_count = #diff,
    option_count = 0,
  }
  for i, line in ipairs(diff) do
    if line[2] then self.buffer:mark(row + i, 0, { line_hl_group = line[2] }) end
  end
  self.permissions[event.requestId] = permission
  self.last_permission = event.requestId
  self:layout_permission(permission)
  if not self:visible() or self.opened_for_permission then
    -- The change is seen before it is allowed: a hidden chat opens beside the source (the
    -- cursor stays there), and while the user has not gone to it the choices come through
    -- vim.ui.select, as for a chat that stays hidden.
    if event.diff and not self:visible() then
      require("agentls.window").open(self)
      self.opened_for_permission = true
    end
    self:ask_in_select(permission)
  elseif vim.api.nvim_get_current_buf() ~= self.buffer.bufnr then
    -- The cursor is elsewhere (the source window): say how to answer from there.
    local how = keys.permission and (" or %s then a key"):format(keys.permission) or ""
    vim.notify(("agentls: %s asks for permission: answer in the chat%s, or :AgentPermission"):format(event.title, how), vim.log.levels.WARN)
  end
end

function Chat:on_permission_resolved(event)
  local permission = self.permissions[event.requestId]
  if not permission then return end
  local was_pending = permission.state == "pending"
  permission.state = event.outcome
  local answer = event.outcome == "cancelled" and "cancelled" or event.optionId
  for _, option in ipairs(permission.event.options) do
    if option.optionId == event.optionId then answer = words.option_label(option) end
  end
  if was_pending then
    local first = self.buffer:mark_row(permission.mark) + 1 + permission.diff_count
    vim.api.nvim_buf_clear_namespace(self.buffer.bufnr, keys_ns, first, first + permission.option_count)
    self.buffer:replace(first, first + permission.option_count, { "  → " .. answer })
    self.buffer:mark(first, 0, { hl_group = "AgentlsAnswer", end_row = first + 1, hl_eol = false })
    permission.option_count = 1
  end
  require("agentls.review").close(event.requestId)
end

--- The permission request answered by the chat's keys: the newest still pending.
function Chat:pending_permission()
  local permission = self.last_permission and self.permissions[self.last_permission]
  if permission and permission.state == "pending" then return permission end
end

function Chat:respond(permission, option_id, accepted_text)
  if permission.state ~= "pending" then return end
  local params = { requestId = permission.event.requestId, optionId = option_id }
  if accepted_text then params.acceptedText = accepted_text end
  self:request("agent/respondPermission", params)
end

--- Answer a pending request with an option kind ("allow_once", …) or "review".
function Chat:answer(permission, kind)
  if kind == "review" then
    if permission.event.diff then
      require("agentls.review").open(self, permission)
    else
      vim.notify("agentls: this request has no change to review", vim.log.levels.WARN)
    end
    return
  end
  for _, option in ipairs(permission.event.options) do
    if option.kind == kind then
      return self:respond(permission, option.optionId, require("agentls.review").accepted_text(permission.event.requestId))
    end
  end
  vim.notify(("agentls: this request offers no %q"):format(words.OPTION_LABELS[kind] or kind), vim.log.levels.WARN)
end

--- The chat not on screen: the same choices through vim.ui.select (or its replacement).
function Chat:ask_in_select(permission)
  local event = permission.event
  local items = vim.deepcopy(event.options)
  if event.diff then table.insert(items, { kind = "review", name = "Review the change" }) end
  vim.ui.select(items, {
    prompt = "agentls: " .. event.title,
    format_item = function(item)
      local label = item.kind == "review" and item.name or words.option_label(item)
      return item.rule and ("%s (%s)"):format(label, item.rule) or label
    end,
  }, function(choice)
    if not choice then return end
    if choice.kind == "review" then
      require("agentls.review").open(self, permission)
    else
      self:respond(permission, choice.optionId)
    end
  end)
end

function Chat:on_ask_user(event)
  self:block_text("? " .. event.question)
  local answer = function(text)
    if text then self:request("agent/respondAskUser", { requestId = event.requestId, answer = text }) end
  end
  if event.choices and #event.choices > 0 then
    vim.ui.select(event.choices, { prompt = event.question }, answer)
  else
    vim.ui.input({ prompt = event.question .. " " }, answer)
  end
end

function Chat:on_ask_user_resolved(event)
  if event.answer then self:block_text("  → " .. event.answer) end
end

function Chat:on_notice(event)
  self:notice(event.level, event.message)
end

-- A local slash command's answer (/cost, /help, …).
function Chat:on_command_output(event)
  if event.isError then return self:notice("error", event.text) end
  self:block_text(event.text)
end

-- The session's slash commands, for completion in the prompt (see window.complete).
function Chat:on_available_commands(event)
  self.commands = event.commands
end

-- An MCP server that fails, or comes back after failing, is worth a line; quiet starts are not.
function Chat:on_mcp_status(event)
  self.mcp_servers = self.mcp_servers or {}
  self.mcp_servers[event.server] = event
  if event.status == "failed" then
    self:notice("warning", ("MCP server %s failed: %s"):format(event.server, event.error or "no reason given"))
  elseif event.status == "ready" and (event.attempt or 1) > 1 then
    self:notice("info", ("MCP server %s is back (%s)"):format(event.server, words.count(event.toolCount or 0, "tool")))
  end
end

function Chat:on_hook_result(event)
  local what = ({ success = "said", blocked = "blocked", timeout = "timed out" })[event.outcome] or "failed"
  local detail = event.message and (": " .. event.message) or ""
  self:notice(event.outcome == "success" and "info" or "warning", ("%s hook `%s` %s%s"):format(event.event, event.command, what, detail))
end

function Chat:on_compaction(event)
  self:block_text(("· context compacted: %d → %s"):format(event.tokensBefore, words.count(event.tokensAfter, "token")))
end

function Chat:on_usage(event)
  local usage = self.usage
  usage.input = usage.input + event.inputTokens
  usage.output = usage.output + event.outputTokens
  usage.context, usage.window = event.contextTokens, event.contextWindow
  if event.costUsd then usage.cost = (usage.cost or 0) + event.costUsd end
end

-- Sub-agents, plans and limits -------------------------------------------------------------

function Chat:agent_subagent_started(event)
  self:block_text(("  ↳ %s agent: %s"):format(event.subagentType, event.description))
end

function Chat:agent_tool_call(event)
  self:block_text("    · " .. event.title)
end

function Chat:agent_usage(event)
  -- The session's totals count what its agents spent.
  self:on_usage(event)
end

function Chat:agent_subagent_completed(event)
  local row = self:block_text(("  ↳ agent %s: %s, %s, %.1f s"):format(
    event.stopReason, words.count(event.turns, "model call"), words.count(event.toolCalls, "tool call"), event.durationMs / 1000))
  if event.stopReason ~= "end_turn" then self.buffer:mark(row, 0, { line_hl_group = "AgentlsNoticeWarning" }) end
end

local PLAN_MARKS = { completed = "[x]", in_progress = "[~]", pending = "[ ]" }

--- The plan, whole, each time the agent rewrites it (its TodoWrite tool).
function Chat:on_plan(event)
  self.plan = event.entries
  local lines, done = {}, 0
  for _, entry in ipairs(event.entries) do
    if entry.status == "completed" then done = done + 1 end
    table.insert(lines, ("  %s %s"):format(PLAN_MARKS[entry.status] or "[ ]", entry.content))
  end
  table.insert(lines, 1, ("Plan %d/%d"):format(done, #event.entries))
  self:block_text(table.concat(lines, "\n"))
end

function Chat:on_turn_limit_reached(event)
  self.limit_reached = true
  self:notice("warning", ("reached the turn limit (%s): :AgentContinue goes on"):format(words.count(event.turns, "model call")))
end

--- Another round of model calls after a turn stopped at the turn limit.
function Chat:continue()
  if not self.limit_reached then
    vim.notify("agentls: the last turn did not stop at the turn limit", vim.log.levels.WARN)
    return
  end
  self.limit_reached = nil
  self:request("agent/continueTurn", {})
end

function Chat:on_turn_completed(event)
  self.running = nil
  self.stream_id = nil
  self:spinner(false)
  local usage = self.usage
  local parts = {
    event.stopReason,
    ("%d in"):format(usage.input),
    ("%d out"):format(usage.output),
    ("%d%% context"):format(usage.window > 0 and math.floor(usage.context * 100 / usage.window) or 0),
  }
  if usage.cost then table.insert(parts, ("$%.4f"):format(usage.cost)) end
  if event.error then table.insert(parts, event.error.message) end
  -- Virtual lines do not wrap: the parts go on as many lines as the window needs.
  local hl = event.error and "AgentlsFooterError" or "AgentlsFooter"
  local width, lines, line = self:text_width(), {}, "──"
  for _, part in ipairs(parts) do
    local next_line = line == "──" and (line .. " " .. part) or (line .. " · " .. part)
    if line ~= "──" and vim.fn.strdisplaywidth(next_line) > width then
      table.insert(lines, { { line, hl } })
      next_line = "   " .. part
    end
    line = next_line
  end
  table.insert(lines, { { line, hl } })
  -- Under the answer's last line: the buffer's last line, unless a block left it empty.
  local row = self.buffer:tail()
  local last = vim.api.nvim_buf_get_lines(self.buffer.bufnr, row, row + 1, false)[1] or ""
  if last == "" and row > 0 then row = row - 1 end
  self.buffer:mark(row, 0, { virt_lines = lines })
  vim.cmd.redrawstatus()
end

--- A resumed tool call's title, as the daemon titles a live one (`Read src/app.py`).
local function history_title(block)
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
  elseif field("pattern") then
    title = ("%s %s"):format(block.name, field("pattern")) .. (field("path") and (" in " .. field("path")) or "")
  elseif path then
    title = ("%s %s"):format(block.name, path)
  end
  if vim.fn.strchars(title) > 80 then title = vim.fn.strcharpart(title, 0, 79) .. "…" end
  return title
end

--- One message of a resumed history.
function Chat:history(message)
  if message.role == "user" then
    self:on_message_completed({ role = "user", content = message.content })
    for _, block in ipairs(message.content) do
      local tool = block.type == "tool_result" and self.tools[block.toolUseId]
      if tool then
        local failed = block.isError
        self:tool_status(tool, failed and "failed" or "completed")
        local content = block.content
        if type(content) == "table" then
          local parts = {}
          for _, part in ipairs(content) do if part.type == "text" then table.insert(parts, part.text) end end
          content = table.concat(parts, "\n")
        end
        if content ~= "" then self:tool_output(tool, content, true) end
      end
    end
    return
  end
  for _, block in ipairs(message.content) do
    if block.type == "text" and block.text ~= "" then
      self:block_text(block.text)
    elseif block.type == "tool_use" then
      self:on_tool_call({ toolCallId = block.id, name = block.name, title = history_title(block) })
    end
  end
end

-- Pieces ------------------------------------------------------------------------------------

function Chat:block_text(text)
  self.stream_id = nil
  return self.buffer:block(vim.split(text, "\n", { plain = true }))
end

function Chat:notice(level, message)
  local row = self:block_text("! " .. message)
  local hl = level == "error" and "AgentlsNoticeError" or level == "warning" and "AgentlsNoticeWarning" or "AgentlsNoticeInfo"
  self.buffer:mark(row, 0, { line_hl_group = hl })
end

function Chat:spinner(on)
  local frames = { "⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏" }
  if self.spin_timer then
    self.spin_timer:stop()
    self.spin_timer:close()
    self.spin_timer = nil
  end
  if self.spin_mark then pcall(vim.api.nvim_buf_del_extmark, self.buffer.bufnr, render.ns, self.spin_mark) end
  self.spin_mark = nil
  if not on then return end
  local frame = 0
  self.spin_timer = vim.uv.new_timer()
  self.spin_timer:start(0, 120, vim.schedule_wrap(function()
    if not self.running or not self.buffer:valid() then return end
    frame = frame % #frames + 1
    local last = vim.api.nvim_buf_line_count(self.buffer.bufnr) - 1
    self.spin_mark = vim.api.nvim_buf_set_extmark(self.buffer.bufnr, render.ns, last, 0, {
      id = self.spin_mark,
      virt_text = { { frames[frame] .. " working", "AgentlsSpinner" } },
      virt_text_pos = "eol",
    })
  end))
end

function Chat:visible()
  return #vim.fn.win_findbuf(self.buffer.bufnr) > 0
end

-- Option kinds (and "review") by their configured key, for the chat's keys and :AgentPermission.
local function kind_of_key(key)
  local keys = config.options.keymaps
  for _, kind in ipairs({ "allow_once", "allow_always", "reject_once", "reject_always" }) do
    if keys[kind] == key or kind == key then return kind end
  end
  if key == keys.view_diff or key == "review" then return "review" end
end
M.kind_of_key = kind_of_key

--- The chat with a pending request: `root`'s if it has one, else any.
function M.pending(root)
  local chat = root and shown[root]
  if chat and chat:pending_permission() then return chat, chat:pending_permission() end
  for _, other in pairs(shown) do
    if other:pending_permission() then return other, other:pending_permission() end
  end
end

--- Answer the pending request by key ("y", …) or kind; false and a message when it cannot.
function M.answer(root, key)
  local kind = kind_of_key(key)
  if not kind then
    local keys = config.options.keymaps
    local known = {}
    for _, k in ipairs({ "allow_once", "allow_always", "reject_once", "reject_always", "view_diff" }) do
      if keys[k] then table.insert(known, keys[k]) end
    end
    vim.notify(("agentls: %q is not a permission answer; use one of %s"):format(key, table.concat(known, ", ")), vim.log.levels.ERROR)
    return false
  end
  local chat, permission = M.pending(root)
  if not chat then
    vim.notify("agentls: no permission request is waiting", vim.log.levels.WARN)
    return false
  end
  chat:answer(permission, kind)
  return true
end

function Chat:keymaps()
  local keys = config.options.keymaps
  local bufnr = self.buffer.bufnr
  local function map(lhs, fn, desc, opts)
    if lhs then vim.keymap.set("n", lhs, fn, vim.tbl_extend("force", { buffer = bufnr, desc = desc, nowait = true }, opts or {})) end
  end
  local function write() require("agentls.window").focus_prompt(self.root) end
  -- y/a/n/d/v answer while a request waits; otherwise they keep their meaning (y yanks the
  -- chat's markdown), and `a`, like `i`, writes a message.
  for _, kind in ipairs({ "allow_once", "allow_always", "reject_once", "reject_always", "review" }) do
    local lhs = kind == "review" and keys.view_diff or keys[kind]
    map(lhs, function()
      local chat = shown[self.root] or self
      local permission = chat:pending_permission()
      if not permission then
        if lhs == "a" then vim.schedule(write) return "" end
        return lhs
      end
      vim.schedule(function() chat:answer(permission, kind) end)
      return ""
    end, "agentls: " .. (words.OPTION_LABELS[kind] or "review the proposed change"), { expr = true })
  end
  map(keys.abort, function() (shown[self.root] or self):abort() end, "agentls: stop the turn")
  vim.keymap.set("n", "i", write, { buffer = bufnr, desc = "agentls: write a message" })
end

M.Chat = Chat
return M
