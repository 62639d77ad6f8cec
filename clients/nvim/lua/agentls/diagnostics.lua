-- The daemon's `agent/diagnostics {uri}`: what vim.diagnostic holds for that file (every
-- language server and linter feeding it), as LSP Diagnostics, and whether anything looks
-- at the file at all (`watched`: when nothing does, the daemon does not wait after an edit
-- for errors that will never come).

local M = {}

-- A language server other than agentls that serves this buffer, or would once the file's
-- type is known (a running server whose filetypes include it).
local function served(bufnr, filetype)
  for _, client in ipairs(vim.lsp.get_clients()) do
    if client.name ~= "agentls" then
      if bufnr ~= -1 and vim.lsp.buf_is_attached(bufnr, client.id) then return true end
      local types = client.config.filetypes
      if filetype and filetype ~= "" and types and vim.tbl_contains(types, filetype) then return true end
    end
  end
  return false
end

function M.for_uri(uri)
  local fname = vim.uri_to_fname(uri)
  local bufnr = vim.fn.bufnr(fname)
  local filetype = bufnr ~= -1 and vim.bo[bufnr].filetype or vim.filetype.match({ filename = fname })
  local found = bufnr ~= -1 and vim.diagnostic.get(bufnr) or {}
  local items = {}
  for _, d in ipairs(found) do
    table.insert(items, {
      range = {
        start = { line = d.lnum, character = d.col },
        ["end"] = { line = d.end_lnum or d.lnum, character = d.end_col or d.col },
      },
      severity = d.severity,
      message = d.message,
      source = d.source,
      code = d.code,
    })
  end
  -- Diagnostics already there say something feeds them (a linter without a server too).
  return { diagnostics = items, watched = #items > 0 or served(bufnr, filetype) }
end

return M
