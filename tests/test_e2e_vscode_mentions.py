"""The editor's navigation and `@` mentions in the packaged VS Code extension, in a real VS
Code (code-server, driven in Chromium by `clients/vscode/e2e/drive-mentions.mjs`).

The extension announces `experimental.agentls.definition` (and references, workspace
symbols), so the daemon offers GoToDefinition, FindReferences and WorkspaceSymbols; the
scripted model calls them on `greet` in main.ts and VS Code's built-in TypeScript answers
through `vscode.execute*Provider`: the tool results in the daemon's transcript name
`src/util.ts:1:17`, the call at `main.ts:3:13` and the function. Its Diagnostics of app.py
are answered `watched: false` (code-server has Python's grammar, nothing that checks
Python), so the model is told nothing checks the file rather than that it is clean. Then `@`
in the message box offers the active file's problems (with their count), the folder `src/`
and the symbol `greet` (from the editor's workspace symbols); the two picked show as chips
in the box and on the sent message, and the transcript shows the model got the folder's
listing and the symbol's lines. "Problems in main.ts" sent gives the model TypeScript's
error (the daemon asks the editor with `agent/diagnostics`), and in a new chat `@` offers
the first one by its title: the model gets its messages.

Screenshots (`mention-menu.png`, `sent-mentions.png`) stay in
`clients/vscode/e2e/.work/mentions/artifacts`.
Skipped, naming what is missing, without the toolchain of `clients/vscode/e2e/setup.sh`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_e2e_vscode import WORK, build_vsix, drive_scenario


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def test_the_editor_answers_navigation_and_at_mentions_reach_the_model(vsix: Path) -> None:
    work = WORK / "mentions"
    steps = (
        "workbench",
        "typescript loaded",
        "definition",
        "problems offered",
        "folder mention",
        "symbol mention",
        "sent with mentions",
        "daemon transcript",
        "problems sent",
        "session mention",
    )
    drive_scenario("run.sh", work, str(vsix), str(work), "mentions", steps=steps)
    for picture in ("mention-menu.png", "sent-mentions.png"):
        assert (work / "artifacts" / picture).stat().st_size > 0, picture
