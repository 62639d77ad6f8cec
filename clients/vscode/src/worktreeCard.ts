// An isolated agent's worktree as the chat shows it: its branch and files with +/−, until
// the user merges or discards it (in this window or another). Pure, for the reducer.

import type { MergeConflictEntry, SubagentCompleted, WorktreeFileStat, WorktreeResolved } from "./wire";

export interface WorktreeItem {
  kind: "worktree";
  /** The agent's id: the key of agent/worktreeDiff and agent/resolveWorktree. */
  id: string;
  branch: string;
  path: string;
  files: WorktreeFileStat[];
  added: number;
  removed: number;
  state: "ready" | "merged" | "discarded";
  /** The last merge that could not be done: each file and why (nothing was written). */
  conflicts: MergeConflictEntry[];
}

/** The card a finished isolated agent leaves, when it changed anything at all. */
export function worktreeCard(event: SubagentCompleted): WorktreeItem | undefined {
  const tree = event.worktree;
  if (!tree || !event.agentId) return undefined;
  return {
    kind: "worktree",
    id: event.agentId,
    branch: tree.branch,
    path: tree.path,
    files: tree.files,
    added: tree.added,
    removed: tree.removed,
    state: "ready",
    conflicts: [],
  };
}

/** `worktree_resolved`, from this window or another: the card says what became of it. */
export function worktreeResolved(item: WorktreeItem, event: WorktreeResolved): WorktreeItem {
  return { ...item, state: event.action, conflicts: [] };
}

/** The before and after of one file of a unified diff, as far as the diff shows it (its
 * hunks, a gap line between them), for the diff editor. */
export function sidesOfDiff(diff: string): { before: string; after: string } {
  const before: string[] = [];
  const after: string[] = [];
  let inHunk = false;
  for (const line of diff.split("\n")) {
    if (line.startsWith("@@")) {
      if (inHunk) {
        before.push("⋯");
        after.push("⋯");
      }
      inHunk = true;
      continue;
    }
    if (!inHunk || line.startsWith("\\")) continue;
    const text = line.slice(1);
    if (line.startsWith("-")) before.push(text);
    else if (line.startsWith("+")) after.push(text);
    else if (line.startsWith(" ") || line === "") {
      before.push(text);
      after.push(text);
    }
  }
  // The split left one empty line after the diff's last newline.
  if (diff.endsWith("\n") && before.at(-1) === "" && after.at(-1) === "") {
    before.pop();
    after.pop();
  }
  return { before: before.join("\n"), after: after.join("\n") };
}

/** The file's path in the repository, from the diff's `+++ b/…` (or, deleted, `--- a/…`). */
export function diffPath(diff: string): string | undefined {
  const target = /^\+\+\+ b\/(.*)$/m.exec(diff) ?? /^--- a\/(.*)$/m.exec(diff);
  return target?.[1];
}

/** The whole file before the change, from the whole file after it (the worktree's copy)
 * and the diff; undefined when the diff does not fit that text (then the hunks alone). */
export function textBefore(after: string, diff: string): string | undefined {
  const lines = after.split("\n");
  const hunks = parseHunks(diff);
  // From the last hunk back, so the earlier hunks' line numbers still hold.
  for (const hunk of hunks.reverse()) {
    const start = hunk.newCount === 0 ? hunk.newStart : hunk.newStart - 1;
    const current = lines.slice(start, start + hunk.newLines.length);
    if (current.length !== hunk.newLines.length || current.some((line, i) => line !== hunk.newLines[i])) return undefined;
    lines.splice(start, hunk.newLines.length, ...hunk.oldLines);
  }
  return lines.join("\n");
}

interface Hunk {
  newStart: number;
  newCount: number;
  oldLines: string[];
  newLines: string[];
}

function parseHunks(diff: string): Hunk[] {
  const hunks: Hunk[] = [];
  let hunk: Hunk | undefined;
  for (const line of diff.split("\n")) {
    const head = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (head) {
      hunk = { newStart: Number(head[1]), newCount: head[2] === undefined ? 1 : Number(head[2]), oldLines: [], newLines: [] };
      hunks.push(hunk);
      continue;
    }
    if (!hunk || line === "" || line.startsWith("\\")) continue;
    const text = line.slice(1);
    if (line.startsWith("-")) hunk.oldLines.push(text);
    else if (line.startsWith("+")) hunk.newLines.push(text);
    else {
      hunk.oldLines.push(text);
      hunk.newLines.push(text);
    }
  }
  return hunks;
}
