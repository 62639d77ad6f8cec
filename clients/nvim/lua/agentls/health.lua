-- :checkhealth agentls

local M = {}

local health = vim.health

-- How to get the daemon (it is not on PyPI): the same words as the READMEs.
M.INSTALL = {
  "from a checkout of agentls: pipx install /path/to/agentls",
  "or into a virtualenv: python3 -m pip install /path/to/agentls",
  "or from a git remote: pipx install git+<your clone's URL>",
  "or set cmd in require('agentls').setup() to the daemon's full path",
}

function M.check()
  health.start("agentls")
  if vim.fn.has("nvim-0.10") == 1 then
    health.ok("Neovim " .. tostring(vim.version()))
  else
    health.error("Neovim 0.10 or newer is needed")
  end
  local options = require("agentls.config").options
  if options.connect then
    M.discovery(options.connect)
  elseif not M.command(options.cmd) then
    return
  end
  M.provider(options)
  local running = require("agentls.client").all()
  local words = require("agentls.text")
  local what = options.connect and words.count(#running, "connection") .. " to the joined daemon"
    or words.count(#running, "daemon") .. " running"
  health.info(what .. " in this Neovim")
  for _, chat in ipairs(require("agentls.chat").all()) do
    M.session(chat)
  end
end

--- The spawned daemon's command: found and runs; false when it cannot start.
function M.command(cmd)
  local exe = cmd[1]
  if vim.fn.executable(exe) == 0 then
    health.error(("the daemon command %q is not on PATH"):format(exe), M.INSTALL)
    return false
  end
  local version = vim.fn.system(vim.list_extend(vim.deepcopy(cmd), { "--version" }))
  if vim.v.shell_error == 0 then
    health.ok(("daemon: %s (%s)"):format(vim.trim(version), table.concat(cmd, " ")))
  else
    health.error("the daemon does not run: " .. vim.trim(version))
  end
  return true
end

--- The running daemon `connect` names: the discovery files seen, and the one joined.
--- The token is never shown.
function M.discovery(connect)
  local discovery = require("agentls.discovery")
  health.info(("connect = %q: joining a running agentls --tcp, not spawning one"):format(connect))
  if connect == "discover" then
    local folder = discovery.dir()
    local stat = (vim.uv or vim.loop).fs_stat(folder)
    if stat and stat.type == "directory" then
      for name in vim.fs.dir(folder) do
        local pid = tonumber(name:match("^tcp%-(%d+)%.json$"))
        if pid then
          health.info(("%s: pid %d %s"):format(vim.fs.joinpath(folder, name), pid, discovery.alive(pid) and "running" or "not running (stale)"))
        end
      end
    end
  end
  local address, problem = discovery.find(connect)
  if address then
    health.ok("daemon: " .. discovery.describe(address) .. ", discovery file and folder yours alone")
  else
    health.error(problem, { "start one: agentls --tcp", "or set connect = nil to spawn the daemon (cmd)" })
  end
end

--- The provider, and whether its API key is set (a joined daemon uses its own keys).
function M.provider(options)
  local provider = options.provider or vim.env.AGENTLS_PROVIDER
  local keys = { anthropic = "ANTHROPIC_API_KEY", openai = "OPENAI_API_KEY", azure = "AZURE_OPENAI_API_KEY" }
  if provider == "scripted" then
    if options.script then
      health.ok("provider: scripted, playing " .. options.script)
    elseif (vim.env.AGENTLS_SCRIPT or "") ~= "" then
      health.ok("provider: scripted, playing " .. vim.env.AGENTLS_SCRIPT .. " (AGENTLS_SCRIPT)")
    else
      health.error("provider: scripted, but no script to play", { "setup({ script = '/path/to/script.jsonl' })", "or export AGENTLS_SCRIPT" })
    end
  elseif options.connect then
    health.info(("provider: %s, with the API keys of the joined daemon's environment"):format(provider or "chosen by the daemon"))
  elseif provider and keys[provider] then
    if (vim.env[keys[provider]] or "") ~= "" then
      health.ok(("provider: %s, %s is set"):format(provider, keys[provider]))
    elseif provider == "openai" and options.base_url then
      health.ok("provider: openai-compatible server at " .. options.base_url)
    else
      health.warn(("provider %s but %s is not set"):format(provider, keys[provider]))
    end
  elseif (vim.env.ANTHROPIC_API_KEY or "") ~= "" or (vim.env.OPENAI_API_KEY or "") ~= "" then
    health.ok("provider: chosen by the daemon from the API key that is set")
  else
    health.warn("no provider configured and no API key set", { "export ANTHROPIC_API_KEY or OPENAI_API_KEY", "or setup({ provider = ..., base_url = ... })" })
  end
end

--- A live session's Bash sandbox and MCP servers.
function M.session(chat)
  health.start("agentls session " .. chat.session_id .. " (" .. chat.root .. ")")
  local sandbox = chat.sandbox
  local note = sandbox and sandbox.note and (" (" .. sandbox.note .. ")") or ""
  if not sandbox then
    health.info("Bash sandbox: not reported by this daemon")
  elseif sandbox.problem then
    health.error(("Bash sandbox %s could not start, commands are refused: %s"):format(sandbox.mode or "", sandbox.problem))
  elseif sandbox.active then
    local network = sandbox.network and "network allowed" or "no network"
    local writes = sandbox.mode == "read-only" and "read-only everywhere" or "read-only outside the workspace"
    health.ok(("Bash sandbox: bubblewrap, %s, %s%s"):format(writes, network, note))
  else
    health.warn(("Bash sandbox: off (%s)%s"):format(sandbox.mode or "danger-full-access", note))
  end
  for name, status in pairs(chat.mcp_servers or {}) do
    if status.status == "ready" then
      health.ok(("MCP server %s: ready, %s"):format(name, require("agentls.text").count(status.toolCount or 0, "tool")))
    elseif status.status == "failed" then
      health.error(("MCP server %s: failed: %s"):format(name, status.error or "no reason given"))
    else
      health.info(("MCP server %s: %s"):format(name, status.status))
    end
  end
end

return M
