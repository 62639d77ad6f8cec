-- The plugin's highlight groups, linked by default so a colour scheme can restyle any of them
-- (`:hi link AgentlsDiffAdd MyGreen`, or a scheme's own definitions win over `default`).

local M = {}

M.links = {
  AgentlsUser = "Title", -- "▍You" above your message
  AgentlsAgent = "Title", -- "▍agentls" above the answer
  AgentlsThinking = "Comment", -- the model's thinking
  AgentlsToolPending = "Comment",
  AgentlsToolRunning = "DiagnosticInfo",
  AgentlsToolDone = "DiagnosticOk",
  AgentlsToolFailed = "DiagnosticError",
  AgentlsToolDeclined = "DiagnosticWarn",
  AgentlsToolError = "DiagnosticError", -- a failed tool's output, never folded
  AgentlsToolKind = "Special", -- the icon of a tool call's kind ("≡" read, "$" execute, …)
  AgentlsToolLocation = "Directory", -- "@ src/app.py:12", a file the call touches
  AgentlsPermission = "WarningMsg", -- the title of a permission request
  AgentlsPermissionKey = "Special", -- "[y]" before each choice
  AgentlsAnswer = "MoreMsg", -- "→ Allow once" once answered
  AgentlsDiffAdd = "DiffAdd",
  AgentlsDiffDelete = "DiffDelete",
  AgentlsDiffHunk = "Comment", -- "@@ -1 +1 @@" and "new file"
  AgentlsFooter = "Comment", -- the end-of-turn line
  AgentlsFooterError = "ErrorMsg",
  AgentlsNoticeInfo = "MoreMsg",
  AgentlsNoticeWarning = "WarningMsg",
  AgentlsNoticeError = "ErrorMsg",
  AgentlsSpinner = "Comment",
  AgentlsReviewHint = "WarningMsg", -- the review tab's winbar
  AgentlsMode = "Title", -- the permission mode in the chat's winbar
  AgentlsModePlan = "WarningMsg", -- the mode while it is `plan`
  -- /context as a bar: one colour per part of the window, the free space dim.
  AgentlsContext1 = "DiagnosticInfo",
  AgentlsContext2 = "DiagnosticHint",
  AgentlsContext3 = "DiagnosticWarn",
  AgentlsContext4 = "DiagnosticOk",
  AgentlsContext5 = "Identifier",
  AgentlsContext6 = "Constant",
  AgentlsContextFree = "NonText",
}

--- Define the links (again after a `:colorscheme`, which clears them).
function M.define()
  for group, target in pairs(M.links) do
    vim.api.nvim_set_hl(0, group, { link = target, default = true })
  end
end

function M.setup()
  M.define()
  vim.api.nvim_create_autocmd("ColorScheme", {
    group = vim.api.nvim_create_augroup("agentls-highlights", { clear = true }),
    callback = M.define,
  })
end

return M
