"""A session's skills: those found when it opens, the skill its running turn is in, and
the `Skill` tool (offered only when there is a skill).

Skills are looked for once, when the session opens: the Skill tool's description lists
them and is part of the cached prompt prefix, so it must not change under a session. A
new or changed skill is seen by the next session (a changed body already by the next
call, since bodies are read when used).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agentls.commands.catalog import SlashCommand
from agentls.permissions.scoped import ActiveSkill
from agentls.skills.found import SkillSet, find_skills, skill_places
from agentls.skills.loading import skill_commands
from agentls.tools.skill import SkillTool


@dataclass(slots=True)
class SessionSkills:
    found: SkillSet
    active: ActiveSkill = field(default_factory=ActiveSkill)
    tool: SkillTool | None = None

    @classmethod
    def load(cls, project: Path, agentls_home: Path) -> SessionSkills:
        """The skills of `project` and of the user (`$AGENTLS_HOME`, `~/.claude`)."""
        found = find_skills(skill_places(project, agentls_home, Path.home()))
        skills = cls(found)
        if found.skills:
            skills.tool = SkillTool(found, skills.active)
        return skills

    def commands(self) -> tuple[SlashCommand, ...]:
        """`/<name>` for each skill."""
        return skill_commands(self.found.skills)
