-- How the user answers a permission request: by option kind, by key (the chat buffer's keys
-- and :AgentPermission) or through vim.ui.select. The chat owns the request; this module
-- only turns what the user did into the chat's respond() or the review.

local config = require("agentls.config")
local lines = require("agentls.lines")
local words = require("agentls.text")

local M = {}

--- The option kind (or "review") a configured key stands for; a kind names itself.
---@param key string
---@return string|nil
function M.kind_of_key(key)
  local keys = config.options.keymaps
  for _, kind in ipairs(lines.OPTION_KINDS) do
    if keys[kind] == key or kind == key then return kind end
  end
  if key == keys.view_diff or key == "review" then return "review" end
end

--- The keys that answer, in the order the chat lists them (for a wrong key's message).
---@return string[]
function M.known_keys()
  local keys = config.options.keymaps
  local known = {}
  for _, kind in ipairs(vim.list_extend(vim.deepcopy(lines.OPTION_KINDS), { "view_diff" })) do
    if keys[kind] then table.insert(known, keys[kind]) end
  end
  return known
end

--- Answer a pending request with an option kind ("allow_once", …) or "review".
---@param chat agentls.Chat
---@param permission agentls.Permission
---@param kind string
function M.by_kind(chat, permission, kind)
  local event = permission.event
  if kind == "review" then
    if event.diffs then
      require("agentls.patch_review").open(chat, permission)
    elseif event.diff then
      require("agentls.review").open(chat, permission)
    else
      vim.notify("agentls: this request has no change to review", vim.log.levels.WARN)
    end
    return
  end
  for _, option in ipairs(event.options) do
    if option.kind == kind then
      if event.plan then return require("agentls.plan_card").respond(chat, permission, option) end
      return chat:respond(permission, option.optionId, require("agentls.review").accepted_text(event.requestId))
    end
  end
  vim.notify(("agentls: this request offers no %q"):format(words.OPTION_LABELS[kind] or kind), vim.log.levels.WARN)
end

--- The chat not on screen: the same choices through vim.ui.select (or its replacement).
---@param chat agentls.Chat
---@param permission agentls.Permission
function M.in_select(chat, permission)
  local event = permission.event
  if event.plan then return require("agentls.plan_card").select(chat, permission) end
  local items = vim.deepcopy(event.options)
  if event.diffs then
    table.insert(items, { kind = "review", name = ("Review the %d files"):format(#event.diffs) })
  elseif event.diff then
    table.insert(items, { kind = "review", name = "Review the change" })
  end
  vim.ui.select(items, {
    prompt = "agentls: " .. event.title,
    format_item = function(item)
      local label = item.kind == "review" and item.name or words.option_label(item)
      return item.rule and ("%s (%s)"):format(label, item.rule) or label
    end,
  }, function(choice)
    if not choice then return end
    if choice.kind == "review" then
      M.by_kind(chat, permission, "review")
    else
      chat:respond(permission, choice.optionId)
    end
  end)
end

--- The chat buffer's keys: answers while a request waits, abort, and `i` to write.
---@param chat agentls.Chat
---@param current fun(): agentls.Chat  the chat the root shows now (the buffer outlives a session)
function M.keymaps(chat, current)
  local keys = config.options.keymaps
  local bufnr = chat.buffer.bufnr
  local function map(lhs, fn, desc, opts)
    if lhs then vim.keymap.set("n", lhs, fn, vim.tbl_extend("force", { buffer = bufnr, desc = desc, nowait = true }, opts or {})) end
  end
  local function write() require("agentls.window").focus_prompt(chat.root) end
  -- y/a/n/d/v answer while a request waits; otherwise they keep their meaning (y yanks the
  -- chat's markdown), and `a`, like `i`, writes a message.
  for _, kind in ipairs(vim.list_extend(vim.deepcopy(lines.OPTION_KINDS), { "review" })) do
    local lhs = kind == "review" and keys.view_diff or keys[kind]
    map(lhs, function()
      local now = current()
      local permission = now:pending_permission()
      if not permission then
        if lhs == "a" then vim.schedule(write) return "" end
        return lhs
      end
      vim.schedule(function() M.by_kind(now, permission, kind) end)
      return ""
    end, "agentls: " .. (words.OPTION_LABELS[kind] or "review the proposed change"), { expr = true })
  end
  map(keys.abort, function() current():abort() end, "agentls: stop the turn")
  vim.keymap.set("n", "i", write, { buffer = bufnr, desc = "agentls: write a message" })
end

return M
