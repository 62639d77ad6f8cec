"""The MCP servers a user turned off in a project, kept in its personal settings file
(`.agentls/settings.local.json`, `disabledMcpServers`) so the next sessions leave them off.

The rest of the file is kept as it was, and it is replaced whole, never half written.
"""

from __future__ import annotations

import json
from pathlib import Path

from agentls.config import local_settings_file
from agentls.permissions.remembered import keep_out_of_git
from agentls.workspace.view import write_atomically

KEY = "disabledMcpServers"


def remember_disabled(cwd: Path, name: str, disabled: bool) -> None:
    """Add `name` to the project's list, or take it out (ValueError, OSError)."""
    path = local_settings_file(cwd)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        data = {}
    except ValueError as exc:
        raise ValueError(f"{path} is not valid JSON ({exc}); the choice was not saved") from exc
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object; the choice was not saved")
    current = data.get(KEY)
    names = [str(n) for n in current] if isinstance(current, list) else []
    names = [n for n in names if n != name] + ([name] if disabled else [])
    if names:
        data[KEY] = names
    else:
        data.pop(KEY, None)
    keep_out_of_git(path.parent)
    write_atomically(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")
