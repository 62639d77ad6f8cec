"""`agentls sessions list|show|rename|delete|export`: the stored sessions, from the terminal.

Sessions are read from their transcripts under AGENTLS_HOME, the same files the daemon
writes; a session id may be shortened to any prefix that names one session.
"""

from __future__ import annotations

import asyncio
import datetime as dt
import json
import os
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TextIO

from agentls.config import default_home
from agentls.messages import Message, TextBlock, ToolResultBlock, ToolUseBlock, message_to_dict
from agentls.session.deletion import delete_saved
from agentls.session.index import indexed_metas
from agentls.session.store import (
    SessionMeta,
    load_transcript,
    meta_path,
    transcript_path,
    write_meta,
)

USER_CONTEXT = "<userContext>"
EXIT_OK, EXIT_DECLINED, EXIT_USAGE = 0, 1, 2


class SessionNotFound(Exception):
    """No session, or more than one, has the id (prefix) given."""


def home() -> Path:
    return Path(os.environ["AGENTLS_HOME"]) if os.environ.get("AGENTLS_HOME") else default_home()


def find(prefix: str, metas: list[SessionMeta]) -> SessionMeta:
    """The one session whose id is or starts with `prefix`."""
    matches = [m for m in metas if m.session_id == prefix] or [
        m for m in metas if m.session_id.startswith(prefix)
    ]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFound(f"no session {prefix!r} under {home()}")
    raise SessionNotFound(f"{prefix!r} names {len(matches)} sessions; give more of the id")


def list_sessions(cwd: Path | None, as_json: bool, out: TextIO) -> int:
    metas = indexed_metas(home())
    if cwd is not None:
        wanted = cwd.resolve()
        resolved = {c: Path(c).resolve() for c in {m.cwd for m in metas}}
        metas = [m for m in metas if resolved[m.cwd] == wanted]
    if as_json:
        out.write(json.dumps([m.to_json() for m in metas], ensure_ascii=False, indent=2) + "\n")
        return EXIT_OK
    if not metas:
        if cwd is None:
            out.write("no sessions\n")
        else:
            out.write(f"no sessions in {cwd} (--all lists every directory's)\n")
        return EXIT_OK
    for meta in metas:
        when = dt.datetime.fromtimestamp(meta.updated_at).strftime("%Y-%m-%d %H:%M")
        turns = f"{meta.turns} turn{'' if meta.turns == 1 else 's'}"
        place = "" if cwd is not None else f"  {meta.cwd}"
        out.write(f"{meta.session_id}  {when}  {turns:>9}  {meta.title or '(no message)'}{place}\n")
    return EXIT_OK


def render_markdown(meta: SessionMeta, messages: Iterable[Message]) -> str:
    """The conversation as markdown: what was said, each tool call and its result."""
    lines = [f"# {meta.title or meta.session_id}", "", f"`{meta.session_id}` in `{meta.cwd}`", ""]
    for message in messages:
        if message.role == "user":
            said = [
                b.text
                for b in message.content
                if isinstance(b, TextBlock) and not b.text.startswith(USER_CONTEXT)
            ]
            if said:
                lines += ["## You", "", *said, ""]
            for block in message.content:
                if isinstance(block, ToolResultBlock):
                    text = block.text().strip()
                    shown = text if len(text) <= 2000 else text[:2000] + "\n…"
                    mark = "failed" if block.is_error else "result"
                    lines += [
                        f"<details><summary>{mark}</summary>",
                        "",
                        "```",
                        shown,
                        "```",
                        "</details>",
                        "",
                    ]
            continue
        lines += ["## agentls", ""]
        for block in message.content:
            if isinstance(block, TextBlock) and block.text:
                lines += [block.text, ""]
            elif isinstance(block, ToolUseBlock):
                arguments = json.dumps(block.input, ensure_ascii=False)
                lines += [f"**{block.name}** `{arguments[:300]}`", ""]
    return "\n".join(lines)


def show(prefix: str, out: TextIO) -> int:
    meta = find(prefix, indexed_metas(home()))
    loaded = load_transcript(transcript_path(home(), meta.session_id))
    out.write(render_markdown(loaded.meta, loaded.display))
    return EXIT_OK


def export(prefix: str, fmt: str, target: Path | None, out: TextIO) -> int:
    meta = find(prefix, indexed_metas(home()))
    loaded = load_transcript(transcript_path(home(), meta.session_id))
    if fmt == "json":
        body = {
            "session": loaded.meta.to_json(),
            "messages": [message_to_dict(m) for m in loaded.display],
        }
        text = json.dumps(body, ensure_ascii=False, indent=2) + "\n"
    else:
        text = render_markdown(loaded.meta, loaded.display)
    if target is None:
        out.write(text)
    else:
        target.write_text(text, encoding="utf-8")
        sys.stderr.write(f"wrote {target}\n")
    return EXIT_OK


def rename(prefix: str, title: str, out: TextIO) -> int:
    meta = find(prefix, indexed_metas(home()))
    meta.title = title.strip()
    write_meta(meta_path(transcript_path(home(), meta.session_id)), meta)
    out.write(f"{meta.session_id}: {meta.title}\n")
    return EXIT_OK


def terminal_answer() -> Callable[[str], str] | None:
    """What asks the user on a terminal; None with no terminal (a script deletes what it
    names without a question)."""
    return input if sys.stdin.isatty() and sys.stdout.isatty() else None


def delete(prefix: str, yes: bool, out: TextIO, answer: Callable[[str], str] | None) -> int:
    """Delete a session for good (as agent/deleteSession does for a closed one): asked
    y/N first when `answer` reads the terminal, unless `yes`."""
    meta = find(prefix, indexed_metas(home()))
    if answer is not None and not yes:
        title = meta.title or "(no message)"
        try:
            reply = answer(f"Delete session {meta.session_id} ({title}) for good? [y/N] ")
        except EOFError:
            reply = ""
        if reply.strip().lower() not in ("y", "yes"):
            out.write("not deleted\n")
            return EXIT_DECLINED
    path = transcript_path(home(), meta.session_id)
    warnings = asyncio.run(delete_saved(path))
    indexed_metas(home())  # the index file drops the entry now
    for warning in warnings:
        sys.stderr.write(f"agentls sessions: warning: {warning}\n")
    out.write(f"deleted {meta.session_id}\n")
    return EXIT_OK
