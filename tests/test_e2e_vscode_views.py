"""The sidebar's Permission Rules and MCP Servers views of the packaged VS Code extension,
in a real VS Code (code-server, driven in Chromium by `clients/vscode/e2e/drive-views.mjs`).

A message opens a session; closed and resumed from History, its user message offers
Rewind… (the quick pick of what goes back opens) and Changes. "agentls: Add Permission
Rule…" asks for the rule, what it does and where it is kept (quick inputs): the rule is
listed under Allow and written to the project's `.agentls/settings.local.json`; a
malformed rule is refused with the daemon's message in a notification; the rule's trash
icon removes it from the view and the file. The MCP Servers view shows the user's fixture
server (tests/mcp_fixture_server.py) ready over stdio, with its tools (the read-only one
marked); Restart brings it back ready (its second start on the row), Disable shows it
disabled and remembers it in the project's `disabledMcpServers`, Enable starts it again.
Screenshots (`views-00-resumed-rewind.png`, `views-01-rules.png`, `views-03-mcp.png`,
`views-04-mcp-disabled.png`) stay in `clients/vscode/e2e/.work/views/artifacts`.
Skipped, naming what is missing, without the toolchain of `clients/vscode/e2e/setup.sh`.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from test_e2e_vscode import WORK, build_vsix, drive_scenario


@pytest.fixture(scope="module")
def vsix() -> Path:
    return build_vsix()


def test_rules_and_mcp_servers_views_in_a_real_vscode(vsix: Path) -> None:
    work = WORK / "views"
    steps = (
        "workbench",
        "session",
        "resumed rewind",
        "rule added",
        "malformed rule",
        "rule removed",
        "mcp listed",
        "mcp restarted",
        "mcp disabled",
        "mcp enabled",
    )
    drive_scenario("run-views.sh", work, str(vsix), str(work), sys.executable, steps=steps)
