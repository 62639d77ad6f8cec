-- The prompt's completion menu opening by itself (as Claude Code's input does): typing an
-- `@` that starts a word, or a `/` that starts the prompt, opens the menu of mentions or of
-- slash commands (window.complete), which goes on narrowing as the word is typed. Nothing
-- is inserted until an item is chosen (<C-n>/<C-p> then <CR>, or <C-y>): the prompt's own
-- 'completeopt' has noinsert,noselect; the user's global value is left as it is.
-- `auto_complete = false` in the options keeps the menu to <C-x><C-o>.

local M = {}

local OMNI = vim.api.nvim_replace_termcodes("<C-x><C-o>", true, false, true)

--- Whether the text before the cursor is a word the menu completes: a mention, or a slash
--- command at the start of the prompt.
---@param line string
---@param col integer  the cursor's byte column (0-based)
---@param prompt string  the prompt's prefix ("❯ ")
---@return boolean
function M.wants_menu(line, col, prompt)
  if col <= #prompt then return false end
  local start = require("agentls.mentions").start(line, col)
  if start and start >= #prompt then return true end
  return line:sub(#prompt + 1, col):match("^/[%w_:%-]*$") ~= nil and col == #line
end

--- Open the menu by itself in the prompt buffer `bufnr`.
---@param bufnr integer
function M.attach(bufnr)
  if not require("agentls.config").options.auto_complete then return end
  vim.bo[bufnr].completeopt = "menuone,noinsert,noselect"
  -- <CR> on an item chosen with <C-n> takes it (Vim's own would take it and send the
  -- message); with none chosen it sends what was typed.
  vim.keymap.set("i", "<CR>", function()
    local chosen = vim.fn.pumvisible() == 1 and vim.fn.complete_info({ "selected" }).selected ~= -1
    return chosen and "<C-y>" or "<CR>"
  end, { buffer = bufnr, expr = true, desc = "agentls: take the chosen item, or send" })
  -- The line as it was when a completion ended: the same line does not open it again.
  local done_line
  vim.api.nvim_create_autocmd("CompleteDone", {
    buffer = bufnr,
    callback = function() done_line = vim.api.nvim_get_current_line() end,
  })
  -- TextChangedI comes once the typeahead is empty: text typed (or pasted) fast opens the
  -- menu once, for the word the cursor ends up in.
  vim.api.nvim_create_autocmd("TextChangedI", {
    buffer = bufnr,
    callback = function()
      local line = vim.api.nvim_get_current_line()
      if line == done_line or vim.fn.pumvisible() == 1 or vim.fn.mode() ~= "i" then return end
      done_line = nil
      local prompt = vim.fn.prompt_getprompt(bufnr)
      if M.wants_menu(line, vim.fn.col(".") - 1, prompt) then vim.api.nvim_feedkeys(OMNI, "n", false) end
    end,
  })
end

return M
