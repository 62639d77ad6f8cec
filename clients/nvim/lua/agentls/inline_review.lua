-- An inline edit's proposal reviewed in the source buffer itself (a permission_request with
-- `inlineEdit: true`): each hunk's removed lines highlighted where they are, its new lines as
-- virtual lines under them, and buffer keys on the hunks (`ca`/`cr` accept or reject the one
-- at the cursor, `cA`/`cR` all that are left, `]h`/`[h` move between them). When every hunk is
-- decided the request is answered: allow_once with the accepted hunks' text, or reject_once
-- when none was taken. User autocmds: AgentlsInlineReviewOpen, AgentlsInlineReviewAnswer
-- (data: requestId, path; and accepted, the count, on answer).

local hunks_mod = require("agentls.inline_hunks")

local M = {}

local ns = vim.api.nvim_create_namespace("agentls-inline-review")

--- What the keys do, with the keys as configured (a key set to false is left out).
---@param k table<string, string|false>
---@return string
function M.hint(k)
  local parts = {}
  for _, pair in ipairs({
    { k.accept, "accept" }, { k.reject, "reject" }, { k.accept_all, "accept all" },
    { k.reject_all, "reject all" }, { k.next, "next" }, { k.prev, "prev" },
  }) do
    if pair[1] then table.insert(parts, pair[1] .. " " .. pair[2]) end
  end
  return table.concat(parts, " · ")
end

-- The keys on a reviewed buffer, configurable through keymaps.inline_review.
M.DEFAULT_KEYS = { accept = "ca", reject = "cr", accept_all = "cA", reject_all = "cR", next = "]h", prev = "[h" }

---@class agentls.InlineReview
---@field chat agentls.Chat
---@field permission agentls.Permission
---@field bufnr integer
---@field old string       the file's text the hunks are of (diff.oldText)
---@field new string       the proposal (diff.newText)
---@field hunks agentls.InlineHunk[]
---@field marks integer[]  per hunk, the extmark on its first row (follows the user's edits)
---@field keys table<string, string>

-- Request id -> its open review.
---@type table<string, agentls.InlineReview>
local open = {}

local function emit(pattern, data)
  vim.api.nvim_exec_autocmds("User", { pattern = pattern, data = data, modeline = false })
end

local function keys()
  local configured = require("agentls.config").options.keymaps.inline_review
  return vim.tbl_extend("force", M.DEFAULT_KEYS, type(configured) == "table" and configured or {})
end

local function buffer_text(bufnr)
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  if vim.bo[bufnr].endofline and vim.api.nvim_buf_line_count(bufnr) > 0 and text ~= "" then text = text .. "\n" end
  return text
end

--- The 0-based row a hunk is anchored on: its first removed line, or the line an insertion follows.
---@param hunk agentls.InlineHunk
---@return integer row
---@return boolean above  the insertion goes above the row (at the top of the file)
local function anchor(hunk)
  if hunk.old_count > 0 then return hunk.old_start - 1, false end
  if hunk.old_start == 0 then return 0, true end
  return hunk.old_start - 1, false
end

--- The new lines as DiffAdd virtual lines as wide as the window, so the block reads as a diff.
---@param lines string[]
---@param width integer
---@return table[]
local function added_lines(lines, width)
  local out = {}
  for _, line in ipairs(lines) do
    local text = line:gsub("\t", "    ")
    local pad = math.max(0, width - vim.fn.strdisplaywidth(text))
    table.insert(out, { { text .. string.rep(" ", pad), "DiffAdd" } })
  end
  return out
end

local function label(review, index)
  local hunk = review.hunks[index]
  local state = hunk.decision == "accepted" and "accepted" or hunk.decision == "rejected" and "rejected" or M.hint(review.keys)
  return (" agentls hunk %d/%d: %s "):format(index, #review.hunks, state)
end

--- Show `count` virtual lines above the buffer's first line in the windows at its top.
---@param bufnr integer
---@param count integer
function M.show_top_fill(bufnr, count)
  for _, win in ipairs(vim.fn.win_findbuf(bufnr)) do
    vim.api.nvim_win_call(win, function()
      if vim.fn.line("w0") == 1 then vim.fn.winrestview({ topline = 1, topfill = count }) end
    end)
  end
end

--- Draw every hunk as it stands: an undecided or accepted one shows its diff, a rejected one
--- only its label.
---@param review agentls.InlineReview
local function draw(review)
  local bufnr = review.bufnr
  local rows = {}
  for i, mark in ipairs(review.marks) do
    rows[i] = vim.api.nvim_buf_get_extmark_by_id(bufnr, ns, mark, {})[1]
  end
  vim.api.nvim_buf_clear_namespace(bufnr, ns, 0, -1)
  local width = math.max(40, vim.api.nvim_win_get_width(vim.fn.bufwinid(bufnr) ~= -1 and vim.fn.bufwinid(bufnr) or 0) - 8)
  local last_row = vim.api.nvim_buf_line_count(bufnr) - 1
  for i, hunk in ipairs(review.hunks) do
    local first, above = anchor(hunk)
    local shift = rows[i] and (rows[i] - first) or 0
    first = math.min(first + shift, last_row)
    local hint_hl = hunk.decision == "accepted" and "DiagnosticOk" or hunk.decision == "rejected" and "Comment" or "AgentlsReviewHint"
    review.marks[i] = vim.api.nvim_buf_set_extmark(bufnr, ns, first, 0, {
      virt_text = { { label(review, i), hint_hl } },
      virt_text_pos = "eol",
    })
    if hunk.decision ~= "rejected" then
      local last = math.min(first + math.max(hunk.old_count, 1) - 1, last_row)
      if hunk.old_count > 0 then
        vim.api.nvim_buf_set_extmark(bufnr, ns, first, 0, { end_row = last, line_hl_group = "DiffDelete" })
      end
      if #hunk.new_lines > 0 then
        vim.api.nvim_buf_set_extmark(bufnr, ns, above and first or last, 0, {
          virt_lines = added_lines(hunk.new_lines, width),
          virt_lines_above = above,
        })
        -- Lines above the first one show only when the window is scrolled to them.
        if above then M.show_top_fill(bufnr, #hunk.new_lines) end
      end
    end
  end
end

--- The hunk the keys act on: the one at the cursor, else the next undecided one below it,
--- else the first undecided one.
---@param review agentls.InlineReview
---@return integer|nil
local function current(review)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local next_index, first_open
  for i, hunk in ipairs(review.hunks) do
    local start = vim.api.nvim_buf_get_extmark_by_id(review.bufnr, ns, review.marks[i], {})[1]
    if start then
      local stop = start + math.max(hunk.old_count, 1) - 1
      if row >= start and row <= stop then return i end
      if not hunk.decision then
        first_open = first_open or i
        if start > row and not next_index then next_index = i end
      end
    end
  end
  return next_index or first_open
end

--- Put the cursor on hunk `index`.
local function go(review, index)
  local row = review.marks[index] and vim.api.nvim_buf_get_extmark_by_id(review.bufnr, ns, review.marks[index], {})[1]
  if row then pcall(vim.api.nvim_win_set_cursor, 0, { row + 1, 0 }) end
end

--- The request's option of a kind (its id is the kind unless the daemon said otherwise).
local function option_id(review, kind)
  for _, option in ipairs(review.permission.event.options or {}) do
    if option.kind == kind then return option.optionId end
  end
  return kind
end

--- Answer the request once every hunk is decided.
---@param review agentls.InlineReview
local function finish(review)
  if not hunks_mod.all_decided(review.hunks) then return end
  local request_id = review.permission.event.requestId
  local accepted = 0
  for _, hunk in ipairs(review.hunks) do
    if hunk.decision == "accepted" then accepted = accepted + 1 end
  end
  local path = review.permission.event.diff.path
  -- The review goes before the answer: the accepted text is written into this buffer next.
  M.close(request_id)
  if hunks_mod.any_accepted(review.hunks) then
    review.chat:respond(review.permission, option_id(review, "allow_once"), hunks_mod.accepted_text(review.old, review.new, review.hunks))
  else
    review.chat:respond(review.permission, option_id(review, "reject_once"))
  end
  emit("AgentlsInlineReviewAnswer", { requestId = request_id, path = path, accepted = accepted })
end

--- Decide the hunk at the cursor (or all undecided ones), then move to the next open one.
---@param review agentls.InlineReview
---@param decision "accepted"|"rejected"
---@param all? boolean
local function decide(review, decision, all)
  local index = current(review) or 1
  if all then
    for _, hunk in ipairs(review.hunks) do
      hunk.decision = hunk.decision or decision
    end
  else
    review.hunks[index].decision = decision
  end
  if hunks_mod.all_decided(review.hunks) then return finish(review) end
  draw(review)
  -- On to the next hunk still open after this one (wrapping around).
  local count = #review.hunks
  for offset = 1, count do
    local next_index = (index - 1 + offset) % count + 1
    if not review.hunks[next_index].decision then return go(review, next_index) end
  end
end

--- Move to the next (step 1) or previous (-1) hunk from the cursor, wrapping around.
local function step(review, direction)
  local row = vim.api.nvim_win_get_cursor(0)[1] - 1
  local count = #review.hunks
  local starts = {}
  for i = 1, count do
    starts[i] = vim.api.nvim_buf_get_extmark_by_id(review.bufnr, ns, review.marks[i], {})[1] or 0
  end
  if direction > 0 then
    for i = 1, count do
      if starts[i] > row then return go(review, i) end
    end
    return go(review, 1)
  end
  for i = count, 1, -1 do
    if starts[i] < row then return go(review, i) end
  end
  go(review, count)
end

---@param review agentls.InlineReview
local function set_keys(review)
  local function map(lhs, fn, desc)
    if lhs then vim.keymap.set("n", lhs, fn, { buffer = review.bufnr, desc = "agentls: " .. desc }) end
  end
  local k = review.keys
  map(k.accept, function() decide(review, "accepted") end, "accept this hunk of the inline edit")
  map(k.reject, function() decide(review, "rejected") end, "reject this hunk of the inline edit")
  map(k.accept_all, function() decide(review, "accepted", true) end, "accept the inline edit's remaining hunks")
  map(k.reject_all, function() decide(review, "rejected", true) end, "reject the inline edit's remaining hunks")
  map(k.next, function() step(review, 1) end, "next hunk of the inline edit")
  map(k.prev, function() step(review, -1) end, "previous hunk of the inline edit")
end

--- The buffer of a file, loaded and shown (in a window that shows it, else the current one).
---@param path string
---@return integer
local function show_file(path)
  local bufnr = vim.fn.bufadd(path)
  vim.fn.bufload(bufnr)
  vim.bo[bufnr].buflisted = true
  local win = vim.fn.win_findbuf(bufnr)[1]
  if win then
    vim.api.nvim_set_current_win(win)
  else
    vim.api.nvim_win_set_buf(0, bufnr)
  end
  return bufnr
end

--- Show an inline edit's request in its file's buffer. A buffer whose text is not the one the
--- proposal is of (edited since) gets the review tab instead (review.lua).
---@param chat agentls.Chat
---@param permission agentls.Permission
---@return boolean shown  false when the request has no single-file diff to show
function M.open(chat, permission)
  local event = permission.event
  local diff = event.diff
  if type(diff) ~= "table" or event.diffs then return false end
  if open[event.requestId] then return true end
  local bufnr = show_file(diff.path)
  local old, new = diff.oldText or "", diff.newText or ""
  if buffer_text(bufnr) ~= old then
    require("agentls.review").open(chat, permission)
    return true
  end
  local hunks = hunks_mod.compute(old, new)
  ---@type agentls.InlineReview
  local review = { chat = chat, permission = permission, bufnr = bufnr, old = old, new = new, hunks = hunks, marks = {}, keys = keys() }
  open[event.requestId] = review
  draw(review)
  set_keys(review)
  if #hunks > 0 then go(review, 1) end
  local said = ("agentls: inline edit, %d hunk%s: %s"):format(#hunks, #hunks == 1 and "" or "s", M.hint(review.keys))
  -- One screen line: a longer echo would stop at a hit-enter prompt.
  if vim.fn.strdisplaywidth(said) > vim.o.columns - 12 then said = vim.fn.strcharpart(said, 0, vim.o.columns - 13) .. "…" end
  vim.api.nvim_echo({ { said, "AgentlsReviewHint" } }, false, {})
  emit("AgentlsInlineReviewOpen", { requestId = event.requestId, path = diff.path, hunks = #hunks })
  -- A proposal that changes nothing has no hunk to decide: answered as a rejection.
  if #hunks == 0 then finish(review) end
  return true
end

--- The request was answered (here, from the chat, or elsewhere): its marks and keys go.
---@param request_id string
function M.close(request_id)
  local review = open[request_id]
  if not review then return end
  open[request_id] = nil
  if not vim.api.nvim_buf_is_valid(review.bufnr) then return end
  vim.api.nvim_buf_clear_namespace(review.bufnr, ns, 0, -1)
  for _, lhs in pairs(review.keys) do
    pcall(vim.keymap.del, "n", lhs, { buffer = review.bufnr })
  end
end

--- The open review of a request, for tests and statuslines.
---@param request_id string
---@return agentls.InlineReview|nil
function M.get(request_id)
  return open[request_id]
end

-- Answered anywhere (the chat's keys, another client): the review in the buffer goes too.
vim.api.nvim_create_autocmd("User", {
  group = vim.api.nvim_create_augroup("agentls-inline-review", { clear = true }),
  pattern = "AgentlsEvent",
  callback = function(args)
    if args.data and args.data.type == "permission_resolved" then M.close(args.data.requestId) end
  end,
})

return M
