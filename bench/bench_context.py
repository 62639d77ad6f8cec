"""8 editor state: the cost of <userContext> when the client sends an enormous editor state;
skills: what 50 of them add to the first request, and what finding them costs; and
mentions (bench_mentions): an attached folder's listing and another session's words.

A 10 MB unsaved active buffer selected whole (plus 1,000 more selections) and 5,000 open
documents: how long building the user context takes, and how large it is, against the
same call with no editor state at all. The editor part is capped by its budget, so its size
stays flat however much the client sends.

Skills are listed by name and description only (the `Skill` tool's description); their
bodies, here 20 KB each, never reach the first request. The prefix is the system prompt
and the tool definitions, as a session without MCP servers sends them.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from agentls.context.editor_context import EDITOR_BUDGET_CHARS
from agentls.context.prompt import system_prompt, user_context
from agentls.messages import ToolSpec
from agentls.session.skills import SessionSkills
from agentls.skills.found import find_skills, skill_places
from agentls.subagents.types import agent_types
from agentls.tools.registry import default_tools, tool_spec
from agentls.tools.task import TaskTool
from agentls.workspace.view import EditorState, OpenDocument, Position, Range, WorkspaceView
from bench_mentions import mention_rows
from harness import Row, timing_rows

SECTION = "8 editor state in <userContext>"
SKILLS_SECTION = "8b skills in the first request"
SKILLS = 50
TEN_MB = 10 * 1024 * 1024


def _huge_view(root: Path) -> WorkspaceView:
    documents: dict[Path, OpenDocument] = {}
    for n in range(5_000):
        path = root / f"pkg{n % 50}" / f"module_{n}.py"
        documents[path] = OpenDocument(path, f"x = {n}\n", n + 1, "python")
    big = root / "big.txt"
    big.write_text("saved\n", encoding="utf-8")
    documents[big] = OpenDocument(big, ("é" * 99 + "\n") * (TEN_MB // 100), 7)
    whole = Range(Position(0, 0), Position(TEN_MB // 100, 0))
    many = [Range(Position(n, 0), Position(n + 5_000, 3)) for n in range(0, 100_000, 100)]
    return WorkspaceView([root], documents=documents, editor=EditorState(big, [whole, *many]))


def _time(view: WorkspaceView, root: Path, runs: int) -> tuple[list[float], int]:
    samples = []
    size = 0
    for _ in range(runs):
        start = time.perf_counter()
        size = len(user_context(view, root, first=False))
        samples.append(time.perf_counter() - start)
    return samples, size


def _write_skills(folder: Path) -> None:
    for n in range(SKILLS):
        name = f"skill-{n:02d}"
        (folder / name).mkdir(parents=True)
        head = f"---\nname: {name}\ndescription: Does task {n} the team's way; use for {n}.\n---\n"
        (folder / name / "SKILL.md").write_text(head + "Step.\n" * 3_500, encoding="utf-8")


def _prefix_chars(specs: list[ToolSpec]) -> int:
    """The system prompt and tool definitions, in characters as JSON carries them."""
    system = system_prompt(None, "")
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in specs
    ]
    return len(system.static) + len(system.dynamic) + len(json.dumps(tools))


def _skill_rows(root: Path, runs: int) -> list[Row]:
    project, home = root / "project", root / "home"
    _write_skills(project / ".agentls" / "skills")
    places = skill_places(project, home / "agentls", home)
    finding = []
    for _ in range(runs):
        start = time.perf_counter()
        find_skills(places)
        finding.append(time.perf_counter() - start)
    base = [tool_spec(t) for t in [*default_tools(), TaskTool(agent_types(project, home))]]
    skills = SessionSkills.load(project, home / "agentls")
    assert skills.tool is not None and len(skills.found.skills) == SKILLS
    without, with_skills = _prefix_chars(base), _prefix_chars([*base, tool_spec(skills.tool)])
    added = with_skills - without
    return [
        *timing_rows(SKILLS_SECTION, f"finding {SKILLS} skills (at session open)", finding),
        Row(SKILLS_SECTION, "first request prefix, no skills", float(without), "chars"),
        Row(
            SKILLS_SECTION,
            f"first request prefix, {SKILLS} skills (20 KB bodies)",
            float(with_skills),
            "chars",
            f"+{added:,} chars (×{with_skills / without:.2f}), {added / SKILLS:.0f} a skill",
        ),
    ]


def run(quick: bool) -> list[Row]:
    runs = 5 if quick else 20
    with tempfile.TemporaryDirectory(prefix="agentls-bench-context-") as tmp:
        root = Path(tmp)
        empty, empty_size = _time(WorkspaceView([root]), root, runs)
        huge, huge_size = _time(_huge_view(root), root, runs)
        skill_rows = _skill_rows(root, runs)
        mentions = mention_rows(root / "mentions", runs)
    return [
        *timing_rows(SECTION, "user context, no editor state", empty),
        *timing_rows(SECTION, "user context, 10 MB buffer + 5,000 documents", huge),
        Row(SECTION, "its size, no editor state", float(empty_size), "chars"),
        Row(
            SECTION,
            "its size, 10 MB buffer + 5,000 documents",
            float(huge_size),
            "chars",
            f"editor budget {EDITOR_BUDGET_CHARS:,}",
        ),
        *skill_rows,
        *mentions,
    ]
