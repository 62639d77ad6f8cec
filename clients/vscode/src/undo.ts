// Taking an agent's change back through a WorkspaceEdit, so the editor's buffer, its undo
// stack and the disk move together. Text the user wrote since is never dropped silently.

import * as vscode from "vscode";

import { readSettings } from "./settings";
import type { FileDiff } from "./wire";

export type UndoOutcome = "reverted" | "cancelled";

/** Put `change.path` back to `change.oldText` (delete it when the agent created it). */
export async function revertChange(change: FileDiff): Promise<UndoOutcome> {
  const uri = vscode.Uri.file(change.path);
  const name = vscode.workspace.asRelativePath(uri);
  const current = await currentText(uri);
  if (current !== undefined && current !== change.newText) {
    const choice = await vscode.window.showWarningMessage(
      `${name} changed after the agent's edit. Undo puts back the text from before the edit, and those later changes go too.`,
      { modal: true },
      "Undo Anyway",
    );
    if (choice !== "Undo Anyway") return "cancelled";
  }
  const edit = new vscode.WorkspaceEdit();
  if (change.oldText === undefined) {
    const choice = await vscode.window.showWarningMessage(`Undo deletes ${name}, which the agent created.`, { modal: true }, "Delete");
    if (choice !== "Delete") return "cancelled";
    edit.deleteFile(uri, { ignoreIfNotExists: true });
    return (await vscode.workspace.applyEdit(edit)) ? "reverted" : failed(name);
  }
  if (current === undefined) {
    edit.createFile(uri, { contents: new TextEncoder().encode(change.oldText) });
    return (await vscode.workspace.applyEdit(edit)) ? "reverted" : failed(name);
  }
  const document = await vscode.workspace.openTextDocument(uri);
  const whole = new vscode.Range(document.positionAt(0), document.positionAt(document.getText().length));
  edit.replace(uri, whole, change.oldText);
  if (!(await vscode.workspace.applyEdit(edit))) return failed(name);
  if (readSettings().saveEdits) await document.save();
  return "reverted";
}

/** The file's text as the editor has it (an open buffer first), or undefined if it is gone. */
async function currentText(uri: vscode.Uri): Promise<string | undefined> {
  const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (open) return open.getText();
  try {
    return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
  } catch {
    return undefined;
  }
}

function failed(name: string): UndoOutcome {
  void vscode.window.showErrorMessage(`agentls: could not undo the change to ${name}.`);
  return "cancelled";
}
