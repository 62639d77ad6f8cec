-- :'<,'>AgentEdit: an instruction about the selected lines sent as agent/inlineEdit, a turn
-- of the root's chat (opened if there is none). While the model works, a virtual line above
-- the selection says so (gone once its proposal is drawn or the turn ends), and <C-c> in that
-- buffer (or :AgentAbort) stops the turn; the proposal comes back as a permission_request with
-- `inlineEdit: true`, reviewed in the buffer (inline_review.lua). User autocmds:
-- AgentlsInlineEditSent (data: turnId, queued, bufnr).

local client_mod = require("agentls.client")
local config = require("agentls.config")

local M = {}

local ns = vim.api.nvim_create_namespace("agentls-inline-edit")

---@class agentls.InlineEdit
---@field chat agentls.Chat
---@field bufnr integer
---@field mark? integer        the "working" virtual line's extmark, until the proposal is drawn
---@field proposed? boolean    its proposal was drawn: no working line any more
---@field instruction string
---@field abort_key? string    the buffer key that stops the turn, while it runs

-- Turn id -> the inline edit it runs.
---@type table<string, agentls.InlineEdit>
local running = {}

--- The LSP range of lines `first`..`last` (1-based, whole lines) in the client's encoding.
---@param bufnr integer
---@param first integer
---@param last integer
---@param encoding string
---@return table
function M.line_range(bufnr, first, last, encoding)
  local text = vim.api.nvim_buf_get_lines(bufnr, last - 1, last, false)[1] or ""
  local character = vim.lsp.util.character_offset(bufnr, last - 1, #text, encoding)
  return { start = { line = first - 1, character = 0 }, ["end"] = { line = last - 1, character = character } }
end

--- The "working" line above the selection: what was asked and how to stop it.
local function working_line(edit, state)
  local abort = edit.abort_key and (", %s stops it"):format(edit.abort_key) or ""
  local words = edit.instruction:gsub("\n", " ")
  if #words > 60 then words = vim.fn.strcharpart(words, 0, 59) .. "…" end
  return { { ("⠿ agentls %s: %s%s"):format(state, words, abort), "AgentlsSpinner" } }
end

--- The working line's row now (it follows the user's edits), else `fallback`.
local function working_row(edit, fallback)
  if not edit.mark or not vim.api.nvim_buf_is_valid(edit.bufnr) then return fallback end
  return vim.api.nvim_buf_get_extmark_by_id(edit.bufnr, ns, edit.mark, {})[1] or fallback
end

local function set_working(edit, row, state)
  if edit.proposed or not vim.api.nvim_buf_is_valid(edit.bufnr) then return end
  edit.mark = vim.api.nvim_buf_set_extmark(edit.bufnr, ns, row, 0, {
    id = edit.mark,
    virt_lines = { working_line(edit, state) },
    -- Above the selection's first line; below it, the line would sit between the old text and
    -- the proposal's new lines drawn under it.
    virt_lines_above = true,
  })
  -- Above line 1 it shows only in a window scrolled to it.
  if row == 0 then require("agentls.inline_review").show_top_fill(edit.bufnr, 1) end
end

--- The proposal is drawn: the working line goes (the abort key stays while the turn runs).
---@param edit agentls.InlineEdit
local function proposed(edit)
  edit.proposed = true
  if edit.mark and vim.api.nvim_buf_is_valid(edit.bufnr) then
    pcall(vim.api.nvim_buf_del_extmark, edit.bufnr, ns, edit.mark)
  end
  edit.mark = nil
end

-- Turns that ended before agent/inlineEdit's answer came (a turn that fails at once).
---@type table<string, boolean>
local ended_early = {}
-- Inline edit turns that started before that answer came.
---@type table<string, boolean>
local started_early = {}
-- Those whose proposal came before that answer.
---@type table<string, boolean>
local proposed_early = {}

--- The edit's turn ended (or never started): its line and key go.
---@param edit agentls.InlineEdit
local function clear(edit)
  if not vim.api.nvim_buf_is_valid(edit.bufnr) then return end
  if edit.mark then pcall(vim.api.nvim_buf_del_extmark, edit.bufnr, ns, edit.mark) end
  if edit.abort_key then pcall(vim.keymap.del, "n", edit.abort_key, { buffer = edit.bufnr }) end
end

--- Send an inline edit of lines `first`..`last` of the current buffer.
---@param instruction string
---@param first integer
---@param last integer
---@return agentls.Chat
function M.start(instruction, first, last)
  local bufnr = vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if vim.bo[bufnr].buftype ~= "" or name == "" then
    error("agentls: :AgentEdit works on a file's buffer (this one is not a file)", 0)
  end
  if instruction == "" then error("agentls: :AgentEdit needs an instruction", 0) end
  local root = client_mod.root_of(bufnr)
  local chat = assert(require("agentls.chat").get(root, true))
  local client = assert(chat:client())
  -- The daemon reads the buffer's unsaved text: it must be attached before the request.
  client_mod.on_buffer(bufnr)
  require("agentls.editor_state").flush()
  local params = {
    uri = vim.uri_from_bufnr(bufnr),
    range = M.line_range(bufnr, first, last, client.offset_encoding),
    instruction = instruction,
  }
  ---@type agentls.InlineEdit
  local edit = { chat = chat, bufnr = bufnr, instruction = instruction }
  local abort_key = config.options.keymaps.abort
  if abort_key then
    edit.abort_key = abort_key
    vim.keymap.set("n", abort_key, function() chat:abort() end, { buffer = bufnr, desc = "agentls: stop the inline edit" })
  end
  set_working(edit, first - 1, "sending")
  chat:request("agent/inlineEdit", params, function(err, result)
    if err or not result then return clear(edit) end
    if ended_early[result.turnId] then
      ended_early[result.turnId] = nil
      return clear(edit)
    end
    running[result.turnId] = edit
    if proposed_early[result.turnId] then
      proposed_early[result.turnId] = nil
      proposed(edit)
    end
    set_working(edit, working_row(edit, first - 1), result.queued and "queued (after the running turn)" or "working")
    vim.api.nvim_exec_autocmds("User", {
      pattern = "AgentlsInlineEditSent",
      data = { turnId = result.turnId, queued = result.queued, bufnr = bufnr },
      modeline = false,
    })
  end)
  return chat
end

--- The inline edits still running, for tests and statuslines.
---@return table<string, agentls.InlineEdit>
function M.running()
  return running
end

--- :AgentEdit with a range; no instruction asks for one.
---@param instruction string
---@param first integer
---@param last integer
function M.command(instruction, first, last)
  if instruction ~= "" then
    M.start(instruction, first, last)
    return
  end
  vim.ui.input({ prompt = "agentls edit: " }, function(input)
    if not input or input == "" then return end
    local ok, err = pcall(M.start, input, first, last)
    if not ok then vim.notify(tostring(err):match("agentls: .*$") or ("agentls: " .. tostring(err)), vim.log.levels.ERROR) end
  end)
end

--- A turn's event: a queued edit's turn starting says so; its proposal (drawn by the chat
--- before this runs) and its end (whatever the stop reason) take its working line away.
---@param event table
local function on_event(event)
  local turn = event.turnId
  local edit = turn and running[turn]
  if event.type == "turn_completed" then
    running[turn] = nil
    if edit then
      clear(edit)
    elseif started_early[turn] then
      ended_early[turn] = true
    end
    started_early[turn], proposed_early[turn] = nil, nil
  elseif event.type == "turn_started" then
    if edit then
      set_working(edit, working_row(edit, 0), "working")
    elseif event.inlineEdit then
      started_early[turn] = true
    end
  elseif event.type == "permission_request" and event.inlineEdit then
    if edit then
      proposed(edit)
    elseif started_early[turn] then
      proposed_early[turn] = true
    end
  end
end

vim.api.nvim_create_autocmd("User", {
  group = vim.api.nvim_create_augroup("agentls-inline-edit", { clear = true }),
  pattern = "AgentlsEvent",
  callback = function(args) on_event(args.data or {}) end,
})

return M
