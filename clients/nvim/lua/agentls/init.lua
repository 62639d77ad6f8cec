-- agentls for Neovim: a coding agent on the built-in LSP client.
--   require("agentls").setup({ provider = "anthropic", model = "claude-sonnet-4-5" })

local config = require("agentls.config")

local M = {}

local function chat_of(root, create)
  return require("agentls.chat").get(root, create)
end

local function window()
  return require("agentls.window")
end

--- Configure the plugin (see `:help agentls-options`) and set its autocommands and keys.
---@param opts? table  merged over require("agentls.config").defaults
function M.setup(opts)
  config.set(opts)
  require("agentls.highlights").setup()
  local group = vim.api.nvim_create_augroup("agentls", { clear = true })
  -- Every file buffer of a root with a running daemon is attached, whatever its filetype.
  vim.api.nvim_create_autocmd({ "BufReadPost", "BufNewFile", "BufEnter" }, {
    group = group,
    callback = function(args)
      require("agentls.client").on_buffer(args.buf)
    end,
  })
  vim.api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "BufEnter", "ModeChanged" }, {
    group = group,
    callback = function()
      if #require("agentls.client").all() > 0 then require("agentls.editor_state").schedule() end
    end,
  })
  if config.options.reattach then
    vim.schedule(function()
      local ok, err = pcall(require("agentls.reattach").at_start, require("agentls.client").root_of(0))
      if not ok then vim.notify(tostring(err):match("agentls: .*$") or ("agentls: " .. tostring(err)), vim.log.levels.ERROR) end
    end)
  end
  local keys = config.options.keymaps
  if keys.toggle then vim.keymap.set("n", keys.toggle, M.toggle, { desc = "agentls: toggle the chat" }) end
  if keys.permission then
    vim.keymap.set("n", keys.permission, function() M.permission() end, { desc = "agentls: answer the pending permission request" })
  end
  if keys.ask then
    vim.keymap.set("n", keys.ask, function() window().focus_prompt() end, { desc = "agentls: ask" })
    vim.keymap.set("x", keys.ask, ":AgentAsk<CR>", { desc = "agentls: ask about the selection" })
  end
  if keys.inline_edit then
    vim.keymap.set("x", keys.inline_edit, ":AgentEdit<CR>", { desc = "agentls: edit the selection inline" })
  end
end

--- Send a message; `opts.range` ({first, last} lines, 1-based) attaches those lines of the
--- current buffer, and each @ mention in `text` what it names (see mentions.lua).
---@param text string
---@param opts? { range?: [integer, integer], root?: string }
---@return agentls.Chat
function M.ask(text, opts)
  opts = opts or {}
  local chat = chat_of(opts.root, true)
  local attachments = {}
  -- Lines of a file are attached; a range in the chat or the prompt is not a file's.
  if opts.range and vim.bo.buftype == "" and vim.api.nvim_buf_get_name(0) ~= "" then
    local bufnr = vim.api.nvim_get_current_buf()
    local last = vim.api.nvim_buf_get_lines(bufnr, opts.range[2] - 1, opts.range[2], false)[1] or ""
    table.insert(attachments, {
      uri = vim.uri_from_bufnr(bufnr),
      range = { start = { line = opts.range[1] - 1, character = 0 }, ["end"] = { line = opts.range[2] - 1, character = #last } },
    })
  end
  -- @ mentions in the text: files, folders, symbols, problems, sessions.
  vim.list_extend(attachments, require("agentls.mentions").attachments(text, chat.root))
  if config.options.chat.open_on_ask then
    chat.opened_for_permission = nil
    window().open(chat)
  end
  chat:send(text, attachments)
  return chat
end

--- Stop the running turn of a root's chat (the current buffer's by default).
---@param root? string
function M.abort(root)
  local chat = chat_of(root, false)
  if chat then chat:abort() end
end

--- :Agent (see window.toggle).
function M.toggle()
  window().toggle(chat_of(nil, true))
end

--- Answer the pending permission request from any window: with `key` (y, a, n, d, v, or
--- an option kind), or, without one, the key typed next (the choices shown meanwhile).
---@param key? string
---@return boolean answered
function M.permission(key)
  local chat_mod = require("agentls.chat")
  local root = require("agentls.client").root_of(0)
  if key and key ~= "" then return chat_mod.answer(root, key) end
  local chat, permission = chat_mod.pending(root)
  if not chat then
    vim.notify("agentls: no permission request is waiting", vim.log.levels.WARN)
    return false
  end
  local shown = { { "agentls: " .. permission.event.title .. "  ", "AgentlsPermission" } }
  for _, item in ipairs(require("agentls.lines").permission_items(permission.event, config.options.keymaps)) do
    if item.key then table.insert(shown, { item.key, "AgentlsPermissionKey" }) end
    table.insert(shown, { " " .. item.label .. "  " })
  end
  -- One screen line: a longer echo would stop at a hit-enter prompt before the key is read.
  local room = vim.o.columns - 12
  for i, chunk in ipairs(shown) do
    local width = vim.fn.strdisplaywidth(chunk[1])
    if width > room then
      shown[i] = { vim.fn.strcharpart(chunk[1], 0, math.max(0, room - 1)) .. "…", chunk[2] }
      shown = vim.list_slice(shown, 1, i)
      break
    end
    room = room - width
  end
  vim.api.nvim_echo(shown, false, {})
  local ok, typed = pcall(vim.fn.getcharstr)
  vim.api.nvim_echo({ { "" } }, false, {})
  if not ok or typed == "\27" then return false end
  return chat_mod.answer(root, typed)
end

--- A new session in the chat window (the old one stays resumable from :AgentSessions).
---@return agentls.Chat
function M.new()
  local chat = require("agentls.chat").new(require("agentls.client").root_of(0))
  window().open(chat)
  return chat
end

--- :AgentSessions: the root's sessions in a list (see sessions_view.lua).
function M.sessions()
  require("agentls.sessions_view").show(chat_of(nil, true))
end

--- :AgentEarlier: the page of the chat's messages before the first one shown.
function M.earlier()
  local chat = chat_of(nil, false)
  if not chat then
    vim.notify("agentls: no chat in this project yet")
    return
  end
  require("agentls.earlier").load(chat)
end

--- :AgentModel: pick the session's model among the provider's.
function M.model()
  local chat = chat_of(nil, true)
  chat:request("agent/listModels", {}, function(err, result)
    if err or not result then return end
    vim.ui.select(result.models, {
      prompt = "Model (" .. result.provider .. ")",
      format_item = function(m) return m.current and (m.id .. " (current)") or m.id end,
    }, function(choice)
      if not choice then return end
      chat:request("agent/setModel", { model = choice.id }, function(e)
        if not e then chat.model = choice.id end
      end)
    end)
  end)
end

--- :AgentMode: pick the session's permission mode.
function M.mode()
  local chat = chat_of(nil, true)
  vim.ui.select({ "default", "acceptEdits", "plan", "bypassPermissions" }, { prompt = "Permission mode" }, function(choice)
    if not choice then return end
    chat:request("agent/setPermissionMode", { permissionMode = choice }, function(e)
      if not e then chat.mode = choice end
    end)
  end)
end

--- :AgentContinue: go on after a turn stopped at the turn limit.
function M.continue()
  local chat = chat_of(nil, false)
  if chat then chat:continue() end
end

--- The session's background agents: pick one to stop it.
function M.tasks()
  local chat = chat_of(nil, true)
  chat:request("agent/listTasks", {}, function(err, result)
    if err or not result then return end
    if #result.tasks == 0 then
      vim.notify("agentls: no background agents in this session")
      return
    end
    vim.ui.select(result.tasks, {
      prompt = "Background agents (pick a running one to stop it)",
      format_item = function(t) return ("%s  %s agent: %s"):format(t.status, t.subagentType, t.description) end,
    }, function(choice)
      if choice and choice.status == "running" then chat:request("agent/stopTask", { agentId = choice.agentId }) end
    end)
  end)
end

--- :AgentWorktrees: the isolated agents' worktrees, to view, merge or discard one.
function M.worktrees()
  require("agentls.worktrees").pick(chat_of(nil, true))
end

--- :AgentRewind: code, conversation or both back to before a user message (previewed first).
function M.rewind()
  require("agentls.rewind").rewind(chat_of(nil, true))
end

--- :AgentFork: a new chat from just before a user message, its text in the prompt.
function M.fork()
  require("agentls.rewind").fork(chat_of(nil, true))
end

--- :AgentChanges [n]: the files a turn changed (the cursor's, the Nth, else the last).
---@param number? integer
function M.changes(number)
  require("agentls.rewind").changes(chat_of(nil, true), number)
end

--- :AgentPlugins: the session's installed plugins and what each provides.
---@return integer bufnr  the list's buffer
function M.plugins()
  return require("agentls.plugins").show(chat_of(nil, true))
end

--- :AgentRules: the session's permission rules, to add or remove one.
---@return agentls.ListView
function M.rules()
  return require("agentls.rules").show(chat_of(nil, true))
end

--- :AgentMcp: the session's MCP servers, to restart, enable or disable one or read its log.
---@return agentls.ListView
function M.mcp()
  return require("agentls.mcp_view").show(chat_of(nil, true))
end

--- :AgentCompact: summarise the conversation so far, with optional instructions.
---@param instructions? string
function M.compact(instructions)
  local chat = chat_of(nil, true)
  local params = {}
  if instructions and instructions ~= "" then params.instructions = instructions end
  chat:request("agent/compact", params)
end

--- For statuslines (lualine: `{ require("agentls").statusline }`): model, mode, context, state.
---@return string
function M.statusline()
  local chat = chat_of(nil, false)
  if not chat then return "" end
  local usage = chat.usage
  local percent = usage.window > 0 and math.floor(usage.context * 100 / usage.window) or 0
  return ("agentls %s · %s · %d%% · %s"):format(chat.model, chat.mode, percent, chat.running and "running" or "idle")
end

return M
