-- A list of things in a float (the rules, the MCP servers): lines that stand for items,
-- keys that act on the item under the cursor, redrawn in place when the list changes. One
-- view per name: opening it again goes back to it.

local M = {}

local ns = vim.api.nvim_create_namespace("agentls-listview")

---@class agentls.ListLine
---@field [1] string   the text
---@field item? any    what the line stands for (keys act on it)
---@field hl? string   its highlight group

---@class agentls.ListView
---@field bufnr integer
---@field win integer
---@field title string
---@field items table<integer, any>  line number (1-based) -> item
local View = {}
View.__index = View

-- Buffer name -> its view.
local open_views = {}

---@param lines agentls.ListLine[]
---@return integer width, integer height
local function size(lines)
  local width = 30
  for _, line in ipairs(lines) do width = math.max(width, vim.fn.strdisplaywidth(line[1]) + 2) end
  return math.min(width, vim.o.columns - 4), math.max(1, math.min(#lines, vim.o.lines - 6))
end

---@return boolean
function View:valid()
  return vim.api.nvim_buf_is_valid(self.bufnr) and vim.api.nvim_win_is_valid(self.win)
end

--- Draw `lines` (the cursor stays on its line number), the float resized to them.
---@param lines agentls.ListLine[]
function View:set(lines)
  if not self:valid() then return end
  self.items = {}
  local text = {}
  for i, line in ipairs(lines) do
    text[i] = line[1]
    self.items[i] = line.item
  end
  vim.bo[self.bufnr].modifiable = true
  vim.api.nvim_buf_set_lines(self.bufnr, 0, -1, false, text)
  vim.bo[self.bufnr].modifiable = false
  vim.api.nvim_buf_clear_namespace(self.bufnr, ns, 0, -1)
  for i, line in ipairs(lines) do
    if line.hl then vim.api.nvim_buf_set_extmark(self.bufnr, ns, i - 1, 0, { line_hl_group = line.hl }) end
  end
  local width, height = size(lines)
  vim.api.nvim_win_set_config(self.win, {
    relative = "editor", width = width, height = height,
    row = math.floor((vim.o.lines - height) / 2), col = math.floor((vim.o.columns - width) / 2),
  })
  -- A list that shrank to fit shows from its first line (the keys' help), not scrolled.
  if #lines <= height then
    vim.api.nvim_win_call(self.win, function() vim.fn.winrestview({ topline = 1 }) end)
  end
end

--- The item of the cursor's line, or nil.
---@return any
function View:item()
  if not self:valid() then return nil end
  return self.items[vim.api.nvim_win_get_cursor(self.win)[1]]
end

function View:close()
  if vim.api.nvim_win_is_valid(self.win) then vim.api.nvim_win_close(self.win, true) end
end

--- The view named `name` (a new float showing "…", or the one open, focused); `keys` are
--- lhs -> { fn(view), desc }, and q closes it.
---@param name string  its buffer's name
---@param title string
---@param keys table<string, { fn: fun(view: agentls.ListView), desc: string }>
---@return agentls.ListView
function M.open(name, title, keys)
  local view = open_views[name]
  if view and view:valid() then
    vim.api.nvim_set_current_win(view.win)
    return view
  end
  local bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[bufnr].bufhidden = "wipe"
  pcall(vim.api.nvim_buf_set_name, bufnr, name)
  local win = vim.api.nvim_open_win(bufnr, true, {
    relative = "editor", style = "minimal", border = "rounded", title = " " .. title .. " ",
    width = 30, height = 1, row = 1, col = 1,
  })
  vim.wo[win].cursorline = true
  view = setmetatable({ bufnr = bufnr, win = win, title = title, items = {} }, View)
  open_views[name] = view
  for lhs, key in pairs(keys) do
    vim.keymap.set("n", lhs, function() key.fn(view) end, { buffer = bufnr, desc = "agentls: " .. key.desc, nowait = true })
  end
  vim.keymap.set("n", "q", function() view:close() end, { buffer = bufnr, desc = "agentls: close", nowait = true })
  view:set({ { "…" } })
  return view
end

return M
