-- The daemon as a client of Neovim's built-in LSP: one per project root, started for any
-- buffer (a filetype is not needed) and for an empty Neovim; spawned over stdio, or a
-- running `agentls --tcp` joined with the token of its discovery file (`connect`).

local config = require("agentls.config")

local M = {}

local uv = vim.uv or vim.loop
local has_011 = vim.fn.has("nvim-0.11") == 1
local JOIN_TIMEOUT_MS = 10000
-- Project root -> client id.
local by_root = {}

--- The project root of a buffer: the nearest folder with a root marker, else the cwd.
function M.root_of(bufnr)
  bufnr = bufnr or 0
  -- The chat, its prompt and a review belong to their session's root.
  local own = vim.b[bufnr].agentls_root
  if type(own) == "string" and own ~= "" then return own end
  local name = vim.api.nvim_buf_get_name(bufnr)
  -- A special buffer (:checkhealth's "health://", a help page, a URI) goes by the cwd.
  local is_file = name ~= "" and vim.bo[bufnr].buftype == "" and not name:find("^%a[%w+.-]*://")
  local start = is_file and vim.fs.dirname(vim.fn.fnamemodify(name, ":p")) or vim.fn.getcwd()
  local found = vim.fs.find(config.options.root_markers, { path = start, upward = true })[1]
  return vim.fs.normalize(found and vim.fs.dirname(found) or vim.fn.getcwd())
end

local function alive(id)
  local client = id and vim.lsp.get_client_by_id(id)
  if client and not (has_011 and client:is_stopped() or not has_011 and client.is_stopped()) then
    return client
  end
end

--- Whether a buffer is a file of `root` that the daemon should see.
function M.is_root_file(bufnr, root)
  if vim.bo[bufnr].buftype ~= "" then return false end
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == "" then return false end
  local path = vim.fs.normalize(name)
  return path == root or vim.startswith(path, root .. "/")
end

local function attach(bufnr, id)
  if vim.api.nvim_buf_is_loaded(bufnr) and not vim.lsp.buf_is_attached(bufnr, id) then
    vim.lsp.buf_attach_client(bufnr, id)
  end
end

--- The client for `root` (the current buffer's by default), started if needed.
function M.get(root)
  root = root or M.root_of(0)
  local client = alive(by_root[root])
  if client then return client end
  local opts = config.options
  local cmd, init_options, address = opts.cmd, config.init_options(), nil
  -- A joined daemon's progress: "initializing", then "running" or "closed".
  local join = { state = "initializing" }
  if not opts.connect and type(cmd) == "table" and vim.fn.executable(cmd[1]) == 0 then
    error(("agentls: the daemon command %q is not on PATH. Install agentls from a checkout "
      .. "(pipx install /path/to/agentls) or set cmd in setup(); see :checkhealth agentls"):format(cmd[1]), 0)
  end
  if opts.connect then
    address = M.join_address(opts.connect)
    cmd = M.join_cmd(address, join)
    init_options.authToken = address.token
  end
  local lsp_config = {
    name = "agentls",
    cmd = cmd,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = init_options,
    -- It answers agent/diagnostics and the navigation requests (below); window/showDocument
    -- is Neovim's own.
    capabilities = vim.tbl_deep_extend("force", vim.lsp.protocol.make_client_capabilities(), {
      experimental = { agentls = { diagnostics = true, definition = true, references = true, workspaceSymbols = true } },
    }),
    handlers = vim.tbl_extend("error", require("agentls.navigation").handlers(), {
      ["agent/diagnostics"] = function(_, params)
        return require("agentls.diagnostics").for_uri(params.uri)
      end,
      ["agent/event"] = function(_, event, ctx)
        require("agentls.chat").on_event(event, ctx.client_id)
      end,
      ["workspace/applyEdit"] = function(err, params, ctx)
        return require("agentls.edits").apply(err, params, ctx)
      end,
    }),
    on_init = function()
      join.state = "running"
    end,
    on_exit = function(code, signal, client_id)
      if join.state == "initializing" then join.state = "closed" end
      vim.schedule(function()
        require("agentls.chat").on_exit(client_id, code, signal)
      end)
    end,
  }
  local id
  if has_011 then
    id = vim.lsp.start(lsp_config, { attach = false })
  else
    id = vim.lsp.start_client(lsp_config)
  end
  if not id then
    local what = address and require("agentls.discovery").describe(address) or table.concat(opts.cmd, " ")
    error("agentls: the daemon did not start (" .. what .. "); see :checkhealth agentls", 0)
  end
  if address then M.wait_joined(id, address, join) end
  by_root[root] = id
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if M.is_root_file(bufnr, root) then attach(bufnr, id) end
  end
  return vim.lsp.get_client_by_id(id)
end

--- The running daemon `connect` names, reachable; an error that says why not otherwise.
function M.join_address(connect)
  local discovery = require("agentls.discovery")
  local address, problem = discovery.find(connect)
  if not address then error("agentls: " .. problem, 0) end
  -- vim.lsp.rpc.connect only notifies a refused connection and then waits forever: try first.
  local tcp = assert(uv.new_tcp())
  local outcome
  tcp:connect(address.host, address.port, function(err) outcome = err or "ok" end)
  vim.wait(JOIN_TIMEOUT_MS, function() return outcome ~= nil end, 10)
  tcp:close()
  if outcome ~= "ok" then
    local why = outcome == "ECONNREFUSED" and "refused the connection: it is not listening there any more"
      or ("could not be reached (%s)"):format(outcome or "no answer")
    error(("agentls: %s %s. Restart it, or point connect at its current discovery file"):format(discovery.describe(address), why), 0)
  end
  return address
end

--- `vim.lsp.rpc.connect` as a client's cmd, with a refused `initialize` kept from Neovim's
--- client (it would raise it as a callback error): the reason goes to `join`, the
--- connection is closed, and wait_joined says what happened.
function M.join_cmd(address, join)
  local connect = vim.lsp.rpc.connect(address.host, address.port)
  return function(dispatchers)
    local rpc = connect(dispatchers)
    local request = rpc.request
    rpc.request = function(method, params, callback, notify_reply_callback)
      if method == "initialize" then
        local on_reply = callback
        callback = function(err, result)
          if not err then return on_reply(err, result) end
          join.refusal = tostring(err.message or err):gsub("%.$", "")
          rpc.terminate()
        end
      end
      return request(method, params, callback, notify_reply_callback)
    end
    return rpc
  end
end

--- Wait for a joined daemon to accept the token: a close during initialize is a refusal.
function M.wait_joined(id, address, join)
  vim.wait(JOIN_TIMEOUT_MS, function() return join.state ~= "initializing" end, 10)
  if join.state == "running" then return end
  local client = vim.lsp.get_client_by_id(id)
  if client then
    if has_011 then client:stop(true) else client.stop(true) end
  end
  local describe = require("agentls.discovery").describe(address)
  if join.state == "closed" then
    local said = join.refusal and not join.refusal:find(address.token, 1, true) and (" (" .. join.refusal .. ")") or ""
    error(("agentls: %s refused this Neovim: the connection was closed during initialize%s. The token in the discovery file was not accepted; the file may be from an earlier daemon on the same port. Restart the daemon or point connect at its current discovery file"):format(describe, said), 0)
  end
  error(("agentls: %s did not answer initialize within %d s"):format(describe, JOIN_TIMEOUT_MS / 1000), 0)
end

--- Attach a file buffer to its root's running client (the daemon reads unsaved text).
function M.on_buffer(bufnr)
  local root = M.root_of(bufnr)
  local client = alive(by_root[root])
  if client and M.is_root_file(bufnr, root) then attach(bufnr, client.id) end
end

--- Every running agentls client.
function M.all()
  local clients = {}
  for _, id in pairs(by_root) do
    local client = alive(id)
    if client then table.insert(clients, client) end
  end
  return clients
end

--- Send a request; `callback(err, result)` runs on the main loop.
function M.request(client, method, params, callback)
  local handler = function(err, result)
    if callback then callback(err, result) end
  end
  if has_011 then
    return client:request(method, params, handler)
  end
  return client.request(method, params, handler)
end

--- Send a request and wait for its answer (for commands that need it at once).
function M.request_sync(client, method, params, timeout_ms)
  local done, err, result = false, nil, nil
  M.request(client, method, params, function(e, r)
    done, err, result = true, e, r
  end)
  vim.wait(timeout_ms or 10000, function() return done end, 10)
  if not done then return nil, { message = method .. " timed out" } end
  return result, err
end

function M.notify(client, method, params)
  if has_011 then return client:notify(method, params) end
  return client.notify(method, params)
end

return M
