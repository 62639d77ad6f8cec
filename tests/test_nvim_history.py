"""Long histories in Neovim: `:AgentSessions` pages through many sessions ("More…"), and a
resumed long session shows its last messages (`messageLimit`) with `:AgentEarlier` drawing
the pages before them above, in order, until the whole conversation is there.

A real headless Neovim with the plugin (test_nvim.py's set-up) and the real daemon; the
pages are made small (`history.session_page`, `history.message_page`) so a few turns make
several pages.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from test_nvim import VIRTUAL_LINES, Editor, open_editor, resume_from_list, start

TURNS = 5


@pytest.fixture
def editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Editor]:
    with open_editor(tmp_path, monkeypatch) as opened:
        yield opened


def ask(editor: Editor, text: str, turns: int) -> None:
    editor.nvim.command(f"AgentAsk {text}")
    editor.turn_ended(turns, timeout=40)


def test_agent_sessions_pages_with_more(editor: Editor) -> None:
    start(editor, [{"text": f"answer {n}"} for n in range(1, 4)])
    editor.lua("require('agentls.config').options.history.session_page = 2")
    sessions = []
    for n in range(1, 4):
        if n > 1:
            editor.nvim.command("AgentNew")
        ask(editor, f"question {n}", n)
        sessions.append(editor.lua("return require('agentls.chat').get().session_id"))
    first = sessions[0]
    editor.nvim.command("AgentNew")
    resume_from_list(editor, "question 1")
    editor.wait(f"require('agentls.chat').get(nil, false).session_id == '{first}'")
    pages: list[list[str]] = editor.lua("return _G.agentls_pages")
    # Each drawing lists the pages so far (2 sessions a page, under the keys' help);
    # "More…" ends all but the last.
    assert len(pages) >= 2, pages
    for earlier in pages[:-1]:
        assert earlier[-1] == "More…", pages
    assert "More…" not in pages[-1], pages
    assert len(pages[0]) == 4, pages
    titles = [t.split("  (")[0] for t in pages[-1][1:]]
    assert titles.count("question 1") == 1 and titles.count("question 3") == 1, pages
    assert "answer 1" in editor.chat_text()


def in_order(text: str, turns: range) -> bool:
    """Each turn's question, then its answer, turn after turn."""
    where = [text.index(f"{what} {n}") for n in turns for what in ("question", "answer")]
    return where == sorted(where)


def hint_shown(editor: Editor) -> bool:
    virtual: list[dict[str, Any]] = editor.lua(VIRTUAL_LINES)
    return any(v["text"].startswith("⋯ earlier messages") for v in virtual)


def test_a_long_session_resumes_with_its_last_messages_and_earlier_ones_load_above(
    editor: Editor,
) -> None:
    start(editor, [{"text": f"answer {n}"} for n in range(1, TURNS + 1)])
    for n in range(1, TURNS + 1):
        ask(editor, f"question {n}", n)
    session = editor.lua("return require('agentls.chat').get().session_id")
    whole = editor.chat_text()
    editor.nvim.command("AgentNew")
    editor.lua("require('agentls.config').options.history.message_page = 4")
    editor.lua(
        "local chat = require('agentls.chat').resume(...) require('agentls.window').open(chat)",
        str(editor.root),
        session,
    )
    text = editor.chat_text()
    # The last 4 messages: turns 4 and 5.
    assert "question 4" in text and "answer 5" in text, text
    assert "question 3" not in text and "answer 3" not in text, text
    assert hint_shown(editor)
    editor.nvim.command("AgentEarlier")
    editor.wait("require('agentls.chat').get().buffer:text():find('question 2') ~= nil")
    text = editor.chat_text()
    assert "question 1" not in text, text
    assert in_order(text, range(2, TURNS + 1)), text
    assert hint_shown(editor)
    editor.nvim.command("AgentEarlier")
    editor.wait("require('agentls.chat').get().buffer:text():find('question 1') ~= nil")
    text = editor.chat_text()
    # The whole conversation, in order, each part once, as a full resume draws it.
    for n in range(1, TURNS + 1):
        for part in (f"> question {n}", f"answer {n}"):
            assert text.count(part) == 1, (part, text)
    assert in_order(text, range(1, TURNS + 1)), text
    assert [line for line in text.splitlines() if line.strip()] == [
        line for line in whole.splitlines() if line.strip()
    ], (text, whole)
    assert not hint_shown(editor)
    # Every user message has its header above it, the earlier pages' too.
    virtual: list[dict[str, Any]] = editor.lua(VIRTUAL_LINES)
    assert [v["text"] for v in virtual if v["above"]].count("▍You") == TURNS, virtual
    assert not editor.lua("return require('agentls.chat').get().older_cursor")
    # Resumed again, then a new chat in the same buffer: no line about earlier messages.
    editor.lua(
        "local chat = require('agentls.chat').resume(...) require('agentls.window').open(chat)",
        str(editor.root),
        session,
    )
    assert hint_shown(editor)
    editor.nvim.command("AgentNew")
    assert not hint_shown(editor)
