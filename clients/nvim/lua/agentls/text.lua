-- Words for people: counts with the right plural, labels instead of option ids, paths
-- relative to the workspace.

local M = {}

--- "1 line", "2 lines"; `many` for irregular plurals ("1 model call" needs none).
---@param n integer
---@param one string
---@param many? string
---@return string
function M.count(n, one, many)
  return ("%d %s"):format(n, n == 1 and one or (many or (one .. "s")))
end

-- Permission option kinds as users read them (the same words in every client).
M.OPTION_LABELS = {
  allow_once = "Allow once",
  allow_always = "Always allow",
  reject_once = "Reject",
  reject_always = "Always reject",
}

--- What a permission option is called on screen: its kind's label, else the daemon's name (a
--- plan's options keep theirs: "Approve" is not "Allow once", though it is answered as one).
---@param option { kind?: string, name?: string, optionId: string }
---@return string
function M.option_label(option)
  if vim.startswith(option.optionId or "", "plan_") and option.name then return option.name end
  return M.OPTION_LABELS[option.kind] or option.name or option.optionId
end

--- `path` under `root` as a relative path (others as they are).
---@param path string
---@param root? string
---@return string
function M.relative(path, root)
  if root and vim.startswith(path, root .. "/") then return path:sub(#root + 2) end
  return path
end

--- A message as one line that fits the command line (a longer one would stop Neovim at a
--- hit-enter prompt): its first line, cut with "…" to `width` display cells.
---@param message string
---@param width integer
---@return string
function M.one_line(message, width)
  local parts = vim.split(vim.trim(message), "\n", { plain = true })
  local first, cut = parts[1] or "", #parts > 1
  width = math.max(width, 10)
  if not cut and vim.fn.strdisplaywidth(first) <= width then return first end
  local chars = vim.fn.strchars(first)
  while chars > 0 and vim.fn.strdisplaywidth(vim.fn.strcharpart(first, 0, chars)) > width - 1 do
    chars = chars - 1
  end
  return vim.fn.strcharpart(first, 0, chars) .. "…"
end

return M
