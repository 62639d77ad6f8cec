"""Using a skill: the text the model reads when a skill starts, and `/<name>` commands.

The text is read from SKILL.md at that moment (an edited skill is used as it is now),
headed by the skill's folder, so the model can read the files beside it, and by the tools
it narrows the turn to.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from agentls.commands.catalog import SlashCommand
from agentls.commands.invocation import expand
from agentls.front_matter import split_front_matter
from agentls.skills.found import Skill

# The source a skill's slash command is listed with.
SKILL_SOURCE = "skill"


def skill_body(skill: Skill) -> str:
    """The instructions of SKILL.md, without the front matter (ValueError, OSError)."""
    _fields, body = split_front_matter(skill.file.read_text(encoding="utf-8"))
    return body.strip()


def skill_text(skill: Skill, body: str) -> str:
    """What the model reads once the skill has started."""
    lines = [
        f'<skill name="{skill.name}" folder="{skill.folder}">',
        "The skill's other files (scripts, references) are in that folder: read or run "
        "them when the instructions below point to them.",
    ]
    if skill.allowed_tools:
        lines.append(
            "While this skill is active (until the turn ends or another skill starts), the "
            f"only tools you may call are: {', '.join(skill.allowed_tools)}, and Skill."
        )
    return "\n".join([*lines, "", body, "</skill>"])


async def _render(skill: Skill, arguments: str) -> str:
    return skill_text(skill, expand(skill_body(skill), arguments))


def skill_commands(skills: Sequence[Skill]) -> tuple[SlashCommand, ...]:
    """A `/<name> [arguments]` prompt command for each skill; its turn starts the skill."""
    return tuple(
        SlashCommand(
            skill.name,
            skill.description,
            "[arguments]",
            SKILL_SOURCE,
            render=partial(_render, skill),
        )
        for skill in skills
    )
