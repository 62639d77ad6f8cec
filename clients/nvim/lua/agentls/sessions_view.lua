-- :AgentSessions: the root's saved sessions in a list (agent/listSessions, a page at a
-- time: "More…" at the end asks for the next one). <CR> resumes the session under the
-- cursor; `d` deletes it (agent/deleteSession) once confirmed, closing its chat first when
-- it is the one open, and the list is drawn again without it.

local listview = require("agentls.listview")
local times = require("agentls.times")
local words = require("agentls.text")

local M = {}

M.HELP = "<CR> resume · d delete · q close"
-- The last line of a page when more sessions follow.
local MORE = { more = true }

--- A session as a line of the list: its title, turns and when it was last used, seen from
--- `now` ("2 turns, 5 min ago").
---@param session table  SessionInfo
---@param now integer  seconds since the epoch
---@return string
function M.label(session, now)
  local turns = words.count(session.turns, "turn")
  local title = session.title ~= "" and session.title or "(no message)"
  return ("%s  (%s, %s)"):format(title, turns, times.ago_iso(session.updatedAt, now))
end

---@param sessions table[]
---@param more boolean
---@param problem? string
---@param now? integer  seconds since the epoch (os.time() by default)
---@return agentls.ListLine[]
function M.lines(sessions, more, problem, now)
  now = now or os.time()
  local out = { { M.HELP, hl = "AgentlsFooter" } }
  if problem then table.insert(out, { "! " .. problem, hl = "AgentlsNoticeError" }) end
  if #sessions == 0 then table.insert(out, { "No saved session here.", hl = "Comment" }) end
  for _, session in ipairs(sessions) do table.insert(out, { M.label(session, now), item = session }) end
  if more then table.insert(out, { "More…", item = MORE, hl = "Comment" }) end
  return out
end

--- Delete `session` once the user confirms it, then `done(err)`.
---@param chat agentls.Chat  the root's chat (its daemon answers)
---@param session table  SessionInfo
---@param done fun(err: table|nil)
function M.delete(chat, session, done)
  local question = ("Delete the session %q? Its transcript and worktrees go too."):format(session.title)
  vim.ui.select({ "Delete", "Keep" }, { prompt = question }, function(choice)
    if choice ~= "Delete" then return end
    -- Its chat first: no more requests from it while its folder goes.
    require("agentls.chat").forget(session.sessionId)
    local client = chat:client()
    if not client then return done({ message = "the daemon is not running" }) end
    require("agentls.client").request(client, "agent/deleteSession", { sessionId = session.sessionId }, done)
  end)
end

--- Open the list for `chat`'s root; returns the view.
---@param chat agentls.Chat
---@return agentls.ListView
function M.show(chat)
  local root, client_mod = chat.root, require("agentls.client")
  local page = require("agentls.config").options.history.session_page
  local view
  local state = { sessions = {}, cursor = nil }
  local function load(cursor, problem)
    local client = chat:client()
    if not client then return end
    -- The pages shown so far, asked again as one (a deletion moves what follows up).
    local limit = cursor and page or math.max(page, #state.sessions)
    client_mod.request(client, "agent/listSessions", { cwd = root, limit = limit, cursor = cursor }, function(err, result)
      if not view:valid() then return end
      if result then
        state.sessions = vim.list_extend(cursor and state.sessions or {}, result.sessions)
        state.cursor = result.nextCursor ~= vim.NIL and result.nextCursor or nil
      end
      view:set(M.lines(state.sessions, state.cursor ~= nil, problem or (err and err.message)))
      vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsSessionsShown", modeline = false })
    end)
  end
  view = listview.open("agentls://sessions/" .. root, "agentls sessions", {
    ["<CR>"] = {
      desc = "resume this session",
      fn = function(v)
        local item = v:item()
        if item == MORE then return load(state.cursor) end
        if not item then return end
        v:close()
        local ok, err = pcall(function()
          require("agentls.window").open(require("agentls.chat").resume(root, item.sessionId))
        end)
        if not ok then vim.notify(tostring(err):match("agentls: .*$") or ("agentls: " .. tostring(err)), vim.log.levels.ERROR) end
      end,
    },
    d = {
      desc = "delete this session",
      fn = function(v)
        local item = v:item()
        if not item or item == MORE then return end
        M.delete(chat, item, function(err) load(nil, err and err.message) end)
      end,
    },
  })
  load(nil)
  return view
end

return M
