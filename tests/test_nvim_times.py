"""When a session was last used, as `:AgentSessions` says it: lua/agentls/times.lua alone
(a fixed "now", each bucket, local days in several time zones, daylight saving time and the
turn of the year), then the list itself in a real Neovim driving the real daemon.

Each time zone is a POSIX TZ string (no tz database needed) given to its own headless Neovim,
since os.date reads $TZ when the process starts.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_nvim import KEEP_PAGES, NVIM, PLUGIN, Editor, open_editor, pynvim, start

TOKYO = "JST-9"
UTC = "UTC0"
NEW_YORK = "EST5EDT,M3.2.0,M11.1.0"


@pytest.fixture(scope="module")
def zones() -> Iterator[dict[str, Any]]:
    """A headless Neovim per time zone, the plugin on its runtimepath."""
    opened: dict[str, Any] = {}
    try:
        for zone in (TOKYO, UTC, NEW_YORK):
            argv = ["env", f"TZ={zone}", NVIM, "--embed", "--headless", "--clean", "-n"]
            opened[zone] = pynvim.attach("child", argv=argv)
            opened[zone].exec_lua("vim.opt.runtimepath:prepend(...)", str(PLUGIN))
        yield opened
    finally:
        for nvim in opened.values():
            nvim.close()


AGO = """
local times = require('agentls.times')
local time, now = ...
return times.ago(times.parse_iso(time), times.parse_iso(now))
"""


def ago(nvim: Any, moment: str, now: str) -> str:
    said: str = nvim.exec_lua(AGO, moment, now)
    return said


def test_iso_times_parse_with_z_an_offset_or_no_fraction_and_others_are_refused(
    zones: dict[str, Any],
) -> None:
    nvim = zones[TOKYO]

    def parse(text: Any) -> Any:
        return nvim.exec_lua("return require('agentls.times').parse_iso(...)", text)

    assert parse("1970-01-01T00:00:00.000Z") == 0
    assert parse("2026-11-27T05:12:33.123Z") == 1795756353
    assert parse("2026-11-27T05:12:33Z") == 1795756353
    assert parse("2026-11-27T07:12:33+02:00") == 1795756353
    assert parse("2026-11-27T00:12:33-0500") == 1795756353
    # A leap day and the day after it.
    assert parse("2024-03-01T00:00:00Z") - parse("2024-02-29T00:00:00Z") == 86400
    for refused in ("yesterday", "2026-11-27", "2026-11-27T05:12:33 CET", 42):
        assert parse(refused) is None, refused
    assert nvim.exec_lua("return require('agentls.times').ago_iso('soon', 0)") == "soon"
    assert nvim.exec_lua("return require('agentls.times').ago_iso(vim.NIL, 0)") == ""


NOW = "2026-11-27T05:00:00.000Z"  # 14:00 in Tokyo, 05:00 UTC


@pytest.mark.parametrize(
    ("moment", "said"),
    [
        ("2026-11-27T04:59:30.000Z", "just now"),
        # A clock a little ahead is still now.
        ("2026-11-27T05:00:40.000Z", "just now"),
        ("2026-11-27T04:59:00.000Z", "1 min ago"),
        ("2026-11-27T04:55:00.000Z", "5 min ago"),
        ("2026-11-27T04:00:01.000Z", "59 min ago"),
        ("2026-11-27T04:00:00.000Z", "1 h ago"),
        # Tokyo's midnight: still today there.
        ("2026-11-26T15:00:00.000Z", "14 h ago"),
        ("2026-11-26T14:59:59.000Z", "yesterday"),
        ("2026-11-25T15:00:00.000Z", "yesterday"),
        ("2026-11-25T14:59:59.000Z", "Nov 25"),
        ("2026-11-03T01:00:00.000Z", "Nov 3"),
        # New Year's Day in Tokyo is still the old year in UTC.
        ("2025-12-31T16:00:00.000Z", "Jan 1"),
        ("2025-12-31T14:59:59.000Z", "Dec 31, 2025"),
        # Much later than now (another machine's clock): its date.
        ("2026-11-28T00:00:00.000Z", "Nov 28"),
    ],
)
def test_each_bucket_in_tokyo(zones: dict[str, Any], moment: str, said: str) -> None:
    assert ago(zones[TOKYO], moment, NOW) == said


def test_the_day_is_the_local_calendars_not_utcs(zones: dict[str, Any]) -> None:
    # 01:00 on the 27th in Tokyo, 16:00 on the 26th in UTC.
    moment = "2026-11-26T16:00:00.000Z"
    assert ago(zones[TOKYO], moment, NOW) == "13 h ago"
    assert ago(zones[UTC], moment, NOW) == "yesterday"
    assert ago(zones[TOKYO], "2025-12-31T16:00:00.000Z", NOW) == "Jan 1"
    assert ago(zones[UTC], "2025-12-31T16:00:00.000Z", NOW) == "Dec 31, 2025"
    # Half past midnight on New Year's Day, Tokyo: an hour and a half ago was last year's
    # last evening, and that is yesterday.
    assert ago(zones[TOKYO], "2025-12-31T14:00:00.000Z", "2025-12-31T15:30:00.000Z") == (
        "yesterday"
    )
    assert ago(zones[TOKYO], "2025-12-31T15:10:00.000Z", "2025-12-31T15:30:00.000Z") == (
        "20 min ago"
    )


def test_days_with_daylight_saving_changes_in_new_york(zones: dict[str, Any]) -> None:
    nvim = zones[NEW_YORK]
    # November 1, 2026 has 25 hours: 00:30 EDT to 23:30 EST is 24 hours, the same day.
    assert ago(nvim, "2026-11-01T04:30:00.000Z", "2026-11-02T04:30:00.000Z") == "24 h ago"
    # March 8, 2026 has 23 hours: midnight EST to 23:30 EDT is 22.5 hours.
    assert ago(nvim, "2026-03-08T05:00:00.000Z", "2026-03-09T03:30:00.000Z") == "22 h ago"
    assert ago(nvim, "2026-03-08T04:59:00.000Z", "2026-03-09T03:30:00.000Z") == "yesterday"


# The list's lines as drawn last, and the sessions they stand for.
LISTED = """
local view
for _, win in ipairs(vim.api.nvim_list_wins()) do
  local buf = vim.api.nvim_win_get_buf(win)
  if vim.api.nvim_buf_get_name(buf):find('agentls://sessions/', 1, true) then view = buf end
end
return vim.api.nvim_buf_get_lines(view, 0, -1, false)
"""


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]


def short_date(moment: int, now: int) -> str:
    """`moment`'s local date as the list shows one of another day ($TZ is Neovim's too)."""
    date, today = time.localtime(moment), time.localtime(now)
    short = f"{MONTHS[date.tm_mon - 1]} {date.tm_mday}"
    return short if date.tm_year == today.tm_year else f"{short}, {date.tm_year}"


def show_sessions(editor: Editor, drawn: int) -> list[str]:
    editor.nvim.command("AgentSessions")
    editor.wait(f"#_G.agentls_pages > {drawn}")
    listed: list[str] = editor.lua(LISTED)
    return listed


def test_agent_sessions_says_when_each_session_was_used_newest_first(editor: Editor) -> None:
    start(editor, [{"text": "one"}, {"text": "two"}])
    editor.nvim.command("AgentAsk question 1")
    editor.turn_ended(1, timeout=40)
    editor.nvim.command("AgentNew")
    editor.nvim.command("AgentAsk question 2")
    editor.turn_ended(2, timeout=40)
    editor.lua(KEEP_PAGES)
    listed = show_sessions(editor, 0)
    # Just used: no ISO time, the newest first, as the daemon sorts them.
    fresh = re.compile(r"^question (\d)  \(1 turn, (just now|\d+ min ago)\)$")
    matched = [fresh.match(line) for line in listed[1:]]
    assert all(matched), listed
    assert [m.group(1) for m in matched if m] == ["2", "1"], listed
    assert not any(re.search(r"\d\d:\d\d|T\d\d", line) for line in listed), listed
    # Seen again five minutes and two days after question 1's session was last used.
    updated = editor.lua(
        "return require('agentls.times').parse_iso(...)",
        editor.lua(
            "local c = require('agentls.client').get(...) "
            "local r = require('agentls.client').request_sync(c, 'agent/listSessions', "
            "{ cwd = ... }) return r.sessions[2].updatedAt",
            str(editor.root),
        ),
    )
    editor.nvim.input("q")
    editor.lua("_G.agentls_real_time = _G.agentls_real_time or os.time")
    for later, said in ((300, "5 min ago"), (2 * 86400, None)):
        editor.lua(
            "local at = ... os.time = function(t) return t and _G.agentls_real_time(t) or at end",
            updated + later,
        )
        drawn = editor.lua("return #_G.agentls_pages")
        listed = show_sessions(editor, drawn)
        if said is None:
            said = short_date(updated, updated + later)
        assert listed[2] == f"question 1  (1 turn, {said})", listed
        editor.nvim.input("q")
    editor.lua("os.time = _G.agentls_real_time")
