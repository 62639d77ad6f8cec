"""Plan approval and the power-user features' faces in the packaged VS Code extension, in
a real VS Code (code-server, driven in Chromium by `clients/vscode/e2e/drive-plan.mjs`).

The session opens in plan mode (the `agentls.permissionMode` setting). The scripted model
presents a plan with `ExitPlanMode`; the panel shows it as a card (the plan rendered as
markdown, Approve / Approve with edits accepted / Keep planning with a feedback box /
Reject) that holds the keyboard. `n` opens the feedback box, and Ctrl+Enter sends the
plan back with it (the model reads it and presents a second draft). `a` approves that
with edits accepted: the chat says the mode
changed, the status bar shows `acceptEdits`, and the same turn writes the file without
asking and ends. Then `/` in the message box completes the session's commands and the
project's skill (tagged "skill"), `!` is hinted, and `/context` is drawn as a bar. Back in
the default mode (`/mode default`), an `apply_patch` of two files asks once: the card lists
both (kind, name), one opens in the diff editor, and allowed, both land on disk.

Checked on the panel, the disk and the daemon's transcript. Screenshots (the plan card as
`plan-card.png`, the bar as `context-bar.png`, the patch as `patch-card.png`) stay in
`clients/vscode/e2e/.work/plan/artifacts`.
Skipped, naming what is missing, without the toolchain of `clients/vscode/e2e/setup.sh`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from test_e2e_vscode import WORK, build_vsix, drive_scenario


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def test_a_plan_approved_in_a_real_vscode_is_carried_out(vsix: Path) -> None:
    work = WORK / "plan"
    steps = (
        "workbench",
        "plan card",
        "keep planning",
        "approved",
        "disk",
        "daemon transcript",
        "slash completion",
        "context bar",
        "patch",
    )
    drive_scenario("run.sh", work, str(vsix), str(work), "plan", steps=steps)
    assert (work / "ws" / "hello.txt").read_text(encoding="utf-8") == "hello from the plan\n"
    assert (work / "ws" / "docs" / "new.md").read_text(encoding="utf-8") == "# New\n"
    for picture in ("plan-card.png", "context-bar.png", "patch-card.png"):
        assert (work / "artifacts" / picture).stat().st_size > 0, picture
