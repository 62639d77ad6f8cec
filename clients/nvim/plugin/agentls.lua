-- User commands; nothing starts until one is used (or a keymap from setup()).
if vim.g.loaded_agentls then return end
vim.g.loaded_agentls = true

require("agentls.highlights").setup()

local function agentls()
  return require("agentls")
end

--- A command's body, run so that what goes wrong is a message, never a Lua traceback.
local function guarded(fn)
  return function(cmd)
    local ok, err = xpcall(fn, function(e)
      -- A message the plugin raised says it all; anything else keeps its place for a report.
      local own = type(e) == "string" and e:match("agentls: .*$")
      return own or ("agentls: " .. tostring(e))
    end, cmd)
    if not ok then vim.notify(err, vim.log.levels.ERROR) end
  end
end

local function command(name, fn, opts)
  vim.api.nvim_create_user_command(name, guarded(fn), opts)
end

command("Agent", function() agentls().toggle() end, { desc = "agentls: open the chat and write in its prompt (or close it)" })
command("AgentAsk", function(cmd)
  local text = cmd.args
  local range = cmd.range > 0 and { cmd.line1, cmd.line2 } or nil
  if text == "" then
    vim.ui.input({ prompt = "agentls: " }, function(input)
      if input and input ~= "" then guarded(function() agentls().ask(input, { range = range }) end)() end
    end)
    return
  end
  agentls().ask(text, { range = range })
end, { nargs = "*", range = true, desc = "agentls: send a message (a range attaches those lines)" })
command("AgentEdit", function(cmd) require("agentls.inline").command(cmd.args, cmd.line1, cmd.line2) end, {
  nargs = "*",
  range = true,
  desc = "agentls: change the selected lines as told, reviewed hunk by hunk in the buffer",
})
command("AgentAbort", function() agentls().abort() end, { desc = "agentls: stop the turn" })
command("AgentNew", function() agentls().new() end, { desc = "agentls: a new session" })
command("AgentSessions", function() agentls().sessions() end, { desc = "agentls: resume a session" })
command("AgentEarlier", function() agentls().earlier() end, { desc = "agentls: show the session's earlier messages" })
command("AgentModel", function() agentls().model() end, { desc = "agentls: pick the model" })
command("AgentMode", function() agentls().mode() end, { desc = "agentls: pick the permission mode" })
command("AgentContinue", function() agentls().continue() end, { desc = "agentls: go on after the turn limit" })
command("AgentTasks", function() agentls().tasks() end, { desc = "agentls: background agents" })
command("AgentWorktrees", function() agentls().worktrees() end, { desc = "agentls: view, merge or discard an isolated agent's worktree" })
command("AgentRewind", function() agentls().rewind() end, { desc = "agentls: rewind code, conversation or both to before a message" })
command("AgentFork", function() agentls().fork() end, { desc = "agentls: fork a new chat from before a message" })
command("AgentChanges", function(cmd) agentls().changes(tonumber(cmd.args)) end, { nargs = "?", desc = "agentls: the files a turn changed" })
command("AgentPlugins", function() agentls().plugins() end, { desc = "agentls: the installed plugins" })
command("AgentRules", function() agentls().rules() end, { desc = "agentls: the permission rules (a adds, d removes)" })
command("AgentMcp", function() agentls().mcp() end, { desc = "agentls: the MCP servers (restart, enable, disable, log)" })
command("AgentCompact", function(cmd) agentls().compact(cmd.args) end, { nargs = "*", desc = "agentls: compact the context" })
command("AgentPermission", function(cmd) agentls().permission(cmd.args) end, {
  nargs = "?",
  desc = "agentls: answer the pending permission request (y, a, n, d or v)",
  complete = function()
    local keys = require("agentls.config").options.keymaps
    return vim.tbl_filter(function(k) return type(k) == "string" end,
      { keys.allow_once, keys.allow_always, keys.reject_once, keys.reject_always, keys.view_diff })
  end,
})
