-- Review of a change to several files (an apply_patch request's `diffs`): one tab, the file
-- list on the left, the chosen file's diff (before | after) on the right. The patch is
-- approved or rejected whole: `y` or `n` in the tab (or the chat's keys); `q` closes the tab
-- and leaves the request waiting. User autocmds: AgentlsReviewOpen, AgentlsReviewAccept,
-- AgentlsReviewReject (data: requestId, and paths on open).

local cards = require("agentls.cards")

local M = {}

M.HINT = "Whole patch: y approves, n rejects · <CR> shows a file · q closes (the request waits)"

---@class agentls.PatchReview
---@field chat agentls.Chat
---@field permission agentls.Permission
---@field tab integer
---@field list integer       the file list's buffer
---@field before_win integer
---@field after_win integer
---@field buffers integer[]  every scratch buffer of the tab (wiped when it closes)
---@field current integer    the index of the file shown

-- Request id -> its open review.
---@type table<string, agentls.PatchReview>
local open = {}

local function emit(pattern, data)
  vim.api.nvim_exec_autocmds("User", { pattern = pattern, data = data, modeline = false })
end

--- A read-only scratch buffer holding `text`, highlighted as `path`'s filetype.
---@param text string
---@param name string
---@param path string
---@return integer
local function scratch(text, name, path)
  local bufnr = vim.api.nvim_create_buf(false, true)
  local body = text:sub(-1) == "\n" and text:sub(1, -2) or text
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, text == "" and {} or vim.split(body, "\n", { plain = true }))
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].modifiable = false
  pcall(vim.api.nvim_buf_set_name, bufnr, name)
  vim.bo[bufnr].filetype = vim.filetype.match({ filename = path }) or ""
  return bufnr
end

--- Show the review's file `index` in its two diff windows.
---@param review agentls.PatchReview
---@param index integer
local function show(review, index)
  local diff = review.permission.event.diffs[index]
  if not diff then return end
  review.current = index
  local id, root = review.permission.event.requestId, review.chat.root
  local old_path, new_path = cards.relative(diff.movedFrom or diff.path, root), cards.relative(diff.path, root)
  local before = scratch(diff.oldText or "", ("agentls://patch/%s/%d/before/%s"):format(id, index, old_path), diff.path)
  local after = scratch(diff.newText or "", ("agentls://patch/%s/%d/after/%s"):format(id, index, new_path), diff.path)
  vim.list_extend(review.buffers, { before, after })
  local titles = { "before: " .. old_path, "after: " .. new_path }
  for _, pair in ipairs({ { review.before_win, before, titles[1] }, { review.after_win, after, titles[2] } }) do
    local win, bufnr, title = pair[1], pair[2], pair[3]
    vim.api.nvim_win_set_buf(win, bufnr)
    vim.api.nvim_win_call(win, function() vim.cmd.diffthis() end)
    vim.wo[win].winbar = "%#AgentlsFooter# " .. title:gsub("%%", "%%%%")
  end
  vim.api.nvim_win_set_cursor(vim.fn.win_findbuf(review.list)[1] or 0, { index, 0 })
end

--- Answer the whole patch from the tab.
---@param review agentls.PatchReview
---@param kind "allow_once"|"reject_once"
local function answer(review, kind)
  for _, option in ipairs(review.permission.event.options) do
    if option.kind == kind then
      review.chat:respond(review.permission, option.optionId)
      emit(kind == "allow_once" and "AgentlsReviewAccept" or "AgentlsReviewReject", { requestId = review.permission.event.requestId })
      return
    end
  end
end

--- The file list: a line per file (kind, path, +/−), its keys.
---@param review agentls.PatchReview
local function list_keys(review)
  local function map(lhs, fn, desc)
    vim.keymap.set("n", lhs, fn, { buffer = review.list, desc = "agentls: " .. desc, nowait = true })
  end
  map("<CR>", function() show(review, vim.api.nvim_win_get_cursor(0)[1]) end, "show this file's diff")
  map("y", function() answer(review, "allow_once") end, "approve the whole patch")
  map("n", function() answer(review, "reject_once") end, "reject the whole patch")
  map("q", function() M.close(review.permission.event.requestId) end, "close the review (the request waits)")
end

--- A patch request's files in a review tab (its open review if it has one).
---@param chat agentls.Chat
---@param permission agentls.Permission
function M.open(chat, permission)
  local event = permission.event
  local existing = open[event.requestId]
  if existing and vim.api.nvim_tabpage_is_valid(existing.tab) then
    vim.api.nvim_set_current_tabpage(existing.tab)
    return
  end
  vim.cmd.tabnew()
  local tab = vim.api.nvim_get_current_tabpage()
  local list_win = vim.api.nvim_get_current_win()
  local names = {}
  for _, diff in ipairs(event.diffs) do table.insert(names, cards.patch_file(diff, chat.root)) end
  local list = vim.api.nvim_get_current_buf()
  vim.api.nvim_buf_set_lines(list, 0, -1, false, names)
  vim.bo[list].buftype = "nofile"
  vim.bo[list].bufhidden = "wipe"
  vim.bo[list].modifiable = false
  pcall(vim.api.nvim_buf_set_name, list, ("agentls://patch/%s/files"):format(event.requestId))
  vim.wo[list_win].winbar = "%#AgentlsReviewHint# " .. M.HINT
  vim.cmd("rightbelow vsplit")
  local before_win = vim.api.nvim_get_current_win()
  vim.cmd("rightbelow vsplit")
  local after_win = vim.api.nvim_get_current_win()
  vim.api.nvim_set_current_win(list_win)
  vim.api.nvim_win_set_width(list_win, math.min(50, math.floor(vim.o.columns / 4)))
  vim.wo[list_win].winfixwidth = true
  ---@type agentls.PatchReview
  local review = { chat = chat, permission = permission, tab = tab, list = list, before_win = before_win, after_win = after_win, buffers = {}, current = 1 }
  open[event.requestId] = review
  list_keys(review)
  show(review, 1)
  vim.api.nvim_echo({ { "agentls: " .. M.HINT, "AgentlsReviewHint" } }, false, {})
  local paths = {}
  for _, diff in ipairs(event.diffs) do table.insert(paths, diff.path) end
  emit("AgentlsReviewOpen", { requestId = event.requestId, paths = paths })
end

--- The request was answered (here or anywhere), or `q`: the review tab goes.
---@param request_id string
function M.close(request_id)
  local review = open[request_id]
  if not review then return end
  open[request_id] = nil
  if vim.api.nvim_tabpage_is_valid(review.tab) and #vim.api.nvim_list_tabpages() > 1 then
    pcall(vim.cmd, vim.api.nvim_tabpage_get_number(review.tab) .. "tabclose")
  end
  for _, bufnr in ipairs({ review.list, unpack(review.buffers) }) do
    if vim.api.nvim_buf_is_valid(bufnr) then pcall(vim.api.nvim_buf_delete, bufnr, { force = true }) end
  end
end

--- The open review of a request, for tests and statuslines.
---@param request_id string
---@return agentls.PatchReview|nil
function M.get(request_id)
  return open[request_id]
end

return M
