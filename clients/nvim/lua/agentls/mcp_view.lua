-- :AgentMcp: the session's MCP servers (agent/listMcpServers) with their status, transport,
-- tool count, where each is configured and why one failed; `r` restarts the one under the
-- cursor (agent/restartMcpServer), `e` / `x` enable or disable it (agent/setMcpServerEnabled,
-- remembered for the project), `l` opens its stderr log. Each mcp_status event of the
-- session redraws the list.

local listview = require("agentls.listview")
local words = require("agentls.text")

local M = {}

M.HELP = "r restart · e enable · x disable · l log · q close"
local STATUS_HL = { ready = "AgentlsToolDone", failed = "AgentlsToolFailed", disabled = "Comment", stopped = "Comment" }

--- The servers as the view's lines: one per server, then its error under it.
---@param servers table[]  McpServerEntry
---@param problem? string  the daemon's last refusal
---@return agentls.ListLine[]
function M.lines(servers, problem)
  local out = { { M.HELP, hl = "AgentlsFooter" } }
  if problem then table.insert(out, { "! " .. problem, hl = "AgentlsNoticeError" }) end
  if #servers == 0 then table.insert(out, { "No MCP server is configured (see :help agentls-mcp).", hl = "Comment" }) end
  local width = 0
  for _, server in ipairs(servers) do width = math.max(width, vim.fn.strdisplaywidth(server.name)) end
  for _, server in ipairs(servers) do
    local pad = (" "):rep(width - vim.fn.strdisplaywidth(server.name))
    local tools = server.status == "ready" and ("  " .. words.count(#(server.tools or {}), "tool")) or ""
    local starts = (server.attempts or 0) > 1 and ("  " .. words.count(server.attempts, "start")) or ""
    local line = ("%s%s  %s  %s%s%s  (%s)"):format(server.name, pad, server.status, server.transport, tools, starts, server.source or "?")
    table.insert(out, { line, item = server, hl = STATUS_HL[server.status] })
    if type(server.error) == "string" and server.error ~= "" then
      for i, part in ipairs(vim.split(server.error, "\n", { trimempty = true })) do
        if i > 5 then break end
        table.insert(out, { "    " .. part, item = server, hl = "AgentlsToolError" })
      end
    end
  end
  return out
end

--- Where the daemon keeps a server's stderr: the entry's own path when it gives one, else
--- $AGENTLS_HOME/sessions/<session>/mcp/<name>.stderr.log (the daemon's default home).
---@param session_id string
---@param server table  McpServerEntry
---@return string
function M.log_path(session_id, server)
  if type(server.stderrLog) == "string" then return server.stderrLog end
  local home = vim.env.AGENTLS_HOME
  if not home or home == "" then
    local data = vim.env.XDG_DATA_HOME
    home = (data and data ~= "" and data or (vim.env.HOME .. "/.local/share")) .. "/agentls"
  end
  return ("%s/sessions/%s/mcp/%s.stderr.log"):format(home, session_id, server.name)
end

--- Open a server's stderr log in a tab, read-only.
---@param session_id string
---@param server table
function M.open_log(session_id, server)
  local path = M.log_path(session_id, server)
  if not vim.uv.fs_stat(path) then
    vim.notify(("agentls: %s has written no log (%s)"):format(server.name, path), vim.log.levels.WARN)
    return
  end
  vim.cmd.tabnew(vim.fn.fnameescape(path))
  vim.bo.readonly, vim.bo.modifiable = true, false
end

--- :AgentMcp for a chat's session; returns the view.
---@param chat agentls.Chat
---@return agentls.ListView
function M.show(chat)
  local view
  local function draw(err, result)
    if not view:valid() then return end
    if result and result.servers then view.servers = result.servers end
    view:set(M.lines(view.servers or {}, err and err.message or nil))
    vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsMcpShown", modeline = false })
  end
  local function refresh() chat:request("agent/listMcpServers", {}, draw) end
  -- A request's answer is `{}`: the list follows from the mcp_status events, and is asked
  -- again at once so a refusal or a quiet change shows too.
  local function act(method, extra)
    return function(v)
      local server = v:item()
      if not server then return end
      chat:request(method, vim.tbl_extend("force", { name = server.name }, extra or {}), function(err)
        if err then draw(err) else refresh() end
      end)
    end
  end
  view = listview.open("agentls://mcp/" .. chat.session_id, "agentls MCP servers", {
    r = { desc = "restart this MCP server", fn = act("agent/restartMcpServer") },
    e = { desc = "enable this MCP server", fn = act("agent/setMcpServerEnabled", { enabled = true }) },
    x = { desc = "disable this MCP server", fn = act("agent/setMcpServerEnabled", { enabled = false }) },
    l = {
      desc = "open this MCP server's stderr log",
      fn = function(v)
        local server = v:item()
        if server then M.open_log(chat.session_id, server) end
      end,
    },
  })
  refresh()
  local group = vim.api.nvim_create_augroup("agentls-mcp-view-" .. view.bufnr, { clear = true })
  vim.api.nvim_create_autocmd("User", {
    group = group,
    pattern = "AgentlsEvent",
    callback = function(args)
      if not view:valid() then return true end
      if args.data.type == "mcp_status" and args.data.sessionId == chat.session_id then refresh() end
    end,
  })
  return view
end

return M
