-- A tool call's card in the chat: "▸", the icon of the call's kind and its title, then a
-- line per file it touches (relative to the workspace, ":line" when given) that the title
-- does not already end with. A live call (tool_call, then tool_call_update) and a resumed
-- one (DisplayMessage.toolCalls) are drawn by the same function from the same fields, so a
-- resumed chat shows what the live one did. Pure, like lines.lua: values in, lines out.

local words = require("agentls.text")

local M = {}

---@class agentls.ToolCall  what a card shows of a call
---@field title string
---@field kind? string       read, edit, delete, move, search, execute, think, fetch or other
---@field locations? { path: string, line?: integer }[]

M.PREFIX = "▸ "
M.LOCATION_PREFIX = "  @ "
-- A call that touches many files (a patch) lists this many, then how many more.
M.MAX_LOCATIONS = 5

-- One display cell each, in fonts without icons; `chat.tool_icons` replaces any of them.
M.ICONS = {
  read = "≡",
  edit = "✎",
  delete = "⊖",
  move = "⇄",
  search = "⌕",
  execute = "$",
  think = "∴",
  fetch = "⇣",
  other = "•",
}

--- A location as the card shows it: "src/app.py:12".
---@param location { path: string, line?: integer }
---@param root? string  the workspace root
---@return string
function M.location(location, root)
  local path = words.relative(tostring(location.path), root)
  -- Location lines count from 0 (as LSP's); people count from 1.
  if type(location.line) == "number" then return ("%s:%d"):format(path, location.line + 1) end
  return path
end

--- The icon of `kind` (nil for a call of no known kind: an older daemon's resumed history).
---@param kind? string
---@param icons table<string, string|false>
---@return string|nil
function M.icon(kind, icons)
  if type(kind) ~= "string" then return nil end
  local icon = icons[kind]
  if icon == nil then icon = icons.other end
  if not icon or icon == "" then return nil end
  return icon
end

--- The card's lines, and the byte range of the icon on the first one (to highlight it).
---@param call agentls.ToolCall
---@param root? string  the workspace root: paths under it are shown relative
---@param icons? table<string, string|false>  kind -> icon (M.ICONS by default)
---@return agentls.Line[] lines
---@return [integer, integer]|nil icon  first byte and end byte of the icon
function M.lines(call, root, icons)
  local icon = M.icon(call.kind, icons or M.ICONS)
  local title = type(call.title) == "string" and call.title or ""
  local head = M.PREFIX .. (icon and (icon .. " ") or "") .. title
  local out = { { head } }
  -- A location the title already ends with ("Read app.py") is not said twice.
  local places = {}
  for _, location in ipairs(type(call.locations) == "table" and call.locations or {}) do
    local place = M.location(location, root)
    if not vim.endswith(title, " " .. place) then table.insert(places, place) end
  end
  for i, place in ipairs(places) do
    if i > M.MAX_LOCATIONS then
      place = "… " .. words.count(#places - M.MAX_LOCATIONS, "more file")
    end
    table.insert(out, { M.LOCATION_PREFIX .. place, "AgentlsToolLocation" })
    if i > M.MAX_LOCATIONS then break end
  end
  return out, icon and { #M.PREFIX, #M.PREFIX + #icon } or nil
end

return M
