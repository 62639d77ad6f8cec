-- @ mentions in the chat's prompt. `@` then <C-x><C-o> completes the project's files and
-- folders, `@problems` (the open files' diagnostics) and `@problems:<file>`, symbols (the
-- other language servers' workspace/symbol) and the project's other sessions; when the
-- message is sent, each mention still in its text becomes an attachment ({uri, range?,
-- name?}: a file or folder's file:// URI, a symbol's file and range, agentls:diagnostics
-- [?uri=…], agentls:session/<id>). A path, `@problems…` or `@session:<id>` typed by hand
-- resolves too.

local M = {}

local CACHE_MS = 10000
local MAX_FILES = 20000
local MAX_ITEMS = 100
local MAX_SYMBOLS = 50
local SLUG_CHARS = 40

---@class agentls.Mention  a completion candidate
---@field label string      what follows the @
---@field kind string       file, folder, problems, symbol or session
---@field menu? string
---@field attachment table  what the message attaches for it

-- Root -> { at, mentions }: the project's files and folders (git ls-files, else a walk).
local listings = {}
-- Root -> { at, mentions }: the project's other sessions.
local sessions = {}
-- Root -> query -> the symbols found for it.
local symbols = {}
-- Root -> label -> attachment: what was completed for the message being written.
local picked = {}
-- A list of mentions -> its labels for matchfuzzy (gone with the list).
local label_index = setmetatable({}, { __mode = "k" })

--- Percent-encoding of everything but RFC 3986's unreserved characters.
---@param text string
---@return string
function M.encode(text)
  return (text:gsub("[^%w%-%._~]", function(c) return ("%%%02X"):format(c:byte()) end))
end

---@param path string
---@param root string
---@return string
local function relative(path, root)
  if vim.startswith(path, root .. "/") then return path:sub(#root + 2) end
  return path
end

---@param root string
---@return string[]  file paths relative to root
local function project_files(root)
  local files = {}
  local ok, done = pcall(function()
    return vim.system({ "git", "ls-files", "-co", "--exclude-standard" }, { cwd = root, text = true }):wait(3000)
  end)
  if ok and done.code == 0 then
    for line in done.stdout:gmatch("[^\n]+") do
      if #files >= MAX_FILES then break end
      table.insert(files, line)
    end
    return files
  end
  -- Not a repository: a walk that skips hidden folders and node_modules.
  local skip = function(name) return not name:match("^%.") and name ~= "node_modules" end
  for name, kind in vim.fs.dir(root, { depth = 8, skip = skip }) do
    if #files >= MAX_FILES then break end
    if kind == "file" then table.insert(files, name) end
  end
  return files
end

--- The project's files and folders as mentions (cached for a few seconds).
---@param root string
---@return agentls.Mention[]
local function files_and_folders(root)
  local cached = listings[root]
  if cached and vim.uv.now() - cached.at < CACHE_MS then return cached.mentions end
  local files, folders, seen = {}, {}, {}
  for _, path in ipairs(project_files(root)) do
    local uri = vim.uri_from_fname(root .. "/" .. path)
    table.insert(files, { label = path, kind = "file", attachment = { uri = uri } })
    local folder = vim.fs.dirname(path)
    while folder and folder ~= "." and folder ~= "" and not seen[folder] do
      seen[folder] = true
      table.insert(folders, { label = folder .. "/", kind = "folder", attachment = { uri = vim.uri_from_fname(root .. "/" .. folder) } })
      folder = vim.fs.dirname(folder)
    end
  end
  table.sort(folders, function(a, b) return a.label < b.label end)
  local mentions = vim.list_extend(folders, files)
  listings[root] = { at = vim.uv.now(), mentions = mentions }
  return mentions
end

--- `@problems`, then `@problems:<file>` for each file of the root with diagnostics now.
---@param root string
---@return agentls.Mention[]
local function problems(root)
  local all = { label = "problems", kind = "problems", menu = "the open files' problems", attachment = { uri = "agentls:diagnostics", name = "problems" } }
  local out = { all }
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    local count = #vim.diagnostic.get(bufnr)
    local name = vim.api.nvim_buf_get_name(bufnr)
    if count > 0 and vim.startswith(name, root .. "/") then
      table.insert(out, {
        label = "problems:" .. relative(name, root),
        kind = "problems",
        menu = require("agentls.text").count(count, "problem"),
        attachment = { uri = "agentls:diagnostics?uri=" .. M.encode(vim.uri_from_fname(name)) },
      })
    end
  end
  return out
end

--- A session title as a word: lower case, dashes, short.
---@param title string
---@return string
function M.slug(title)
  local slug = title:lower():gsub("[^%w]+", "-"):gsub("^%-+", ""):sub(1, SLUG_CHARS):gsub("%-+$", "")
  return slug
end

--- agent/listSessions's sessions of the root (but the chat's own) as mentions.
---@param list table[]  SessionInfo
---@param own string  the chat's session id
---@return agentls.Mention[]
function M.session_mentions(list, own)
  local out, used = {}, {}
  for _, info in ipairs(list) do
    if info.sessionId ~= own and info.title ~= "" then
      local slug = M.slug(info.title)
      if slug == "" or used[slug] then slug = slug .. "-" .. info.sessionId:sub(-6) end
      used[slug] = true
      table.insert(out, {
        label = "session:" .. slug,
        kind = "session",
        menu = ("%s (%s)"):format(info.title, require("agentls.text").count(info.turns, "turn")),
        attachment = { uri = "agentls:session/" .. info.sessionId, name = info.title },
      })
    end
  end
  return out
end

--- A symbol's range as whole lines (a server may give only its name's range): the model
--- reads the lines it is declared on.
---@param range table
---@param line_of agentls.LineOf
---@param encoding? string  agentls's
---@return table
local function whole_lines(range, line_of, encoding)
  local last = line_of(range["end"].line)
  local length = require("agentls.positions").column(last, encoding or "utf-16", #last)
  return { start = { line = range.start.line, character = 0 }, ["end"] = { line = range["end"].line, character = length } }
end

--- workspace/symbol answers as mentions: a symbol is the lines of its file it is on, named.
---@param found table[]  SymbolInformation | WorkspaceSymbol, in agentls's encoding
---@param root string
---@param encoding? string  agentls's position encoding
---@return agentls.Mention[]
function M.symbol_mentions(found, root, encoding)
  local lines = require("agentls.positions").lines()
  local out = {}
  for _, symbol in ipairs(found) do
    local location = symbol.location or {}
    if #out >= MAX_SYMBOLS then break end
    if type(location.uri) == "string" and vim.startswith(location.uri, "file://") then
      local path = relative(vim.uri_to_fname(location.uri), root)
      local kind = vim.lsp.protocol.SymbolKind[symbol.kind] or "symbol"
      local line = location.range and (":" .. (location.range.start.line + 1)) or ""
      table.insert(out, {
        label = symbol.name,
        kind = "symbol",
        menu = ("%s %s%s"):format(kind, path, line),
        attachment = { uri = location.uri, range = location.range and whole_lines(location.range, lines:of(location.uri), encoding), name = symbol.name },
      })
    end
  end
  return out
end

--- The mentions matching `query` (fuzzy; all of them, capped, for an empty query).
---@param mentions agentls.Mention[]
---@param query string
---@return agentls.Mention[]
local function matching(mentions, query)
  if query == "" then return vim.list_slice(mentions, 1, MAX_ITEMS) end
  -- Labels only cross into Vim's matchfuzzy (a project's thousands of tables would not),
  -- indexed once per list.
  local index = label_index[mentions]
  if not index then
    index = { labels = {}, by_label = {} }
    for _, mention in ipairs(mentions) do
      if not index.by_label[mention.label] then
        index.by_label[mention.label] = mention
        table.insert(index.labels, mention.label)
      end
    end
    label_index[mentions] = index
  end
  local found = vim.fn.matchfuzzy(index.labels, query, { limit = MAX_ITEMS })
  return vim.tbl_map(function(label) return index.by_label[label] end, found)
end

--- Every mention known now for `query`: problems, symbols, sessions, folders and files.
---@param root string
---@param query string
---@return agentls.Mention[]
function M.candidates(root, query)
  local out = matching(problems(root), query)
  vim.list_extend(out, (symbols[root] or {})[query] or {})
  vim.list_extend(out, matching(sessions[root] and sessions[root].mentions or {}, query))
  return vim.list_extend(out, matching(files_and_folders(root), query))
end

--- Complete-items of Vim's completion for mentions.
---@param mentions agentls.Mention[]
---@return table[]
local function items(mentions)
  return vim.tbl_map(function(m)
    return { word = "@" .. m.label, kind = m.kind, menu = m.menu, dup = 1, user_data = { agentls_mention = m.attachment } }
  end, mentions)
end

--- Ask for what only comes asynchronously (symbols for this query, the sessions), then
--- call `on_new()` if anything new came.
---@param root string
---@param query string
---@param on_new fun()
local function fetch(root, query, on_new)
  local chat = require("agentls.chat").get(root, false)
  local own = chat and chat:client()
  if not own then return end
  if query ~= "" and not (symbols[root] or {})[query] then
    require("agentls.navigation").find_symbols(query, own, function(found)
      symbols[root] = symbols[root] or {}
      symbols[root][query] = M.symbol_mentions(found, root, own.offset_encoding)
      if #symbols[root][query] > 0 then on_new() end
    end)
  end
  local listed = sessions[root]
  if not listed or vim.uv.now() - listed.at > CACHE_MS then
    sessions[root] = { at = vim.uv.now(), mentions = listed and listed.mentions or {} }
    require("agentls.client").request(own, "agent/listSessions", { cwd = root, limit = 50 }, function(err, result)
      if err or not result then return end
      sessions[root].mentions = M.session_mentions(result.sessions, chat.session_id)
      if #sessions[root].mentions > 0 then on_new() end
    end)
  end
end

--- The start (0-based byte column) of the mention the cursor ends, or nil.
---@param line string
---@param col integer  the cursor's byte column (0-based)
---@return integer|nil
function M.start(line, col)
  local before = line:sub(1, col)
  local at = before:find("@[^%s@]*$")
  if not at or (at > 1 and not before:sub(at - 1, at - 1):match("%s")) then return nil end
  return at - 1
end

--- The completion of `@base` in the root's prompt (see window.complete): what is known now,
--- and the menu again when symbols or sessions arrive while it is still being typed.
---@param root string
---@param base string  "@" and what follows
---@param start integer  where the mention starts (0-based)
---@return table
function M.complete(root, base, start)
  local query = base:sub(2)
  local bufnr = vim.api.nvim_get_current_buf()
  fetch(root, query, function()
    if vim.api.nvim_get_current_buf() ~= bufnr or vim.fn.mode() ~= "i" then return end
    -- Still in the same mention (the menu may have put its first match there meanwhile).
    if M.start(vim.api.nvim_get_current_line(), vim.fn.col(".") - 1) ~= start then return end
    vim.fn.complete(start + 1, items(M.candidates(root, query)))
  end)
  return { words = items(M.candidates(root, query)), refresh = "always" }
end

--- Remember what the prompt's completion picked (its label stands for it when sent).
---@param bufnr integer  the prompt buffer
---@param root string
function M.attach(bufnr, root)
  vim.api.nvim_create_autocmd("CompleteDone", {
    buffer = bufnr,
    callback = function()
      local item = vim.v.completed_item
      local data = type(item) == "table" and type(item.user_data) == "table" and item.user_data.agentls_mention
      if data then
        picked[root] = picked[root] or {}
        picked[root][item.word:sub(2)] = data
      end
    end,
  })
end

--- What `@label` stands for: a completed mention, else problems, a session id, a path.
---@param label string
---@param root string
---@return table|nil
local function resolve(label, root)
  local known = (picked[root] or {})[label]
  if known then return known end
  if label == "problems" then return { uri = "agentls:diagnostics", name = "problems" } end
  local file = label:match("^problems:(.+)$")
  if file then
    local path = vim.fs.normalize(vim.startswith(file, "/") and file or (root .. "/" .. file))
    return { uri = "agentls:diagnostics?uri=" .. M.encode(vim.uri_from_fname(path)) }
  end
  local id = label:match("^session:(sess_%w+)$")
  if id then return { uri = "agentls:session/" .. id } end
  local path = vim.fs.normalize(vim.startswith(label, "/") and label or (root .. "/" .. label))
  path = path:gsub("/+$", "")
  if vim.uv.fs_stat(path) then return { uri = vim.uri_from_fname(path) } end
end

--- The attachments of a message's mentions, each once; the picks are then forgotten.
---@param text string
---@param root string
---@return table[]
function M.attachments(text, root)
  local found, seen = {}, {}
  for label in (" " .. text):gmatch("%s@([^%s]+)") do
    local attachment = resolve(label, root) or resolve((label:gsub("[,;.!?)]+$", "")), root)
    local key = attachment and (attachment.uri .. vim.inspect(attachment.range))
    if attachment and not seen[key] then
      seen[key] = true
      table.insert(found, attachment)
    end
  end
  picked[root] = nil
  return found
end

return M
