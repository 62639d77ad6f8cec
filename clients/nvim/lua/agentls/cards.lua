-- What the chat draws for the power-user requests and answers: a plan to approve, a patch of
-- several files, the /context report as a bar. Pure, like lines.lua: values in, lines and
-- highlight groups out (tests/test_nvim_lines.py calls them alone).

local words = require("agentls.text")

local M = {}

-- The plan's lines are the model's markdown as it wrote it (the chat buffer is markdown, so
-- its headings and lists are highlighted as such), between two rules that set it apart.
M.PLAN_RULE = "  ────────"

--- A plan's markdown as the lines shown under its request's title.
---@param plan string
---@return agentls.Line[]
function M.plan(plan)
  local out = { { M.PLAN_RULE, "AgentlsFooter" } }
  for _, line in ipairs(vim.split((plan:gsub("\n+$", "")), "\n", { plain = true })) do
    table.insert(out, { line })
  end
  table.insert(out, { M.PLAN_RULE, "AgentlsFooter" })
  return out
end

-- A patch's file kinds as the list shows them.
local KIND_WORDS = { add = "add", update = "update", delete = "delete", move = "move" }

--- Lines added and removed between two texts (a whole-file diff's +/−).
---@param old_text string
---@param new_text string
---@return integer added
---@return integer removed
function M.counts(old_text, new_text)
  local added, removed = 0, 0
  local hunks = (vim.text and vim.text.diff or vim.diff)(old_text, new_text, { result_type = "indices" })
  ---@cast hunks integer[][]
  for _, hunk in ipairs(hunks) do
    removed = removed + hunk[2]
    added = added + hunk[4]
  end
  return added, removed
end

-- Paths under the workspace root are shown relative to it (text.lua has the rule).
M.relative = words.relative

--- One file of a patch as a list line: "update src/app.py  +1 −1" (a move names both paths),
--- paths relative to `root`.
---@param diff { path: string, kind?: string, movedFrom?: string, oldText?: string, newText?: string }
---@param root? string
---@return string
function M.patch_file(diff, root)
  local added, removed = M.counts(diff.oldText or "", diff.newText or "")
  local path = M.relative(diff.path, root)
  if diff.movedFrom then path = M.relative(diff.movedFrom, root) .. " → " .. path end
  return ("%-6s %s  +%d −%d"):format(KIND_WORDS[diff.kind] or "update", path, added, removed)
end

--- A patch request's body in the chat: how many files, then one line per file.
---@param diffs table[]  the request's FileDiffs, in patch order
---@param review_key? string|false  named as the way to see each file's diff
---@param root? string  the workspace root: paths under it are shown relative
---@return agentls.Line[]
function M.patch(diffs, review_key, root)
  local hint = review_key and (" (%s shows each diff)"):format(review_key) or ""
  local out = { { "  " .. words.count(#diffs, "file") .. " in one change" .. hint, "AgentlsFooter" } }
  local groups = { add = "AgentlsDiffAdd", delete = "AgentlsDiffDelete", move = "AgentlsDiffHunk" }
  for _, diff in ipairs(diffs) do
    table.insert(out, { "    " .. M.patch_file(diff, root), groups[diff.kind] })
  end
  return out
end

---@class agentls.ContextPart
---@field name string
---@field tokens integer
---@field percent number

--- The parts of a /context report ("  Tools   1,234 tokens  0.6%" lines), in its order.
---@param text string  the command's output
---@return agentls.ContextPart[]
function M.context_parts(text)
  local parts = {}
  for _, line in ipairs(vim.split(text, "\n", { plain = true })) do
    local name, tokens, percent = line:match("^  (%S.-)%s+([%d,]+) tokens%s+([%d.]+)%%")
    if name then
      table.insert(parts, { name = name, tokens = tonumber((tokens:gsub(",", ""))) or 0, percent = tonumber(percent) or 0 })
    end
  end
  return parts
end

-- Each part of the window its own colour; the free space is the bar's background.
local PART_GROUPS = { "AgentlsContext1", "AgentlsContext2", "AgentlsContext3", "AgentlsContext4", "AgentlsContext5", "AgentlsContext6" }
M.FREE = "Free space"

--- The /context report as a bar `width` cells wide and a legend wrapped to `width`: virtual
--- lines, each part in its colour, at least one cell when it holds anything.
---@param parts agentls.ContextPart[]
---@param width integer
---@return agentls.VirtLine[]
function M.context_bar(parts, width)
  local bar, entries, used = { { "  " } }, {}, 0
  local cells = math.max(10, width - 2)
  local colour = 0
  for _, part in ipairs(parts) do
    local group = "AgentlsContextFree"
    if part.name ~= M.FREE then
      colour = colour % #PART_GROUPS + 1
      group = PART_GROUPS[colour]
      local n = part.tokens > 0 and math.max(1, math.floor(cells * part.percent / 100 + 0.5)) or 0
      n = math.min(n, cells - used)
      if n > 0 then table.insert(bar, { ("█"):rep(n), group }) end
      used = used + n
    end
    if part.tokens > 0 or part.name == M.FREE then
      local mark = part.name == M.FREE and "░ " or "█ "
      table.insert(entries, { { mark, group }, { ("%s %.1f%%"):format(part.name, part.percent), "AgentlsFooter" } })
    end
  end
  if cells - used > 0 then table.insert(bar, { ("░"):rep(cells - used), "AgentlsContextFree" }) end
  local out, line, line_width = { bar }, {}, 0
  for _, entry in ipairs(entries) do
    local entry_width = vim.fn.strdisplaywidth(entry[1][1] .. entry[2][1])
    if line_width > 0 and line_width + 3 + entry_width > width then
      table.insert(out, line)
      line, line_width = {}, 0
    end
    local gap = line_width == 0 and "  " or "   "
    table.insert(line, { gap })
    vim.list_extend(line, entry)
    line_width = line_width + #gap + entry_width
  end
  if #line > 0 then table.insert(out, line) end
  return out
end

-- An isolated agent's worktree --------------------------------------------------------------

M.WORKTREE_HINT = ":AgentWorktrees views, merges or discards it"
local FILE_GROUPS = { added = "AgentlsDiffAdd", deleted = "AgentlsDiffDelete" }

--- The card under an isolated agent's end: its branch, what it changed (+/−) and, while it
--- waits for the user, how to act on it; once resolved, what became of it.
---@param worktree { branch: string, files?: table[], added?: integer, removed?: integer }
---@param resolved? { action: string, files?: string[] }  its worktree_resolved event
---@return agentls.Line[]
function M.worktree(worktree, resolved)
  local files = worktree.files or {}
  local head = ("  ⎇ %s  %s  +%d −%d"):format(worktree.branch, words.count(#files, "file"), worktree.added or 0, worktree.removed or 0)
  local out
  if resolved and resolved.action == "merged" then
    out = { { head .. "  · merged into your tree (" .. words.count(#(resolved.files or {}), "file") .. " written)", "AgentlsNoticeInfo" } }
  elseif resolved then
    out = { { head .. "  · discarded", "AgentlsFooter" } }
  else
    out = { { head .. "  (" .. M.WORKTREE_HINT .. ")", "AgentlsNoticeInfo" } }
  end
  for _, file in ipairs(files) do
    table.insert(out, { ("    %-8s %s  +%d −%d"):format(file.status, file.path, file.added or 0, file.removed or 0), FILE_GROUPS[file.status] })
  end
  return out
end

--- A worktree of agent/listWorktrees as a picker line.
---@param entry table  a WorktreeEntry
---@return string
function M.worktree_entry(entry)
  local what = entry.status == "ready" and ("%s  +%d −%d"):format(words.count(#(entry.files or {}), "file"), entry.added or 0, entry.removed or 0) or entry.status
  return ("%s  %s  %s"):format(entry.branch, entry.description or "", what)
end

--- What a merge that did not happen ran into: one line per conflict, with its reason.
---@param conflicts { path: string, reason: string }[]
---@param root? string  paths under it are shown relative
---@return string
function M.conflicts(conflicts, root)
  local out = { "the merge changed nothing: " .. words.count(#conflicts, "conflict") }
  for _, conflict in ipairs(conflicts) do table.insert(out, ("  %s: %s"):format(M.relative(conflict.path, root), conflict.reason)) end
  return table.concat(out, "\n")
end

-- Requests that need more than a title ---------------------------------------------------

--- Lines under a plugin trust request (its `plugin_…` toolCallId): what the plugin would run.
--- Under a rerun outside the sandbox: the command, why, and that it runs OUTSIDE the box.
---@param event table  a permission_request event
---@return agentls.Line[]|nil
function M.request_body(event)
  local input = type(event.input) == "table" and event.input or {}
  if vim.startswith(event.toolCallId or "", "plugin_") and type(input.runs) == "table" then
    local out = { { ("  plugin %s would run, with your rights:"):format(input.plugin or "?"), "AgentlsFooter" } }
    for _, run in ipairs(input.runs) do table.insert(out, { "    $ " .. tostring(run), "AgentlsNoticeWarning" }) end
    return out
  end
  local escalation = event.sandboxEscalation
  if type(escalation) == "table" then
    return {
      { "    $ " .. tostring(escalation.command or input.command or ""), "AgentlsNoticeWarning" },
      { "  runs OUTSIDE the sandbox, once: " .. tostring(escalation.reason or ""), "AgentlsNoticeWarning" },
    }
  end
  return nil
end

return M
