-- The daemon's `agent/diagnostics {uri}`: what vim.diagnostic holds for that file (every
-- language server and linter feeding it), as LSP Diagnostics.

local M = {}

function M.for_uri(uri)
  local bufnr = vim.fn.bufnr(vim.uri_to_fname(uri))
  if bufnr == -1 then return { diagnostics = {} } end
  local items = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
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
  return { diagnostics = items }
end

return M
