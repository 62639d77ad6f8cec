// The history picker: a QuickPick whose saved-session rows carry a Delete button.

import * as vscode from "vscode";

import type { SessionRow } from "./sessionRows";

const DELETE_BUTTON: vscode.QuickInputButton = { iconPath: new vscode.ThemeIcon("trash"), tooltip: "Delete session…" };

type Item = vscode.QuickPickItem & { row: SessionRow };

/** What the user did with the picker: picked a row, asked to delete one, or left. */
export type PickerChoice = { kind: "pick"; row: SessionRow } | { kind: "delete"; row: SessionRow } | undefined;

/** Show `rows`; a saved session's trash button answers `delete` (the caller confirms). */
export function pickSessionRow(rows: SessionRow[], title: string): Promise<PickerChoice> {
  const picker = vscode.window.createQuickPick<Item>();
  picker.title = title;
  picker.matchOnDescription = true;
  picker.matchOnDetail = true;
  picker.items = rows.map((row) => ({
    label: row.label,
    description: row.description,
    detail: row.detail,
    row,
    buttons: row.deletable ? [DELETE_BUTTON] : [],
  }));
  return new Promise<PickerChoice>((resolve) => {
    let choice: PickerChoice;
    picker.onDidAccept(() => {
      const picked = picker.selectedItems[0];
      choice = picked ? { kind: "pick", row: picked.row } : undefined;
      picker.hide();
    });
    picker.onDidTriggerItemButton((event) => {
      choice = { kind: "delete", row: event.item.row };
      picker.hide();
    });
    picker.onDidHide(() => {
      picker.dispose();
      resolve(choice);
    });
    picker.show();
  });
}
