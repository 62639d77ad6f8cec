// Rewind and fork from a user message, in pure terms: which turn a message began, what a
// rewind preview (agent/rewind with dryRun) says in rows, and the texts a unified diff
// joins, so each file opens in the diff editor. No vscode here; rewindFlow.ts asks the user.

import type { Item } from "./reducer";
import type { FileChangeInfo, FileProblem, RewindResult } from "./wire";
import { textBefore } from "./worktreeCard";

export type RewindWhat = "files" | "conversation" | "both";

/** The quick pick's choices, as Claude Code's Esc-Esc offers them. */
export const REWIND_CHOICES: ReadonlyArray<{ what: RewindWhat; label: string; detail: string }> = [
  { what: "both", label: "Code and conversation", detail: "Files back to before this message, and the chat cut before it" },
  { what: "conversation", label: "Conversation only", detail: "The chat cut before this message; files stay as they are" },
  { what: "files", label: "Code only", detail: "Files back to before this message; the chat keeps its history" },
];

/** A rewind's answer; `files`: each file's diff from now to what it goes back to. */
export type RewindAnswer = RewindResult;

/** One row of the preview: a file that changes (openable), a conflict, or a count. */
export interface PreviewRow {
  label: string;
  description: string;
  /** The file's diff from its current content to the restored one, when the row opens it. */
  change?: FileChangeInfo;
  conflict?: FileProblem;
}

/** The preview in rows: files that go back, then conflicts, then the messages that go. */
export function previewRows(answer: RewindAnswer, what: RewindWhat, relative: (path: string) => string): PreviewRow[] {
  const rows: PreviewRow[] = [];
  const diffs = new Map((answer.files ?? []).map((f) => [f.path, f]));
  for (const path of answer.restored) rows.push(fileRow(path, "restored", diffs.get(path), relative));
  for (const path of answer.deleted) rows.push(fileRow(path, "deleted (the agent created it)", diffs.get(path), relative));
  for (const conflict of answer.conflicts) rows.push({ label: `$(warning) ${relative(conflict.path)}`, description: `left alone: ${conflict.reason}`, conflict });
  if (what !== "files") rows.push({ label: `$(comment-discussion) ${messages(answer.messagesRemoved)} leave the conversation`, description: "" });
  if (what !== "conversation" && !answer.restored.length && !answer.deleted.length && !answer.conflicts.length) {
    rows.push({ label: "$(check) No file needs to go back", description: "" });
  }
  return rows;
}

function fileRow(path: string, description: string, change: FileChangeInfo | undefined, relative: (path: string) => string): PreviewRow {
  const counts = change ? ` +${change.added} −${change.removed}` : "";
  return { label: `$(file) ${relative(path)}`, description: `${description}${counts}`, ...(change ? { change } : {}) };
}

/** What an applied rewind did, in one line for the chat. */
export function rewoundText(answer: RewindResult, what: RewindWhat): string {
  const parts: string[] = [];
  if (what !== "conversation") parts.push(`${files(answer.restored.length + answer.deleted.length)} restored`);
  if (what !== "files") parts.push(`${messages(answer.messagesRemoved)} removed`);
  if (answer.conflicts.length) parts.push(`${files(answer.conflicts.length)} left alone (changed since the agent wrote them)`);
  if (answer.failed.length) parts.push(`${files(answer.failed.length)} could not be restored: ${answer.failed.map((f) => f.reason).join("; ")}`);
  return `Rewound: ${parts.join(", ")}.`;
}

/** The turn a user message began (`turn_started` or its `message_completed` said so). */
export function turnOfMessage(items: readonly Item[], messageId: string): string | undefined {
  const item = items.find((i) => i.kind === "user" && i.id === messageId);
  return item?.kind === "user" ? item.turnId : undefined;
}

/** A diff read the other way round: the new text becomes the old. */
export function reverseDiff(diff: string): string {
  let inHunks = false;
  return diff
    .split("\n")
    .map((line) => {
      const head = /^@@ -(\d+(?:,\d+)?) \+(\d+(?:,\d+)?) @@(.*)$/.exec(line);
      if (head) {
        inHunks = true;
        return `@@ -${head[2]} +${head[1]} @@${head[3]}`;
      }
      if (!inHunks) {
        if (line.startsWith("--- ")) return `+++ ${line.slice(4)}`;
        if (line.startsWith("+++ ")) return `--- ${line.slice(4)}`;
        return line;
      }
      if (line.startsWith("-")) return `+${line.slice(1)}`;
      if (line.startsWith("+")) return `-${line.slice(1)}`;
      return line;
    })
    .join("\n");
}

/** The whole file after `diff`, from the whole file before it; undefined when it does not fit. */
export function textAfter(before: string, diff: string): string | undefined {
  return textBefore(before, reverseDiff(diff));
}

function files(n: number): string {
  return `${n} file${n === 1 ? "" : "s"}`;
}

function messages(n: number): string {
  return `${n} message${n === 1 ? "" : "s"}`;
}
