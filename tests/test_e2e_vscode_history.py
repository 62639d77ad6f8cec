"""History's Delete in the packaged VS Code extension, in a real VS Code (code-server,
driven in Chromium by `clients/vscode/e2e/drive-history.mjs`).

Three chats are sent with the scripted model (Alpha, Beta, Gamma); Beta and Gamma are
closed, so History lists them as saved sessions beside Alpha, the chat shown. Beta's trash
button and the modal's Delete remove it: the list read again has no Beta row, its
transcript, listing entry and folder are gone from `AGENTLS_HOME/sessions`, and Gamma is
still listed and resumes with its messages. Deleting Gamma, then the chat shown, leaves an
empty chat (not a chat on a dead session) and a notification saying the session was
deleted; a message sent there starts a new session. Screenshots
(`history-01-delete.png`, `history-02-shown-deleted.png`) stay in
`clients/vscode/e2e/.work/history/artifacts`. Skipped, naming what is missing, without the
toolchain of `clients/vscode/e2e/setup.sh`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_e2e_vscode import WORK, build_vsix, drive_scenario


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def test_history_deletes_a_saved_session_and_the_shown_one(vsix: Path) -> None:
    work = WORK / "history"
    steps = ("workbench", "three sessions", "delete saved", "other resumed", "delete shown")
    drive_scenario("run-history.sh", work, str(vsix), str(work), steps=steps)
