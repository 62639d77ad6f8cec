-- History actions from a user message of the chat (the cursor's, or one picked):
-- :AgentRewind takes code, conversation or both back to before it (agent/rewind, previewed
-- with dryRun in a tab, applied on `y`, over the user's own changes only on `F`);
-- :AgentFork starts a new chat from just before it with its text in the prompt
-- (agent/forkSession); :AgentChanges shows what a turn changed (agent/turnDiff).

local config = require("agentls.config")
local diff_tab = require("agentls.diff_tab")

local M = {}

M.WHAT = { both = "Code and conversation", files = "Code only", conversation = "Conversation only" }

---@class agentls.UserMessage
---@field id string
---@field text string
---@field row integer   where it is drawn in the chat
---@field turn? string  the turn it began (from turn_started or the history's turnId)

--- The chat's user messages, in the order they are drawn.
---@param chat agentls.Chat
---@return agentls.UserMessage[]
function M.messages(chat)
  local found = {}
  for id, message in pairs(chat.user_messages) do
    local ok, row = pcall(chat.buffer.mark_row, chat.buffer, message.mark)
    if ok and row then table.insert(found, { id = id, text = message.text, row = row, turn = chat.turn_of[id] }) end
  end
  table.sort(found, function(a, b) return a.row < b.row end)
  return found
end

--- The user message the cursor is in (its text or the answer under it), in the chat's buffer.
---@param chat agentls.Chat
---@return agentls.UserMessage|nil
local function at_cursor(chat)
  if vim.api.nvim_get_current_buf() ~= chat.buffer.bufnr then return nil end
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local found
  for _, message in ipairs(M.messages(chat)) do
    if message.row <= row then found = message end
  end
  return found
end

--- The cursor's user message, else one picked among `candidates` (vim.ui.select).
---@param chat agentls.Chat
---@param candidates agentls.UserMessage[]
---@param prompt string
---@param on_pick fun(message: agentls.UserMessage)
local function pick_message(chat, candidates, prompt, on_pick)
  local here = at_cursor(chat)
  if here and vim.tbl_contains(vim.tbl_map(function(m) return m.id end, candidates), here.id) then return on_pick(here) end
  if #candidates == 0 then
    vim.notify("agentls: no message of this chat began a turn to start from")
    return
  end
  vim.ui.select(candidates, {
    prompt = prompt,
    kind = "agentls.user_message",
    format_item = function(m) return (m.text:gsub("\n", " ⏎ ")) end,
  }, function(message)
    if message then on_pick(message) end
  end)
end

--- The preview's summary lines: messages that go, conflicts, and what the keys do.
---@param what string
---@param result table  agent/rewind's dryRun answer
---@param root string
---@return string[]
function M.summary(what, result, root)
  local cards = require("agentls.cards")
  local out = { "Rewind " .. M.WHAT[what]:lower(), "to before this message:" }
  if what ~= "files" then table.insert(out, ("  %d %s the conversation"):format(result.messagesRemoved, result.messagesRemoved == 1 and "message leaves" or "messages leave")) end
  if what ~= "conversation" then
    local files = #(result.files or {})
    table.insert(out, ("  %d %s back"):format(files, files == 1 and "file goes" or "files go"))
  end
  for _, conflict in ipairs(result.conflicts or {}) do
    table.insert(out, ("  ⚠ %s: %s (kept; F overwrites it)"):format(cards.relative(conflict.path, root), conflict.reason))
  end
  table.insert(out, "y rewind · F over your changes · q cancel")
  table.insert(out, "")
  return out
end

--- Apply the rewind; a conversation cut redraws the chat from the session's history.
---@param chat agentls.Chat
---@param turn string
---@param what string
---@param force boolean
function M.apply(chat, turn, what, force)
  chat:request("agent/rewind", { turnId = turn, what = what, force = force }, function(err, result)
    if err or not result then return end
    if what ~= "files" then
      -- The messages that stay keep their turns (an older daemon's history has none).
      local turn_of = chat.turn_of
      for _, id in ipairs(result.removedMessageIds or {}) do turn_of[id] = nil end
      local redrawn = require("agentls.chat").resume(chat.root, chat.session_id)
      redrawn.turn_of = turn_of
    end
    local kept = #(result.conflicts or {}) + #(result.failed or {})
    local message = ("agentls: rewound: %d file%s back, %d message%s removed"):format(
      #result.restored + #result.deleted, #result.restored + #result.deleted == 1 and "" or "s",
      result.messagesRemoved, result.messagesRemoved == 1 and "" or "s")
    if kept > 0 then message = message .. (", %d file%s left as they are"):format(kept, kept == 1 and "" or "s") end
    vim.notify(message, kept > 0 and vim.log.levels.WARN or vim.log.levels.INFO)
    vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsRewound", data = result, modeline = false })
  end)
end

--- The dryRun answer in a tab; `y` or `F` applies it.
---@param chat agentls.Chat
---@param message agentls.UserMessage
---@param what string
function M.preview(chat, message, what)
  chat:request("agent/rewind", { turnId = message.turn, what = what, dryRun = true }, function(err, result)
    if err or not result then return end
    local function apply(force)
      return function(view)
        view.close()
        M.apply(chat, message.turn --[[@as string]], what, force)
      end
    end
    diff_tab.open({
      name = "rewind/" .. message.turn,
      title = "preview: nothing changed yet",
      root = chat.root,
      header = M.summary(what, result, chat.root),
      files = result.files or {},
      keys = { y = { fn = apply(false), desc = "rewind" }, F = { fn = apply(true), desc = "rewind over your changes too" } },
    })
    vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsRewindPreview", data = result, modeline = false })
  end)
end

--- :AgentRewind: a user message (with its turn), what goes back, then the preview.
---@param chat agentls.Chat
function M.rewind(chat)
  if chat.running then
    vim.notify("agentls: a turn runs: stop it first (<C-c>)", vim.log.levels.WARN)
    return
  end
  local known = vim.tbl_filter(function(m) return m.turn ~= nil end, M.messages(chat))
  pick_message(chat, known, "agentls: rewind to before", function(message)
    vim.ui.select({ "both", "files", "conversation" }, {
      prompt = "agentls: what goes back",
      kind = "agentls.rewind_what",
      format_item = function(what) return M.WHAT[what] end,
    }, function(what)
      if what then M.preview(chat, message, what) end
    end)
  end)
end

--- :AgentFork: a new chat from just before a user message, its text in the prompt.
---@param chat agentls.Chat
function M.fork(chat)
  pick_message(chat, M.messages(chat), "agentls: fork from", function(message)
    local ok, forked = pcall(require("agentls.chat").fork, chat.root, chat.session_id, message.id)
    if not ok then
      vim.notify(tostring(forked):match("agentls: .*$") or ("agentls: " .. tostring(forked)), vim.log.levels.ERROR)
      return
    end
    local window = require("agentls.window")
    window.open(forked)
    window.set_prompt(forked.root, message.text)
  end)
end

--- :AgentChanges [n]: the files turn `n` of the chat changed (the cursor's turn, else the
--- last one), read-only.
---@param chat agentls.Chat
---@param number? integer
function M.changes(chat, number)
  local turns = vim.tbl_filter(function(m) return m.turn ~= nil end, M.messages(chat))
  local message = number and turns[number] or at_cursor(chat) or turns[#turns]
  if not message or not message.turn then
    vim.notify("agentls: no turn of this chat to show (:AgentChanges N names the Nth)", vim.log.levels.WARN)
    return
  end
  chat:request("agent/turnDiff", { turnId = message.turn }, function(err, result)
    if err or not result then return end
    if #result.files == 0 then
      vim.notify("agentls: that turn changed no file")
      return
    end
    diff_tab.open({
      name = "turn/" .. message.turn,
      title = "changes of the turn (read-only) · <CR> shows a file · q closes",
      root = chat.root,
      header = { "> " .. (message.text:gsub("\n", " ⏎ ")), "" },
      files = result.files,
    })
  end)
end

--- The chat buffer's keys for these (config.keymaps.rewind, fork, changes).
---@param chat agentls.Chat
---@param bufnr integer
function M.keymaps(chat, bufnr)
  local keys = config.options.keymaps
  local function map(lhs, fn, desc)
    if not lhs then return end
    vim.keymap.set("n", lhs, function()
      local now = require("agentls.chat").get(chat.root)
      if now then fn(now) end
    end, { buffer = bufnr, desc = "agentls: " .. desc })
  end
  map(keys.rewind, M.rewind, "rewind to before this message")
  map(keys.fork, M.fork, "fork a new chat from this message")
  map(keys.changes, function(now) M.changes(now) end, "the files this turn changed")
end

return M
