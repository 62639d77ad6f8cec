-- :AgentRules: the session's permission rules (agent/listPermissionRules), grouped by
-- behavior, each with the scope it is kept in; `a` adds one (the rule through
-- vim.ui.input, then its behavior and scope through vim.ui.select), `d` removes the one
-- under the cursor (agent/updatePermissionRules). The daemon's refusal (a malformed rule)
-- is shown at the top of the list.

local listview = require("agentls.listview")

local M = {}

M.BEHAVIORS = { "allow", "ask", "deny" }
M.SCOPES = { "local", "project", "user", "session" }
-- Where a scope's rules are kept, as the user knows it.
M.WHERE = {
  ["local"] = ".agentls/settings.local.json (yours, git-ignored)",
  project = ".agentls/settings.json (shared with the team)",
  user = "your user settings (every project)",
  session = "this session only",
}
M.HELP = "a add · d remove · q close"

--- The rules as the view's lines: a heading per behavior, then its rules with their scope.
---@param rules table[]  {rule, behavior, scope}
---@param problem? string  the daemon's last refusal
---@return agentls.ListLine[]
function M.lines(rules, problem)
  local out = { { M.HELP, hl = "AgentlsFooter" } }
  if problem then table.insert(out, { "! " .. problem, hl = "AgentlsNoticeError" }) end
  for _, behavior in ipairs(M.BEHAVIORS) do
    local these = vim.tbl_filter(function(r) return r.behavior == behavior end, rules)
    table.insert(out, { ("%s (%d)"):format(behavior, #these), hl = "AgentlsAgent" })
    if #these == 0 then table.insert(out, { "  (none)", hl = "Comment" }) end
    local width = 0
    for _, rule in ipairs(these) do width = math.max(width, vim.fn.strdisplaywidth(rule.rule)) end
    for _, rule in ipairs(these) do
      local pad = (" "):rep(width - vim.fn.strdisplaywidth(rule.rule))
      table.insert(out, { ("  %s%s  %s"):format(rule.rule, pad, rule.scope), item = rule })
    end
  end
  return out
end

--- Ask for a new rule: its text, behavior and scope; `on_rule` gets it.
---@param on_rule fun(rule: { rule: string, behavior: string, scope: string })
function M.ask_rule(on_rule)
  vim.ui.input({ prompt = "Rule (Bash(npm test:*), Edit(src/**), WebFetch(domain:example.com), mcp__server): " }, function(text)
    text = text and vim.trim(text) or ""
    if text == "" then return end
    vim.ui.select(M.BEHAVIORS, { prompt = "agentls: " .. text, kind = "agentls.rule_behavior" }, function(behavior)
      if not behavior then return end
      vim.ui.select(M.SCOPES, {
        prompt = "agentls: keep it in",
        kind = "agentls.rule_scope",
        format_item = function(scope) return ("%s: %s"):format(scope, M.WHERE[scope]) end,
      }, function(scope)
        if scope then on_rule({ rule = text, behavior = behavior, scope = scope }) end
      end)
    end)
  end)
end

--- :AgentRules for a chat's session; returns the view.
---@param chat agentls.Chat
---@return agentls.ListView
function M.show(chat)
  local view
  local function draw(err, result)
    if not view:valid() then return end
    if result then view.rules = result.rules end
    view:set(M.lines(view.rules or {}, err and err.message or nil))
    vim.api.nvim_exec_autocmds("User", { pattern = "AgentlsRulesShown", modeline = false })
  end
  local function update(change)
    chat:request("agent/updatePermissionRules", change, draw)
  end
  view = listview.open("agentls://rules/" .. chat.session_id, "agentls permission rules", {
    a = { desc = "add a permission rule", fn = function() M.ask_rule(function(rule) update({ add = { rule } }) end) end },
    d = {
      desc = "remove this permission rule",
      fn = function(v)
        local rule = v:item()
        if rule then update({ remove = { { rule = rule.rule, behavior = rule.behavior, scope = rule.scope } } }) end
      end,
    },
  })
  chat:request("agent/listPermissionRules", {}, draw)
  return view
end

return M
