"""Sub-agent types: the built-in ones, and those users write as markdown files.

A type file (`.agentls/agents/*.md` in the project, `~/.agentls/agents/*.md` for the user)
has front matter and a body:

    ---
    name: reviewer
    description: Reviews a diff for bugs and says what it found
    tools: Read, Grep, Glob
    model: claude-haiku-4-5
    ---
    You review code changes. ...

`tools` (a comma list, or `[a, b]`) limits what the agent may call (default: every tool);
`model` runs it on another model of the same provider. The body is its instructions.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from agentls.front_matter import comma_list, split_front_matter

log = logging.getLogger(__name__)

READ_TOOLS = ("Read", "Glob", "Grep")


@dataclass(frozen=True, slots=True)
class AgentType:
    name: str
    description: str
    instructions: str
    # The tools it may call; None: every tool of the session.
    tools: tuple[str, ...] | None = None
    model: str | None = None
    # Whether it may change files (or run commands): if not, its Task calls run concurrently.
    writes: bool = True
    # Starts from the parent's history (and keeps its system prompt) instead of afresh.
    fork: bool = False


BUILT_IN: tuple[AgentType, ...] = (
    AgentType(
        "general",
        "A general-purpose agent for a self-contained task: research, a multi-step change, "
        "a search across many files. It has every tool.",
        "You are a sub-agent: another agent gave you the task below. Do it completely, "
        "then answer with a short report of what you found or did (files, lines, results): "
        "the report is all the other agent sees of your work.",
    ),
    AgentType(
        "explore",
        "A fast, read-only agent for finding things in the codebase: where something is "
        "defined or used, how a part works. It reads and searches; it never changes files.",
        "You are a read-only exploration sub-agent. Find what the task asks with Read, Glob "
        "and Grep, reading no more than you need, then answer with a concise report: the "
        "files and line numbers, and what they show. You cannot change anything.",
        READ_TOOLS,
        writes=False,
    ),
    AgentType(
        "verify",
        "Runs the project's checks (tests, type checks, linters) and reports what passes "
        "and what fails, with the errors. It never edits files.",
        "You are a verification sub-agent. Find how this project checks itself (README, "
        "package scripts, Makefile, CI files, pyproject), run those checks with Bash, and "
        "report each one: the command, passed or failed, and for failures the exact errors "
        "and where. Never edit files and never try to fix anything: only report.",
        (*READ_TOOLS, "Bash"),
    ),
    AgentType(
        "fork",
        "A copy of you that knows this whole conversation, for a side task that needs its "
        "context (try an approach, check a hypothesis); its work stays out of your context "
        "and its first request reuses your cached prompt.",
        "",
        fork=True,
    ),
)


def agent_types(project: Path, user_home: Path | None = None) -> list[AgentType]:
    """The built-in types, then the user's, then the project's (a later one with the same
    name replaces an earlier one)."""
    found = {t.name: t for t in BUILT_IN}
    home = user_home if user_home is not None else Path.home()
    for folder in (home / ".agentls" / "agents", project / ".agentls" / "agents"):
        for path in sorted(folder.glob("*.md")) if folder.is_dir() else ():
            try:
                parsed = parse_agent_file(path.read_text(encoding="utf-8"), path.stem)
            except (OSError, UnicodeDecodeError, ValueError) as exc:
                log.warning("agent type %s ignored: %s", path, exc)
                continue
            found[parsed.name] = parsed
    return list(found.values())


def parse_agent_file(text: str, default_name: str) -> AgentType:
    """An agent type from a markdown file with front matter (ValueError when malformed)."""
    fields, body = split_front_matter(text)
    name = fields.get("name") or default_name
    if not name.replace("-", "").replace("_", "").isalnum():
        raise ValueError(f"name {name!r} must be letters, digits, - and _")
    instructions = body.strip()
    if name == "fork":
        raise ValueError("fork is a built-in type and cannot be redefined")
    if not instructions:
        raise ValueError("the body (the agent's instructions) is empty")
    tools = comma_list(fields["tools"]) if fields.get("tools") else None
    writes = tools is None or any(t not in READ_TOOLS for t in tools)
    description = fields.get("description") or instructions.splitlines()[0][:200]
    return AgentType(name, description, instructions, tools, fields.get("model") or None, writes)
