"""Inline edit in the packaged VS Code extension, in a real VS Code (code-server, driven in
Chromium by `clients/vscode/e2e/drive-inline.mjs`).

Lines 2-10 of `values.py` are selected and "agentls: Edit Selection…" is given an
instruction. The session is in acceptEdits, yet the scripted model's one Edit (two hunks
far apart) is asked about, and shown in the editor itself: each hunk's old line above its
proposed one, with Accept / Reject CodeLenses and Accept All / Reject All. The first hunk
is accepted and the second rejected: only the first lands on disk (through the daemon's
write lane, the buffer saved), the model is told what was left out, and the chat shows
the turn (the instruction, the answer) without the review. The answer's second Edit
is reviewed next and accepted with Ctrl+Enter. Rewind… on the turn's message
(code only) then puts the file back. A second inline edit, stopped with Escape while
its change is shown, leaves the buffer and the file as they were.

Checked on the editor, the disk, the panel and the daemon's transcript. The inline diff's
screenshot is `inline-diff.png` in `clients/vscode/e2e/.work/inline/artifacts`.
Skipped, naming what is missing, without the toolchain of `clients/vscode/e2e/setup.sh`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_e2e_vscode import WORK, build_vsix, drive_scenario

OLD = "".join(f"line{n} = {n}\n" for n in range(1, 13))


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def test_an_inline_edit_is_reviewed_hunk_by_hunk_in_the_editor_and_rewound(vsix: Path) -> None:
    work = WORK / "inline"
    steps = (
        "workbench",
        "selection",
        "instruction",
        "inline diff",
        "accept one hunk",
        "reject the other",
        "second edit by key",
        "chat",
        "daemon transcript",
        "rewind",
        "escape stops it",
    )
    drive_scenario("run-inline.sh", work, str(vsix), str(work), steps=steps)
    # Rewound: the file is as it was before the inline edit.
    assert (work / "ws" / "values.py").read_text(encoding="utf-8") == OLD
    assert (work / "artifacts" / "inline-diff.png").stat().st_size > 0
