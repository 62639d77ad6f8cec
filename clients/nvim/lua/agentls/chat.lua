-- A chat: one daemon session, its buffer, and what each agent/event does to it.

local client_mod = require("agentls.client")
local config = require("agentls.config")
local render = require("agentls.render")

local M = {}

local STATUS = {
  pending = { "…", "Comment" },
  in_progress = { "▶", "DiagnosticInfo" },
  completed = { "✓", "DiagnosticOk" },
  failed = { "✗", "DiagnosticError" },
  declined = { "⊘", "DiagnosticWarn" },
  cancelled = { "⊘", "DiagnosticWarn" },
}
local OUTPUT_PREFIX = "  │ "
local THINKING_PREFIX = "  ┊ "
local MAX_OUTPUT_LINES = 30

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
  if not result then error("agentls: " .. (err and err.message or "newSession failed")) end
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
  if previous then chat.buffer:clear() end
  by_session[chat.session_id] = chat
  shown[root] = chat
  chat:keymaps()
  chat:load_commands()
  return chat
end

--- Go on in an earlier session: its history rendered, then live again.
function M.resume(root, session_id)
  local client = client_mod.get(root)
  local result, err = client_mod.request_sync(client, "agent/resumeSession", { sessionId = session_id })
  if not result then error("agentls: " .. (err and err.message or "resumeSession failed")) end
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
  by_session[chat.session_id] = chat
  shown[root] = chat
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

function Chat:on_message_completed(event)
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
  self.buffer:mark(row, 0, { virt_lines_above = true, virt_lines = { { { "▍You", "Title" } } } })
  local answer = self.buffer:tail()
  self.buffer:mark(answer, 0, {
    virt_lines_above = true,
    virt_lines = { { { "▍agentls", "Title" } } },
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

--- Output lines under a tool's card (folded: they start with the output prefix).
function Chat:tool_output(tool, text, replace)
  local row = self.buffer:mark_row(tool.mark) + 1
  if replace and tool.lines > 0 then
    self.buffer:replace(row, row + tool.lines, {})
    tool.lines = 0
  end
  local lines = vim.split(text:gsub("\n$", ""), "\n", { plain = true })
  if replace and #lines > MAX_OUTPUT_LINES then
    local more = #lines - MAX_OUTPUT_LINES
    lines = vim.list_slice(lines, 1, MAX_OUTPUT_LINES)
    table.insert(lines, ("… %d more lines"):format(more))
  end
  for i, line in ipairs(lines) do lines[i] = OUTPUT_PREFIX .. line end
  self.buffer:insert(row + tool.lines, lines)
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

function Chat:on_permission_request(event)
  self.stream_id = nil
  local keys = config.options.keymaps
  local choices = {}
  for _, option in ipairs(event.options) do
    local key = keys[option.kind]
    local label = option.rule and ("%s: %s"):format(option.name, option.rule) or option.name
    table.insert(choices, key and ("[%s] %s"):format(key, label) or label)
  end
  if event.diff and keys.view_diff then table.insert(choices, ("[%s] Review"):format(keys.view_diff)) end
  local row = self.buffer:block({ "⚠ " .. event.title, "  " .. table.concat(choices, "  ") })
  local permission = { event = event, state = "pending", mark = self.buffer:mark(row, 0, { line_hl_group = "WarningMsg" }) }
  self.permissions[event.requestId] = permission
  self.last_permission = event.requestId
  if not self:visible() then self:ask_in_select(permission) end
end

function Chat:on_permission_resolved(event)
  local permission = self.permissions[event.requestId]
  if not permission then return end
  permission.state = event.outcome
  local row = self.buffer:mark_row(permission.mark)
  local answer = event.optionId or event.outcome
  for _, option in ipairs(permission.event.options) do
    if option.optionId == event.optionId then answer = option.name end
  end
  self.buffer:replace(row + 1, row + 2, { "  → " .. answer })
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

--- The chat is not on screen: the same choices through vim.ui.select (or its replacement).
function Chat:ask_in_select(permission)
  local event = permission.event
  local items = vim.deepcopy(event.options)
  if event.diff then table.insert(items, { kind = "review", name = "Review the change" }) end
  vim.ui.select(items, {
    prompt = "agentls: " .. event.title,
    format_item = function(item)
      return item.rule and ("%s (%s)"):format(item.name, item.rule) or item.name
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
    self:notice("info", ("MCP server %s is back (%d tools)"):format(event.server, event.toolCount or 0))
  end
end

function Chat:on_hook_result(event)
  local what = ({ success = "said", blocked = "blocked", timeout = "timed out" })[event.outcome] or "failed"
  local detail = event.message and (": " .. event.message) or ""
  self:notice(event.outcome == "success" and "info" or "warning", ("%s hook `%s` %s%s"):format(event.event, event.command, what, detail))
end

function Chat:on_compaction(event)
  self:block_text(("· context compacted: %d → %d tokens"):format(event.tokensBefore, event.tokensAfter))
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
  local row = self:block_text(("  ↳ agent %s: %d model calls, %d tool calls, %.1f s"):format(
    event.stopReason, event.turns, event.toolCalls, event.durationMs / 1000))
  if event.stopReason ~= "end_turn" then self.buffer:mark(row, 0, { line_hl_group = "WarningMsg" }) end
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
  self:notice("warning", ("reached the turn limit (%d model calls): :AgentContinue goes on"):format(event.turns))
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
  local summary = ("%s · %d in · %d out · %d%% context"):format(
    event.stopReason,
    usage.input,
    usage.output,
    usage.window > 0 and math.floor(usage.context * 100 / usage.window) or 0
  )
  if usage.cost then summary = summary .. (" · $%.4f"):format(usage.cost) end
  if event.error then summary = summary .. " · " .. event.error.message end
  local row = self.buffer:tail()
  self.buffer:mark(math.max(0, row - 1), 0, { virt_lines = { { { "── " .. summary, event.error and "ErrorMsg" or "Comment" } } } })
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
  local hl = level == "error" and "ErrorMsg" or level == "warning" and "WarningMsg" or "MoreMsg"
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
      virt_text = { { frames[frame] .. " working", "Comment" } },
      virt_text_pos = "eol",
    })
  end))
end

function Chat:visible()
  return #vim.fn.win_findbuf(self.buffer.bufnr) > 0
end

function Chat:keymaps()
  local keys = config.options.keymaps
  local bufnr = self.buffer.bufnr
  local function map(lhs, fn, desc)
    if lhs then vim.keymap.set("n", lhs, fn, { buffer = bufnr, desc = desc, nowait = true }) end
  end
  for _, option in ipairs({ "allow_once", "allow_always", "reject_once", "reject_always" }) do
    map(keys[option], function()
      local chat = shown[self.root] or self
      local permission = chat:pending_permission()
      if permission then chat:respond(permission, option, require("agentls.review").accepted_text(permission.event.requestId)) end
    end, "agentls: " .. option:gsub("_", " "))
  end
  map(keys.view_diff, function()
    local chat = shown[self.root] or self
    local permission = chat:pending_permission()
    if permission and permission.event.diff then require("agentls.review").open(chat, permission) end
  end, "agentls: review the proposed change")
  map(keys.abort, function() (shown[self.root] or self):abort() end, "agentls: stop the turn")
  vim.keymap.set("n", "i", function() require("agentls.window").focus_prompt(self.root) end, { buffer = bufnr, desc = "agentls: write a message" })
end

M.Chat = Chat
return M
