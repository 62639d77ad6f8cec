-- Review before apply: the proposed file as a scratch `acwrite` buffer in a diff tab beside
-- the real one. `:w` accepts it as it stands (with the user's own edits, hunks taken or put
-- back with do/dp), closing it rejects. User autocmds: AgentlsReviewOpen, AgentlsReviewAccept,
-- AgentlsReviewReject.

local M = {}

--- The review tab's hint, in the proposal's winbar (and echoed when it opens).
M.HINT = "Proposed change: :w accepts it (edit it first if you like; do/dp move hunks), :q rejects it"

-- Request id -> { bufnr, chat, permission, answered }
local open = {}

local function emit(pattern, data)
  vim.api.nvim_exec_autocmds("User", { pattern = pattern, data = data, modeline = false })
end

local function buffer_text(bufnr)
  local text = table.concat(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false), "\n")
  if vim.bo[bufnr].endofline and #text > 0 then text = text .. "\n" end
  return text
end

--- The text the user accepted in a request's open review, or nil.
---@param request_id string
---@return string|nil
function M.accepted_text(request_id)
  local review = open[request_id]
  if review and vim.api.nvim_buf_is_valid(review.bufnr) then return buffer_text(review.bufnr) end
end

local function answer(review, option_id)
  if review.answered then return end
  review.answered = true
  local text = option_id == "allow_once" and buffer_text(review.bufnr) or nil
  review.chat:respond(review.permission, option_id, text)
  emit(option_id == "allow_once" and "AgentlsReviewAccept" or "AgentlsReviewReject", { requestId = review.permission.event.requestId })
end

--- A request's proposal in a diff tab beside the file as it is (its open review if it has one).
---@param chat agentls.Chat
---@param permission agentls.Permission
function M.open(chat, permission)
  local event = permission.event
  local existing = open[event.requestId]
  if existing and vim.api.nvim_buf_is_valid(existing.bufnr) then
    local win = vim.fn.win_findbuf(existing.bufnr)[1]
    if win then vim.api.nvim_set_current_win(win) end
    return
  end
  local diff = event.diff
  vim.cmd.tabnew()
  local tab = vim.api.nvim_get_current_tabpage()
  -- Left: the file as it is now (its buffer, so unsaved text shows).
  vim.cmd.edit(vim.fn.fnameescape(diff.path))
  vim.cmd.diffthis()
  vim.wo.winbar = "%#AgentlsFooter# " .. vim.fs.basename(diff.path):gsub("%%", "%%%%") .. " as it is now"
  -- Right: the proposal, editable; writing it answers the request.
  vim.cmd("rightbelow vnew")
  local bufnr = vim.api.nvim_get_current_buf()
  local text = diff.newText
  local ends = text:sub(-1) == "\n"
  vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, vim.split(ends and text:sub(1, -2) or text, "\n", { plain = true }))
  vim.bo[bufnr].buftype = "acwrite"
  vim.bo[bufnr].bufhidden = "wipe"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].endofline = ends
  vim.bo[bufnr].fixendofline = false
  vim.bo[bufnr].modified = false
  -- Autosave plugins skip buffers with a buftype; these are for the ones that ask.
  vim.b[bufnr].autosave_disabled = true
  vim.b[bufnr].auto_save = false
  pcall(vim.api.nvim_buf_set_name, bufnr, ("agentls://review/%s/%s"):format(event.requestId, vim.fs.basename(diff.path)))
  vim.bo[bufnr].filetype = vim.filetype.match({ filename = diff.path }) or ""
  vim.b[bufnr].agentls_root = chat.root
  vim.cmd.diffthis()
  -- What to do here, where the eye is: no help page needed to find `:w`.
  vim.wo.winbar = "%#AgentlsReviewHint# " .. M.HINT
  vim.api.nvim_echo({ { "agentls: " .. M.HINT, "AgentlsReviewHint" } }, false, {})
  local review = { bufnr = bufnr, chat = chat, permission = permission, tab = tab }
  open[event.requestId] = review
  vim.api.nvim_create_autocmd("BufWriteCmd", {
    buffer = bufnr,
    callback = function()
      answer(review, "allow_once")
      vim.bo[bufnr].modified = false
    end,
  })
  vim.api.nvim_create_autocmd("BufWipeout", {
    buffer = bufnr,
    callback = function()
      -- Closed in every window without writing: the change is rejected.
      open[event.requestId] = nil
      if permission.state == "pending" then answer(review, "reject_once") end
    end,
  })
  emit("AgentlsReviewOpen", { requestId = event.requestId, path = diff.path })
end

--- The request was answered (here or anywhere): its review tab goes.
---@param request_id string
function M.close(request_id)
  local review = open[request_id]
  if not review then return end
  review.answered = true
  open[request_id] = nil
  if vim.api.nvim_buf_is_valid(review.bufnr) then
    vim.bo[review.bufnr].modified = false
    if vim.api.nvim_tabpage_is_valid(review.tab) and #vim.api.nvim_list_tabpages() > 1 then
      local number = vim.api.nvim_tabpage_get_number(review.tab)
      pcall(vim.cmd, number .. "tabclose")
    end
    pcall(vim.api.nvim_buf_delete, review.bufnr, { force = true })
  end
end

return M
