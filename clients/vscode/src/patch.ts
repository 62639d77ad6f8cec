// An apply_patch request's files as its card lists them: what happens to each (added,
// updated, deleted, moved), where, and how many lines come and go. Pure.

import { hunks } from "./hunks";
import type { FileDiff } from "./wire";

export type PatchKind = NonNullable<FileDiff["kind"]>;

export interface PatchFile {
  kind: PatchKind;
  path: string;
  movedFrom?: string;
  added: number;
  removed: number;
}

/** One letter per kind, as `git status --short` writes them. */
export const PATCH_LETTERS: Record<PatchKind, string> = { add: "A", update: "M", delete: "D", move: "R" };

export function patchFiles(diffs: readonly FileDiff[]): PatchFile[] {
  return diffs.map((diff) => {
    const lines = hunks(diff.oldText ?? "", diff.newText);
    const kind: PatchKind = diff.kind ?? (diff.oldText === undefined ? "add" : "update");
    return {
      kind,
      path: diff.path,
      ...(diff.movedFrom ? { movedFrom: diff.movedFrom } : {}),
      added: lines.reduce((n, h) => n + h.newEnd - h.newStart, 0),
      removed: lines.reduce((n, h) => n + h.oldEnd - h.oldStart, 0),
    };
  });
}
