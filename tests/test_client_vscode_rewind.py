"""The VS Code extension's rewind, fork and turn changes against a real daemon.

`clients/vscode/test/daemon/rewind.ts` runs the extension's own reducer and rewind logic
(src/reducer.ts, src/rewind.ts) in node against `agentls --stdio`: a scripted turn edits a
committed file and a shell command creates another, a second turn answers. The turn's
Changes (agent/turnDiff) list both files, the shell's included; Edit & resend from the
second message (agent/forkSession) gives a chat that ends before it; a file the user changed
since is listed as a conflict by the preview of the code; the rewind preview
(agent/rewind with dryRun) lists what would go back and changes nothing on disk, its diff
giving back the old file whole; the rewind of both puts the files back and the panel drops
the removed messages, as the daemon's history does.
"""

from __future__ import annotations

from pathlib import Path

from vscode_daemon_driver import run_driver

ORIGINAL = 'PORT = 8000\nHOST = "x"\n'
EDITED = 'PORT = 9000\nHOST = "x"\n'


def test_rewind_fork_and_changes_from_the_panels_user_messages(tmp_path: Path) -> None:
    workspace, steps = run_driver(tmp_path, "rewind-daemon", ORIGINAL)
    turns = steps["turns"]
    # Both user messages know their turn: Rewind… and Changes are offered on them.
    assert [u["text"] for u in turns["users"]] == ["change the port", "anything else?"]
    assert all(u["turnId"] for u in turns["users"]), turns
    assert turns["app"] == EDITED and turns["gen"] == "made by a command\n"

    # Changes: the edit and what the shell command created.
    assert steps["changes"]["files"] == [
        {"path": "app.py", "created": False, "added": 1, "removed": 1},
        {"path": "gen.txt", "created": True, "added": 1, "removed": 0},
    ]

    # Edit & resend: a new session that ends just before the second message.
    fork = steps["fork"]
    assert fork["sessionId"] != fork["source"]
    assert fork["shown"] == ["user:change the port", "assistant:Changed the port and made gen.txt."]

    # A file the user changed since the agent did: a conflict, left alone by the preview.
    conflict = steps["conflict"]
    assert conflict["rows"] == [
        "$(file) gen.txt | deleted (the agent created it) +0 −1",
        "$(warning) app.py | left alone: changed since the agent last wrote it",
    ]
    assert conflict["app"] == EDITED.replace("9000", "7000")

    # The preview changes nothing, and its diff gives the file back whole.
    preview = steps["preview"]
    assert preview["rows"] == [
        "$(file) app.py | restored +1 −1",
        "$(file) gen.txt | deleted (the agent created it) +0 −1",
        "$(comment-discussion) 8 messages leave the conversation | ",
    ]
    assert preview["app"] == EDITED and preview["gen"] == "made by a command\n"
    assert preview["restoredApp"] == ORIGINAL
    assert len(preview["shown"]) == 4

    # The rewind of both: the files back, the panel and the daemon without the two turns.
    rewound = steps["rewound"]
    assert rewound["app"] == ORIGINAL and rewound["gen"] is None
    assert (workspace / "app.py").read_text(encoding="utf-8") == ORIGINAL
    assert not (workspace / "gen.txt").exists()
    assert rewound["removed"] == 8
    assert rewound["shown"] == ["notice:Rewound: 2 files restored, 8 messages removed."]
    assert rewound["daemonMessages"] == 0
