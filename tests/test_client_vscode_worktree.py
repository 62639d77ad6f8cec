"""The VS Code extension's worktree card against a real daemon.

`clients/vscode/test/daemon/worktree.ts` runs the extension's own reducer and its
whole-file View diff code (src/reducer.ts, src/worktreeCard.ts) in node against
`agentls --stdio`: a scripted isolated agent edits a committed file in its worktree, the
card shows its branch and file, the old text comes back whole from the worktree's copy and
agent/worktreeDiff, a merge over the user's own change to the same line lists the conflict on
the card (nothing written), and once that change is undone a merge marks the card through
`worktree_resolved`.
"""

from __future__ import annotations

from pathlib import Path

from vscode_daemon_driver import run_driver

ORIGINAL = 'PORT = 8000\nHOST = "x"\n'


def test_the_worktree_card_views_and_merges_an_isolated_agents_edit(tmp_path: Path) -> None:
    workspace, steps = run_driver(tmp_path, "worktree-daemon", ORIGINAL)
    card = steps["card"]
    assert card["branch"].startswith("agentls/agent_") and card["state"] == "ready", card
    assert card["files"] == [{"path": "app.py", "status": "modified", "added": 1, "removed": 1}]
    # Until the merge, the user's tree is untouched.
    assert card["userFile"] == ORIGINAL
    view = steps["view diff"]
    assert view["relative"] == "app.py"
    assert view["after"] == 'PORT = 9000\nHOST = "x"\n'
    assert view["before"] == ORIGINAL
    conflict = steps["conflict"]
    assert conflict["resolved"] is False
    [listed] = conflict["conflicts"]
    assert listed["path"] == str(workspace / "app.py") and listed["reason"], listed
    assert conflict["userFile"] == ORIGINAL.replace("8000", "7000")  # nothing was written
    merged = steps["merged"]
    assert merged == {"step": "merged", "resolved": True, "state": "merged", "conflicts": []}
    assert (workspace / "app.py").read_text(encoding="utf-8") == 'PORT = 9000\nHOST = "x"\n'
