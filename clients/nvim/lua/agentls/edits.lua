-- workspace/applyEdit from the daemon: the built-in applier, then what it leaves undone.
-- It never saves, skips an edit for a newer buffer version while answering `applied: true`,
-- leaves the buffers it had to load listed, and ends a created file with an extra line.

local config = require("agentls.config")

local M = {}

--- The files an edit touches, with the version each TextDocumentEdit expects.
local function targets(edit)
  local files, created = {}, {}
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.kind == "create" then
      created[vim.uri_to_fname(change.uri)] = true
    elseif change.textDocument then
      -- A closed file's edit has no version (nil would drop the entry).
      files[vim.uri_to_fname(change.textDocument.uri)] = change.textDocument.version or vim.NIL
    end
  end
  for uri in pairs(edit.changes or {}) do
    files[vim.uri_to_fname(uri)] = vim.NIL
  end
  return files, created
end

local function buffer_of(fname)
  local bufnr = vim.fn.bufnr(fname)
  return bufnr ~= -1 and bufnr or nil
end

--- Why the edit cannot apply to a buffer that moved on since the daemon made it, or nil.
local function stale(fname, version)
  local bufnr = buffer_of(fname)
  if not bufnr or version == vim.NIL or version == nil or not vim.api.nvim_buf_is_loaded(bufnr) then
    return nil
  end
  local current = vim.lsp.util.buf_versions[bufnr]
  if current and current ~= version then
    return ("%s changed in the editor (version %d, the edit is for %d)"):format(fname, current, version)
  end
end

--- A file the agent created holds exactly the text sent: no extra last line, and no
--- final newline unless the text ends with one.
local function fix_created(bufnr, text_ends_with_newline)
  local count = vim.api.nvim_buf_line_count(bufnr)
  local last = vim.api.nvim_buf_get_lines(bufnr, count - 1, count, false)[1]
  if count > 1 and last == "" then
    vim.api.nvim_buf_set_lines(bufnr, count - 1, count, false, {})
  end
  vim.bo[bufnr].fixendofline = false
  vim.bo[bufnr].endofline = text_ends_with_newline
end

local function inserted_text(edit, fname)
  for _, change in ipairs(edit.documentChanges or {}) do
    if change.textDocument and vim.uri_to_fname(change.textDocument.uri) == fname then
      local parts = {}
      for _, e in ipairs(change.edits) do table.insert(parts, e.newText) end
      return table.concat(parts)
    end
  end
  return ""
end

--- Write a buffer as `:update` does, without running autocommands (formatters would
--- change the text the agent just wrote).
local function write(bufnr)
  if not vim.bo[bufnr].modified then return true end
  -- A file read without a final newline keeps it missing.
  if not vim.bo[bufnr].endofline then vim.bo[bufnr].fixendofline = false end
  local ok, err = pcall(vim.api.nvim_buf_call, bufnr, function()
    vim.cmd("silent noautocmd update")
  end)
  if not ok then
    vim.notify("agentls: could not write " .. vim.api.nvim_buf_get_name(bufnr) .. ": " .. tostring(err), vim.log.levels.WARN)
  end
  return ok
end

function M.apply(_, params, ctx)
  local client = vim.lsp.get_client_by_id(ctx.client_id)
  if not client then return { applied = false, failureReason = "no agentls client" } end
  local edit = params.edit
  local files, created = targets(edit)
  local loaded_before = {}
  for fname, version in pairs(files) do
    local why = stale(fname, version)
    if why then return { applied = false, failureReason = why } end
    local bufnr = buffer_of(fname)
    loaded_before[fname] = bufnr ~= nil and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buflisted
  end
  for fname in pairs(created) do
    local bufnr = buffer_of(fname)
    loaded_before[fname] = loaded_before[fname] or (bufnr ~= nil and vim.api.nvim_buf_is_loaded(bufnr) and vim.bo[bufnr].buflisted)
  end
  local ok, err = pcall(vim.lsp.util.apply_workspace_edit, edit, client.offset_encoding)
  if not ok then return { applied = false, failureReason = tostring(err) } end
  for fname in pairs(created) do
    local bufnr = buffer_of(fname)
    if bufnr then fix_created(bufnr, inserted_text(edit, fname):sub(-1) == "\n") end
  end
  if config.options.save_edits then
    for fname in pairs(vim.tbl_extend("force", {}, files, created)) do
      local bufnr = buffer_of(fname)
      if bufnr and vim.api.nvim_buf_is_loaded(bufnr) then
        write(bufnr)
        -- A buffer loaded only for this edit goes again, unless a window shows it.
        if not loaded_before[fname] and #vim.fn.win_findbuf(bufnr) == 0 and not vim.bo[bufnr].modified then
          pcall(vim.api.nvim_buf_delete, bufnr, {})
        end
      end
    end
  end
  return { applied = true }
end

return M
