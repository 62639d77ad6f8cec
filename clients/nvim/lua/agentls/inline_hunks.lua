-- The hunks of an inline edit's proposal and the text a user's choice among them leaves.
-- Pure: old and new text in, hunks and text out (no buffers, no extmarks).

local M = {}

---@class agentls.InlineHunk
---@field old_start integer  first old line it replaces (1-based); for a pure insertion, the line it follows (0: the top)
---@field old_count integer  old lines it removes (0: an insertion)
---@field new_lines string[] the lines it puts there
---@field decision? "accepted"|"rejected"

--- A text's lines, and whether it ends with a newline ("" has no lines).
---@param text string
---@return string[] lines
---@return boolean ends_with_newline
function M.split(text)
  if text == "" then return {}, false end
  local ends = text:sub(-1) == "\n"
  return vim.split(ends and text:sub(1, -2) or text, "\n", { plain = true }), ends
end

--- The line hunks that turn `old` into `new`, in file order.
---@param old string
---@param new string
---@return agentls.InlineHunk[]
function M.compute(old, new)
  local new_lines = M.split(new)
  -- vim.diff (xdiff) compares whole texts; a missing final newline of either side counts as a
  -- change of its last line, which is what a reviewer should see too.
  local diff = vim.diff or vim.text.diff
  local indices = diff(old, new, { result_type = "indices", algorithm = "histogram" })
  local hunks = {}
  ---@cast indices integer[][]
  for _, h in ipairs(indices) do
    local start_a, count_a, start_b, count_b = h[1], h[2], h[3], h[4]
    table.insert(hunks, {
      old_start = start_a,
      old_count = count_a,
      new_lines = vim.list_slice(new_lines, start_b, start_b + count_b - 1),
    })
  end
  return hunks
end

--- The text `old` becomes with only the accepted hunks applied (`new` itself when all are,
--- so its final newline wins; otherwise `old`'s is kept).
---@param old string
---@param new string
---@param hunks agentls.InlineHunk[]
---@return string
function M.accepted_text(old, new, hunks)
  local all = #hunks > 0
  for _, hunk in ipairs(hunks) do
    if hunk.decision ~= "accepted" then all = false end
  end
  if all then return new end
  local old_lines, ends = M.split(old)
  local out, next_old = {}, 1
  for _, hunk in ipairs(hunks) do
    -- An insertion follows its line; a change starts at it.
    local first = hunk.old_count == 0 and hunk.old_start + 1 or hunk.old_start
    for i = next_old, first - 1 do table.insert(out, old_lines[i]) end
    next_old = first
    if hunk.decision == "accepted" then
      vim.list_extend(out, hunk.new_lines)
      next_old = first + hunk.old_count
    end
  end
  for i = next_old, #old_lines do table.insert(out, old_lines[i]) end
  local text = table.concat(out, "\n")
  if ends and #out > 0 then text = text .. "\n" end
  return text
end

--- Whether every hunk has a decision.
---@param hunks agentls.InlineHunk[]
---@return boolean
function M.all_decided(hunks)
  for _, hunk in ipairs(hunks) do
    if not hunk.decision then return false end
  end
  return true
end

--- Whether some hunk was accepted.
---@param hunks agentls.InlineHunk[]
---@return boolean
function M.any_accepted(hunks)
  for _, hunk in ipairs(hunks) do
    if hunk.decision == "accepted" then return true end
  end
  return false
end

return M
