"""8c mentions (rows of bench_context): what an attached folder and an `agentls:session/…`
mention cost when the turn starts, and how much they add to <userContext>.

A folder of 20,000 files, listed through git and by a walk (both cut at 500 entries), and
a saved session of 5,000 messages read for its last words (capped at 8,000 characters).
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Callable
from pathlib import Path

from agentls.context.listing import list_directory
from agentls.context.prompt import Attachment, user_context
from agentls.messages import Message, TextBlock, new_id, user_text
from agentls.session.mentions import session_mention
from agentls.session.records import SessionStarted
from agentls.session.store import SessionMeta, Transcript, transcript_path
from agentls.workspace.view import WorkspaceView
from harness import Row, timing_rows

SECTION = "8c mentions in <userContext>"
FILES = 20_000
MESSAGES = 5_000


def _folder(root: Path) -> Path:
    """20,000 files, 100 a folder, two levels down."""
    for n in range(FILES):
        path = root / f"pkg{n // 1000}" / f"mod{n // 100 % 10}" / f"f{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n", encoding="utf-8")
    return root


def _session(home: Path, cwd: Path) -> str:
    session_id = new_id("sess")
    meta = SessionMeta(session_id, str(cwd), provider="scripted", model="scripted")
    transcript = Transcript(transcript_path(home, session_id), meta)
    transcript.write(SessionStarted(session_id, str(cwd), "scripted", "scripted", {}))
    for n in range(MESSAGES // 2):
        turn = new_id("turn")
        transcript.record_message(user_text(f"question {n} " + "words " * 40), turn)
        reply = Message("assistant", (TextBlock(f"answer {n} " + "more words " * 60),))
        transcript.record_message(reply, turn)
    transcript.touch(title="a long session")
    transcript.close()
    return session_id


def _timed(work: Callable[[], object], runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        samples.append(time.perf_counter() - start)
    return samples


def mention_rows(root: Path, runs: int) -> list[Row]:
    """The folder listing (git and walk), a session mention, and the context's size."""
    walked = _folder(root / "walked")
    tracked = _folder(root / "tracked")
    subprocess.run(["git", "init", "-q"], cwd=tracked, check=True)
    subprocess.run(["git", "add", "-A"], cwd=tracked, check=True)
    listing_git = _timed(lambda: list_directory(tracked), runs)
    listing_walk = _timed(lambda: list_directory(walked), runs)
    view = WorkspaceView([root])
    bare = len(user_context(view, root, first=False))
    with_folder = len(user_context(view, root, first=False, attachments=[Attachment(tracked)]))
    home = root / "home"
    session_id = _session(home, root)
    # The first read maps the transcript (and saves the map); later ones use the saved map.
    cold = _timed(lambda: session_mention(home, session_id), 1)
    warm = _timed(lambda: session_mention(home, session_id), runs)
    text = session_mention(home, session_id).text
    return [
        *timing_rows(SECTION, f"folder of {FILES:,} files, git ls-files", listing_git),
        *timing_rows(SECTION, f"folder of {FILES:,} files, walk", listing_walk),
        Row(SECTION, "user context, bare", float(bare), "chars"),
        Row(
            SECTION,
            "user context with the folder (500 entries)",
            float(with_folder),
            "chars",
            f"+{with_folder - bare:,} chars",
        ),
        *timing_rows(SECTION, f"session mention of {MESSAGES:,} messages, first read", cold),
        *timing_rows(SECTION, f"session mention of {MESSAGES:,} messages, map saved", warm),
        Row(SECTION, "session mention's text", float(len(text)), "chars", "cap 8,000"),
    ]
