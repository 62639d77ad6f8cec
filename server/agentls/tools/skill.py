"""Skill: the model starts one of the session's skills and reads its instructions.

The tool's description lists every skill's name and description, sorted, and never a
body: it is built once per session, so the first request's prefix is the same for every
session with the same skills. A call returns the skill's SKILL.md body with its folder,
and starts the skill for the rest of the turn (its `allowed-tools` narrow the turn's
gate; see permissions/scoped.py). Reading a skill changes nothing, so it runs without
asking.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field

from agentls.permissions.scoped import SKILL_TOOL, ActiveSkill
from agentls.skills.found import SkillSet
from agentls.skills.loading import skill_body, skill_text
from agentls.tool_values import ToolKind
from agentls.tools.base import ReadOnlyTool, ToolContext, ToolError, ToolOutput

_INTRO = (
    "Start a skill: instructions (and files beside them) for one kind of task, written by "
    "the user or their team. When a task matches a skill's description below, call this "
    "tool with the skill's name before doing the task, then follow what it returns. Do not "
    "start a skill already started in this conversation unless its text is gone.\n\n"
    "Skills:"
)


class SkillInput(BaseModel):
    skill: str = Field(min_length=1, description="The skill's name, as listed")


def skills_description(skills: SkillSet) -> str:
    """The tool's description: the intro and one line per skill, by name."""
    lines = (f"- {skill.name}: {skill.description}" for skill in skills.skills)
    return "\n".join([_INTRO, *lines])


class SkillTool(ReadOnlyTool[SkillInput]):
    """Loads a skill's instructions and starts it for the rest of the turn."""

    name: str = SKILL_TOOL
    input_model: type[BaseModel] = SkillInput
    kind: ToolKind = "read"

    def __init__(self, skills: SkillSet, active: ActiveSkill) -> None:
        self.skills = skills
        self.active = active
        self.description = skills_description(skills)

    def title(self, args: SkillInput) -> str:
        return f"Skill {args.skill}"

    def rule_content(self, args: SkillInput, cwd: Path) -> str | None:
        """Rules match the skill's name, e.g. `Skill(deploy)`."""
        return args.skill

    async def run(self, args: SkillInput, ctx: ToolContext) -> ToolOutput:
        skill = self.skills.find(args.skill)
        if skill is None:
            names = ", ".join(self.skills.names())
            raise ToolError(f"No skill named {args.skill!r}. The skills are: {names}.")
        try:
            body = skill_body(skill)
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise ToolError(f"The skill {skill.name} cannot be read now: {exc}") from None
        self.active.start(skill.name, skill.allowed)
        return ToolOutput(skill_text(skill, body))
