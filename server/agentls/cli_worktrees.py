"""What `agentls run` shows and asks at the end about isolated agents' worktrees (Task
`isolation: "worktree"`): each one's diff summary, then merge, discard or keep it.

Standard library only, like cli_print: the warm client and the in-process path both use
it, on `agent/listWorktrees` entries and `agent/resolveWorktree` results (plain dicts).
"""

from __future__ import annotations

import sys

from agentls.cli_print import write

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from agentls.cli_print import Answers

    Entry = dict[str, Any]
MARKS = {"added": "A", "modified": "M", "deleted": "D"}


def summary_lines(entry: Entry) -> list[str]:
    """An isolated agent's worktree in a few lines: branch, counts, one line per file."""
    files = entry.get("files") or []
    head = (
        f"worktree of {entry['agentId']} ({entry['description']}): branch {entry['branch']}, "
        f"{len(files)} file(s) changed, +{entry.get('added', 0)} -{entry.get('removed', 0)}"
    )
    lines = [head]
    lines += [f"  {MARKS[f['status']]} {f['path']} (+{f['added']} -{f['removed']})" for f in files]
    return lines


def decide(entries: list[Entry], answers: Answers) -> list[tuple[Entry, str]]:
    """Show every ready worktree and ask what to do with it: `merge`, `discard` or `keep`."""
    chosen = []
    for entry in entries:
        if entry.get("status") != "ready":
            continue
        write(sys.stderr, "\n" + "\n".join(summary_lines(entry)) + "\n")
        chosen.append((entry, answers.worktree(entry)))
    return chosen


def report(entry: Entry, action: str, result: Entry | None) -> None:
    """Say what became of a worktree (kept ones: how to deal with them later)."""
    agent = entry["agentId"]
    if result is None:
        write(
            sys.stderr,
            f"kept {entry['path']} (branch {entry['branch']}): `agentls run --resume "
            "SESSION` offers it again at its end, an editor's panel can merge it, or by "
            f"hand: git merge --squash {entry['branch']} (then git worktree remove "
            f"{entry['path']} and git branch -D {entry['branch']})\n",
        )
        return
    if result.get("resolved"):
        done = "merged into the working tree" if action == "merge" else "discarded"
        write(sys.stderr, f"{agent}: {done} (worktree and branch removed)\n")
        return
    write(sys.stderr, f"{agent}: not merged, nothing was written; conflicts:\n")
    for conflict in result.get("conflicts", []):
        write(sys.stderr, f"  {conflict['path']}: {conflict['reason']}\n")
