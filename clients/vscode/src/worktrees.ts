// What the user does with an isolated agent's worktree: its diff file by file in VS Code's
// diff editor (agent/worktreeDiff), a merge into the working tree or a discard (after a
// confirmation) through agent/resolveWorktree, and "agentls: Worktrees…", a pick over
// agent/listWorktrees for a resumed session, whose chat has no cards for them.

import * as vscode from "vscode";

import type { AgentClient } from "./client";
import type { DiffContent } from "./diffs";
import type { Action } from "./reducer";
import { sidesOfDiff } from "./worktreeCard";
import type { WorktreeEntry } from "./wire";

export type WorktreeAction = "view" | "merge" | "discard";

export class Worktrees {
  constructor(
    private readonly client: AgentClient,
    private readonly diffs: DiffContent,
    private readonly dispatch: (action: Action) => void,
  ) {}

  async act(sessionId: string, agentId: string, action: WorktreeAction, branch = agentId): Promise<void> {
    if (action === "view") return this.view(sessionId, agentId, branch);
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
  private async view(sessionId: string, agentId: string, branch: string): Promise<void> {
    const { files } = await this.client.request("agent/worktreeDiff", { sessionId, agentId });
    if (!files.length) {
      void vscode.window.showInformationMessage(`agentls: ${branch} changed no file.`);
      return;
    }
    for (const [index, file] of files.entries()) {
      const { before, after } = sidesOfDiff(file.diff);
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
    if (what) await this.act(sessionId, entry.agentId, what.action, entry.branch);
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
