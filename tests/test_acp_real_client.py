"""`agentls acp` driven by a real ACP client: acpx, the headless CLI client on npm.

acpx (pinned in tests/acpx/package.json, installed by `npm ci` there, which `.ci/run` does)
starts `python -m agentls acp` as its agent command, the way an editor would, and sends
no agentls `_meta`: the scripted model comes from settings, AGENTLS_PROVIDER and
AGENTLS_SCRIPT in the environment or `.agentls/settings.json` in the project. The tests
check what lands on disk, what acpx prints (its text output, or with `--format json` the
JSON-RPC messages both ways) and the session's agentls transcript.

tests/acpx/package.json overrides acpx's @openclaw/fs-safe (^0.12.0) with 0.13.1: 0.12.0
names optional platform packages that were never published at that version, and `npm ci`
then refuses any lock file ("Missing: @openclaw/fs-safe-darwin-arm64@ from lock file").

acpx keeps its sessions under ~/.acpx and runs a detached "queue owner" per persistent
session: HOME is a temporary directory, the owner's idle TTL is short, every owner still
alive at the end is stopped by its pid, and the socket folder acpx made for that HOME goes.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).parent
ACPX = TESTS / "acpx" / "node_modules" / "acpx" / "dist" / "cli.js"
NODE = shutil.which("node")
AGENT = shlex.join([sys.executable, "-m", "agentls", "acp"])
RUN_TIMEOUT = 120

pytestmark = [
    pytest.mark.skipif(NODE is None, reason="node is not installed (acpx runs on node)"),
    pytest.mark.skipif(
        not ACPX.is_file(),
        reason="acpx is not installed: run `npm ci` in tests/acpx (.ci/run does)",
    ),
]

SOURCE = "x = 1\nprint(x)\n"
READ_THEN_EDIT = [
    {
        "text": "Let me read it.",
        "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "a.py"}}],
    },
    {
        "text": "Now the edit.",
        "tool_calls": [
            {
                "id": "t2",
                "name": "Edit",
                "input": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 2"},
            }
        ],
    },
    {"text": "Changed x to 2 in a.py."},
]


def write_jsonl(path: Path, entries: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(e) + "\n" for e in entries), encoding="utf-8")
    return path


class Acpx:
    """acpx against `agentls acp` in one temporary project, with its own HOME."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.home = root / "home"
        self.agentls_home = root / "agentls"
        self.project = root / "project"
        for folder in (self.home, self.agentls_home, self.project):
            folder.mkdir()
        self.env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("XDG_", "ANTHROPIC_", "OPENAI_", "AZURE_", "AGENTLS_"))
        }
        self.env.update(HOME=str(self.home), AGENTLS_HOME=str(self.agentls_home), NO_COLOR="1")

    def command(self, *args: str, flags: tuple[str, ...] = ()) -> list[str]:
        assert NODE is not None
        return [NODE, str(ACPX), "--agent", AGENT, "--cwd", str(self.project), *flags, *args]

    def run(self, *args: str, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            self.command(*args, flags=flags),
            env=self.env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )

    def transcript(self) -> list[dict[str, Any]]:
        """The one session's agentls transcript records."""
        (path,) = (self.agentls_home / "sessions").glob("*.jsonl")
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]

    def stop_reasons(self) -> list[str]:
        return [r["stopReason"] for r in self.transcript() if r["type"] == "turn"]

    def owner_pids(self) -> list[int]:
        """The pids of the queue owners acpx says are alive for this project's sessions."""
        pids = []
        for lock in (self.home / ".acpx" / "queues").glob("*"):
            with contextlib.suppress(OSError, ValueError):
                pid = json.loads(lock.read_text(encoding="utf-8")).get("pid")
                if isinstance(pid, int):
                    pids.append(pid)
        return pids


def _is_acpx(pid: int) -> bool:
    """Whether `pid` is still an acpx process (a lock file's pid may have been reused)."""
    try:
        return b"acpx" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


def stop(pid: int) -> None:
    """SIGTERM (the owner closes its agent), then wait for the pid to go."""
    if not _is_acpx(pid):
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.1)
    if _is_acpx(pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)


@pytest.fixture
def acpx(tmp_path: Path) -> Iterator[Acpx]:
    client = Acpx(tmp_path)
    yield client
    for pid in client.owner_pids():
        stop(pid)
    # Where acpx puts its queue sockets: /tmp/acpx-<sha256 of HOME, 10 hex digits>.
    digest = hashlib.sha256(str(client.home).encode()).hexdigest()[:10]
    shutil.rmtree(f"/tmp/acpx-{digest}", ignore_errors=True)


def test_one_shot_prompt_edits_the_file_when_acpx_approves(acpx: Acpx) -> None:
    (acpx.project / "a.py").write_text(SOURCE, encoding="utf-8")
    script = write_jsonl(acpx.root / "script.jsonl", READ_THEN_EDIT)
    acpx.env.update(AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))

    done = acpx.run("exec", "change x to 2 in a.py", flags=("--approve-all",))

    assert done.returncode == 0, done.stdout + done.stderr
    assert (acpx.project / "a.py").read_text(encoding="utf-8") == "x = 2\nprint(x)\n"
    out = done.stdout
    assert "[tool] Read a.py (completed)" in out
    assert "[client] session/request_permission" in out
    assert "[client] fs/write_text_file" in out
    assert "[tool] Edit a.py (completed)" in out
    assert "The file a.py has been updated (1 replacement)." in out
    assert out.index("[tool] Edit a.py (completed)") < out.index("Changed x to 2 in a.py.")
    assert out.rstrip().endswith("[done] end_turn")
    assert acpx.stop_reasons() == ["end_turn"]


def test_json_output_shows_the_permission_asked_and_the_denial_kept(acpx: Acpx) -> None:
    (acpx.project / "a.py").write_text(SOURCE, encoding="utf-8")
    script = write_jsonl(acpx.root / "script.jsonl", READ_THEN_EDIT)
    acpx.env.update(AGENTLS_PROVIDER="scripted", AGENTLS_SCRIPT=str(script))

    done = acpx.run("exec", "change x to 2 in a.py", flags=("--deny-all", "--format", "json"))

    assert (acpx.project / "a.py").read_text(encoding="utf-8") == SOURCE
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    requests = {(m["method"], m["id"]): m for m in messages if "method" in m and "id" in m}
    methods = [method for method, _ in requests]
    assert methods[:3] == ["initialize", "session/new", "session/prompt"]
    assert "fs/write_text_file" not in methods

    (asked,) = [m for (method, _), m in requests.items() if method == "session/request_permission"]
    call = asked["params"]["toolCall"]
    assert call["toolCallId"] == "t2" and call["kind"] == "edit"
    assert call["content"] == [
        {
            "type": "diff",
            "path": str(acpx.project / "a.py"),
            "oldText": SOURCE,
            "newText": "x = 2\nprint(x)\n",
        }
    ]
    kinds = {o["kind"] for o in asked["params"]["options"]}
    assert kinds == {"allow_once", "allow_always", "reject_once", "reject_always"}
    answers = [m for m in messages if m.get("id") == asked["id"] and "result" in m]
    assert {"outcome": "selected", "optionId": "reject_once"} in [
        a["result"]["outcome"] for a in answers if "outcome" in a["result"]
    ]

    updates = [m["params"]["update"] for m in messages if m.get("method") == "session/update"]
    edit_status = [u["status"] for u in updates if u.get("toolCallId") == "t2" and "status" in u]
    assert edit_status[0] == "pending" and edit_status[-1] == "failed"
    (prompt_id,) = [i for method, i in requests if method == "session/prompt"]
    (result,) = [
        m["result"]
        for m in messages
        if m.get("id") == prompt_id and "stopReason" in m.get("result", {})
    ]
    assert result["stopReason"] == "end_turn"
    assert acpx.stop_reasons() == ["end_turn"]


def test_persistent_session_prompts_cancel_history_and_resume(acpx: Acpx) -> None:
    """A named session over several acpx runs: prompt, edit, cancel, history, a restarted
    agent that resumes the session, close. The model is chosen by the project's settings
    file, as a user without `_meta` would."""
    (acpx.project / "a.py").write_text(SOURCE, encoding="utf-8")
    script = write_jsonl(
        acpx.root / "script.jsonl",
        [
            {"text": "Hello from turn one."},
            {
                "text": "Reading.",
                "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "a.py"}}],
            },
            {
                "text": "Editing.",
                "tool_calls": [
                    {
                        "id": "e1",
                        "name": "Edit",
                        "input": {
                            "file_path": "a.py",
                            "old_string": "x = 1",
                            "new_string": "x = 3",
                        },
                    }
                ],
            },
            {"text": "Edited."},
            {"text": "Thinking slowly", "hang": True},
            {"text": "After the cancel."},
        ],
    )
    settings = acpx.project / ".agentls" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(
        json.dumps({"provider": "scripted", "script": str(script)}), encoding="utf-8"
    )
    session = ("-s", "work")
    ttl = ("--ttl", "5")

    created = acpx.run("sessions", "new", "--name", "work", flags=ttl)
    assert created.returncode == 0, created.stdout + created.stderr
    session_id = created.stdout.strip().splitlines()[-1]
    assert session_id.startswith("sess_")

    hello = acpx.run("prompt", *session, "say hello", flags=ttl)
    assert hello.returncode == 0, hello.stdout + hello.stderr
    assert "Hello from turn one." in hello.stdout
    assert "[done] end_turn" in hello.stdout

    edit = acpx.run("prompt", *session, "set x to 3", flags=(*ttl, "--approve-all"))
    assert edit.returncode == 0, edit.stdout + edit.stderr
    assert "[tool] Edit a.py (completed)" in edit.stdout
    assert (acpx.project / "a.py").read_text(encoding="utf-8") == "x = 3\nprint(x)\n"

    # A turn that hangs after its text, cancelled from another acpx process.
    out = acpx.root / "slow.out"
    with out.open("w") as sink:
        slow = subprocess.Popen(
            acpx.command("prompt", *session, "think slowly", flags=ttl),
            env=acpx.env,
            stdin=subprocess.DEVNULL,
            stdout=sink,
            stderr=subprocess.STDOUT,
            text=True,
        )
        try:
            deadline = time.monotonic() + RUN_TIMEOUT
            while "Thinking slowly" not in out.read_text() and time.monotonic() < deadline:
                assert slow.poll() is None, out.read_text()
                time.sleep(0.1)
            cancel = acpx.run("cancel", *session, flags=ttl)
            assert cancel.returncode == 0, cancel.stdout + cancel.stderr
            assert slow.wait(timeout=RUN_TIMEOUT) == 0, out.read_text()
        finally:
            if slow.poll() is None:
                slow.kill()
    assert "[done] cancelled" in out.read_text()

    after = acpx.run("prompt", *session, "go on", flags=ttl)
    # Read now: the queue owner leaves 5 s (--ttl) after its last prompt, and the history
    # and list runs below each start an agent of their own (seconds on a slow machine).
    owners = acpx.owner_pids()
    assert "After the cancel." in after.stdout
    # The transcript names a cancelled turn "aborted".
    assert acpx.stop_reasons() == ["end_turn", "end_turn", "aborted", "end_turn"]

    history = acpx.run("sessions", "history", "work", flags=ttl)
    assert history.returncode == 0, history.stdout + history.stderr
    lines = [line.split("\t")[1:] for line in history.stdout.splitlines() if "\t" in line]
    assert lines[0] == ["user", "say hello"]
    assert ["assistant", "After the cancel."] in lines

    # The agent's own session/list names the session by its first prompt.
    listed = acpx.run("sessions", "list", flags=ttl)
    assert listed.returncode == 0, listed.stdout + listed.stderr
    (row,) = [line.split("\t") for line in listed.stdout.splitlines() if line.startswith("sess_")]
    assert row[:3] == [session_id, "say hello", str(acpx.project)]

    # A new agent process: acpx resumes the session, and the model gets the history.
    assert owners, "acpx left no queue owner running for the session"
    for pid in owners:
        stop(pid)
    log = acpx.root / "requests.jsonl"
    later = write_jsonl(acpx.root / "later.jsonl", [{"text": "You first said hello."}])
    settings.write_text(
        json.dumps({"provider": "scripted", "script": str(later), "requestLog": str(log)}),
        encoding="utf-8",
    )
    resumed = acpx.run("prompt", *session, "what did I say first?", flags=ttl)
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "[client] initialize" in resumed.stdout
    assert "[client] session/resume" in resumed.stdout
    assert "You first said hello." in resumed.stdout
    (request,) = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    said = [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text" and not block["text"].startswith("<userContext>")
    ]
    assert said == ["say hello", "set x to 3", "think slowly", "go on", "what did I say first?"]

    closed = acpx.run("sessions", "close", "work", flags=ttl)
    assert closed.returncode == 0, closed.stdout + closed.stderr
