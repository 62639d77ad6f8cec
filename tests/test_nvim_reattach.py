"""Neovim quits mid-turn and starts again: the plugin comes back to the running turn.

Two headless Neovims (test_nvim.py's set-up, the real plugin) one after the other in the
same root and state folder, joined to one real `agentls --tcp` daemon (`connect =
"discover"`), which keeps the turn running when the first one quits. The second resumes
the session by itself, says so in the chat, shows the turn's text once, answers the
permission request that waited, and sees the turn end.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from editor_tcp_daemon import TcpDaemon, tcp_daemon
from test_nvim import NVIM, Editor, environment, pynvim, start

WRITE = {"id": "w1", "name": "Write", "input": {"file_path": "new.txt", "content": "hi\n"}}
STORY = " ".join(f"word{i}" for i in range(40))
SCRIPT: list[dict[str, Any]] = [
    {"text": STORY, "chunk": 8, "delay": 0.05, "tool_calls": [WRITE]},
    {"text": "The file is written."},
]


@contextlib.contextmanager
def neovim(root: Path, daemon: TcpDaemon, log: Path) -> Iterator[Editor]:
    """A headless Neovim in `root`, set up to join `daemon`; quit when done (if not already)."""
    nvim = pynvim.attach("child", argv=[NVIM, "--embed", "--headless", "--clean", "-n"])
    editor = Editor(nvim, root, log)
    try:
        nvim.command(f"cd {root}")
        editor.lua("vim.env.XDG_RUNTIME_DIR = ...", daemon.env["XDG_RUNTIME_DIR"])
        start(editor, SCRIPT, connect="discover")
        yield editor
    finally:
        with contextlib.suppress(Exception):
            nvim.command("qa!")
        nvim.close()


def test_neovim_started_again_mid_turn_comes_back_to_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path / "ws"
    (root / ".git").mkdir(parents=True)
    for key, value in environment(tmp_path).items():
        monkeypatch.setenv(key, value)
    log = tmp_path / "requests.jsonl"
    with tcp_daemon(tmp_path) as daemon:
        with neovim(root, daemon, log) as first:
            first.nvim.command("AgentAsk write the file")
            first.wait("require('agentls.chat').all()[1].buffer:text():find('word1') ~= nil")
        with neovim(root, daemon, log) as second:
            [ended] = second.turn_ended(timeout=40)
            assert ended["stopReason"] == "end_turn"
            text = second.chat_text()
            assert "re-attached to the turn that was running" in text, text
            # The history and the events sent again draw each part once.
            for part in (STORY, "> write the file", "▸ ✎ Write new.txt", "The file is written."):
                assert text.count(part) == 1, (part, text)
            assert "→ Allow once" in text, text
            assert (root / "new.txt").read_text() == "hi\n"
            assert not second.lua("return require('agentls.chat').all()[1].running")
