// What the user does with an isolated agent's worktree: its diff file by file in VS Code's
// diff editor (agent/worktreeDiff), a merge into the working tree or a discard (after a
// confirmation) through agent/resolveWorktree, and "agentls: Worktrees…", a pick over
// agent/listWorktrees for a resumed session, whose chat has no cards for them.

import * as vscode from "vscode";

import type { AgentClient } from "./client";
import type { DiffContent } from "./diffs";
import type { Action } from "./reducer";
import { diffPath, sidesOfDiff, textBefore } from "./worktreeCard";
import type { FileChangeInfo, WorktreeEntry } from "./wire";

export type WorktreeAction = "view" | "merge" | "discard";

/** What the card or the list knows of a worktree: its branch, and its folder (where the
 * agent's files are whole, for a diff of whole files). */
export interface WorktreeNames {
  branch: string;
  root?: string;
}

export class Worktrees {
  constructor(
    private readonly client: AgentClient,
    private readonly diffs: DiffContent,
    private readonly dispatch: (action: Action) => void,
  ) {}

  async act(sessionId: string, agentId: string, action: WorktreeAction, names: WorktreeNames): Promise<void> {
    const { branch } = names;
    if (action === "view") return this.view(sessionId, agentId, names);
    if (action === "discard") {
      const sure = await vscode.window.showWarningMessage(
        `Discard the changes of ${branch}? Its worktree and branch are deleted; this cannot be undone.`,
        { modal: true },
        "Discard",
      );
      if (sure !== "Discard") return;
    }
    const result = await this.client.request("agent/resolveWorktree", { sessionId, agentId, action });
    if (result.resolved) {
      // worktree_resolved updates the card, in every window.
      const files = result.merged.length;
      void vscode.window.showInformationMessage(action === "merge" ? `agentls: merged ${files} file${files === 1 ? "" : "s"} of ${branch} into your working tree (uncommitted).` : `agentls: discarded ${branch}.`);
      return;
    }
    this.dispatch({ type: "worktreeConflicts", agentId, conflicts: result.conflicts });
    const list = result.conflicts.map((c) => `${vscode.workspace.asRelativePath(c.path)}: ${c.reason}`).join("\n");
    void vscode.window.showWarningMessage(`agentls: ${branch} was not merged (nothing was written):\n${list}`);
  }

  /** Each file the agent changed, in the diff editor, a tab each. */
  private async view(sessionId: string, agentId: string, { branch, root }: WorktreeNames): Promise<void> {
    const { files } = await this.client.request("agent/worktreeDiff", { sessionId, agentId });
    if (!files.length) {
      void vscode.window.showInformationMessage(`agentls: ${branch} changed no file.`);
      return;
    }
    for (const [index, file] of files.entries()) {
      const { before, after } = await wholeSides(file, root);
      const [left, right] = this.diffs.pair(`worktree-${agentId}-${index}`, { path: file.path, oldText: before, newText: after });
      const name = vscode.workspace.asRelativePath(file.path);
      await vscode.commands.executeCommand("vscode.diff", left, right, `${name} (${branch}, +${file.added} −${file.removed})`, {
        preserveFocus: true,
        preview: false,
      });
    }
  }

  /** Pick one of the session's worktrees, then what to do with it. */
  async pick(sessionId: string): Promise<void> {
    const { worktrees } = await this.client.request("agent/listWorktrees", { sessionId });
    if (!worktrees.length) {
      void vscode.window.showInformationMessage("agentls: this session has no isolated agent's worktree waiting.");
      return;
    }
    const chosen = await vscode.window.showQuickPick(worktrees.map(worktreeRow), { title: "agentls: Worktrees", placeHolder: "An isolated agent's changes, not merged yet" });
    if (!chosen) return;
    const { entry } = chosen;
    if (entry.status === "running") {
      void vscode.window.showInformationMessage(`agentls: the agent still works in ${entry.branch}.`);
      return;
    }
    const actions: Array<vscode.QuickPickItem & { action: WorktreeAction }> = [
      { label: "$(diff) View diff", action: "view" },
      { label: "$(git-merge) Merge into my working tree", action: "merge" },
      { label: "$(trash) Discard", action: "discard" },
    ];
    const what = await vscode.window.showQuickPick(entry.status === "missing" ? actions.slice(2) : actions, { title: entry.branch });
    if (what) await this.act(sessionId, entry.agentId, what.action, { branch: entry.branch, root: entry.path });
  }
}

/** Both sides of a changed file: whole, from the worktree's copy and the diff, when that
 * copy is there and fits the diff; else the diff's hunks alone. */
async function wholeSides(file: FileChangeInfo, root: string | undefined): Promise<{ before: string; after: string }> {
  const hunksOnly = sidesOfDiff(file.diff);
  const relative = diffPath(file.diff);
  if (!root || !relative || file.created || file.deleted) return hunksOnly;
  try {
    const after = new TextDecoder().decode(await vscode.workspace.fs.readFile(vscode.Uri.joinPath(vscode.Uri.file(root), relative)));
    const before = textBefore(after, file.diff);
    return before === undefined ? hunksOnly : { before, after };
  } catch {
    // The worktree's folder is gone (a `missing` worktree): the diff still shows the change.
    return hunksOnly;
  }
}

function worktreeRow(entry: WorktreeEntry): vscode.QuickPickItem & { entry: WorktreeEntry } {
  const files = entry.files?.length ?? 0;
  return {
    label: `$(git-branch) ${entry.branch}`,
    description: `${entry.status} · ${files} file${files === 1 ? "" : "s"} +${entry.added ?? 0} −${entry.removed ?? 0}`,
    detail: entry.description,
    entry,
  };
}
