"""`agentls plugin add|list|enable|disable|remove` and `agentls plugin marketplace
add|list|remove`: installing plugins from the terminal (state in $AGENTLS_HOME/plugins.json).

The CLI imports this module at every start, `agentls run` through the warm daemon too: json,
pathlib, typing and the plugin modules load only when the subcommand runs.
"""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from pathlib import Path
    from typing import Any

EXIT_OK, EXIT_ERROR = 0, 1


def add_parser(commands: Any) -> None:
    """Register `agentls plugin …` on the CLI's subcommands."""
    plugin = commands.add_parser("plugin", help="add, list, enable, disable, remove plugins")
    actions = plugin.add_subparsers(dest="action", required=True)
    actions.add_parser(
        "add", help="install a plugin: a folder, a git URL, or name@marketplace"
    ).add_argument("spec")
    listing = actions.add_parser("list", help="the installed plugins and what they provide")
    listing.add_argument("--json", action="store_true", help="as JSON")
    for action, what in (("enable", "enable"), ("disable", "disable"), ("remove", "uninstall")):
        actions.add_parser(action, help=f"{what} a plugin").add_argument("name")
    market = actions.add_parser("marketplace", help="add, list, remove marketplaces")
    market_actions = market.add_subparsers(dest="market_action", required=True)
    market_actions.add_parser(
        "add", help="a folder or git URL with a marketplace.json"
    ).add_argument("spec")
    market_actions.add_parser("list", help="the marketplaces and their plugins")
    market_actions.add_parser("remove", help="forget a marketplace").add_argument("name")


def run(args: argparse.Namespace) -> int:
    """Run the `agentls plugin` action; errors are one line on stderr and exit code 1."""
    from agentls.plugins import install

    home = _home()
    try:
        if args.action == "list":
            _list(home, args.json)
        elif args.action == "marketplace":
            _marketplace(home, args)
        elif args.action == "add":
            print(install.add(home, args.spec))
        elif args.action == "remove":
            print(install.remove(home, args.name))
        else:
            print(install.set_enabled(home, args.name, args.action == "enable"))
    except (ValueError, OSError) as exc:
        # A bad manifest or marketplace file, a failed clone, an unknown name.
        sys.stderr.write(f"agentls plugin: {exc}\n")
        return EXIT_ERROR
    return EXIT_OK


def _home() -> Path:
    from pathlib import Path

    from agentls.config import default_home

    given = os.environ.get("AGENTLS_HOME")
    return Path(given) if given else default_home()


def _marketplace(home: Path, args: argparse.Namespace) -> None:
    from agentls.plugins import install

    if args.market_action == "add":
        print(install.add_marketplace(home, args.spec))
    elif args.market_action == "remove":
        print(install.remove_marketplace(home, args.name))
    else:
        for market in install.marketplaces(home):
            print(f"{market.name}  {market.folder}")
            for listed in market.plugins:
                about = f"  {listed.description}" if listed.description else ""
                print(f"  {listed.name}@{market.name}{about}")


def _list(home: Path, as_json: bool) -> None:
    from agentls.plugins.loaded import SessionPlugins, summary_dict

    summaries = SessionPlugins.load(home).summaries
    if as_json:
        import json

        print(json.dumps([summary_dict(s) for s in summaries], indent=2))
        return
    if not summaries:
        print("no plugins installed (agentls plugin add PATH|GIT-URL|name@marketplace)")
    for summary in summaries:
        shown = summary_dict(summary)
        state = "enabled" if summary.enabled else "disabled"
        version = f" {summary.version}" if summary.version else ""
        print(f"{summary.name}{version}  {state}  {summary.source}")
        if summary.error:
            print(f"  error: {summary.error}")
        for key in ("commands", "agents", "skills", "mcpServers"):
            if shown.get(key):
                print(f"  {key}: {', '.join(shown[key])}")
        if summary.hooks:
            print("  hooks: yes (run once you trust the plugin)")
