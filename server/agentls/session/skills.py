"""A session's skills: those found when it opens, the skill its running turn is in, and
the `Skill` tool (offered only when there is a skill).

Skills are looked for once, when the session opens: the Skill tool's description lists
them and is part of the cached prompt prefix, so it must not change under a session. A
new or changed skill is seen by the next session (a changed body already by the next
call, since bodies are read when used).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.commands.catalog import SlashCommand
from agentls.permissions.scoped import ActiveSkill
from agentls.skills.found import Skill, SkillSet, find_skills, skill_places
from agentls.skills.loading import skill_commands
from agentls.tools.skill import SkillTool


@dataclass(slots=True)
class SessionSkills:
    found: SkillSet
    active: ActiveSkill = field(default_factory=ActiveSkill)
    tool: SkillTool | None = None

    @classmethod
    def load(
        cls,
        project: Path,
        agentls_home: Path,
        plugins: Sequence[Skill] = (),
        plugin_problems: Sequence[str] = (),
    ) -> SessionSkills:
        """The skills of `project`, of the user (`$AGENTLS_HOME`, `~/.claude`) and of the
        enabled plugins (`plugin:skill`), sorted by name; the plugins' problems are told
        with the skills' (once, in the session's first turn)."""
        found = find_skills(skill_places(project, agentls_home, Path.home()))
        if plugins or plugin_problems:
            every = sorted((*found.skills, *plugins), key=lambda s: s.name)
            found = SkillSet(tuple(every), [*found.problems, *plugin_problems])
        skills = cls(found)
        if found.skills:
            skills.tool = SkillTool(found, skills.active)
        return skills

    def commands(self) -> tuple[SlashCommand, ...]:
        """`/<name>` for each skill."""
        return skill_commands(self.found.skills)
