"""Finding a session's skills: `<name>/SKILL.md` folders in four places, checked once.

A skill's front matter gives its `name` (the folder's name: lowercase letters, digits and
hyphens, at most 64 characters), its `description` (at most 1,024) and optionally its
`allowed-tools` (permission rules, as a slash command's, between commas or spaces). Only
the front matter is read here: the body is read when the skill is used, so the model's
first request carries the names and descriptions alone (progressive disclosure).

The places, first wins on a name: the project's `.agentls/skills/` and `.claude/skills/`,
then the user's `$AGENTLS_HOME/skills/` and `~/.claude/skills/` (so skills written for
Claude Code work unchanged). A skill that cannot be used is a problem, kept to be told
once; the others load regardless.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from agentls.front_matter import comma_list, split_front_matter
from agentls.permissions.rules import Rule, parse_rule

log = logging.getLogger(__name__)
SKILL_FILE = "SKILL.md"
NAME_CHARS = 64
DESCRIPTION_CHARS = 1024
_NAME = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_BLOCK_SCALARS = frozenset({"|", ">", "|-", ">-", "|+", ">+"})


@dataclass(frozen=True, slots=True)
class SkillPlace:
    """A folder of skill folders, and whose it is (`project` or `user`)."""

    folder: Path
    scope: str


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    # The folder holding SKILL.md and whatever files the skill brings.
    folder: Path
    scope: str
    # The `allowed-tools` as written, and as the allow rules the gate applies.
    allowed_tools: tuple[str, ...] = ()
    allowed: tuple[Rule, ...] = ()

    @property
    def file(self) -> Path:
        return self.folder / SKILL_FILE


@dataclass(slots=True)
class SkillSet:
    """A session's skills by name (sorted), and the problems not yet told to the user."""

    skills: tuple[Skill, ...] = ()
    problems: list[str] = field(default_factory=list)
    _told: bool = field(default=False, init=False)

    def find(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)

    def names(self) -> list[str]:
        return [s.name for s in self.skills]

    def untold_problems(self) -> list[str]:
        """The problems, the first time only (a session tells them once)."""
        if self._told:
            return []
        self._told = True
        return list(self.problems)


def skill_places(project: Path, agentls_home: Path, user_home: Path) -> list[SkillPlace]:
    """Where skills are looked for, in the order that wins on a name."""
    return [
        SkillPlace(project / ".agentls" / "skills", "project"),
        SkillPlace(project / ".claude" / "skills", "project"),
        SkillPlace(agentls_home / "skills", "user"),
        SkillPlace(user_home / ".claude" / "skills", "user"),
    ]


def find_skills(places: Sequence[SkillPlace]) -> SkillSet:
    """Every usable skill of `places` (the first of a name wins), and what was wrong."""
    found: dict[str, Skill] = {}
    problems: list[str] = []
    seen: set[Path] = set()
    for place in places:
        # A project at the home directory has its `.claude/skills` twice: read it once.
        if place.folder.resolve() in seen:
            continue
        seen.add(place.folder.resolve())
        for folder in _skill_folders(place.folder):
            try:
                skill = read_skill(folder, place.scope)
            except ValueError as exc:
                problems.append(f"Skill {folder / SKILL_FILE} ignored: {exc}")
                log.warning("%s", problems[-1])
                continue
            kept = found.get(skill.name)
            if kept is not None:
                log.info("skill %s in %s is hidden by %s", skill.name, folder, kept.folder)
                continue
            found[skill.name] = skill
    return SkillSet(tuple(sorted(found.values(), key=lambda s: s.name)), problems)


def _skill_folders(folder: Path) -> list[Path]:
    try:
        return sorted(p for p in folder.iterdir() if (p / SKILL_FILE).is_file())
    except OSError:
        return []


def read_skill(folder: Path, scope: str) -> Skill:
    """The skill in `folder` (ValueError saying what is wrong with its SKILL.md)."""
    try:
        text = (folder / SKILL_FILE).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ValueError(f"not readable ({exc})") from None
    if not text.startswith("---"):
        raise ValueError("no front matter (a --- block with name and description)")
    fields, body = split_front_matter(text)
    name, description = fields.get("name", ""), fields.get("description", "")
    if description in _BLOCK_SCALARS:
        # The front matter is read line by line (front_matter.py): no YAML blocks.
        raise ValueError("the description must be on one line (no YAML | or > block)")
    _check_name(name, folder.name)
    if not description:
        raise ValueError("no description in the front matter")
    if len(description) > DESCRIPTION_CHARS:
        raise ValueError(f"the description is over {DESCRIPTION_CHARS:,} characters")
    if not body.strip():
        raise ValueError("the body (the skill's instructions) is empty")
    if "allowed-tools" in fields and not fields["allowed-tools"]:
        # A YAML list under the key would otherwise read as no list, a wider skill.
        raise ValueError("allowed-tools must be on one line (`Read, Grep` or `Read Grep`)")
    listed = tool_list(fields.get("allowed-tools", ""))
    return Skill(name, description, folder.resolve(), scope, listed, _rules(listed))


def tool_list(value: str) -> tuple[str, ...]:
    """`allowed-tools` as Claude Code writes it (`Read, Grep`) or as the Agent Skills
    format does (`Read Grep`): split on commas and on spaces outside parentheses."""
    items: list[str] = []
    for item in comma_list(value):
        depth, start = 0, 0
        for index, char in enumerate(item):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if char.isspace() and depth <= 0:
                items.append(item[start:index])
                start = index + 1
        items.append(item[start:])
    return tuple(i for i in items if i)


def _check_name(name: str, folder_name: str) -> None:
    if not name:
        raise ValueError("no name in the front matter")
    if len(name) > NAME_CHARS:
        raise ValueError(f"the name is over {NAME_CHARS} characters")
    if not _NAME.fullmatch(name):
        raise ValueError(f"the name {name!r} is not lowercase letters, digits and hyphens")
    if name != folder_name:
        raise ValueError(f"the name {name!r} is not its folder's ({folder_name!r})")


def _rules(listed: tuple[str, ...]) -> tuple[Rule, ...]:
    """The allow rules; one that does not parse spoils the skill (never a wider one)."""
    rules = []
    for text in listed:
        try:
            rules.append(parse_rule(text, "allow"))
        except ValueError as exc:
            raise ValueError(f"allowed-tools {text!r}: {exc}") from None
    return tuple(rules)
