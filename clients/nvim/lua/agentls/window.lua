-- The chat on screen: its buffer in a split (or a float) with a prompt buffer under it.

local config = require("agentls.config")

local M = {}

-- Root -> prompt buffer.
local prompts = {}

local function size(total)
  local value = config.options.chat.size
  return value < 1 and math.floor(total * value) or value
end

local function prompt_buffer(root)
  local bufnr = prompts[root]
  if bufnr and vim.api.nvim_buf_is_valid(bufnr) then return bufnr end
  bufnr = vim.api.nvim_create_buf(false, true)
  vim.bo[bufnr].buftype = "prompt"
  vim.bo[bufnr].bufhidden = "hide"
  vim.bo[bufnr].swapfile = false
  vim.fn.prompt_setprompt(bufnr, "❯ ")
  vim.b[bufnr].agentls_root = root
  -- <C-x><C-o> (or <C-x><C-u>) completes the session's slash commands after a leading /,
  -- and mentions after an @ (mentions.lua).
  vim.bo[bufnr].omnifunc = "v:lua.require'agentls.window'.complete"
  vim.bo[bufnr].completefunc = "v:lua.require'agentls.window'.complete"
  vim.fn.prompt_setcallback(bufnr, function(text)
    if vim.trim(text) ~= "" then require("agentls").ask(text, { root = root }) end
  end)
  require("agentls.mentions").attach(bufnr, root)
  require("agentls.prompt_menu").attach(bufnr)
  -- What is typed here is a message, not a file: it never holds up :qa (E37/E162).
  vim.api.nvim_create_autocmd({ "TextChanged", "TextChangedI", "TextChangedP", "BufLeave" }, {
    buffer = bufnr,
    callback = function() vim.bo[bufnr].modified = false end,
  })
  vim.keymap.set({ "n", "i" }, config.options.keymaps.abort or "<C-c>", function()
    require("agentls").abort(root)
  end, { buffer = bufnr, desc = "agentls: stop the turn" })
  prompts[root] = bufnr
  return bufnr
end

-- The column where the @ mention being completed starts (0-based), between the two calls.
local mention_start

--- The completion function of the prompt: the session's slash commands (`available_commands`)
--- when the text so far is `/` and a command name, a mention after an `@`.
---@param findstart integer
---@param base string
---@return integer|table[]  the start column, or the matches
function M.complete(findstart, base)
  local line = vim.api.nvim_get_current_line()
  local prompt = vim.fn.prompt_getprompt(vim.api.nvim_get_current_buf())
  local text = line:sub(#prompt + 1)
  if findstart == 1 then
    -- Where the mention starts, for the second call (the line may hold less by then).
    mention_start = require("agentls.mentions").start(line, vim.fn.col(".") - 1)
    if mention_start and mention_start >= #prompt then return mention_start end
    if not text:match("^/[%w_:%-]*$") then return -3 end
    return #prompt
  end
  if vim.startswith(base, "@") and mention_start then
    return require("agentls.mentions").complete(vim.b.agentls_root, base, mention_start)
  end
  local chat = require("agentls.chat").get(vim.b.agentls_root, false)
  local items = {}
  for _, command in ipairs(chat and chat.commands or {}) do
    local word = "/" .. command.name
    if vim.startswith(word, base) then
      -- The menu says what it does (a skill's description is all a user knows of it).
      local menu = command.argumentHint and (command.argumentHint .. "  " .. command.description) or command.description
      table.insert(items, { word = word, kind = command.source, menu = menu, info = command.description })
    end
  end
  return items
end

-- What the chat's and the prompt's status lines say (instead of their buffer names).
M.PROMPT_STATUS = " Enter sends · /: commands · @: mentions"

--- The chat window's winbar: the session's permission mode, `plan` in its own colour.
---@return string
function M.chat_winbar()
  local chat = require("agentls.chat").get(vim.b.agentls_root, false)
  local mode = chat and chat.mode or "?"
  local group = mode == "plan" and "AgentlsModePlan" or "AgentlsMode"
  return ("%%#%s# ● %s mode"):format(group, mode)
end

---@return string
function M.chat_status()
  local line = require("agentls").statusline()
  return " " .. (line ~= "" and line or "agentls")
end

local function style(win, chat_window)
  vim.wo[win].fillchars = "fold: ,eob: "
  vim.wo[win].statusline = chat_window and "%{v:lua.require'agentls.window'.chat_status()}" or M.PROMPT_STATUS
  vim.wo[win].wrap = true
  vim.wo[win].linebreak = true
  vim.wo[win].number = false
  vim.wo[win].relativenumber = false
  vim.wo[win].winfixwidth = true
  if chat_window then
    vim.wo[win].winbar = "%{%v:lua.require'agentls.window'.chat_winbar()%}"
    vim.wo[win].signcolumn = "yes:1"
    -- Tool output and thinking fold away (their lines start with │ or ┊) when they are
    -- two lines or more: a fold of one line would hide it for nothing.
    vim.wo[win].foldmethod = "expr"
    vim.wo[win].foldexpr = "v:lua.require'agentls.window'.fold_level(v:lnum)"
    vim.wo[win].foldlevel = 0
    vim.wo[win].foldtext = "v:lua.require'agentls.window'.fold_text()"
  end
end

-- Tool output and thinking.
local FOLDED = require("agentls.lines").FOLDED_PREFIXES

--- 'foldexpr' of the chat: 1 for a line of a run of two or more output or thinking lines.
---@param lnum integer
---@return integer
function M.fold_level(lnum)
  local function folded(n)
    local line = vim.fn.getline(n)
    return vim.startswith(line, FOLDED[1]) or vim.startswith(line, FOLDED[2])
  end
  if not folded(lnum) then return 0 end
  return (folded(lnum - 1) or folded(lnum + 1)) and 1 or 0
end

---@return string
function M.fold_text()
  return "  ⋯ " .. require("agentls.text").count(vim.v.foldend - vim.v.foldstart + 1, "line")
end

--- The window showing a root's chat, if any.
---@param chat agentls.Chat
---@return integer|nil
function M.find(chat)
  return vim.fn.win_findbuf(chat.buffer.bufnr)[1]
end

--- Show the chat without taking the cursor from where it is.
---@param chat agentls.Chat
---@return integer win
function M.open(chat)
  local win = M.find(chat)
  if win then return win end
  local from = vim.api.nvim_get_current_win()
  local position = config.options.chat.position
  local bufnr = chat.buffer.bufnr
  local prompt_cfg = nil
  if position == "float" then
    local width, height = math.floor(vim.o.columns * 0.7), math.floor(vim.o.lines * 0.7) - 4
    local row, col = math.floor((vim.o.lines - height) / 2) - 3, math.floor((vim.o.columns - width) / 2)
    win = vim.api.nvim_open_win(bufnr, false, {
      relative = "editor",
      width = width,
      height = height,
      row = row,
      col = col,
      border = "rounded",
      title = " agentls ",
    })
    -- A float cannot be split: the prompt is a float of its own just under it.
    prompt_cfg = { relative = "editor", width = width, height = 3, row = row + height + 2, col = col, border = "rounded" }
  else
    local split = position == "below" and "below" or position == "left" and "left" or "right"
    local cfg = { split = split, win = -1 }
    if split == "below" then cfg.height = size(vim.o.lines) else cfg.width = size(vim.o.columns) end
    win = vim.api.nvim_open_win(bufnr, false, cfg)
  end
  style(win, true)
  local count = vim.api.nvim_buf_line_count(bufnr)
  vim.api.nvim_win_set_cursor(win, { count, 0 })
  -- The prompt area at the bottom of the chat.
  local prompt = prompt_buffer(chat.root)
  local prompt_win = vim.api.nvim_open_win(prompt, false, prompt_cfg or { split = "below", win = win, height = 3 })
  style(prompt_win, false)
  vim.w[prompt_win].agentls_prompt = true
  if vim.api.nvim_win_is_valid(from) then vim.api.nvim_set_current_win(from) end
  -- A request asked while the chat was hidden: its choices to this window's width.
  require("agentls.chat").relayout()
  return win
end

--- Close the chat's windows and its prompt's.
---@param chat agentls.Chat
function M.close(chat)
  chat.opened_for_permission = nil
  for _, win in ipairs(vim.fn.win_findbuf(chat.buffer.bufnr)) do pcall(vim.api.nvim_win_close, win, false) end
  local prompt = prompts[chat.root]
  if prompt then
    for _, win in ipairs(vim.fn.win_findbuf(prompt)) do pcall(vim.api.nvim_win_close, win, false) end
  end
end

--- :Agent: open the chat with the cursor in its prompt; close it from the chat or prompt;
--- from another window, go to the prompt of the chat already open.
---@param chat agentls.Chat
function M.toggle(chat)
  local current = vim.api.nvim_get_current_buf()
  local inside = current == chat.buffer.bufnr or current == prompts[chat.root]
  if M.find(chat) and inside then
    M.close(chat)
  else
    M.focus_prompt(chat.root)
  end
end

--- Put the cursor in the prompt, in insert mode.
---@param root? string
function M.focus_prompt(root)
  local chat = require("agentls.chat").get(root, true)
  root = chat.root
  chat.opened_for_permission = nil -- the user's own now: its keys answer
  M.open(chat)
  local prompt = prompt_buffer(root)
  local win = vim.fn.win_findbuf(prompt)[1]
  if win then
    vim.api.nvim_set_current_win(win)
    vim.cmd.startinsert({ bang = true })
  end
end

--- Put `text` in the root's prompt to edit and send (a fork's "edit and resend"); the
--- prompt is one line, so the text's lines are joined by spaces.
---@param root string
---@param text string
function M.set_prompt(root, text)
  local prompt = prompt_buffer(root)
  local line = vim.fn.prompt_getprompt(prompt) .. text:gsub("\n", " ")
  vim.api.nvim_buf_set_lines(prompt, -2, -1, false, { line })
  local win = vim.fn.win_findbuf(prompt)[1]
  if win then
    vim.api.nvim_set_current_win(win)
    vim.api.nvim_win_set_cursor(win, { vim.api.nvim_buf_line_count(prompt), #line })
  end
end

local group = vim.api.nvim_create_augroup("agentls-window", { clear = true })
-- A resized window lays its pending permission's choices out again.
vim.api.nvim_create_autocmd({ "WinResized", "VimResized" }, {
  group = group,
  callback = function() require("agentls.chat").relayout() end,
})
-- A chat written during insert mode has stale folds (its tool output unfolded): when insert
-- mode ends, its windows compute them again (keeping the ones the user opened).
vim.api.nvim_create_autocmd("InsertLeave", {
  group = group,
  callback = function()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      local bufnr = vim.api.nvim_win_get_buf(win)
      if vim.b[bufnr].agentls_folds_stale and vim.wo[win].foldmethod == "expr" then
        vim.wo[win].foldexpr = vim.wo[win].foldexpr
      end
    end
    for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
      if vim.b[bufnr].agentls_folds_stale then vim.b[bufnr].agentls_folds_stale = nil end
    end
  end,
})
-- :q and :qa decide on unsaved changes after this: a half-typed message is not one.
vim.api.nvim_create_autocmd({ "QuitPre", "ExitPre" }, {
  group = group,
  callback = function()
    for _, bufnr in pairs(prompts) do
      if vim.api.nvim_buf_is_valid(bufnr) then vim.bo[bufnr].modified = false end
    end
  end,
})

return M
