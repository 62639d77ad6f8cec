"""`agentls run` asking about an apply_patch call: every file's diff, coloured like Edit's,
before the one question, and the answer applies the whole patch."""

from __future__ import annotations

from pathlib import Path

from test_cli_permission_prompt import on_a_terminal
from test_cli_warm import environment

PATCH = "\n".join(
    [
        "*** Begin Patch",
        "*** Add File: notes.md",
        "+# Notes",
        "*** Update File: app.py",
        "@@",
        "-port = 8000",
        "+port = 9000",
        "*** Delete File: old.txt",
        "*** End Patch",
    ]
)


def test_every_file_of_a_patch_is_shown_before_the_one_question(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / ".agentls").mkdir(parents=True)
    (project / ".agentls" / "settings.json").write_text('{"applyPatchTool": true}')
    (project / "app.py").write_text("host = 'a'\nport = 8000\n", encoding="utf-8")
    (project / "old.txt").write_text("gone\n", encoding="utf-8")
    call = {"name": "apply_patch", "input": {"input": PATCH}}
    env = {**environment(tmp_path, [{"tool_calls": [call]}, {"text": "Patched."}], idle="3")}
    env["TERM"] = "xterm"
    env.pop("NO_COLOR", None)
    code, _out, shown = on_a_terminal(["--no-daemon", "patch it"], "y", project, env, True)
    assert code == 0, shown
    question = shown.index("Allow Patch notes.md, app.py, old.txt?")
    before = shown[:question]
    assert before.count("? permission requested") == 1
    assert "\x1b[1m+++ b/notes.md\x1b[0m" in before
    assert "\x1b[32m+# Notes\x1b[0m" in before
    assert "\x1b[31m-port = 8000\x1b[0m" in before
    assert "\x1b[32m+port = 9000\x1b[0m" in before
    assert "\x1b[1m--- a/old.txt\x1b[0m" in before
    assert "\x1b[1m+++ /dev/null\x1b[0m" in before
    assert "\x1b[31m-gone\x1b[0m" in before
    assert "[a] Always allow Edit(./notes.md), Edit(./app.py), Edit(./old.txt)" in shown
    assert "→ Allow once" in shown[question:]
    assert (project / "app.py").read_text(encoding="utf-8") == "host = 'a'\nport = 9000\n"
    assert (project / "notes.md").read_text(encoding="utf-8") == "# Notes\n"
    assert not (project / "old.txt").exists()
