"""19 plugins: what reading the enabled plugins costs a session as it opens, what hashing
one plugin's files for its trust costs, and what plugins add to the first request.

Ten plugins are installed (each with a command, an agent type, a skill with a 20 KB body,
a hook and a small extra file), against none installed (plugins.json absent, the case
of every user without plugins). A plugin's skills and agent types reach the first request
by name and description only (the `Skill` and `Task` tools' descriptions); commands and
hooks add nothing to it.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from agentls.context.prompt import system_prompt
from agentls.messages import ToolSpec
from agentls.plugins import install
from agentls.plugins.contents import folder_digest
from agentls.plugins.loaded import SessionPlugins
from agentls.session.skills import SessionSkills
from agentls.subagents.types import agent_types
from agentls.tools.registry import default_tools, tool_spec
from agentls.tools.task import TaskTool
from harness import Row, timing_rows

SECTION = "19 plugins"
PLUGINS = 10


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def _make_plugin(folder: Path, name: str) -> Path:
    _write(folder / ".claude-plugin" / "plugin.json", json.dumps({"name": name}))
    _write(folder / "commands" / "go.md", "---\ndescription: Go\n---\nGo $ARGUMENTS.\n")
    agent = f"---\nname: check\ndescription: Checks {name}'s work\ntools: Read\n---\nCheck.\n"
    _write(folder / "agents" / "check.md", agent)
    head = f"---\nname: guide\ndescription: The {name} team's guide; use for {name} work.\n---\n"
    _write(folder / "skills" / "guide" / "SKILL.md", head + "Step.\n" * 3_500)
    hook = {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/hook.sh"}
    _write(folder / "hooks" / "hooks.json", json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    _write(folder / "hook.sh", "#!/bin/sh\nexit 0\n")
    return folder


def _prefix_chars(specs: list[ToolSpec]) -> int:
    system = system_prompt(None, "")
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in specs
    ]
    return len(system.static) + len(system.dynamic) + len(json.dumps(tools))


def _specs(project: Path, home: Path, plugins: SessionPlugins) -> list[ToolSpec]:
    types = plugins.agent_types(agent_types(project, home))
    skills = SessionSkills.load(project, home / "agentls", plugins.skills())
    extra = [skills.tool] if skills.tool is not None else []
    return [tool_spec(t) for t in [*default_tools(), TaskTool(types), *extra]]


def _timed(home: Path, runs: int) -> list[float]:
    samples = []
    for _ in range(runs):
        start = time.perf_counter()
        SessionPlugins.load(home)
        samples.append(time.perf_counter() - start)
    return samples


def run(quick: bool) -> list[Row]:
    runs = 5 if quick else 20
    with tempfile.TemporaryDirectory(prefix="agentls-bench-plugins-") as tmp:
        root = Path(tmp)
        project, empty, full = root / "project", root / "empty", root / "full"
        project.mkdir()
        none_loaded = _timed(empty, runs)
        for n in range(PLUGINS):
            install.add(full, str(_make_plugin(root / "src" / f"p{n}", f"plugin-{n}")))
        ten_loaded = _timed(full, runs)
        digests = []
        for _ in range(runs):
            start = time.perf_counter()
            folder_digest(root / "src" / "p0")
            digests.append(time.perf_counter() - start)
        without = _prefix_chars(_specs(project, root, SessionPlugins.load(empty)))
        with_plugins = _prefix_chars(_specs(project, root, SessionPlugins.load(full)))
    added = with_plugins - without
    return [
        *timing_rows(SECTION, "reading plugins at session open, none installed", none_loaded),
        *timing_rows(SECTION, f"reading plugins at session open, {PLUGINS} enabled", ten_loaded),
        *timing_rows(SECTION, "digest of one plugin's files (its trust key)", digests),
        Row(SECTION, "first request prefix, no plugins", float(without), "chars"),
        Row(
            SECTION,
            f"first request prefix, {PLUGINS} plugins (a skill and an agent each)",
            float(with_plugins),
            "chars",
            f"+{added:,} chars, {added / PLUGINS:.0f} a plugin",
        ),
    ]
