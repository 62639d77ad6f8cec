"""What is installed: `$AGENTLS_HOME/plugins.json`, the plugins (where each is, where it
came from, whether it is enabled) and the marketplaces added.

    {"plugins": {"name": {"path": "/abs", "source": "PATH|URL|name@market",
                          "enabled": true, "cloned": false}},
     "marketplaces": {"name": {"path": "/abs", "source": "PATH|URL", "cloned": true}}}

`cloned` marks a folder agentls made under AGENTLS_HOME (removed with the entry); a local
path the user gave is referenced in place and never deleted.
"""

from __future__ import annotations

import json
import logging
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agentls.workspace.view import write_atomically

log = logging.getLogger(__name__)
STATE_FILE = "plugins.json"


@dataclass(frozen=True, slots=True)
class Installed:
    path: str
    source: str
    enabled: bool = True
    cloned: bool = False


@dataclass(frozen=True, slots=True)
class MarketplaceEntry:
    path: str
    source: str
    cloned: bool = False


@dataclass(slots=True)
class PluginState:
    plugins: dict[str, Installed] = field(default_factory=dict)
    marketplaces: dict[str, MarketplaceEntry] = field(default_factory=dict)

    @classmethod
    def read(cls, home: Path) -> PluginState:
        """The state under `home`; an unreadable file is logged and read as empty."""
        try:
            data = json.loads((home / STATE_FILE).read_text(encoding="utf-8"))
        except FileNotFoundError:
            return cls()
        except (OSError, ValueError) as exc:
            log.warning("%s is not readable (%s): no plugins are loaded", home / STATE_FILE, exc)
            return cls()
        if not isinstance(data, dict):
            return cls()
        return cls(
            _entries(data.get("plugins"), Installed),
            _entries(data.get("marketplaces"), MarketplaceEntry),
        )

    def write(self, home: Path) -> None:
        home.mkdir(parents=True, exist_ok=True)
        data = {
            "plugins": {n: asdict(p) for n, p in sorted(self.plugins.items())},
            "marketplaces": {n: asdict(m) for n, m in sorted(self.marketplaces.items())},
        }
        write_atomically(home / STATE_FILE, json.dumps(data, indent=2) + "\n")


def _entries(value: Any, kind: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        return {}
    found = {}
    for name, entry in value.items():
        try:
            found[str(name)] = kind(**entry)
        except TypeError:
            log.warning("plugins.json: entry %r is malformed; skipped", name)
    return found
