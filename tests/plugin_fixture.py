"""Plugin folders for tests: a Claude Code plugin with a command, an agent, a skill, a hook
and (optionally) an MCP server; a marketplace; a bare git repository to clone from."""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_plugin(
    folder: Path,
    name: str,
    marks: Path | None = None,
    manifest_folder: str = ".claude-plugin",
    **manifest: Any,
) -> Path:
    """A plugin in `folder`: `/name:greet`, agent `name:checker`, skill `name:helper`, and,
    with `marks`, a UserPromptSubmit hook (run through ${CLAUDE_PLUGIN_ROOT}) that appends
    the plugin's name to `marks`."""
    write(
        folder / manifest_folder / "plugin.json",
        json.dumps({"name": name, "version": "1.2.0", "description": f"{name} tools", **manifest}),
    )
    write(folder / "commands" / "greet.md", "---\ndescription: Greets\n---\nGreet $ARGUMENTS.\n")
    write(
        folder / "agents" / "checker.md",
        "---\nname: checker\ndescription: Checks things\ntools: Read\n---\n"
        f"You are the {name} checker. CHECKER-INSTRUCTIONS\n",
    )
    write(
        folder / "skills" / "helper" / "SKILL.md",
        "---\nname: helper\ndescription: Helps with things\n---\nHELPER-BODY\n",
    )
    if marks is not None:
        write(
            folder / "scripts" / "mark.py",
            f"import sys\nopen({str(marks)!r}, 'a').write(sys.argv[1] + '\\n')\n",
        )
        command = f"{shlex.quote(sys.executable)} ${{CLAUDE_PLUGIN_ROOT}}/scripts/mark.py {name}"
        hooks = {"UserPromptSubmit": [{"hooks": [{"type": "command", "command": command}]}]}
        write(folder / "hooks" / "hooks.json", json.dumps({"hooks": hooks}))
    return folder


def make_marketplace(folder: Path, name: str, plugins: list[dict[str, Any]]) -> Path:
    market = {"name": name, "owner": {"name": "Tests"}, "plugins": plugins}
    write(folder / ".claude-plugin" / "marketplace.json", json.dumps(market))
    return folder


def git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def bare_repo(source: Path, bare: Path) -> str:
    """`source` committed into a git repository, cloned bare to `bare`; its file:// URL."""
    git("init", "-q", "-b", "main", cwd=source)
    git("add", "-A", cwd=source)
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    git(*identity, "commit", "-q", "-m", "plugin", cwd=source)
    git("clone", "-q", "--bare", str(source), str(bare), cwd=source.parent)
    return bare.resolve().as_uri()
