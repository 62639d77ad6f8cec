// Rewind, fork and a turn's changes, as the user goes through them in VS Code: a quick pick
// of what to rewind, the preview (agent/rewind with dryRun) whose files open in the diff
// editor, then the rewind itself (force only when the user says so); a turn's files from
// agent/turnDiff, each opened in the diff editor.
//
// The extension's own Undo (undo.ts) stays beside it: it takes back one edit the chat shows,
// in the buffer; Rewind takes back whole turns through the daemon's checkpoints, so what a
// shell command changed goes back too, and the conversation with it when asked.

import * as vscode from "vscode";

import type { AgentClient } from "./client";
import type { DiffContent } from "./diffs";
import { type PreviewRow, REWIND_CHOICES, type RewindAnswer, type RewindWhat, previewRows, rewoundText, textAfter } from "./rewind";
import type { Action } from "./reducer";
import { textBefore } from "./worktreeCard";
import type { FileChangeInfo, RewindParams } from "./wire";

const APPLY = "$(history) Rewind";
const FORCE = "$(warning) Rewind, overwriting the files I changed";

export class RewindFlow {
  constructor(
    private readonly client: AgentClient,
    private readonly diffs: DiffContent,
    private readonly dispatch: (action: Action) => void,
  ) {}

  /** Ask what, preview it, and rewind `turnId` of `sessionId` when the user confirms. */
  async rewind(sessionId: string, turnId: string): Promise<void> {
    const choice = await vscode.window.showQuickPick(
      REWIND_CHOICES.map((c) => ({ label: c.label, detail: c.detail, what: c.what })),
      { title: "agentls: Rewind to before this message", placeHolder: "What goes back?" },
    );
    if (!choice) return;
    const what = choice.what;
    const base: RewindParams = { sessionId, turnId, what };
    // dryRun: the daemon answers what the rewind would do and changes nothing.
    const planned: RewindAnswer = await this.client.request("agent/rewind", { ...base, dryRun: true });
    const force = await this.confirm(planned, what);
    if (force === undefined) return;
    const done: RewindAnswer = await this.client.request("agent/rewind", { ...base, force });
    this.dispatch({ type: "rewound", removedMessageIds: what === "files" ? [] : done.removedMessageIds, message: rewoundText(done, what) });
  }

  /** A turn's changes: pick a file to open its diff; the list stays until dismissed. */
  async turnChanges(sessionId: string, turnId: string): Promise<void> {
    const { files } = await this.client.request("agent/turnDiff", { sessionId, turnId });
    if (!files.length) {
      void vscode.window.showInformationMessage("agentls: this turn changed no file.");
      return;
    }
    const rows = files.map((f) => ({
      label: `$(file) ${vscode.workspace.asRelativePath(f.path)}`,
      description: `+${f.added} −${f.removed}${f.created ? " (new)" : f.deleted ? " (deleted)" : ""}`,
      change: f,
    }));
    for (;;) {
      const picked = await vscode.window.showQuickPick(rows, { title: `agentls: what this turn changed (${files.length} files)`, placeHolder: "Open a file's diff" });
      if (!picked) return;
      await this.openTurnChange(turnId, picked.change);
    }
  }

  /** The preview; undefined when the user backs out, else whether to force over conflicts. */
  private async confirm(planned: RewindAnswer, what: RewindWhat): Promise<boolean | undefined> {
    const rows: Array<PreviewRow & { action?: "apply" | "force" }> = previewRows(planned, what, (p) => vscode.workspace.asRelativePath(p));
    rows.push({ label: APPLY, description: planned.conflicts.length ? "files you changed stay as they are" : "", action: "apply" });
    if (planned.conflicts.length) rows.push({ label: FORCE, description: "", action: "force" });
    for (;;) {
      const picked = await vscode.window.showQuickPick(rows, { title: "agentls: Rewind preview", placeHolder: "Open a file to see how it goes back, or rewind" });
      if (!picked) return undefined;
      if (picked.action) return picked.action === "force";
      if (picked.change) await this.openRestore(picked.change);
    }
  }

  /** A file as it is now beside what the rewind puts back. */
  private async openRestore(change: FileChangeInfo): Promise<void> {
    const current = change.created ? "" : await readText(change.path);
    const restored = change.deleted ? "" : textAfter(current, change.diff);
    await this.show(`rewind-${change.path}`, change.path, current, restored ?? change.diff, "now ↔ after rewind");
  }

  /** A file before the turn beside what the turn left (its current text when it fits). */
  private async openTurnChange(turnId: string, change: FileChangeInfo): Promise<void> {
    const after = change.deleted ? "" : await readText(change.path);
    const before = change.created ? "" : textBefore(after, change.diff);
    if (before === undefined) {
      // The file changed since the turn: its hunks alone, as a diff document.
      const document = await vscode.workspace.openTextDocument({ content: change.diff, language: "diff" });
      await vscode.window.showTextDocument(document, { preview: true, preserveFocus: true });
      return;
    }
    await this.show(`turn-${turnId}-${change.path}`, change.path, before, after, "turn's change");
  }

  private async show(key: string, path: string, before: string, after: string, label: string): Promise<void> {
    const [left, right] = this.diffs.pair(key, { path, oldText: before, newText: after });
    const name = vscode.workspace.asRelativePath(path);
    await vscode.commands.executeCommand("vscode.diff", left, right, `${name} (${label})`, { preserveFocus: true, preview: true });
  }
}

async function readText(path: string): Promise<string> {
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.file(path)));
  } catch {
    return "";
  }
}
