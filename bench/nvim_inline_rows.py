"""Inline edit in Neovim (bench_nvim's section 12): `:AgentEdit` against the real daemon and
the scripted model, and a large proposal's review drawn in the source buffer.

With the daemon: a selection of a 4-line file and `:AgentEdit`; the time from the command to
the proposal shown in the buffer (agent/inlineEdit, a model call, the Edit's
permission_request, the hunks drawn), and from `cR` (every hunk rejected) to the turn's end.
Each run is a turn of one session (rejected, so the file stays as it was for the next one).

Without a daemon: a 2,000-line file whose proposal changes every tenth line (200 hunks) shown
as extmarks, one hunk decided by `ca` (every hunk is redrawn), and `cA` answering with the
accepted text.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path
from typing import Any

from harness import DAEMON, Row, daemon_env, timing_rows

SECTION = "12 nvim"
PLUGIN = Path(__file__).resolve().parent.parent / "clients" / "nvim"

SETUP = """
local plugin, cmd, script = ...
vim.opt.runtimepath:prepend(plugin)
vim.cmd("runtime plugin/agentls.lua")
require("agentls").setup({ cmd = cmd, provider = "scripted", script = script })
_G.bench = { opened = 0, ended = 0 }
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsInlineReviewOpen",
  callback = function() _G.bench.opened = _G.bench.opened + 1 end })
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsEvent", callback = function(args)
  if args.data.type == "turn_completed" then _G.bench.ended = _G.bench.ended + 1 end
end })
"""

EDIT = {
    "file_path": "app.py",
    "old_string": "a = 1\nb = 2\nc = 3",
    "new_string": "a = 10\nb = 2\nc = 30",
}


def _until(nvim: Any, condition: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not nvim.exec_lua(f"return {condition}"):
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {condition}")
        time.sleep(0.002)


def daemon_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    """`:AgentEdit` → the proposal in the buffer, and `cR` → the turn's end, with the daemon."""
    runs = 3 if quick else 10
    shown: list[float] = []
    answered: list[float] = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-inline-") as tmp:
        root = Path(tmp)
        workspace = root / "ws"
        (workspace / ".git").mkdir(parents=True)
        (workspace / "app.py").write_text("a = 1\nb = 2\nc = 3\nd = 4\n", encoding="utf-8")
        turn = [{"tool_calls": [{"id": "e", "name": "Edit", "input": EDIT}]}, {"text": "Done."}]
        # One more turn than measured: the first starts the daemon and is not counted.
        lines = [json.dumps(entry) for _ in range(runs + 1) for entry in turn]
        script = root / "script.jsonl"
        script.write_text("\n".join(lines) + "\n", encoding="utf-8")
        env = daemon_env(root / "home", XDG_STATE_HOME=str(root / "state"))
        nvim = pynvim.attach("child", argv=[nvim_path, "--embed", "--headless", "--clean", "-n"])
        try:
            nvim.exec_lua("for k, _ in pairs(vim.fn.environ()) do vim.env[k] = nil end")
            nvim.exec_lua("for k, v in pairs(...) do vim.env[k] = v end", env)
            nvim.command(f"cd {workspace}")
            nvim.exec_lua(SETUP, str(PLUGIN), DAEMON, str(script))
            nvim.command("edit app.py")
            for run in range(runs + 1):
                started = time.perf_counter()
                nvim.command("1,3AgentEdit make a and c ten times bigger")
                _until(nvim, f"_G.bench.opened > {run}")
                opened = time.perf_counter()
                nvim.feedkeys("cR", "x")
                _until(nvim, f"_G.bench.ended > {run}")
                if run > 0:
                    shown.append(opened - started)
                    answered.append(time.perf_counter() - opened)
        finally:
            nvim.close()
    section = f"{SECTION} (inline edit)"
    return [
        *timing_rows(section, ":AgentEdit → proposal shown in the buffer", shown, "scripted model"),
        *timing_rows(section, "cR (all rejected) → turn ended", answered),
    ]


INLINE_REVIEW = """
local path, lines = ...
local old, new = {}, {}
for i = 1, lines do
  old[i] = ("line %d = %d"):format(i, i)
  new[i] = i % 10 == 5 and ("line %d = %d  -- changed"):format(i, i * 2) or old[i]
end
vim.fn.writefile(old, path)
vim.cmd.edit(vim.fn.fnameescape(path))
local answered = {}
local chat = { respond = function(_, _, option, text) answered = { option, text and #text } end }
local event = { requestId = "r" .. vim.uv.hrtime(), options = {}, inlineEdit = true,
  diff = { path = path, oldText = table.concat(old, "\\n") .. "\\n",
    newText = table.concat(new, "\\n") .. "\\n" } }
local review = require("agentls.inline_review")
local started = vim.uv.hrtime()
review.open(chat, { event = event, state = "pending" })
local shown = (vim.uv.hrtime() - started) / 1e9
local hunks = #review.get(event.requestId).hunks
started = vim.uv.hrtime()
vim.api.nvim_feedkeys("ca", "x", false)
local decided = (vim.uv.hrtime() - started) / 1e9
started = vim.uv.hrtime()
vim.api.nvim_feedkeys("cA", "x", false)
local finished = (vim.uv.hrtime() - started) / 1e9
vim.cmd("bwipeout!")
return { shown, decided, finished, hunks, answered[1] }
"""


def review_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    """An inline edit's 200 hunks drawn in a 2,000-line buffer, one decided, all accepted."""
    runs = 5 if quick else 20
    shown: list[float] = []
    decided: list[float] = []
    finished: list[float] = []
    nvim = pynvim.attach("child", argv=[nvim_path, "--embed", "--headless", "--clean", "-n"])
    try:
        nvim.exec_lua("vim.opt.runtimepath:prepend(...)", str(PLUGIN))
        with tempfile.TemporaryDirectory(prefix="agentls-bench-inline-") as tmp:
            for _ in range(runs):
                drawn, one, answered, hunks, option = nvim.exec_lua(
                    INLINE_REVIEW, str(Path(tmp) / "big.py"), 2000
                )
                shown.append(drawn)
                decided.append(one)
                finished.append(answered)
    finally:
        nvim.close()
    section = f"{SECTION} (inline edit, no daemon)"
    return [
        *timing_rows(section, "2,000 lines, 200 hunks shown", shown, f"{hunks} hunks"),
        *timing_rows(section, "one hunk decided (ca, all redrawn)", decided),
        *timing_rows(section, "the rest accepted (cA) and answered", finished, str(option)),
    ]


def inline_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    return daemon_rows(pynvim, nvim_path, quick) + review_rows(pynvim, nvim_path, quick)
