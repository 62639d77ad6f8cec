-- A read-only tab of FileChanges (agent/turnDiff's, a rewind preview's): a summary and the
-- file list on the left, the chosen file's unified diff on the right. `<CR>` on a file shows
-- it, `q` closes the tab; callers add their own keys (a rewind's confirm).

local cards = require("agentls.cards")

local M = {}

---@class agentls.DiffTab
---@field tab integer
---@field list integer      the summary and file list's buffer
---@field diff integer      the diff's buffer
---@field first_file integer  the list's row of the first file
---@field close fun()

--- The list's line of one file: its path, what happened to it and its counts.
---@param file table  a FileChange
---@param root string
---@return string
function M.file_line(file, root)
  local kind = file.created and "created " or file.deleted and "deleted " or "modified"
  return ("%s %s  +%d −%d"):format(kind, cards.relative(file.path, root), file.added or 0, file.removed or 0)
end

--- Open the tab. `keys` maps a key of the list buffer to what it does (with the tab).
---@param opts { name: string, title: string, root: string, header: string[], files: table[], keys?: table<string, { fn: fun(tab: agentls.DiffTab), desc: string }> }
---@return agentls.DiffTab
function M.open(opts)
  vim.cmd.tabnew()
  local list_win, list = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  local shown = vim.list_extend({}, opts.header)
  for _, file in ipairs(opts.files) do table.insert(shown, M.file_line(file, opts.root)) end
  vim.api.nvim_buf_set_lines(list, 0, -1, false, shown)
  vim.bo[list].buftype, vim.bo[list].bufhidden, vim.bo[list].modifiable = "nofile", "wipe", false
  pcall(vim.api.nvim_buf_set_name, list, ("agentls://%s/files"):format(opts.name))
  vim.wo[list_win].winbar = "%#AgentlsReviewHint# " .. opts.title:gsub("%%", "%%%%")
  vim.cmd("rightbelow vsplit")
  local diff_win = vim.api.nvim_get_current_win()
  local diff = vim.api.nvim_create_buf(false, true)
  vim.bo[diff].bufhidden, vim.bo[diff].filetype = "wipe", "diff"
  pcall(vim.api.nvim_buf_set_name, diff, ("agentls://%s/diff"):format(opts.name))
  vim.api.nvim_win_set_buf(diff_win, diff)
  local tab = vim.api.nvim_get_current_tabpage()
  ---@type agentls.DiffTab
  local view = { tab = tab, list = list, diff = diff, first_file = #opts.header + 1, close = function() end }
  function view.close()
    if vim.api.nvim_tabpage_is_valid(tab) and #vim.api.nvim_list_tabpages() > 1 then
      pcall(vim.cmd, vim.api.nvim_tabpage_get_number(tab) .. "tabclose")
    end
  end
  local function show(index)
    local file = opts.files[index]
    if not file then return end
    vim.bo[diff].modifiable = true
    vim.api.nvim_buf_set_lines(diff, 0, -1, false, vim.split((file.diff or ""):gsub("\n$", ""), "\n", { plain = true }))
    vim.bo[diff].modifiable = false
    vim.wo[diff_win].winbar = "%#AgentlsFooter# " .. M.file_line(file, opts.root):gsub("%%", "%%%%")
  end
  for _, bufnr in ipairs({ list, diff }) do
    vim.keymap.set("n", "q", view.close, { buffer = bufnr, desc = "agentls: close the changes", nowait = true })
  end
  vim.keymap.set("n", "<CR>", function() show(vim.api.nvim_win_get_cursor(0)[1] - #opts.header) end, { buffer = list, desc = "agentls: show this file's diff" })
  for lhs, key in pairs(opts.keys or {}) do
    vim.keymap.set("n", lhs, function() key.fn(view) end, { buffer = list, desc = "agentls: " .. key.desc, nowait = true })
  end
  vim.api.nvim_set_current_win(list_win)
  vim.api.nvim_win_set_width(list_win, math.min(60, math.max(44, math.floor(vim.o.columns / 3))))
  if #opts.files > 0 then vim.api.nvim_win_set_cursor(list_win, { view.first_file, 0 }) end
  show(1)
  return view
end

return M
