-- Options of require("agentls").setup(), merged over these defaults.

local M = {}

M.defaults = {
  -- The daemon: the `agentls` on PATH (pipx install /path/to/agentls), over stdio.
  cmd = { "agentls", "--stdio" },
  -- Join a running `agentls --tcp` instead of spawning `cmd`: "discover" (the newest live
  -- discovery file of this user) or a discovery file's path (".../agentls-<uid>/tcp-<pid>.json").
  connect = nil,
  -- Passed as initializationOptions; nil leaves the daemon's own settings.
  provider = nil,
  model = nil,
  base_url = nil,
  permission_mode = nil,
  -- A scripted-model file (offline trials and tests).
  script = nil,
  -- More agent/newSession params, e.g. { maxTurns = 50, appendSystemPrompt = "…" }.
  session = {},
  -- A buffer's project root is the nearest folder holding one of these, else the cwd.
  root_markers = { ".git", ".agentls", "pyproject.toml", "package.json", "Cargo.toml", "go.mod" },
  chat = {
    -- "right", "left", "below" or "float".
    position = "right",
    -- Columns (or a fraction of the editor) for a side split, lines for "below".
    size = 0.4,
    -- Open the chat when :AgentAsk sends a message.
    open_on_ask = true,
    -- Highlight the whole chat with treesitter's markdown parser (Neovim 0.10 and later ship
    -- it). Off by default: re-parsing while an answer streams doubles Neovim's CPU and
    -- triples typing latency (bench/bench_nvim.py). A plan is highlighted by it either way.
    treesitter = false,
    -- A tool call's card starts with the icon of its kind; set any of them (a Nerd Font's
    -- glyphs, say), e.g. { read = "R", execute = ">" }; a kind set to false has none.
    -- Kinds: read, edit, delete, move, search, execute, think, fetch, other.
    tool_icons = {},
  },
  history = {
    -- Sessions per page of :AgentSessions (a "More…" entry asks for the next page).
    session_page = 50,
    -- Messages a resumed chat shows at first; :AgentEarlier draws the page before them.
    message_page = 200,
  },
  -- Neovim closed while a turn ran: the next start in that root resumes the session and
  -- shows the turn going on (see :help agentls-reattach).
  reattach = true,
  -- In the chat's prompt, `@` (a mention) and `/` (a slash command, at the start) open the
  -- completion menu by themselves; false leaves it to <C-x><C-o>.
  auto_complete = true,
  -- Write the buffers the agent edits (`:update` semantics), so disk and buffer agree.
  save_edits = true,
  -- Milliseconds editor state waits for the cursor to rest before it is sent.
  debounce_ms = 150,
  keymaps = {
    -- Global (normal mode); false turns one off.
    toggle = "<leader>aa",
    ask = "<leader>aq",
    -- Global (normal mode): answer the pending permission from any window, then one of
    -- the keys below (`<leader>ap` then `y`); :AgentPermission does the same.
    permission = "<leader>ap",
    -- In the chat buffer, while a permission is asked (otherwise they do what they did).
    allow_once = "y",
    allow_always = "a",
    reject_once = "n",
    reject_always = "d",
    view_diff = "v",
    abort = "<C-c>",
    -- In the chat buffer, on a user message (or the answer under it): rewind to before it,
    -- fork a new chat from it, show the files its turn changed.
    rewind = "<leader>ar",
    fork = "<leader>af",
    changes = "<leader>ac",
    -- Visual mode: :AgentEdit on the selection (an instruction asked for).
    inline_edit = "<leader>ae",
    -- In a buffer reviewing an inline edit's proposal (see :help agentls-inline-edit).
    inline_review = { accept = "ca", reject = "cr", accept_all = "cA", reject_all = "cR", next = "]h", prev = "[h" },
  },
}

M.options = vim.deepcopy(M.defaults)

function M.set(opts)
  M.options = vim.tbl_deep_extend("force", vim.deepcopy(M.defaults), opts or {})
  return M.options
end

--- The daemon's initializationOptions from the options.
function M.init_options()
  local o = M.options
  local init = {}
  if o.provider then init.provider = o.provider end
  if o.model then init.model = o.model end
  if o.permission_mode then init.permissionMode = o.permission_mode end
  if o.script then init.script = o.script end
  if o.base_url then
    init[o.provider == "anthropic" and "anthropicBaseUrl" or "openaiBaseUrl"] = o.base_url
  end
  return init
end

return M
