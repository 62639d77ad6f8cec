"""/context: what fills the model's window, part by part, in tokens and percent.

Every figure is the estimate the compaction thresholds use before a provider has reported
a count (context/budget.py): characters, not a tokenizer, so within about 15% on prose.
"""

from __future__ import annotations

from collections.abc import Iterable, Sized

from agentls.context.budget import estimate_messages_tokens, estimate_tokens
from agentls.context.window import overhead_tokens
from agentls.messages import ToolSpec
from agentls.plural import counted
from agentls.session.session import AgentSession


def context_report(session: AgentSession) -> str:
    """The lines /context shows."""
    specs = session.registry.specs()
    mcp_names = {tool.name for tool in session.mcp.tools()} if session.mcp is not None else set()
    skill, found = session.skills.tool, session.skills.found.skills
    memory = estimate_tokens(session.memory_text)
    system = estimate_tokens(session.system.static + session.system.dynamic) - memory
    skill_name = skill.name if skill is not None else None
    history = session.history
    parts = [
        ("System prompt", system, ""),
        ("Tools", _tools(s for s in specs if s.name not in mcp_names | {skill_name}), ""),
        ("MCP tools", _tools(s for s in specs if s.name in mcp_names), _count(mcp_names, "tool")),
        ("Memory files", memory, _count(session.memory_files, "file")),
        # The skills' names and descriptions, in the Skill tool's description.
        ("Skills", _tools(s for s in specs if s.name == skill_name), _count(found, "skill")),
        ("Messages", estimate_messages_tokens(history), _count(history, "message")),
    ]
    window = session.context.window
    used = sum(tokens for _name, tokens, _detail in parts)
    lines = [
        f"Context of {session.model}: about {used:,} of {window:,} tokens ({used / window:.0%})"
    ]
    for name, tokens, detail in [*parts, ("Free space", max(0, window - used), "")]:
        note = f"  ({detail})" if detail else ""
        lines.append(f"  {name:<14}{tokens:>10,} tokens {tokens / window:>6.1%}{note}")
    return "\n".join(lines)


def _tools(specs: Iterable[ToolSpec]) -> int:
    chosen = list(specs)
    return overhead_tokens("", chosen) if chosen else 0


def _count(things: Sized, noun: str) -> str:
    return counted(len(things), noun)
