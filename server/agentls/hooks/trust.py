"""Whether the user trusts a workspace's own hooks, remembered under AGENTLS_HOME.

A project's settings file can make agentls run any command; a repository the user just
cloned must not do that unasked. The answer is kept per project directory together with
a digest of its hooks, so a changed hooks section is asked about again.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Any

from agentls.events import PermissionOption
from agentls.workspace.view import write_atomically

log = logging.getLogger(__name__)
TRUST_FILE = "hooks-trust.json"
# The permission request's options, as every client already answers them: the "always"
# answers are remembered, the "once" ones hold for this session only.
TRUST_OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption("allow_always", "Trust this workspace's hooks", "allow_always"),
    PermissionOption("allow_once", "Trust them for this session", "allow_once"),
    PermissionOption("reject_once", "Don't run them this session", "reject_once"),
    PermissionOption("reject_always", "Never run them", "reject_always"),
)


def trusted(home: Path, project: Path, digest: str) -> bool | None:
    """The remembered answer for these hooks of `project`; None when not asked yet."""
    entry = _read(home).get(str(project))
    if not isinstance(entry, dict) or entry.get("digest") != digest:
        return None
    answer = entry.get("trusted")
    return answer if isinstance(answer, bool) else None


def remember(home: Path, project: Path, digest: str, answer: bool) -> None:
    """Keep the user's answer for these hooks of `project` (a failure is only logged)."""
    entries = _read(home)
    entries[str(project)] = {"digest": digest, "trusted": answer}
    try:
        home.mkdir(parents=True, exist_ok=True)
        write_atomically(home / TRUST_FILE, json.dumps(entries, indent=2, sort_keys=True) + "\n")
    except OSError as exc:
        log.warning("the answer about the hooks of %s was not saved: %s", project, exc)


def _read(home: Path) -> dict[str, Any]:
    try:
        data = json.loads((home / TRUST_FILE).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s is not readable (%s): every workspace's hooks are asked about", home, exc)
        return {}
    return data if isinstance(data, dict) else {}
