-- User commands; nothing starts until one is used (or a keymap from setup()).
if vim.g.loaded_agentls then return end
vim.g.loaded_agentls = true

local function agentls()
  return require("agentls")
end

vim.api.nvim_create_user_command("Agent", function() agentls().toggle() end, { desc = "agentls: toggle the chat" })
vim.api.nvim_create_user_command("AgentAsk", function(cmd)
  local text = cmd.args
  local range = cmd.range > 0 and { cmd.line1, cmd.line2 } or nil
  if text == "" then
    vim.ui.input({ prompt = "agentls: " }, function(input)
      if input and input ~= "" then agentls().ask(input, { range = range }) end
    end)
    return
  end
  agentls().ask(text, { range = range })
end, { nargs = "*", range = true, desc = "agentls: send a message (a range attaches those lines)" })
vim.api.nvim_create_user_command("AgentAbort", function() agentls().abort() end, { desc = "agentls: stop the turn" })
vim.api.nvim_create_user_command("AgentNew", function() agentls().new() end, { desc = "agentls: a new session" })
vim.api.nvim_create_user_command("AgentSessions", function() agentls().sessions() end, { desc = "agentls: resume a session" })
vim.api.nvim_create_user_command("AgentModel", function() agentls().model() end, { desc = "agentls: pick the model" })
vim.api.nvim_create_user_command("AgentMode", function() agentls().mode() end, { desc = "agentls: pick the permission mode" })
vim.api.nvim_create_user_command("AgentContinue", function() agentls().continue() end, { desc = "agentls: go on after the turn limit" })
vim.api.nvim_create_user_command("AgentTasks", function() agentls().tasks() end, { desc = "agentls: background agents" })
vim.api.nvim_create_user_command("AgentCompact", function(cmd) agentls().compact(cmd.args) end, { nargs = "*", desc = "agentls: compact the context" })
