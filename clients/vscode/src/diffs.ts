// Before/after texts of the agent's edits as read-only documents, for VS Code's diff editor.

import * as vscode from "vscode";

import type { FileDiff } from "./wire";

export const DIFF_SCHEME = "agentls-diff";

export class DiffContent implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, string>();

  provideTextDocumentContent(uri: vscode.Uri): string {
    return this.texts.get(uri.toString()) ?? "";
  }

  /** URIs of the old and new text of one tool call's diff, named like the file. */
  pair(toolCallId: string, diff: FileDiff): [vscode.Uri, vscode.Uri] {
    const name = diff.path.split(/[\\/]/).pop() ?? "file";
    const before = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${toolCallId}/before/${name}` });
    const after = vscode.Uri.from({ scheme: DIFF_SCHEME, path: `/${toolCallId}/after/${name}` });
    this.texts.set(before.toString(), diff.oldText ?? "");
    this.texts.set(after.toString(), diff.newText);
    return [before, after];
  }
}
