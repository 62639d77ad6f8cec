"""Changes and Edit & resend on the panel's user messages of the packaged VS Code
extension, in a real VS Code (code-server, driven in Chromium by
`clients/vscode/e2e/drive-fork.mjs`).

The workspace is a git work tree; the scripted model's first turn edits `app.py` and runs
a Bash command (allowed by a project rule) that makes `made-by-bash.txt`; a second turn
answers another message. Changes on turn 1's message (agent/turnDiff) lists both files in
a quick pick, the shell's file included, and opens the picked one in the diff editor.
Edit & resend on turn 2's message (agent/forkSession with its messageId) opens a new chat
that shows turn 1 only, with turn 2's text in the box; edited and sent, the fork's
transcript under AGENTLS_HOME holds turn 1 and the new text but not turn 2, and the
original transcript is byte for byte as it was; History brings the original chat back
with both turns. Screenshots (`fork-01-changes.png`, `fork-02-resent.png`,
`fork-03-original.png`) stay in `clients/vscode/e2e/.work/fork/artifacts`. Skipped,
naming what is missing, without the toolchain of `clients/vscode/e2e/setup.sh`.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from test_e2e_vscode import WORK, build_vsix, drive_scenario


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def test_changes_and_edit_and_resend_in_a_real_vscode(vsix: Path) -> None:
    work = WORK / "fork"
    steps = ("workbench", "two turns", "changes", "edit and resend", "transcripts", "original kept")
    output = drive_scenario("run-fork.sh", work, str(vsix), str(work), steps=steps)
    # Checked again here on disk: the shell's file and the edit, and the two transcripts.
    ws = work / "ws"
    assert (ws / "made-by-bash.txt").read_text(encoding="utf-8") == "x"
    assert "PORT = 9000" in (ws / "app.py").read_text(encoding="utf-8")
    found = json.loads(next(line for line in output.splitlines() if line.startswith("{")))
    sessions = work / "agentls-home" / "sessions"
    assert found["original"] != found["fork"]
    assert (sessions / found["original"]).exists() and (sessions / found["fork"]).exists()
    for picture in ("fork-01-changes.png", "fork-02-resent.png", "fork-03-original.png"):
        assert (work / "artifacts" / picture).stat().st_size > 0, picture
