-- LSP positions between two position encodings (utf-8, utf-16, utf-32), converted on the
-- text of their line: a character column means a different place to each server when the
-- line holds anything but ASCII. Lines come from the loaded buffer, else from the file.

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1

--- The byte offset of column `index` (in `encoding`) of `line`, clamped to the line.
---@param line string
---@param encoding string
---@param index integer
---@return integer
local function to_byte(line, encoding, index)
  if encoding == "utf-8" then return math.min(index, #line) end
  if has_011 then return vim.str_byteindex(line, encoding, index, false) end
  local ok, byte = pcall(vim.str_byteindex, line, index, encoding == "utf-16")
  return ok and byte or #line
end

--- The column (in `encoding`) of byte offset `byte` of `line`.
---@param line string
---@param encoding string
---@param byte integer
---@return integer
function M.column(line, encoding, byte)
  if encoding == "utf-8" then return byte end
  if has_011 then return vim.str_utfindex(line, encoding, byte, false) end
  local ok, utf32, utf16 = pcall(vim.str_utfindex, line, byte)
  if not ok then return byte end
  return encoding == "utf-16" and utf16 or utf32
end

---@alias agentls.LineOf fun(row: integer): string  a file's line by 0-based row ("" past its end)

--- A position from one encoding to another.
---@param position { line: integer, character: integer }
---@param line_of agentls.LineOf
---@param from? string  nil: utf-16, LSP's default
---@param to? string
---@return { line: integer, character: integer }
function M.position(position, line_of, from, to)
  from, to = from or "utf-16", to or "utf-16"
  if from == to then return position end
  local line = line_of(position.line)
  return { line = position.line, character = M.column(line, to, to_byte(line, from, position.character)) }
end

---@param range { start: table, ["end"]: table }
---@param line_of agentls.LineOf
---@param from? string
---@param to? string
---@return table
function M.range(range, line_of, from, to)
  return { start = M.position(range.start, line_of, from, to), ["end"] = M.position(range["end"], line_of, from, to) }
end

---@class agentls.LineSource  the lines of files, each file read once
---@field files table<string, string[]>
local LineSource = {}
LineSource.__index = LineSource

--- A line reader for one request (a file read from disk is kept for the next location).
---@return agentls.LineSource
function M.lines()
  return setmetatable({ files = {} }, LineSource)
end

--- The line getter of a `file://` URI: its buffer's text when loaded, else the file's.
---@param uri string
---@return agentls.LineOf
function LineSource:of(uri)
  local ok, fname = pcall(vim.uri_to_fname, uri)
  if not ok then return function() return "" end end
  local bufnr = vim.fn.bufnr(fname)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then
    return function(row) return vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or "" end
  end
  if not self.files[fname] then
    local read_ok, text = pcall(vim.fn.readfile, fname)
    self.files[fname] = read_ok and text or {}
  end
  local file = self.files[fname]
  return function(row) return file[row + 1] or "" end
end

return M
