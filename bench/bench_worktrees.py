"""21 isolated agents: what `Task` with `isolation: "worktree"` costs around the agent's
own work, and what it adds to every request.

In a repository of 500 files (one commit): `git worktree add` of HEAD on a new branch, the
agent's three changed files committed and summed up (`settle`, what runs when the agent
ends), the three-way merge of those files into a user's tree that moved on elsewhere in
each file, and a discard (worktree and branch removed). And the Task tool's spec, which
every request carries, with its `isolation` field and text against the spec without them.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from agentls.messages import ToolSpec
from agentls.session.worktree_merge import merge_worktree
from agentls.session.worktrees import SessionWorktrees
from agentls.subagents.types import BUILT_IN
from agentls.tools.base import NoCheckpoints
from agentls.tools.registry import tool_spec
from agentls.tools.task import ISOLATION_GUIDE, TaskTool
from agentls.workspace.view import WorkspaceView
from harness import Row, timing_rows

SECTION = "21 isolated agents"
FILES, CHANGED = 500, 3
GIT_ENV = {
    **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@localhost",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@localhost",
}


def _repo(root: Path) -> None:
    for n in range(FILES):
        lines = [f"line {i} of file {n}\n" for i in range(40)]
        (root / f"f{n}.txt").write_text("".join(lines), encoding="utf-8")
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        subprocess.run(["git", *args], cwd=root, env=GIT_ENV, check=True)


def _change(folder: Path, line: int, text: str) -> None:
    for n in range(CHANGED):
        path = folder / f"f{n}.txt"
        lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
        lines[line] = text
        path.write_text("".join(lines), encoding="utf-8")


async def _cycle(samples: dict[str, list[float]]) -> None:
    with tempfile.TemporaryDirectory(prefix="agentls-bench-wt-") as tmp:
        root = Path(tmp).resolve() / "repo"
        root.mkdir()
        _repo(root)
        worktrees = SessionWorktrees(Path(tmp).resolve() / "session" / "worktrees")
        for agent in ("agent_merged", "agent_dropped"):
            start = time.perf_counter()
            lease = await worktrees.create(root, agent, "bench", None)
            samples["create"].append(time.perf_counter() - start)
            _change(Path(lease.path), 3, "the agent's line\n")
            start = time.perf_counter()
            await worktrees.settle(lease)
            samples["settle"].append(time.perf_counter() - start)
        _change(root, 30, "the user's line\n")
        merged = worktrees.find("agent_merged")
        dropped = worktrees.find("agent_dropped")
        assert merged is not None and dropped is not None
        start = time.perf_counter()
        outcome = await merge_worktree(worktrees, merged, WorkspaceView([root]), NoCheckpoints())
        samples["merge"].append(time.perf_counter() - start)
        assert len(outcome.merged) == CHANGED and not outcome.conflicts
        await worktrees.discard(merged)
        start = time.perf_counter()
        await worktrees.discard(dropped)
        samples["discard"].append(time.perf_counter() - start)


def _spec_bytes(spec: ToolSpec) -> int:
    wire = {"name": spec.name, "description": spec.description, "input_schema": spec.input_schema}
    return len(json.dumps(wire).encode("utf-8"))


def _task_spec_without_isolation() -> int:
    spec = tool_spec(TaskTool(list(BUILT_IN)))
    schema = json.loads(json.dumps(spec.input_schema))
    schema["properties"].pop("isolation", None)
    description = spec.description.replace(ISOLATION_GUIDE, "")
    return _spec_bytes(ToolSpec(spec.name, description, schema))


def run(quick: bool) -> list[Row]:
    cycles = 2 if quick else 5
    samples: dict[str, list[float]] = {k: [] for k in ("create", "settle", "merge", "discard")}
    for _ in range(cycles):
        asyncio.run(_cycle(samples))
    spec = _spec_bytes(tool_spec(TaskTool(list(BUILT_IN))))
    without = _task_spec_without_isolation()
    return [
        *timing_rows(SECTION, f"git worktree add of HEAD ({FILES} files)", samples["create"]),
        *timing_rows(SECTION, f"settle: commit {CHANGED} changed files, sum up", samples["settle"]),
        *timing_rows(
            SECTION,
            f"merge {CHANGED} files three ways into a moved-on tree",
            samples["merge"],
        ),
        *timing_rows(SECTION, "discard: worktree and branch removed", samples["discard"]),
        Row(SECTION, "Task tool spec, without isolation", float(without), "bytes"),
        Row(
            SECTION,
            "Task tool spec, with isolation",
            float(spec),
            "bytes",
            f"+{spec - without:,} bytes on each request of a session with Task",
        ),
    ]
