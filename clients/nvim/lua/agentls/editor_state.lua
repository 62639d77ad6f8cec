-- agent/didChangeEditorState: the current file, cursor and visual selection, sent when the
-- cursor rests (debounced), and only for file buffers of the daemon's root.

local client_mod = require("agentls.client")
local config = require("agentls.config")

local M = {}

local timer = nil
local has_011 = vim.fn.has("nvim-0.11") == 1

--- A byte column of `line` as a character in the client's position encoding.
local function column(line, byte_col, encoding)
  byte_col = math.min(byte_col, #line)
  if encoding == "utf-8" then return byte_col end
  if has_011 then
    return vim.str_utfindex(line, encoding, byte_col, false)
  end
  local utf32, utf16 = vim.str_utfindex(line, byte_col)
  return encoding == "utf-16" and utf16 or utf32
end

local function position(bufnr, row, byte_col, encoding)
  local line = vim.api.nvim_buf_get_lines(bufnr, row, row + 1, false)[1] or ""
  return { line = row, character = column(line, byte_col, encoding) }
end

--- The selection (visual mode) or the cursor, as an LSP range.
local function selection(bufnr, encoding)
  local mode = vim.api.nvim_get_mode().mode
  local cursor = vim.api.nvim_win_get_cursor(0)
  if mode:match("^[vV\22]") then
    local other = vim.fn.getpos("v")
    local a = { other[2] - 1, other[3] - 1 }
    local b = { cursor[1] - 1, cursor[2] }
    if a[1] > b[1] or (a[1] == b[1] and a[2] > b[2]) then a, b = b, a end
    if mode == "V" then
      a[2] = 0
      b = { b[1] + 1, 0 }
    else
      b[2] = b[2] + 1
    end
    return { start = position(bufnr, a[1], a[2], encoding), ["end"] = position(bufnr, b[1], b[2], encoding) }
  end
  local here = position(bufnr, cursor[1] - 1, cursor[2], encoding)
  return { start = here, ["end"] = here }
end

local function send()
  local bufnr = vim.api.nvim_get_current_buf()
  local root = client_mod.root_of(bufnr)
  if not client_mod.is_root_file(bufnr, root) then return end
  for _, client in ipairs(client_mod.all()) do
    if client.config.root_dir == root then
      local encoding = client.offset_encoding or "utf-16"
      local first, last = vim.fn.line("w0") - 1, vim.fn.line("w$")
      client_mod.notify(client, "agent/didChangeEditorState", {
        activeUri = vim.uri_from_bufnr(bufnr),
        selections = { selection(bufnr, encoding) },
        visibleRanges = { { start = { line = first, character = 0 }, ["end"] = { line = last, character = 0 } } },
      })
    end
  end
end

function M.schedule()
  if timer then timer:stop() else timer = vim.uv.new_timer() end
  timer:start(config.options.debounce_ms, 0, vim.schedule_wrap(send))
end

--- Send at once (tests and :AgentAsk, so the next message carries the latest state).
function M.flush()
  if timer then timer:stop() end
  send()
end

return M
