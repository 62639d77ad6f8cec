-- Finding a running `agentls --tcp`: its discovery file names the address and the token
-- that lets a client in. Whoever reads that file can run commands as the user, so a file
-- or folder that another user owns, or that others can read or write, is refused.

local uv = vim.uv or vim.loop

local M = {}

--- The daemon's private folder: `${XDG_RUNTIME_DIR or TMPDIR or /tmp}/agentls-<uid>`.
function M.dir()
  local base = vim.env.XDG_RUNTIME_DIR
  if not base or base == "" then base = vim.env.TMPDIR end
  if not base or base == "" then base = "/tmp" end
  return vim.fs.joinpath(base, "agentls-" .. uv.getuid())
end

--- Why `what` ("file" or "folder") at `path`, with `stat` (uv's), cannot hold the token;
--- nil when it can.
function M.privacy_problem(what, path, stat, uid)
  if stat.uid ~= uid then
    return ("the discovery %s %s belongs to user %d, not to you (%d); refusing it, as another user could have planted it"):format(what, path, stat.uid, uid)
  end
  -- The group and other permission bits (0o077) are the low six.
  if stat.mode % 64 ~= 0 then
    return ("the discovery %s %s is open to other users (mode %03o); refusing it, as anyone who reads the token can run commands as you. Make it yours alone (chmod %s) or restart the daemon"):format(
      what, path, stat.mode % 512, what == "file" and "600" or "700")
  end
  return nil
end

--- The address in a discovery file's text, or nil and why not.
function M.parse(text, path)
  local ok, fields = pcall(vim.json.decode, text)
  if not ok then return nil, ("the discovery file %s is not JSON"):format(path) end
  if type(fields) ~= "table" then fields = {} end
  local valid = type(fields.host) == "string" and fields.host ~= ""
    and type(fields.port) == "number" and fields.port % 1 == 0
    and type(fields.pid) == "number" and fields.pid % 1 == 0
    -- 64 hex digits, or what --token-file gave: 32 or more printable ASCII, no spaces.
    and type(fields.token) == "string" and #fields.token >= 32 and not fields.token:find("[^\33-\126]")
  if not valid then
    return nil, ("the discovery file %s lacks a host, port, pid or token (is it from agentls --tcp?)"):format(path)
  end
  return { host = M.connect_host(fields.host), port = fields.port, pid = fields.pid, token = fields.token, file = path }
end

--- Where to connect for a bound host: a wildcard (`--allow-remote`) means its loopback.
function M.connect_host(host)
  if host == "0.0.0.0" then return "127.0.0.1" end
  if host == "::" then return "::1" end
  return host
end

--- Whether a process with this pid exists (EPERM: it does, under another user).
function M.alive(pid)
  if pid <= 0 then return false end
  local ok, _, name = uv.kill(pid, 0)
  return ok == 0 or name == "EPERM"
end

--- The newest candidate ({ file, pid, mtime }) whose daemon is alive, and the stale ones
--- passed over.
function M.newest_live(candidates, alive)
  local sorted = vim.deepcopy(candidates)
  table.sort(sorted, function(a, b)
    if a.mtime ~= b.mtime then return a.mtime > b.mtime end
    return a.pid > b.pid
  end)
  local stale = {}
  for _, candidate in ipairs(sorted) do
    if alive(candidate.pid) then return candidate, stale end
    table.insert(stale, candidate)
  end
  return nil, stale
end

local function check_folder(folder, uid)
  local stat = uv.fs_stat(folder)
  if not stat then return ("no running agentls daemon: %s does not exist. Start one with agentls --tcp"):format(folder) end
  if stat.type ~= "directory" then return folder .. " is not a folder" end
  return M.privacy_problem("folder", folder, stat, uid)
end

--- Read a discovery file through one descriptor, so the file checked is the file read.
local function read_private(path, uid)
  local fd = uv.fs_open(path, "r", 0)
  if not fd then return nil, ("the discovery file %s does not exist (its daemon has exited?)"):format(path) end
  local stat = uv.fs_fstat(fd)
  local problem
  if not stat or stat.type ~= "file" then
    problem = ("the discovery file %s is not a file"):format(path)
  else
    problem = M.privacy_problem("file", path, stat, uid)
  end
  local text = not problem and uv.fs_read(fd, stat.size, 0) or nil
  uv.fs_close(fd)
  if problem then return nil, problem end
  return M.parse(text or "", path)
end

--- The discovery files in `folder` as candidates (unsorted).
local function candidates(folder)
  local found = {}
  for name, kind in vim.fs.dir(folder) do
    local pid = name:match("^tcp%-(%d+)%.json$")
    if pid and kind == "file" then
      local path = vim.fs.joinpath(folder, name)
      local stat = uv.fs_stat(path)
      if stat then
        table.insert(found, { file = path, pid = tonumber(pid), mtime = stat.mtime.sec + stat.mtime.nsec / 1e9 })
      end
    end
  end
  return found
end

--- The daemon `setting` names ("discover", or a discovery file's path), checked: private,
--- parsed, alive. Returns the address, or nil and why not.
function M.find(setting, alive)
  alive = alive or M.alive
  local uid = uv.getuid()
  if setting ~= "discover" then
    local path = vim.fs.normalize(vim.fn.fnamemodify(setting, ":p"))
    local problem = check_folder(vim.fs.dirname(path), uid)
    if problem then return nil, problem end
    local address, err = read_private(path, uid)
    if not address then return nil, err end
    if not alive(address.pid) then
      return nil, ("the discovery file %s is stale: its daemon (pid %d) is not running. Start agentls --tcp again, or use connect = \"discover\""):format(path, address.pid)
    end
    return address
  end
  local folder = M.dir()
  local problem = check_folder(folder, uid)
  if problem then return nil, problem end
  local all = candidates(folder)
  if #all == 0 then
    return nil, ("no running agentls daemon: no discovery file in %s. Start one with agentls --tcp"):format(folder)
  end
  local live, stale = M.newest_live(all, alive)
  if not live then
    local pids = vim.tbl_map(function(c) return tostring(c.pid) end, stale)
    return nil, ("no running agentls daemon: the discovery files in %s are stale (pid %s not running). Start one with agentls --tcp"):format(folder, table.concat(pids, ", "))
  end
  return read_private(live.file, uid)
end

--- Where a daemon is, for messages: never the token.
function M.describe(address)
  return ("the agentls daemon at %s:%d (pid %d, from %s)"):format(address.host, address.port, address.pid, address.file)
end

return M
