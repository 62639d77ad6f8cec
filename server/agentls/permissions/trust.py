"""Whether the user trusts what a workspace's own files would run (its hooks, its MCP
servers), remembered under AGENTLS_HOME.

A project's settings file or `.mcp.json` can make agentls run any command; a repository
the user just cloned must not do that unasked. Each answer is kept per project and per kind
together with a digest of what was shown, so a changed file is asked about again.
"""

from __future__ import annotations

import hashlib
import json
import logging
from pathlib import Path
from typing import Any

from agentls.events import PermissionOption
from agentls.workspace.view import write_atomically

log = logging.getLogger(__name__)
TRUST_FILE = "workspace-trust.json"


def trust_options(subject: str) -> tuple[PermissionOption, ...]:
    """The question's options, as every client already answers permission requests: the
    "always" answers are remembered, the "once" ones hold for this session only."""
    return (
        PermissionOption("allow_always", f"Trust {subject}", "allow_always"),
        PermissionOption("allow_once", "Trust them for this session", "allow_once"),
        PermissionOption("reject_once", "Don't run them this session", "reject_once"),
        PermissionOption("reject_always", "Never run them", "reject_always"),
    )


def digest_of(value: Any) -> str:
    """A digest of what the user is shown (JSON, keys sorted)."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def trusted(home: Path, key: str, digest: str) -> bool | None:
    """The remembered answer about `key` (a project, and what of it); None when not asked
    yet, or when what was asked about has changed since."""
    entry = _read(home).get(key)
    if not isinstance(entry, dict) or entry.get("digest") != digest:
        return None
    answer = entry.get("trusted")
    return answer if isinstance(answer, bool) else None


def remember(home: Path, key: str, digest: str, answer: bool) -> None:
    """Keep the user's answer about `key` (a failure is only logged)."""
    entries = _read(home)
    entries[key] = {"digest": digest, "trusted": answer}
    try:
        home.mkdir(parents=True, exist_ok=True)
        write_atomically(home / TRUST_FILE, json.dumps(entries, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        log.warning("the answer about %s was not saved: %s", key, exc)


def _read(home: Path) -> dict[str, Any]:
    try:
        data = json.loads((home / TRUST_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s is not readable (%s): every workspace is asked about again", home, exc)
        return {}
    return data if isinstance(data, dict) else {}
