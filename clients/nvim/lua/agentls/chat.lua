-- A chat: one daemon session's state, its transport (requests to the daemon) and where each
-- agent/event lands in its buffer. What an event looks like is lines.lua's (pure); this
-- module keeps the state and puts those lines on screen.

local answers = require("agentls.answers")
local cards = require("agentls.cards")
local client_mod = require("agentls.client")
local config = require("agentls.config")
local lines = require("agentls.lines")
local render = require("agentls.render")
local tool_cards = require("agentls.tool_cards")

local M = {}

-- Extmarks of the permission keys' highlights, cleared whenever the options are laid out again.
local keys_ns = vim.api.nvim_create_namespace("agentls-permission-keys")

---@class agentls.Tool  a tool call's card in the chat
---@field name string
---@field input? table      the call's input
---@field call agentls.ToolCall  its title, kind and locations as shown
---@field status string     its last status (pending, in_progress, completed, failed, …)
---@field mark? integer     extmark on the card's first line
---@field head integer      the card's lines (its title, then its locations)
---@field head_marks integer[]  extmarks of the card's highlights
---@field status_mark? integer  extmark of its sign and status words
---@field lines integer     output lines under the card
---@field diff? table       the change it made, when the daemon sent one

---@class agentls.Permission  a permission request shown in the chat
---@field event table       the permission_request event
---@field state string      "pending", then the resolved event's outcome
---@field mark integer      extmark on the title line
---@field diff_count integer  diff lines under the title
---@field option_count integer  choice lines under the diff (1 once answered)

---@class agentls.Chat
---@field root string           the workspace root the session works in
---@field client_id integer     the vim.lsp client of the daemon
---@field session_id string
---@field model? string
---@field mode? string          the permission mode
---@field sandbox? table
---@field buffer agentls.Buffer
---@field running? string       the running turn's id
---@field usage agentls.Usage
---@field messages table<string, integer>  message id -> extmark where its text starts
---@field tools table<string, agentls.Tool>  tool call id -> its card
---@field permissions table<string, agentls.Permission>  request id -> the request
---@field last_permission? string  the newest request's id (the one the keys answer)
---@field stream_id? string     "<message id>:<text|thinking>" being streamed
---@field commands? table[]     the session's slash commands
---@field mcp_servers? table<string, table>  server name -> its last mcp_status event
---@field plan? table[]
---@field limit_reached? boolean  the last turn stopped at the turn limit
---@field welcome_mark? integer
---@field opened_for_permission? boolean  the chat opened itself to show a change
---@field spin_timer? uv.uv_timer_t
---@field spin_mark? integer
---@field plugins? table[]    newSession's installed plugins (PluginInfo)
---@field shells? table<string, string>  background shell id -> its command
---@field worktree_cards? table<string, { mark: integer, count: integer, worktree: table }>  agent id -> its card
---@field drawn? table<string, boolean>  after a re-attach: message ids its history drew
---@field older_cursor? string  messages before the ones shown remain: agent/getMessages's `before`
---@field user_messages table<string, { mark: integer, text: string }>  user message id -> where it is drawn, its text
---@field turn_of table<string, string>  user message id -> the turn it began (from turn_started, or a resumed history's turnId)
local Chat = {}
Chat.__index = Chat

---@type table<string, agentls.Chat>  session id -> chat
local by_session = {}
---@type table<string, agentls.Chat>  root -> the chat shown for it
local shown = {}

--- The chat of a root (the current buffer's by default); `create` starts its session.
---@param root? string
---@param create? boolean
---@return agentls.Chat|nil
function M.get(root, create)
  root = root or client_mod.root_of(0)
  local chat = shown[root]
  if chat or not create then return chat end
  return M.new(root)
end

--- Ask the daemon for a session (agent/newSession or agent/resumeSession); errors as "agentls: …".
---@param root string
---@param method string
---@param params table
---@return table result
---@return vim.lsp.Client client
local function open_request(root, method, params)
  local client = client_mod.get(root)
  local result, err = client_mod.request_sync(client, method, params)
  if not result then error(("agentls: %s"):format(err and err.message or (method:gsub("^agent/", "") .. " failed")), 0) end
  return result, client
end

--- A new chat buffer (highlighted by treesitter's markdown parser when `chat.treesitter`).
---@param root string
---@return agentls.Buffer
local function new_buffer(root)
  local buffer = render.new("agentls://chat/" .. root)
  -- Off by default: re-parsing a streaming chat costs typing latency (a plan is highlighted
  -- by markdown_marks either way).
  if config.options.chat.treesitter then pcall(vim.treesitter.start, buffer.bufnr, "markdown") end
  return buffer
end

--- The buffer a root's next session draws in. The shown session's buffer, emptied, unless
--- it still works (a turn running, a request waiting): then that session keeps drawing in its
--- buffer, renamed, and the next one gets a fresh buffer in the same windows, so events of
--- the two never mix. An idle session on its way out gets no more events here.
---@param root string
---@param previous? agentls.Chat
---@param session_id string  the session coming
---@return agentls.Buffer
local function buffer_for(root, previous, session_id)
  if not previous or not previous.buffer:valid() then return new_buffer(root) end
  if previous.session_id == session_id or not (previous.running or previous:pending_permission()) then
    if previous.session_id ~= session_id then by_session[previous.session_id] = nil end
    previous:spinner(false)
    previous.buffer:clear()
    vim.api.nvim_buf_clear_namespace(previous.buffer.bufnr, keys_ns, 0, -1)
    -- Nor the earlier messages of the session shown before.
    require("agentls.earlier").set_cursor(previous, nil)
    return previous.buffer
  end
  pcall(vim.api.nvim_buf_set_name, previous.buffer.bufnr, ("agentls://chat/%s#%s"):format(root, previous.session_id))
  local buffer = new_buffer(root)
  for _, win in ipairs(vim.fn.win_findbuf(previous.buffer.bufnr)) do vim.api.nvim_win_set_buf(win, buffer.bufnr) end
  return buffer
end

--- A session was opened (new or resumed): its chat takes the root's buffer (see buffer_for),
--- becomes the root's shown chat, and gets its keys and slash commands.
---@param root string
---@param client vim.lsp.Client
---@param result table  the newSession or resumeSession result
---@return agentls.Chat
local function session_opened(root, client, result)
  local previous = shown[root]
  local chat = setmetatable({
    root = root,
    client_id = client.id,
    session_id = result.sessionId,
    model = result.model,
    mode = result.permissionMode,
    sandbox = result.sandbox,
    plugins = result.plugins,
    buffer = buffer_for(root, previous, result.sessionId),
    usage = { input = 0, output = 0, context = 0, window = 0 },
    messages = {},
    tools = {},
    permissions = {},
    user_messages = {},
    turn_of = {},
  }, Chat)
  by_session[chat.session_id] = chat
  shown[root] = chat
  -- Commands typed in the chat window act on this root, never on the cwd's.
  vim.b[chat.buffer.bufnr].agentls_root = root
  -- The keys answer the chat this buffer shows now (a resume reuses it; a session that
  -- kept working in a buffer of its own keeps its keys there).
  local bufnr = chat.buffer.bufnr
  answers.keymaps(chat, function()
    local now = shown[root]
    return (now and now.buffer.bufnr == bufnr) and now or chat
  end)
  require("agentls.rewind").keymaps(chat, bufnr)
  chat:load_commands()
  return chat
end

M.opened = session_opened

--- Start a new session in the root's chat (the one shown before stays resumable).
---@param root string
---@return agentls.Chat
function M.new(root)
  local params = vim.tbl_extend("force", { cwd = root }, config.options.session or {})
  local result, client = open_request(root, "agent/newSession", params)
  local chat = session_opened(root, client, result)
  chat:welcome()
  return chat
end

--- Go on in an earlier session: its history rendered, then live again.
---@param root string
---@param session_id string
---@return agentls.Chat
function M.resume(root, session_id)
  local earlier = require("agentls.earlier")
  local params = { sessionId = session_id, messageLimit = earlier.page() }
  local result, client = open_request(root, "agent/resumeSession", params)
  local chat = session_opened(root, client, result)
  for _, message in ipairs(result.messages) do chat:history(message) end
  earlier.set_cursor(chat, result.messagesCursor)
  return chat
end

--- A new session with the history of `session_id` up to `message_id` (agent/forkSession:
--- at a user message the copy ends just before it), drawn in the root's chat.
---@param root string
---@param session_id string
---@param message_id string
---@return agentls.Chat
function M.fork(root, session_id, message_id)
  local result, client = open_request(root, "agent/forkSession", { sessionId = session_id, messageId = message_id })
  local chat = session_opened(root, client, result)
  for _, message in ipairs(result.messages) do chat:history(message) end
  return chat
end

-- A sub-agent's events that still reach the chat as they are: what the user must answer.
local FROM_AGENTS = { permission_request = true, permission_resolved = true, ask_user = true, ask_user_resolved = true, notice = true }

--- An agent/event from a daemon: the handler of its type draws it in its session's chat.
---@param event table
---@param client_id integer  the client it came from (a session id is only unique per daemon)
function M.on_event(event, client_id)
  local chat = by_session[event.sessionId]
  if not chat or chat.client_id ~= client_id then return end
  -- After a re-attach, what the resumed history shows already comes again: drawn once.
  if chat.drawn and require("agentls.reattach").drawn_before(chat, event) then return end
  local handler = Chat["on_" .. event.type]
  if event.agentId and not FROM_AGENTS[event.type] then handler = Chat["agent_" .. event.type] end
  if handler then handler(chat, event) end
  vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsEvent", data = event, modeline = false })
end

--- A daemon stopped: its chats are forgotten (a running turn says so first).
---@param client_id integer
---@param code integer
---@param signal integer
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

--- A session deleted (agent/deleteSession): its chat closed and forgotten, its buffer
--- wiped; the root's next chat starts afresh.
---@param session_id string
function M.forget(session_id)
  local chat = by_session[session_id]
  if not chat then return end
  chat:spinner(false)
  require("agentls.window").close(chat)
  by_session[session_id] = nil
  if shown[chat.root] == chat then shown[chat.root] = nil end
  if chat.buffer:valid() then pcall(vim.api.nvim_buf_delete, chat.buffer.bufnr, { force = true }) end
end

--- All chats, for the statusline and tests.
---@return agentls.Chat[]
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

---@return vim.lsp.Client|nil
function Chat:client()
  return vim.lsp.get_client_by_id(self.client_id)
end

--- A request about this session (its sessionId added); an error is also a notification.
---@param method string
---@param params table
---@param callback? fun(err: table|nil, result: any)
function Chat:request(method, params, callback)
  local client = self:client()
  if not client then
    vim.notify("agentls: the daemon is not running", vim.log.levels.ERROR)
    return
  end
  params.sessionId = self.session_id
  client_mod.request(client, method, params, function(err, result)
    if err then self:request_failed(method, err.message or "") end
    if callback then callback(err, result) end
  end)
end

--- A daemon's error: the whole text in the chat, one line of it notified (a longer one
--- would block Neovim at a hit-enter prompt until a key is pressed).
---@param method string
---@param message string
function Chat:request_failed(method, message)
  local full = ("%s: %s"):format(method, message)
  local width = vim.v.echospace > 0 and vim.v.echospace or vim.o.columns - 12
  local shown = require("agentls.text").one_line(full, width - #"agentls: ")
  if shown ~= full then self:notice("error", full) end
  vim.notify("agentls: " .. shown, vim.log.levels.ERROR)
end

-- Sending ---------------------------------------------------------------------------

--- Submit a message (queued by the daemon while a turn runs).
---@param text string
---@param attachments? table[]
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
  -- A turn of its own user message: rewind and changes name it by that message.
  if not event.continued and event.userMessageId then self.turn_of[event.userMessageId] = event.turnId end
  self:spinner(true)
  if config.options.reattach then require("agentls.reattach").running(self, event.seq - 1) end
end

--- The empty chat says what to do (virtual lines, gone with the first message).
function Chat:welcome()
  local virt_lines = lines.welcome(self.model, self.mode, config.options.keymaps)
  self.welcome_mark = self.buffer:mark(0, 0, { virt_lines = virt_lines })
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
  local quote = lines.user_message(event.content)
  if not quote then return end
  -- Who speaks is virtual text above each part, so the buffer holds only the conversation.
  local row = self.buffer:block(quote)
  local header = self.buffer:mark(row, 0, { virt_lines_above = true, virt_lines = lines.USER_HEADER })
  if event.messageId then
    local text = vim.tbl_map(function(line) return (line:gsub("^> ?", "")) end, vim.list_slice(quote, 1, #quote - 1))
    self.user_messages[event.messageId] = { mark = header, text = table.concat(text, "\n") }
  end
  local answer = self.buffer:tail()
  self.buffer:mark(answer, 0, { virt_lines_above = true, virt_lines = lines.AGENT_HEADER, right_gravity = false })
end

--- Streamed text or thinking of an assistant message.
---@param message_id string
---@param kind "text"|"thinking"
---@param text string
function Chat:stream(message_id, kind, text)
  local id = message_id .. ":" .. kind
  if self.stream_id ~= id then
    self.buffer:break_line()
    if not self.messages[message_id] then
      local row, col = self.buffer:tail()
      self.messages[message_id] = self.buffer:mark(row, col)
    end
    self.stream_id = id
    if kind == "thinking" then self.buffer:stream(lines.THINKING_PREFIX) end
  end
  if kind == "thinking" then text = lines.thinking(text) end
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

-- A tool call announced live (tool_call) or drawn from a resumed history (Chat:history).
function Chat:on_tool_call(event)
  self.stream_id = nil
  local tool = {
    name = event.name,
    input = type(event.input) == "table" and event.input or nil,
    call = { title = event.title, kind = event.kind, locations = event.locations },
    status = "pending",
    head = 0,
    head_marks = {},
    lines = 0,
  }
  self.tools[event.toolCallId] = tool
  self:draw_card(tool)
  self:tool_status(tool, "pending")
end

--- Draw a tool's card: at the end of the chat when it is new, else in place of its lines
--- (a tool_call_update changed its title or locations), the output under it kept.
---@param tool agentls.Tool
function Chat:draw_card(tool)
  local shown, icon
  if tool.name == "WriteStdin" and tool.input then
    local typed = lines.shell_input(tool.input, (self.shells or {})[tool.input.shell_id])
    shown = vim.tbl_map(function(text) return { text } end, typed)
  else
    local icons = vim.tbl_extend("force", tool_cards.ICONS, config.options.chat.tool_icons or {})
    shown, icon = tool_cards.lines(tool.call, self.root, icons)
  end
  local text = vim.tbl_map(function(line) return line[1] end, shown)
  local row
  if tool.mark then
    row = self.buffer:mark_row(tool.mark)
    for _, id in ipairs(tool.head_marks) do vim.api.nvim_buf_del_extmark(self.buffer.bufnr, render.ns, id) end
    -- The title line's text in place, so the marks on it (the card's, its status, a header
    -- above it) stay on it; then its location lines.
    self.buffer:set_line(row, text[1])
    self.buffer:replace(row + 1, row + tool.head, vim.list_slice(text, 2))
  else
    row = self.buffer:block(text)
    tool.mark = self.buffer:mark(row, 0)
  end
  tool.head = #text
  tool.head_marks = {}
  for i, line in ipairs(shown) do
    if line[2] then table.insert(tool.head_marks, self.buffer:mark(row + i - 1, 0, { line_hl_group = line[2] })) end
  end
  if icon then table.insert(tool.head_marks, self.buffer:mark(row, icon[1], { end_col = icon[2], hl_group = "AgentlsToolKind" })) end
end

---@param tool agentls.Tool
---@param status string
function Chat:tool_status(tool, status)
  tool.status = status
  local row = self.buffer:mark_row(tool.mark)
  local look = lines.tool_look(status)
  tool.status_mark = vim.api.nvim_buf_set_extmark(self.buffer.bufnr, render.ns, row, 0, {
    id = tool.status_mark,
    sign_text = look.sign,
    sign_hl_group = look.hl,
    virt_text = { { " " .. look.label, look.hl } },
    virt_text_pos = "eol",
  })
end

--- Output lines under a tool's card (folded when they are several, unless the tool failed);
--- `replace` puts the final content in place of what streamed before.
---@param tool agentls.Tool
---@param output string
---@param replace boolean
function Chat:tool_output(tool, output, replace)
  local row = self.buffer:mark_row(tool.mark) + tool.head
  if replace and tool.lines > 0 then
    self.buffer:replace(row, row + tool.lines, {})
    tool.lines = 0
  end
  local failed = tool.status == "failed"
  local out = lines.tool_output(output, failed, replace)
  self.buffer:insert(row + tool.lines, out)
  if failed then
    for i = 0, #out - 1 do
      self.buffer:mark(row + tool.lines + i, 0, { line_hl_group = "AgentlsToolError" })
    end
  end
  tool.lines = tool.lines + #out
end

function Chat:on_tool_call_update(event)
  local tool = self.tools[event.toolCallId]
  if not tool then return end
  -- An update may name the call anew (its title, kind or files): the card is drawn again.
  local changed = false
  for _, field in ipairs({ "title", "kind", "locations" }) do
    local value = event[field]
    if value ~= nil and value ~= vim.NIL and not vim.deep_equal(value, tool.call[field]) then
      tool.call[field] = value
      changed = true
    end
  end
  if changed then self:draw_card(tool) end
  self:tool_status(tool, event.status)
  if event.content and event.content ~= "" then
    -- Bash streams its output in pieces while in progress; the final content replaces them.
    self:tool_output(tool, event.content, event.status ~= "in_progress")
  end
  if event.diff then tool.diff = event.diff end
end

--- Text columns the chat window shows before it wraps (80 while it is not on screen).
---@return integer
function Chat:text_width()
  local win = vim.fn.win_findbuf(self.buffer.bufnr)[1]
  if not win then return 80 end
  local info = vim.fn.getwininfo(win)[1]
  return math.max(20, vim.api.nvim_win_get_width(win) - (info and info.textoff or 0))
end

--- (Re)write a pending request's choice lines to fit the chat window as it is now.
---@param permission agentls.Permission
function Chat:layout_permission(permission)
  if permission.state ~= "pending" or not self.buffer:valid() then return end
  local first = self.buffer:mark_row(permission.mark) + 1 + permission.diff_count
  local items = lines.permission_items(permission.event, config.options.keymaps)
  local choices, keys = lines.layout_items(items, self:text_width())
  local now = vim.api.nvim_buf_get_lines(self.buffer.bufnr, first, first + permission.option_count, false)
  if permission.option_count > 0 and vim.deep_equal(now, choices) then return end
  self.buffer:replace(first, first + permission.option_count, choices)
  vim.api.nvim_buf_clear_namespace(self.buffer.bufnr, keys_ns, first, first + math.max(#choices, permission.option_count))
  for _, k in ipairs(keys) do
    vim.api.nvim_buf_set_extmark(self.buffer.bufnr, keys_ns, first + k[1], k[2], { end_col = k[3], hl_group = "AgentlsPermissionKey" })
  end
  permission.option_count = #choices
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
  -- Under the title: the plan (markdown), a patch's files, or the change a file tool makes.
  local diff = event.plan and cards.plan(event.plan)
    or event.diffs and cards.patch(event.diffs, keys.view_diff, self.root)
    or event.diff and lines.diff(event.diff, keys.view_diff)
    or cards.request_body(event)
    or {}
  local shown_lines = { lines.permission_title(event) }
  for _, line in ipairs(diff) do table.insert(shown_lines, line[1]) end
  local row = self.buffer:block(shown_lines)
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
  -- The plan's markdown (after its rule) highlighted by treesitter, when it is installed.
  if event.plan then require("agentls.markdown_marks").highlight(self.buffer.bufnr, row + 2, event.plan) end
  self.permissions[event.requestId] = permission
  self.last_permission = event.requestId
  self:layout_permission(permission)
  -- An inline edit's change is reviewed in its file's buffer, hunk by hunk, not from here.
  if event.inlineEdit and require("agentls.inline_review").open(self, permission) then return end
  if not self:visible() or self.opened_for_permission then
    -- The change is seen before it is allowed: a hidden chat opens beside the source (the
    -- cursor stays there), and while the user has not gone to it the choices come through
    -- vim.ui.select, as for a chat that stays hidden.
    if (event.diff or event.diffs or event.plan) and not self:visible() then
      require("agentls.window").open(self)
      self.opened_for_permission = true
    end
    answers.in_select(self, permission)
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
  if was_pending then
    local first = self.buffer:mark_row(permission.mark) + 1 + permission.diff_count
    vim.api.nvim_buf_clear_namespace(self.buffer.bufnr, keys_ns, first, first + permission.option_count)
    self.buffer:replace(first, first + permission.option_count, { lines.permission_answer(permission.event.options, event) })
    self.buffer:mark(first, 0, { hl_group = "AgentlsAnswer", end_row = first + 1, hl_eol = false })
    permission.option_count = 1
  end
  require("agentls.review").close(event.requestId)
  require("agentls.patch_review").close(event.requestId)
end

--- The permission request answered by the chat's keys: the newest still pending.
---@return agentls.Permission|nil
function Chat:pending_permission()
  local permission = self.last_permission and self.permissions[self.last_permission]
  if permission and permission.state == "pending" then return permission end
end

---@param permission agentls.Permission
---@param option_id string
---@param accepted_text? string  the change as the user edited it in the review
---@param message? string  what the user says with the answer (a plan's feedback)
function Chat:respond(permission, option_id, accepted_text, message)
  if permission.state ~= "pending" then return end
  local params = { requestId = permission.event.requestId, optionId = option_id }
  if accepted_text then params.acceptedText = accepted_text end
  if message then params.message = message end
  self:request("agent/respondPermission", params)
end

function Chat:on_ask_user(event)
  self:block_text(lines.question(event))
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
  if event.answer then self:block_text(lines.question_answer(event.answer)) end
end

function Chat:on_notice(event)
  self:notice(event.level, event.message)
end

-- A local command's answer (/cost, /help, …): /context also as a bar of what fills the
-- window; `!`'s output is already under its Bash card, so only where it goes is said.
function Chat:on_command_output(event)
  if event.isError then return self:notice("error", event.text) end
  if event.command == "!" then
    local row = self:block_text("  ↳ the output goes to the model with your next message")
    self.buffer:mark(row, 0, { line_hl_group = "AgentlsFooter" })
    return
  end
  local row = self:block_text(event.text)
  if event.command == "#" then
    self.buffer:mark(row, 0, { line_hl_group = "AgentlsNoticeInfo" })
  elseif event.command == "context" then
    local parts = cards.context_parts(event.text)
    if #parts > 0 then self.buffer:mark(row, 0, { virt_lines = cards.context_bar(parts, self:text_width()) }) end
  end
end

--- The mode changed (/mode, :AgentMode elsewhere, an approved plan): the chat's winbar and
--- statusline show it, and the chat says so where it happened.
function Chat:on_permission_mode_changed(event)
  local changed = self.mode ~= event.permissionMode
  self.mode = event.permissionMode
  if changed then
    local row = self:block_text("· mode: " .. event.permissionMode)
    self.buffer:mark(row, 0, { line_hl_group = "AgentlsFooter" })
  end
  -- Status lines and winbars.
  vim.cmd.redrawstatus({ bang = true })
end

-- The session's slash commands, for completion in the prompt (see window.complete).
function Chat:on_available_commands(event)
  self.commands = event.commands
end

-- An MCP server that fails, or comes back after failing, is worth a line; quiet starts are not.
function Chat:on_mcp_status(event)
  self.mcp_servers = self.mcp_servers or {}
  self.mcp_servers[event.server] = event
  local level, message = lines.mcp_status(event)
  if level and message then self:notice(level, message) end
end

function Chat:on_hook_result(event)
  self:notice(lines.hook_result(event))
end

function Chat:on_compaction(event)
  self:block_text(lines.compaction(event))
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
  self:block_text(lines.subagent_started(event))
end

function Chat:agent_tool_call(event)
  self:block_text(lines.agent_tool_call(event))
end

function Chat:agent_usage(event)
  -- The session's totals count what its agents spent.
  self:on_usage(event)
end

function Chat:agent_subagent_completed(event)
  local text, hl = lines.subagent_completed(event)
  local row = self:block_text(text)
  if hl then self.buffer:mark(row, 0, { line_hl_group = hl }) end
  if type(event.worktree) == "table" then self:worktree_card(event.agentId, event.worktree) end
end

--- An isolated agent's worktree as a card (see cards.worktree), redrawn when it is resolved.
---@param agent_id string
---@param worktree table
---@param resolved? table  its worktree_resolved event
function Chat:worktree_card(agent_id, worktree, resolved)
  self.worktree_cards = self.worktree_cards or {}
  local shown_lines = cards.worktree(worktree, resolved)
  local text = vim.tbl_map(function(line) return line[1] end, shown_lines)
  local card = self.worktree_cards[agent_id]
  local row
  if card then
    row = self.buffer:mark_row(card.mark)
    -- The old lines' highlights go with them (a footer's virtual lines there stay).
    self.buffer:flush()
    local bufnr = self.buffer.bufnr
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, render.ns, { row, 0 }, { row + card.count - 1, -1 }, { details = true })) do
      if m[4].line_hl_group and not m[4].virt_lines then vim.api.nvim_buf_del_extmark(bufnr, render.ns, m[1]) end
    end
    self.buffer:replace(row, row + card.count, text)
  else
    self.stream_id = nil
    row = self.buffer:block(text)
    card = { worktree = worktree }
    self.worktree_cards[agent_id] = card
  end
  card.count = #text
  card.mark = self.buffer:mark(row, 0)
  for i, line in ipairs(shown_lines) do
    if line[2] then self.buffer:mark(row + i - 1, 0, { line_hl_group = line[2] }) end
  end
end

--- A worktree merged or discarded (here, in another window or `agentls run`): its card says so.
function Chat:on_worktree_resolved(event)
  local card = (self.worktree_cards or {})[event.agentId]
  if card then self:worktree_card(event.agentId, card.worktree, event) end
  vim.notify(("agentls: %s %s"):format(event.branch, event.action), vim.log.levels.INFO)
end
-- It names its agent, yet it is the user's answer, not the agent's work.
Chat.agent_worktree_resolved = Chat.on_worktree_resolved

-- A background shell's command, so what is typed into it is shown under its name.
function Chat:on_shell_status(event)
  self.shells = self.shells or {}
  self.shells[event.shellId] = event.command
end

--- The plan, whole, each time the agent rewrites it (its TodoWrite tool).
function Chat:on_plan(event)
  self.plan = event.entries
  self:block_text(lines.plan(event.entries))
end

function Chat:on_turn_limit_reached(event)
  self.limit_reached = true
  self:notice("warning", lines.turn_limit(event))
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
  if config.options.reattach then require("agentls.reattach").ended(self) end
  self.running = nil
  self.stream_id = nil
  self:spinner(false)
  local footer = lines.footer(event, self.usage, self:text_width())
  -- Under the answer's last line: the buffer's last line, unless a block left it empty.
  local row = self.buffer:tail()
  local last = vim.api.nvim_buf_get_lines(self.buffer.bufnr, row, row + 1, false)[1] or ""
  if last == "" and row > 0 then row = row - 1 end
  self.buffer:mark(row, 0, { virt_lines = footer })
  vim.cmd.redrawstatus()
end

--- One message of a resumed history.
---@param message { role: string, content: table[], messageId?: string, turnId?: string, toolCalls?: table[] }
function Chat:history(message)
  if message.role == "user" then
    self:on_message_completed({ role = "user", content = message.content, messageId = message.messageId })
    -- The turn it began (DisplayMessage.turnId): rewind, fork and changes work from it.
    if message.turnId and message.turnId ~= vim.NIL then self.turn_of[message.messageId] = message.turnId end
    for _, block in ipairs(message.content) do
      local tool = block.type == "tool_result" and self.tools[block.toolUseId]
      if tool then
        self:tool_status(tool, block.isError and "failed" or "completed")
        local content = lines.tool_result_text(block)
        if content ~= "" then self:tool_output(tool, content, true) end
      end
    end
    return
  end
  -- How each call was announced when it ran (DisplayMessage.toolCalls); an older daemon
  -- sends none, and the title is then guessed from the block as the daemon would make it.
  local announced = {}
  if type(message.toolCalls) == "table" then
    for _, call in ipairs(message.toolCalls) do announced[call.toolCallId] = call end
  end
  for _, block in ipairs(message.content) do
    if block.type == "text" and block.text ~= "" then
      self:block_text(block.text)
    elseif block.type == "tool_use" then
      local call = announced[block.id] or {}
      local title = type(call.title) == "string" and call.title or lines.history_title(block)
      self:on_tool_call({
        toolCallId = block.id, name = block.name, title = title, kind = call.kind, locations = call.locations, input = block.input,
      })
      local plan = block.name == "ExitPlanMode" and type(block.input) == "table" and block.input.plan
      if type(plan) == "string" then self:plan_card(plan) end
    end
  end
end

-- Pieces ------------------------------------------------------------------------------------

--- A plan of the history (the ExitPlanMode call's input) as it was shown when presented.
---@param plan string
function Chat:plan_card(plan)
  self.stream_id = nil
  local shown = cards.plan(plan)
  local row = self.buffer:block(vim.tbl_map(function(line) return line[1] end, shown))
  for i, line in ipairs(shown) do
    if line[2] then self.buffer:mark(row + i - 1, 0, { line_hl_group = line[2] }) end
  end
  require("agentls.markdown_marks").highlight(self.buffer.bufnr, row + 1, plan)
end

--- Text as whole lines at the end (it ends any stream); returns the first line's row.
---@param text string
---@return integer
function Chat:block_text(text)
  self.stream_id = nil
  return self.buffer:block(vim.split(text, "\n", { plain = true }))
end

---@param level string  "error", "warning" or "info"
---@param message string
function Chat:notice(level, message)
  local text, hl = lines.notice(level, message)
  local row = self:block_text(text)
  self.buffer:mark(row, 0, { line_hl_group = hl })
end

--- The "working" spinner at the end of the chat, on or off.
---@param on boolean
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

---@return boolean
function Chat:visible()
  return #vim.fn.win_findbuf(self.buffer.bufnr) > 0
end

--- The chat with a pending request: `root`'s if it has one, else any.
---@param root? string
---@return agentls.Chat|nil
---@return agentls.Permission|nil
function M.pending(root)
  local chat = root and shown[root]
  if chat and chat:pending_permission() then return chat, chat:pending_permission() end
  for _, other in pairs(shown) do
    if other:pending_permission() then return other, other:pending_permission() end
  end
end

--- Answer the pending request by key ("y", …) or kind; false and a message when it cannot.
---@param root? string
---@param key string
---@return boolean
function M.answer(root, key)
  local kind = answers.kind_of_key(key)
  if not kind then
    local known = table.concat(answers.known_keys(), ", ")
    vim.notify(("agentls: %q is not a permission answer; use one of %s"):format(key, known), vim.log.levels.ERROR)
    return false
  end
  local chat, permission = M.pending(root)
  if not chat then
    vim.notify("agentls: no permission request is waiting", vim.log.levels.WARN)
    return false
  end
  answers.by_kind(chat, permission, kind)
  return true
end

M.Chat = Chat
return M
