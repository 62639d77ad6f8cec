-- Code navigation served by Neovim (agent/definition, agent/references,
-- agent/workspaceSymbols): the daemon's request is passed on to the other language servers
-- attached to the file's buffer (textDocument/definition, textDocument/references) or to
-- every running one (workspace/symbol), and their answers are merged. Each server counts
-- columns in its own position encoding and agentls in its own, so positions are converted
-- both ways on the line's text. No server that serves it: an empty answer.

local positions = require("agentls.positions")

local M = {}

local has_011 = vim.fn.has("nvim-0.11") == 1
-- Under the daemon's 5 s: what arrived by then is answered rather than nothing at all.
local ANSWER_MS = 4500
-- A buffer loaded for the request: the language servers it started may still initialize.
local ATTACH_MS = 3000

-- The daemon's method -> the LSP method the language servers serve.
M.METHODS = {
  ["agent/definition"] = "textDocument/definition",
  ["agent/references"] = "textDocument/references",
  ["agent/workspaceSymbols"] = "workspace/symbol",
}

---@param client vim.lsp.Client
---@param method string
---@param bufnr? integer
---@return boolean
local function supports(client, method, bufnr)
  if has_011 then return client:supports_method(method, bufnr) end
  return client.supports_method(method, { bufnr = bufnr })
end

--- The initialized language servers (agentls itself left out) serving `method` (for `bufnr`).
---@param method string
---@param bufnr? integer
---@param own_id integer  the agentls client that asked
---@return vim.lsp.Client[]
function M.servers(method, bufnr, own_id)
  local found = {}
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client.id ~= own_id and client.name ~= "agentls" and client.initialized and supports(client, method, bufnr) then
      table.insert(found, client)
    end
  end
  return found
end

--- Wait `ms` (or until `ready()`): the coroutine the request runs in yields meanwhile, so
--- Neovim goes on; outside one (an older Neovim), vim.wait.
---@param ms integer
---@param ready fun(): boolean
local function wait(ms, ready)
  local co = coroutine.running()
  if not co or not coroutine.isyieldable() then
    vim.wait(ms, ready, 20)
    return
  end
  local deadline = vim.uv.now() + ms
  while not ready() and vim.uv.now() < deadline do
    vim.defer_fn(function() coroutine.resume(co) end, 20)
    coroutine.yield()
  end
end

--- Send one request to each client; `on_done(answers)` once all answered or after `ms`
--- (ANSWER_MS by default) with the answers that came.
---@param clients vim.lsp.Client[]
---@param method string
---@param params_for fun(client: vim.lsp.Client): table
---@param bufnr? integer
---@param on_done fun(answers: { client: vim.lsp.Client, result: any }[])
---@param ms? integer
function M.request_all(clients, method, params_for, bufnr, on_done, ms)
  local answers, pending, done = {}, #clients, false
  local function finish()
    if done then return end
    done = true
    on_done(answers)
  end
  for _, client in ipairs(clients) do
    local handler = function(err, result)
      pending = pending - 1
      if not done and not err and result ~= nil and result ~= vim.NIL then table.insert(answers, { client = client, result = result }) end
      if pending <= 0 then finish() end
    end
    local ok
    if has_011 then
      ok = client:request(method, params_for(client), handler, bufnr)
    else
      ok = client.request(method, params_for(client), handler, bufnr)
    end
    if not ok then pending = pending - 1 end
  end
  if pending <= 0 then return finish() end
  vim.defer_fn(finish, ms or ANSWER_MS)
end

--- request_all, waited for (see wait) at most `ms`.
---@param ms integer
---@return { client: vim.lsp.Client, result: any }[]
local function ask_each(clients, method, params_for, bufnr, ms)
  local answers
  M.request_all(clients, method, params_for, bufnr, function(found) answers = found end, ms)
  wait(ms + 100, function() return answers ~= nil end)
  return answers or {}
end

--- The file's buffer, loaded (its language servers attach as to any buffer opened), and
--- how to put it back after: "wipe" a buffer made for the question, "unload" one that was
--- not loaded, nil for one the user has open.
---@param uri string
---@return integer bufnr
---@return "wipe"|"unload"|nil undo
local function load(uri)
  local fname = vim.uri_to_fname(uri)
  local bufnr = vim.fn.bufnr(fname)
  if bufnr ~= -1 and vim.api.nvim_buf_is_loaded(bufnr) then return bufnr, nil end
  local existed = bufnr ~= -1
  bufnr = vim.fn.bufadd(fname)
  if not existed then vim.bo[bufnr].buflisted = false end
  vim.fn.bufload(bufnr)
  return bufnr, existed and "unload" or "wipe"
end

---@param bufnr integer
---@param undo "wipe"|"unload"|nil
local function put_back(bufnr, undo)
  if not undo or not vim.api.nvim_buf_is_valid(bufnr) then return end
  pcall(vim.api.nvim_buf_delete, bufnr, { force = true, unload = undo == "unload" })
end

--- Whether a language server attached to the buffer (agentls aside) is still starting.
---@param bufnr integer
---@param own_id integer
---@return boolean
local function starting(bufnr, own_id)
  for _, client in ipairs(vim.lsp.get_clients({ bufnr = bufnr })) do
    if client.id ~= own_id and client.name ~= "agentls" and not client.initialized then return true end
  end
  return false
end

--- A Location's or LocationLink's ranges from one encoding to another.
---@param item table
---@param lines agentls.LineSource
---@param from string
---@param to string
---@return table
local function convert_location(item, lines, from, to)
  local out = vim.deepcopy(item)
  if out.uri and out.range then out.range = positions.range(out.range, lines:of(out.uri), from, to) end
  if out.targetUri then
    local get = lines:of(out.targetUri)
    for _, key in ipairs({ "targetRange", "targetSelectionRange" }) do
      if out[key] then out[key] = positions.range(out[key], get, from, to) end
    end
    -- The origin is in the asked file.
    out.originSelectionRange = nil
  end
  return out
end

--- Location | Location[] | LocationLink[] as one list.
---@param result any
---@return table[]
local function as_list(result)
  if type(result) ~= "table" then return {} end
  if result.uri or result.targetUri then return { result } end
  return result
end

--- agent/definition and agent/references: the servers of the file's buffer, asked at the
--- position converted to each one's encoding; their locations in agentls's.
---@param daemon_method string
---@param params table
---@param own vim.lsp.Client  the agentls client
---@return table
local function at_position(daemon_method, params, own)
  local method = M.METHODS[daemon_method]
  local uri = params.textDocument.uri
  local started = vim.uv.now()
  local bufnr, undo = load(uri)
  -- A server the buffer just started (its FileType) answers once it is initialized.
  if #M.servers(method, bufnr, own.id) == 0 then wait(ATTACH_MS, function() return not starting(bufnr, own.id) end) end
  local lines = positions.lines()
  local asked_line = lines:of(uri)
  local answers = ask_each(M.servers(method, bufnr, own.id), method, function(client)
    local sent = vim.deepcopy(params)
    sent.position = positions.position(params.position, asked_line, own.offset_encoding, client.offset_encoding)
    return sent
  end, bufnr, math.max(500, ANSWER_MS - (vim.uv.now() - started)))
  local locations = {}
  for _, answer in ipairs(answers) do
    for _, item in ipairs(as_list(answer.result)) do
      table.insert(locations, convert_location(item, lines, answer.client.offset_encoding, own.offset_encoding))
    end
  end
  put_back(bufnr, undo)
  return { locations = locations }
end

--- Every running language server's workspace/symbol answer for `query`, merged, their
--- locations in agentls's encoding (for agent/workspaceSymbols and @ mentions).
---@param query string
---@param own vim.lsp.Client  the agentls client
---@param on_done fun(symbols: table[])
function M.find_symbols(query, own, on_done)
  local method = M.METHODS["agent/workspaceSymbols"]
  M.request_all(M.servers(method, nil, own.id), method, function() return { query = query } end, nil, function(answers)
    local lines, found = positions.lines(), {}
    for _, answer in ipairs(answers) do
      for _, symbol in ipairs(type(answer.result) == "table" and answer.result or {}) do
        if type(symbol.location) == "table" then
          symbol = vim.deepcopy(symbol)
          symbol.location = convert_location(symbol.location, lines, answer.client.offset_encoding, own.offset_encoding)
        end
        table.insert(found, symbol)
      end
    end
    on_done(found)
  end)
end

---@param params table
---@param own vim.lsp.Client
---@return table
local function symbols(params, own)
  local found
  M.find_symbols(params.query, own, function(all) found = all end)
  wait(ANSWER_MS + 100, function() return found ~= nil end)
  return { symbols = found or {} }
end

--- The handler of one of the daemon's navigation requests (see client.lua).
---@param method string  agent/definition, agent/references or agent/workspaceSymbols
---@param params table
---@param ctx table  the handler's context (client_id: the agentls client)
---@return table
function M.serve(method, params, ctx)
  local own = vim.lsp.get_client_by_id(ctx.client_id)
  if not own then return method == "agent/workspaceSymbols" and { symbols = {} } or { locations = {} } end
  if method == "agent/workspaceSymbols" then return symbols(params, own) end
  return at_position(method, params, own)
end

--- The agentls client's handlers of the three requests (announced in its capabilities).
---@return table<string, function>
function M.handlers()
  local handlers = {}
  for method in pairs(M.METHODS) do
    handlers[method] = function(_, params, ctx) return M.serve(method, params, ctx) end
  end
  return handlers
end

return M
