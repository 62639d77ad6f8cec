-- Answering a plan (ExitPlanMode's permission request): its four options through
-- vim.ui.select, "Keep planning" asking for feedback through vim.ui.input. The chat's keys
-- reach the same options by kind (y approves, a approves accepting edits, n keeps planning,
-- d rejects), as they answer any request.

local M = {}

M.KEEP_PLANNING = "plan_keep_planning"

--- Answer a plan with one of its options; keeping on planning asks what should change first.
---@param chat agentls.Chat
---@param permission agentls.Permission
---@param option table  one of the request's options
function M.respond(chat, permission, option)
  if option.optionId ~= M.KEEP_PLANNING then return chat:respond(permission, option.optionId) end
  vim.ui.input({ prompt = "What should the plan change? " }, function(feedback)
    -- Cancelled (<Esc>): the plan still waits for an answer.
    if feedback == nil then return end
    chat:respond(permission, option.optionId, nil, vim.trim(feedback) ~= "" and feedback or nil)
  end)
end

--- The plan's options through vim.ui.select (or its replacement).
---@param chat agentls.Chat
---@param permission agentls.Permission
function M.select(chat, permission)
  vim.ui.select(permission.event.options, {
    prompt = "agentls: " .. permission.event.title,
    kind = "agentls.plan",
    format_item = function(option) return option.name or option.optionId end,
  }, function(choice)
    if choice then M.respond(chat, permission, choice) end
  end)
end

return M
