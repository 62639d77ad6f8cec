"""The history actions in Neovim (bench_nvim's section 12) on a turn that wrote 50 files,
with the real daemon and the scripted model: `:AgentChanges` (agent/turnDiff to its tab
open), a rewind's preview (agent/rewind with dryRun to its tab open) and the rewind of code
and conversation (to the chat redrawn without the turn).

Each run is a fresh Neovim and daemon with one such turn. The daemon's settings turn
`editorDiagnostics` off: with it on, every Write waits `diagnosticsWait` (1.5 s) for the
editor's language servers to look again, so the 50-file turn alone took about 78 s a run
and the rows seemed to hang after the first rewind.
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
FILES = 50
# Seconds a step may take before the run is called stuck (and says where).
STEP_TIMEOUT = 120.0

SETUP = """
local plugin, cmd, script = ...
vim.opt.runtimepath:prepend(plugin)
vim.cmd("runtime plugin/agentls.lua")
require("agentls").setup({ cmd = cmd, provider = "scripted", script = script })
require("agentls.config").options.session.permissionMode = "bypassPermissions"
_G.bench = { done = false, rewound = false }
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsEvent", callback = function(args)
  if args.data.type == "turn_completed" then _G.bench.done = true end
end })
vim.api.nvim_create_autocmd("User", { pattern = "AgentlsRewound", callback = function()
  _G.bench.rewound = true
end })
"""

# The chat's first user message (with its turn) and one history action on it.
STEP = """
local step = ...
local rewind = require("agentls.rewind")
local chat = require("agentls.chat").get()
local message = rewind.messages(chat)[1]
if step == "changes" then rewind.changes(chat, 1)
elseif step == "preview" then rewind.preview(chat, message, "both")
else rewind.apply(chat, message.turn, "both", false) end
"""


def _until(nvim: Any, condition: str, what: str) -> float:
    """Seconds until the Lua `condition` holds (polled over RPC: a few ms added)."""
    started = time.perf_counter()
    while not nvim.exec_lua(f"return {condition}"):
        if time.perf_counter() - started > STEP_TIMEOUT:
            raise RuntimeError(f"{what}: not done after {STEP_TIMEOUT:g} s")
        time.sleep(0.002)
    return time.perf_counter() - started


def _timed(nvim: Any, step: str, done: str) -> float:
    """Seconds from a step's start to `done` holding."""
    started = time.perf_counter()
    nvim.exec_lua(STEP, step)
    _until(nvim, done, step)
    return time.perf_counter() - started


def _workspace(root: Path) -> Path:
    """The project, the script of a turn writing FILES files, and the daemon's settings."""
    workspace = root / "ws"
    (workspace / ".git").mkdir(parents=True)
    writes = [
        {"id": f"w{i}", "name": "Write", "input": {"file_path": f"f{i}.txt", "content": "x\n"}}
        for i in range(FILES)
    ]
    turn = [json.dumps({"tool_calls": writes}), json.dumps({"text": "written"})]
    (root / "script.jsonl").write_text("\n".join(turn) + "\n", encoding="utf-8")
    (root / "home").mkdir()
    settings = {"editorDiagnostics": False}
    (root / "home" / "settings.json").write_text(json.dumps(settings), encoding="utf-8")
    return workspace


def _run(pynvim: Any, nvim_path: str) -> tuple[float, float, float, float, int]:
    """One Neovim and daemon: the turn, then the three steps, timed; the files left."""
    with tempfile.TemporaryDirectory(prefix="agentls-bench-nvim-") as tmp:
        root = Path(tmp)
        workspace = _workspace(root)
        env = daemon_env(root / "home", XDG_STATE_HOME=str(root / "state"))
        nvim = pynvim.attach("child", argv=[nvim_path, "--embed", "--headless", "--clean", "-n"])
        try:
            nvim.exec_lua("for k, _ in pairs(vim.fn.environ()) do vim.env[k] = nil end")
            nvim.exec_lua("for k, v in pairs(...) do vim.env[k] = v end", env)
            nvim.command(f"cd {workspace}")
            nvim.exec_lua(SETUP, str(PLUGIN), DAEMON, str(root / "script.jsonl"))
            started = time.perf_counter()
            nvim.exec_lua("require('agentls.chat').get(nil, true):send('write the files')")
            _until(nvim, "_G.bench.done", "the turn")
            turn = time.perf_counter() - started
            steps = []
            for step in ("changes", "preview"):
                steps.append(_timed(nvim, step, "#vim.api.nvim_list_tabpages() > 1"))
                nvim.command("tabclose")
            steps.append(_timed(nvim, "apply", "_G.bench.rewound"))
            left = len(list(workspace.glob("f*.txt")))
        finally:
            nvim.close()
    return turn, steps[0], steps[1], steps[2], left


def rewind_rows(pynvim: Any, nvim_path: str, quick: bool) -> list[Row]:
    """:AgentChanges, a rewind preview and a rewind of a 50-file turn, with the daemon."""
    runs = 2 if quick else 5
    samples: dict[str, list[float]] = {"turn": [], "changes": [], "preview": [], "applied": []}
    left = 0
    for _ in range(runs):
        turn, changes, preview, applied, left = _run(pynvim, nvim_path)
        samples["turn"].append(turn)
        samples["changes"].append(changes)
        samples["preview"].append(preview)
        samples["applied"].append(applied)
    section = f"{SECTION} (rewind)"
    note = f"{left} of {FILES} files left after the rewind"
    return [
        *timing_rows(
            section, f"the turn: {FILES} Writes", samples["turn"], "editorDiagnostics off"
        ),
        *timing_rows(section, ":AgentChanges, turnDiff → tab open", samples["changes"]),
        *timing_rows(section, "rewind preview, dryRun → tab open", samples["preview"]),
        *timing_rows(section, "rewind both → chat redrawn", samples["applied"], note),
    ]
