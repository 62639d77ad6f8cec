-- Treesitter's markdown highlighting for one piece of the chat (a plan), as extmarks: the
-- text is parsed once as a string, so the rest of the chat, which streams, is not re-parsed
-- on every write (a treesitter highlighter on the whole chat costs typing latency; see
-- `chat.treesitter`). Nothing happens when the markdown parser is not installed.

local M = {}

-- The chat writer's namespace: a chat emptied for the next session loses these too.
local ns = require("agentls.render").ns

-- Captures that are not colours.
local SKIP = { spell = true, nospell = true, conceal = true }

--- Highlight `text`, which the buffer holds verbatim from (row, 0), as markdown; false when
--- there is no parser (then the buffer's own syntax is all there is).
---@param bufnr integer
---@param row integer
---@param text string
---@return boolean
function M.highlight(bufnr, row, text)
  local ok, parser = pcall(vim.treesitter.get_string_parser, text, "markdown")
  if not ok or not parser then return false end
  local parsed = pcall(function() parser:parse(true) end)
  if not parsed then return false end
  parser:for_each_tree(function(tree, language_tree)
    local lang = language_tree:lang()
    local found, query = pcall(vim.treesitter.query.get, lang, "highlights")
    if not found or not query then return end
    for id, node in query:iter_captures(tree:root(), text, 0, -1) do
      local name = query.captures[id]
      if not SKIP[name] and not vim.startswith(name, "_") then
        local start_row, start_col, end_row, end_col = node:range()
        pcall(vim.api.nvim_buf_set_extmark, bufnr, ns, row + start_row, start_col, {
          end_row = row + end_row,
          end_col = end_col,
          hl_group = "@" .. name .. "." .. lang,
          priority = 90,
        })
      end
    end
  end)
  return true
end

return M
