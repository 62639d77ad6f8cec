// The active editor, its selections and visible ranges, sent to the daemon debounced
// (agent/didChangeEditorState), and shown in the panel as what the next message carries.

import * as vscode from "vscode";

import type { ContextChip } from "./bridge";
import type { EditorStateParams, WireRange } from "./wire";

const DEBOUNCE_MS = 150;

export class EditorStateTracker implements vscode.Disposable {
  include = true;
  private lastFile: vscode.TextEditor | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly subscriptions: vscode.Disposable[];

  constructor(
    private readonly send: (params: EditorStateParams) => Promise<void>,
    private readonly onChip: (chip: ContextChip) => void,
  ) {
    this.subscriptions = [
      vscode.window.onDidChangeActiveTextEditor(() => this.changed()),
      vscode.window.onDidChangeTextEditorSelection(() => this.changed()),
      vscode.window.onDidChangeTextEditorVisibleRanges(() => this.changed()),
    ];
  }

  /** Send now (on start and after a restart), then on every change, debounced. */
  changed(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), DEBOUNCE_MS);
  }

  async flush(): Promise<void> {
    this.timer = undefined;
    const editor = this.fileEditor();
    this.onChip({ label: editor ? chipLabel(editor) : null, include: this.include });
    const params: EditorStateParams =
      editor && this.include
        ? {
            activeUri: editor.document.uri.toString(),
            selections: editor.selections.map(wireRange),
            visibleRanges: editor.visibleRanges.map(wireRange),
          }
        : { activeUri: null, selections: [], visibleRanges: [] };
    await this.send(params);
  }

  /**
   * The active editor when it shows a file. When it shows something else (a diff under
   * review, an output), the file the user was last in: that is what they are working on.
   */
  private fileEditor(): vscode.TextEditor | undefined {
    const active = vscode.window.activeTextEditor;
    if (active?.document.uri.scheme === "file") {
      this.lastFile = active;
      return active;
    }
    const last = this.lastFile;
    const stillOpen = last && vscode.workspace.textDocuments.includes(last.document) && !last.document.isClosed;
    return stillOpen ? last : vscode.window.visibleTextEditors.find((e) => e.document.uri.scheme === "file");
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
    for (const s of this.subscriptions) s.dispose();
  }
}

function wireRange(range: vscode.Range): WireRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function chipLabel(editor: vscode.TextEditor): string {
  const name = vscode.workspace.asRelativePath(editor.document.uri);
  const selection = editor.selection;
  if (selection.isEmpty) return name;
  const first = selection.start.line + 1;
  const last = selection.end.character === 0 && selection.end.line > selection.start.line ? selection.end.line : selection.end.line + 1;
  return first === last ? `${name}:${first}` : `${name}:${first}-${last}`;
}
