-- When something happened, as a history list says it at a glance: "just now", "5 min ago",
-- "3 h ago", "yesterday", then "Nov 3" (and "Nov 3, 2025" in another year). Days are the
-- local calendar's (os.date, so $TZ and its daylight saving time), never 24-hour spans.
-- Pure: the time "now" is passed in, so tests fix it.

local M = {}

-- English like the rest of the plugin, never the locale's (os.date("%b") follows LC_TIME).
local MONTHS = { "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec" }

--- Days from 1970-01-01 to a date of the proleptic Gregorian calendar.
---@param year integer
---@param month integer  1–12
---@param day integer
---@return integer
local function days_from_civil(year, month, day)
  -- Years counted from March, so the leap day ends a year (Howard Hinnant's derivation).
  local y = month <= 2 and year - 1 or year
  local era = math.floor(y / 400)
  local year_of_era = y - era * 400
  local day_of_year = math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1
  local day_of_era = year_of_era * 365 + math.floor(year_of_era / 4) - math.floor(year_of_era / 100) + day_of_year
  return era * 146097 + day_of_era - 719468
end

--- Seconds since the epoch of an ISO 8601 time ("2026-11-27T05:12:33.123Z", or with an
--- offset such as "+02:00"); nil when it is not one.
---@param text string
---@return integer|nil
function M.parse_iso(text)
  if type(text) ~= "string" then return nil end
  local year, month, day, hour, min, sec, rest = text:match("^(%d%d%d%d)-(%d%d)-(%d%d)[T ](%d%d):(%d%d):(%d%d)(.*)$")
  if not year then return nil end
  rest = rest:gsub("^[.,]%d+", "")
  local offset = 0
  if rest ~= "Z" and rest ~= "" then
    local sign, off_hour, off_min = rest:match("^([+-])(%d%d):?(%d%d)$")
    if not sign then return nil end
    offset = (tonumber(off_hour) * 3600 + tonumber(off_min) * 60) * (sign == "-" and -1 or 1)
  end
  local days = days_from_civil(tonumber(year), tonumber(month), tonumber(day))
  return days * 86400 + tonumber(hour) * 3600 + tonumber(min) * 60 + tonumber(sec) - offset
end

--- The local calendar day of `time` as a day number (consecutive days differ by 1).
---@param date osdate
---@return integer
local function day_number(date)
  return days_from_civil(date.year, date.month, date.day)
end

--- `time` as a history list shows it, seen from `now` (both seconds since the epoch).
---@param time integer
---@param now integer
---@return string
function M.ago(time, now)
  local elapsed = now - time
  -- A clock a little ahead (another machine's) is still "just now".
  if math.abs(elapsed) < 60 then return "just now" end
  local date, today = os.date("*t", time) --[[@as osdate]], os.date("*t", now) --[[@as osdate]]
  local days = day_number(today) - day_number(date)
  if elapsed > 0 and elapsed < 3600 then return ("%d min ago"):format(math.floor(elapsed / 60)) end
  if elapsed > 0 and days == 0 then return ("%d h ago"):format(math.floor(elapsed / 3600)) end
  if elapsed > 0 and days == 1 then return "yesterday" end
  local short = ("%s %d"):format(MONTHS[date.month], date.day)
  if date.year ~= today.year then short = ("%s, %d"):format(short, date.year) end
  return short
end

--- An ISO 8601 time as `ago` says it; the text itself when it is not one ("" for no text).
---@param iso any
---@param now integer
---@return string
function M.ago_iso(iso, now)
  local time = M.parse_iso(iso)
  if time then return M.ago(time, now) end
  return type(iso) == "string" and iso or ""
end

return M
