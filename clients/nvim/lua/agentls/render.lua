-- Writing into the chat buffer: streamed text appended at most once a frame with
-- nvim_buf_set_text, blocks (tool calls, permissions) as whole lines, and windows that
-- follow the end only while their cursor is on the last line.

local M = {}

M.ns = vim.api.nvim_create_namespace("agentls")

local FRAME_MS = 16

---@class agentls.Buffer
---@field bufnr integer
---@field pending string[]   streamed text not yet written
---@field scheduled boolean  a flush is due on the next frame
---@field line_start boolean the text so far ends a line
local Buffer = {}
Buffer.__index = Buffer

--- A nomodifiable markdown scratch buffer that only this writer changes.
---@param name string
---@return agentls.Buffer
function M.new(name)
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[bufnr].filetype = "markdown"
  vim.bo[bufnr].swapfile = false
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].modifiable = false
  pcall(vim.api.nvim_buf_set_name, bufnr, name)
  return setmetatable({ bufnr = bufnr, pending = {}, scheduled = false, line_start = true }, Buffer)
end

---@return boolean
function Buffer:valid()
  return vim.api.nvim_buf_is_valid(self.bufnr)
end

function Buffer:edit(fn)
  if not self:valid() then return end
  vim.bo[self.bufnr].modifiable = true
  local ok, err = pcall(fn, self.bufnr)
  vim.bo[self.bufnr].modifiable = false
  -- Neovim updates no fold while insert mode lasts (typing in the prompt as a turn writes):
  -- window.lua has the windows showing this buffer fold again once it ends.
  if vim.api.nvim_get_mode().mode:find("^[iR]") then vim.b[self.bufnr].agentls_folds_stale = true end
  if not ok then error(err) end
end

--- Windows showing the buffer whose cursor is on its last line (they follow new text).
function Buffer:followers()
  local last = vim.api.nvim_buf_line_count(self.bufnr)
  local windows = {}
  for _, win in ipairs(vim.fn.win_findbuf(self.bufnr)) do
    if vim.api.nvim_win_get_cursor(win)[1] >= last then table.insert(windows, win) end
  end
  return windows
end

function Buffer:follow(windows)
  local last = vim.api.nvim_buf_line_count(self.bufnr)
  for _, win in ipairs(windows) do
    if vim.api.nvim_win_is_valid(win) then vim.api.nvim_win_set_cursor(win, { last, 0 }) end
  end
end

--- Queue streamed text; it reaches the buffer on the next frame, with what came meanwhile.
---@param text string
function Buffer:stream(text)
  if text == "" then return end
  table.insert(self.pending, text)
  self.line_start = text:sub(-1) == "\n"
  if not self.scheduled then
    self.scheduled = true
    vim.defer_fn(function() self:flush() end, FRAME_MS)
  end
end

--- Write the queued text now.
function Buffer:flush()
  self.scheduled = false
  if #self.pending == 0 or not self:valid() then
    self.pending = {}
    return
  end
  local text = table.concat(self.pending)
  self.pending = {}
  local windows = self:followers()
  self:edit(function(bufnr)
    local count = vim.api.nvim_buf_line_count(bufnr)
    local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1]
    vim.api.nvim_buf_set_text(bufnr, count - 1, #last, count - 1, #last, vim.split(text, "\n", { plain = true }))
  end)
  self:follow(windows)
end

--- Start a fresh line (queued, so it stays in order with streamed text).
function Buffer:break_line()
  if not self.line_start then self:stream("\n") end
end

--- The end of the buffer as (row, col), after the queued text is written.
---@return integer row
---@return integer col
function Buffer:tail()
  self:flush()
  local count = vim.api.nvim_buf_line_count(self.bufnr)
  local last = vim.api.nvim_buf_get_lines(self.bufnr, count - 1, count, false)[1]
  return count - 1, #last
end

--- Append whole lines at the end; returns the row of the first.
---@param lines string[]
---@return integer
function Buffer:block(lines)
  self:break_line()
  local row = self:tail()
  local windows = self:followers()
  self:edit(function(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, row, row + 1, false, vim.list_extend(vim.deepcopy(lines), { "" }))
  end)
  self.line_start = true
  self:follow(windows)
  return row
end

--- Insert lines before `row` (tool output under its card).
---@param row integer
---@param lines string[]
function Buffer:insert(row, lines)
  self:flush()
  local windows = self:followers()
  self:edit(function(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, row, row, false, lines)
  end)
  self:follow(windows)
end

--- Replace lines [first, last).
---@param first integer
---@param last integer
---@param lines string[]
function Buffer:replace(first, last, lines)
  self:flush()
  self:edit(function(bufnr)
    vim.api.nvim_buf_set_lines(bufnr, first, last, false, lines)
  end)
end

--- Replace the text of line `row`; the extmarks on it stay on it.
---@param row integer
---@param text string
function Buffer:set_line(row, text)
  self:flush()
  self:edit(function(bufnr)
    local old = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, true)[1]
    vim.api.nvim_buf_set_text(bufnr, row, 0, row, #old, { text })
  end)
end

--- Delete from (row, col) to the end (a discarded attempt's text).
---@param row integer
---@param col integer
function Buffer:cut_from(row, col)
  local last_row, last_col = self:tail()
  self:edit(function(bufnr)
    vim.api.nvim_buf_set_text(bufnr, row, col, last_row, last_col, { "" })
  end)
  self.line_start = col == 0
end

--- An extmark at (row, col) that moves with the text; returns its id.
---@param row integer
---@param col integer
---@param opts? vim.api.keyset.set_extmark
---@return integer
function Buffer:mark(row, col, opts)
  return vim.api.nvim_buf_set_extmark(self.bufnr, M.ns, row, col, opts or {})
end

--- Where an extmark of this writer is now.
---@param id integer
---@return integer row
---@return integer col
function Buffer:mark_row(id)
  local pos = vim.api.nvim_buf_get_extmark_by_id(self.bufnr, M.ns, id, {})
  return pos[1], pos[2]
end

function Buffer:clear()
  self.pending = {}
  self:edit(function(bufnr)
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
    vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, { "" })
  end)
  self.line_start = true
end

--- A writer with this buffer's methods that writes above its first line instead of at its
--- end (earlier messages, prepended): it ends at an empty line it puts at the top, so what
--- it draws keeps the order it is drawn in, above what was there.
---@return agentls.Buffer
function Buffer:above()
  self:flush()
  self:edit(function(bufnr) vim.api.nvim_buf_set_lines(bufnr, 0, 0, false, { "" }) end)
  local writer = setmetatable({ line_start = true, pending = {} }, { __index = self })
  -- What was there starts at this mark: the writer's end is the line above it.
  local start = self:mark(1, 0)
  function writer:tail()
    return self:mark_row(start) - 1, 0
  end
  function writer:break_line() end
  function writer:followers() return {} end
  function writer:done()
    vim.api.nvim_buf_del_extmark(self.bufnr, M.ns, start)
  end
  return writer
end

--- The whole buffer's text (the queued text written first).
---@return string
function Buffer:text()
  self:flush()
  return table.concat(vim.api.nvim_buf_get_lines(self.bufnr, 0, -1, false), "\n")
end

return M
