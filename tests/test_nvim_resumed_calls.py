"""Neovim: a chat resumed through `:AgentSessions` titles its tool cards as the live chat
did, from `DisplayMessage.toolCalls` (not from a guess of the block's input).

A real headless Neovim with the plugin (test_nvim.py's set-up) and the real daemon.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from test_nvim import Editor, open_editor, resume_from_list, start

SCRIPT = [
    {
        "tool_calls": [
            # BashOutput's live title names the shell; the block alone gives only the name.
            {"id": "o1", "name": "BashOutput", "input": {"shell_id": "sh_gone"}},
            {"id": "r1", "name": "Read", "input": {"file_path": "app.py"}},
        ]
    },
    {"text": "Looked."},
]


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def cards(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("▸ ")]


def test_a_resumed_chat_titles_its_tool_cards_as_the_live_one_did(editor: Editor) -> None:
    (editor.root / "app.py").write_text("print('app')\n")
    start(editor, SCRIPT)
    editor.nvim.command("AgentAsk look at the shell")
    editor.turn_ended(1, timeout=40)
    session = editor.lua("return require('agentls.chat').get().session_id")
    live = cards(editor.chat_text())
    assert live == ["▸ • BashOutput sh_gone", "▸ ≡ Read app.py"], editor.chat_text()
    editor.nvim.command("AgentNew")
    resume_from_list(editor, "look at the shell")
    editor.wait(f"require('agentls.chat').get(nil, false).session_id == '{session}'")
    resumed: str = editor.lua("return require('agentls.chat').get(nil, false).buffer:text()")
    assert cards(resumed) == live, resumed
