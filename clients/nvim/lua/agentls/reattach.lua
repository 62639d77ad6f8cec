-- Coming back to a running turn after Neovim restarts. While a chat's turn runs, its session
-- and the seq before the turn's first event are kept in a state file, by root; the next
-- Neovim set up in that root resumes the session with that `lastSeq`: it draws the history
-- the daemon answers, and the daemon sends the running turn's events again from its start,
-- then the live ones (a permission request still waiting among them). Events of messages
-- and tool calls the history already shows are not drawn twice. A daemon that outlives
-- Neovim (`connect`, or the per-user daemon) kept the turn running; one that ended with
-- Neovim did not, and the chat says so.

local client_mod = require("agentls.client")

local M = {}

-- Events drawn from the resumed history already when their message is in it.
local BY_MESSAGE = { text_delta = true, thinking_delta = true, message_completed = true, message_discarded = true }

local function state_path()
  return vim.fn.stdpath("state") .. "/agentls/running.json"
end

local function read()
  local file = io.open(state_path(), "r")
  if not file then return {} end
  local ok, data = pcall(vim.json.decode, file:read("*a"))
  file:close()
  return ok and type(data) == "table" and data or {}
end

local function write(data)
  vim.fn.mkdir(vim.fs.dirname(state_path()), "p")
  local file = io.open(state_path(), "w")
  if not file then return end
  file:write(vim.json.encode(vim.tbl_isempty(data) and vim.empty_dict() or data))
  file:close()
end

--- A turn of `chat` started; `since` is the seq before its first event.
---@param chat agentls.Chat
---@param since integer
function M.running(chat, since)
  local data = read()
  data[chat.root] = { sessionId = chat.session_id, lastSeq = since }
  write(data)
end

--- The turn of `chat` ended: nothing to come back to.
---@param chat agentls.Chat
function M.ended(chat)
  chat.drawn = nil
  local data = read()
  local saved = data[chat.root]
  if saved and saved.sessionId == chat.session_id then
    data[chat.root] = nil
    write(data)
  end
end

--- Whether `event` (sent again after a re-attach) shows what the history drew already.
---@param chat agentls.Chat
---@param event table
---@return boolean
function M.drawn_before(chat, event)
  if BY_MESSAGE[event.type] then return chat.drawn[event.messageId] == true end
  return event.type == "tool_call" and chat.tools[event.toolCallId] ~= nil
end

local function opened(root, client, result, since)
  local chat = require("agentls.chat").opened(root, client, result)
  chat.drawn = {}
  for _, message in ipairs(result.messages) do
    chat:history(message)
    chat.drawn[message.messageId] = true
  end
  require("agentls.earlier").set_cursor(chat, result.messagesCursor)
  if result.runningTurnId then
    chat.running = result.runningTurnId
    chat:spinner(true)
    M.running(chat, since)
    chat:notice("info", "re-attached to the turn that was running when Neovim closed")
    vim.notify("agentls: re-attached to the running turn (:Agent shows it)")
  else
    chat.drawn = nil
    chat:notice("info", "the turn that was running when Neovim closed has ended; the session is as it was recorded")
  end
  return chat
end

--- At start: resume the session whose turn was running when Neovim last closed in `root`.
---@param root string
function M.at_start(root)
  local saved = read()[root]
  if type(saved) ~= "table" or type(saved.sessionId) ~= "string" then return end
  local data = read()
  data[root] = nil
  write(data)
  local client = client_mod.get(root)
  local params = { sessionId = saved.sessionId, lastSeq = saved.lastSeq, messageLimit = require("agentls.earlier").page() }
  -- Asynchronous: the answer's callback opens the chat before the events that follow it
  -- are handled (both are scheduled in the order they came).
  client_mod.request(client, "agent/resumeSession", params, function(err, result)
    if err or not result then
      vim.notify(("agentls: the session running when Neovim closed could not be resumed: %s"):format(err and err.message or "no answer"), vim.log.levels.WARN)
      return
    end
    opened(root, client, result, saved.lastSeq)
  end)
end

return M
