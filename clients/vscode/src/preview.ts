// The diff a permission card shows with its request: the proposed change as unified-diff
// lines (a few lines of context around each hunk), capped so a large Write stays a
// preview. Pure: the reducer builds it once per request, the webview only draws it.

import { hunks, splitLines } from "./hunks";
import type { FileDiff } from "./wire";

/** Context lines kept around each change, as `git diff` does. */
export const CONTEXT_LINES = 3;
/** Diff lines shown at most; the rest is counted, and the Review button shows all. */
export const MAX_PREVIEW_LINES = 60;

export interface PreviewLine {
  kind: "context" | "added" | "removed" | "gap";
  /** The line's text without its ending (empty for a gap). */
  text: string;
  /** For a gap: how many unchanged lines it stands for. */
  count?: number;
  /** 1-based line number in the new text (in the old one for a removed line). */
  number?: number;
}

export interface DiffPreview {
  path: string;
  added: number;
  removed: number;
  created: boolean;
  lines: PreviewLine[];
  /** Diff lines left out past the cap. */
  hidden: number;
}

export function diffPreview(diff: FileDiff): DiffPreview {
  const oldLines = splitLines(diff.oldText ?? "").map(withoutEnding);
  const newLines = splitLines(diff.newText).map(withoutEnding);
  const changes = hunks(diff.oldText ?? "", diff.newText);
  const lines: PreviewLine[] = [];
  let shownUntil = 0; // new-text lines [0, shownUntil) are already drawn or skipped
  for (const [index, hunk] of changes.entries()) {
    const from = Math.max(shownUntil, hunk.newStart - CONTEXT_LINES);
    if (from > shownUntil) lines.push({ kind: "gap", text: "", count: from - shownUntil });
    for (let n = from; n < hunk.newStart; n++) lines.push({ kind: "context", text: newLines[n] ?? "", number: n + 1 });
    for (let n = hunk.oldStart; n < hunk.oldEnd; n++) lines.push({ kind: "removed", text: oldLines[n] ?? "", number: n + 1 });
    for (let n = hunk.newStart; n < hunk.newEnd; n++) lines.push({ kind: "added", text: newLines[n] ?? "", number: n + 1 });
    const next = changes[index + 1];
    // Context after the hunk stops where the next hunk's leading context would start.
    const until = Math.min(hunk.newEnd + CONTEXT_LINES, newLines.length, next ? next.newStart : Infinity);
    for (let n = hunk.newEnd; n < until; n++) lines.push({ kind: "context", text: newLines[n] ?? "", number: n + 1 });
    shownUntil = until;
  }
  if (changes.length && shownUntil < newLines.length) lines.push({ kind: "gap", text: "", count: newLines.length - shownUntil });
  return {
    path: diff.path,
    added: changes.reduce((n, h) => n + h.newEnd - h.newStart, 0),
    removed: changes.reduce((n, h) => n + h.oldEnd - h.oldStart, 0),
    created: diff.oldText === undefined,
    lines: lines.slice(0, MAX_PREVIEW_LINES),
    hidden: Math.max(0, lines.length - MAX_PREVIEW_LINES),
  };
}

function withoutEnding(line: string): string {
  return line.replace(/\r?\n$/, "");
}
