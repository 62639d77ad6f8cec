-- :AgentPlugins: the plugins installed when the session opened (newSession's `plugins`),
-- one block each: name, version, enabled or not, what it provides, and why it could not be
-- read. Pure lines here; the command shows them in a scratch float.

local words = require("agentls.text")

local M = {}

--- A list of names as "a, b" (or nil when there is none).
---@param names? string[]
---@return string|nil
local function listed(names)
  if type(names) ~= "table" or #names == 0 then return nil end
  return table.concat(names, ", ")
end

--- The plugins as lines (what :AgentPlugins shows).
---@param plugins? table[]  PluginInfo, as newSession's result has them
---@return string[]
function M.lines(plugins)
  if not plugins or #plugins == 0 then return { "No plugin is installed (agentls plugin add PATH|GIT-URL)." } end
  local out = { words.count(#plugins, "plugin") .. " installed (read when the session opened)", "" }
  for _, plugin in ipairs(plugins) do
    local version = plugin.version and (" " .. plugin.version) or ""
    local state = plugin.enabled and "enabled" or "disabled"
    table.insert(out, ("%s%s  %s  (%s)"):format(plugin.name, version, state, plugin.source or "?"))
    if plugin.description then table.insert(out, "  " .. plugin.description) end
    for _, part in ipairs({
      { "commands", listed(plugin.commands) },
      { "agents", listed(plugin.agents) },
      { "skills", listed(plugin.skills) },
      { "hooks", plugin.hooks and "yes" or nil },
      { "MCP servers", listed(plugin.mcpServers) },
    }) do
      if part[2] then table.insert(out, ("  %s: %s"):format(part[1], part[2])) end
    end
    if plugin.error then table.insert(out, "  error: " .. plugin.error) end
  end
  return out
end

--- Show the chat's plugins in a float (q closes it); returns its buffer.
---@param chat agentls.Chat
---@return integer
function M.show(chat)
  local text = M.lines(chat.plugins)
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, text)
  vim.bo[bufnr].modifiable, vim.bo[bufnr].bufhidden = false, "wipe"
  pcall(vim.api.nvim_buf_set_name, bufnr, "agentls://plugins/" .. chat.session_id)
  local width = 20
  for _, line in ipairs(text) do width = math.max(width, vim.fn.strdisplaywidth(line) + 2) end
  width = math.min(width, vim.o.columns - 4)
  local height = math.min(#text, vim.o.lines - 4)
  vim.api.nvim_open_win(bufnr, true, {
    relative = "editor", style = "minimal", border = "rounded", title = " agentls plugins ",
    width = width, height = height, row = math.floor((vim.o.lines - height) / 2), col = math.floor((vim.o.columns - width) / 2),
  })
  vim.keymap.set("n", "q", "<cmd>close<cr>", { buffer = bufnr, desc = "agentls: close", nowait = true })
  return bufnr
end

return M
