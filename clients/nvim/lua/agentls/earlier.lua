-- A long session is resumed with its last messages only (`messageLimit`); the earlier ones
-- come a page at a time (`agent/getMessages` with the `messagesCursor`), drawn above the
-- ones shown. A virtual line at the top of the chat says how to load them (:AgentEarlier).

local config = require("agentls.config")

local M = {}

local hint_ns = vim.api.nvim_create_namespace("agentls-earlier")

M.HINT = "⋯ earlier messages: :AgentEarlier shows them"

--- The `messageLimit` of a resume.
---@return integer
function M.page()
  return config.options.history.message_page
end

--- The chat was opened with its last messages: `cursor` (the answer's `messagesCursor`, or
--- a page's `nextCursor`) is where the earlier ones end, nil when there are none.
---@param chat agentls.Chat
---@param cursor? string
function M.set_cursor(chat, cursor)
  if cursor == vim.NIL then cursor = nil end
  chat.older_cursor = cursor
  vim.api.nvim_buf_clear_namespace(chat.buffer.bufnr, hint_ns, 0, -1)
  if not cursor then return end
  vim.api.nvim_buf_set_extmark(chat.buffer.bufnr, hint_ns, 0, 0, {
    virt_lines_above = true,
    virt_lines = { { { M.HINT, "Comment" } } },
  })
end

--- Draw `messages` above what the chat shows, with the chat's own history drawing.
---@param chat agentls.Chat
---@param messages table[]
local function prepend(chat, messages)
  local writer = chat.buffer:above()
  -- The same drawing as a resume's, into the writer: its own cards (they are finished).
  local page = setmetatable({ buffer = writer, tools = {}, messages = {}, permissions = {} }, { __index = chat })
  for _, message in ipairs(messages) do page:history(message) end
  writer:done()
end

--- :AgentEarlier: the page of messages before the first one shown.
---@param chat agentls.Chat
function M.load(chat)
  local cursor = chat.older_cursor
  if not cursor then
    vim.notify("agentls: the chat shows the whole session")
    return
  end
  chat:request("agent/getMessages", { before = cursor, limit = M.page() }, function(err, result)
    -- A page that comes back after the chat showed another session or moved on is dropped.
    if err or not result or chat.older_cursor ~= cursor or not chat.buffer:valid() then return end
    prepend(chat, result.messages)
    M.set_cursor(chat, result.nextCursor)
  end)
end

return M
