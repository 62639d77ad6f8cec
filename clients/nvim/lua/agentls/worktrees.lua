-- Isolated agents' worktrees (:AgentWorktrees): pick one of agent/listWorktrees, then view
-- its diff in a read-only review tab, merge it into the user's tree (agent/resolveWorktree;
-- conflicts are shown with their reasons, and nothing is written) or discard it (after a
-- confirmation). The chat's card of the worktree follows its worktree_resolved event.

local cards = require("agentls.cards")

local M = {}

M.ACTIONS = { view = "View diff", merge = "Merge into my tree", discard = "Discard" }

--- The diff tab of a worktree: its files on the left, the chosen file's unified diff beside.
---@param entry table  a WorktreeEntry
---@param files table[]  agent/worktreeDiff's FileChanges
function M.review(entry, files)
  if #files == 0 then
    vim.notify(("agentls: %s changed nothing"):format(entry.branch))
    return
  end
  vim.cmd.tabnew()
  local list_win, list = vim.api.nvim_get_current_win(), vim.api.nvim_get_current_buf()
  local names = {}
  for _, file in ipairs(files) do
    table.insert(names, ("%s  +%d −%d"):format(cards.relative(file.path, entry.repository), file.added or 0, file.removed or 0))
  end
  vim.api.nvim_buf_set_lines(list, 0, -1, false, names)
  vim.bo[list].buftype, vim.bo[list].bufhidden, vim.bo[list].modifiable = "nofile", "wipe", false
  pcall(vim.api.nvim_buf_set_name, list, ("agentls://worktree/%s/files"):format(entry.agentId))
  vim.wo[list_win].winbar = ("%%#AgentlsReviewHint# %s (read-only) · <CR> shows a file · q closes"):format(entry.branch)
  vim.cmd("rightbelow vsplit")
  local diff_win = vim.api.nvim_get_current_win()
  local diff = vim.api.nvim_create_buf(false, true)
  vim.bo[diff].bufhidden, vim.bo[diff].filetype = "wipe", "diff"
  pcall(vim.api.nvim_buf_set_name, diff, ("agentls://worktree/%s/diff"):format(entry.agentId))
  vim.api.nvim_win_set_buf(diff_win, diff)
  local function show(index)
    local file = files[index]
    if not file then return end
    vim.bo[diff].modifiable = true
    vim.api.nvim_buf_set_lines(diff, 0, -1, false, vim.split((file.diff or ""):gsub("\n$", ""), "\n", { plain = true }))
    vim.bo[diff].modifiable = false
    vim.wo[diff_win].winbar = "%#AgentlsFooter# " .. names[index]:gsub("%%", "%%%%")
  end
  local function close()
    if #vim.api.nvim_list_tabpages() > 1 then vim.cmd.tabclose() end
  end
  for _, bufnr in ipairs({ list, diff }) do
    vim.keymap.set("n", "q", close, { buffer = bufnr, desc = "agentls: close the worktree's diff", nowait = true })
  end
  vim.keymap.set("n", "<CR>", function() show(vim.api.nvim_win_get_cursor(0)[1]) end, { buffer = list, desc = "agentls: show this file's diff" })
  vim.api.nvim_set_current_win(list_win)
  vim.api.nvim_win_set_width(list_win, math.min(50, math.floor(vim.o.columns / 3)))
  show(1)
end

--- Merge or discard a worktree; a merge's conflicts come back as an error with their reasons.
---@param chat agentls.Chat
---@param entry table  a WorktreeEntry
---@param action "merge"|"discard"
function M.resolve(chat, entry, action)
  chat:request("agent/resolveWorktree", { agentId = entry.agentId, action = action }, function(err, result)
    if err or not result then return end
    if not result.resolved then
      vim.notify("agentls: " .. entry.branch .. ": " .. cards.conflicts(result.conflicts or {}, chat.root), vim.log.levels.ERROR)
    end
  end)
end

--- What to do with one worktree: a second pick, a discard confirmed first.
---@param chat agentls.Chat
---@param entry table  a WorktreeEntry
function M.act(chat, entry)
  local actions = entry.status == "missing" and { "discard" } or { "view", "merge", "discard" }
  vim.ui.select(actions, {
    prompt = "agentls: " .. entry.branch,
    kind = "agentls.worktree_action",
    format_item = function(action) return M.ACTIONS[action] end,
  }, function(action)
    if action == "view" then
      chat:request("agent/worktreeDiff", { agentId = entry.agentId }, function(err, result)
        if not err and result then M.review(entry, result.files) end
      end)
    elseif action == "merge" then
      M.resolve(chat, entry, "merge")
    elseif action == "discard" then
      vim.ui.select({ "Discard", "Keep it" }, {
        prompt = ("agentls: discard %s and its changes for good?"):format(entry.branch),
        kind = "agentls.confirm",
      }, function(answer)
        if answer == "Discard" then M.resolve(chat, entry, "discard") end
      end)
    end
  end)
end

--- :AgentWorktrees: the session's worktrees not yet merged or discarded, to act on one.
---@param chat agentls.Chat
function M.pick(chat)
  chat:request("agent/listWorktrees", {}, function(err, result)
    if err or not result then return end
    if #result.worktrees == 0 then
      vim.notify("agentls: no agent worktree waits in this session")
      return
    end
    vim.ui.select(result.worktrees, {
      prompt = "agentls: agents' worktrees",
      kind = "agentls.worktree",
      format_item = cards.worktree_entry,
    }, function(entry)
      if entry and entry.status == "running" then
        vim.notify(("agentls: %s: its agent still works in it"):format(entry.branch), vim.log.levels.WARN)
      elseif entry then
        M.act(chat, entry)
      end
    end)
  end)
end

return M
