// An inline edit's proposed change reviewed where it is, in the file's own editor: each
// hunk's old lines (red) stay above its proposed lines (green) in the buffer until the user
// accepts or rejects it from its CodeLens. When every hunk is decided the buffer goes back
// to the file as it was, and the answer (the text with only the accepted hunks) goes to the
// daemon, whose write lane applies it as a checkpoint of the turn (so a rewind undoes it).

import * as vscode from "vscode";

import { type Decision, type InlineAnswer, type InlineReview, type Layout, answerOf, blockAt, decide, decideRest, layout, lineEdits, startReview, withoutProposals } from "./inlineDiff";

const removedLines = vscode.window.createTextEditorDecorationType({
  isWholeLine: true,
  backgroundColor: new vscode.ThemeColor("diffEditor.removedLineBackground"),
  overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.deletedForeground"),
  overviewRulerLane: vscode.OverviewRulerLane.Left,
});
const addedLines = vscode.window.createTextEditorDecorationType({
  isWholeLine: true,
  backgroundColor: new vscode.ThemeColor("diffEditor.insertedLineBackground"),
  overviewRulerColor: new vscode.ThemeColor("editorOverviewRuler.addedForeground"),
  overviewRulerLane: vscode.OverviewRulerLane.Left,
});

/** One pending request's change shown in its file's buffer. */
export class InlineReviewInEditor {
  private review: InlineReview;
  private shown: Layout;
  /** Our own edits are under way: their change events are not the user's. */
  private applying = 0;
  private done = false;

  constructor(
    readonly requestId: string,
    readonly document: vscode.TextDocument,
    oldText: string,
    newText: string,
    /** Whether the buffer had unsaved changes before: if not, it is saved once restored. */
    private readonly wasDirty: boolean,
    private readonly answer: (answer: InlineAnswer) => Promise<void>,
    private readonly redraw: () => void,
  ) {
    this.review = startReview(oldText, newText);
    this.shown = { text: oldText, blocks: [] };
  }

  /** Put the old and proposed lines in the buffer and show where the first change is. */
  async open(): Promise<void> {
    await this.show(layout(this.review));
    const first = this.shown.blocks[0];
    const editor = await vscode.window.showTextDocument(this.document, { preview: false });
    if (!first) return;
    // The cursor goes to the first change: the selection the instruction was about is done.
    editor.selection = new vscode.Selection(first.removedStart, 0, first.removedStart, 0);
    editor.revealRange(new vscode.Range(first.removedStart, 0, first.end, 0), vscode.TextEditorRevealType.InCenterIfOutsideViewport);
  }

  get blocks(): Layout["blocks"] {
    return this.done ? [] : this.shown.blocks;
  }

  /** Decide one hunk (by its index in the change); every hunk decided answers the request. */
  async decideHunk(index: number, decision: Decision): Promise<void> {
    if (this.done) return;
    this.review = decide(this.review, index, decision);
    await this.settle();
  }

  /** Decide the hunk at (or after) a line. */
  async decideAt(line: number, decision: Decision): Promise<void> {
    const block = blockAt(this.shown.blocks, line);
    if (block) await this.decideHunk(block.index, decision);
  }

  async decideAll(decision: Decision): Promise<void> {
    if (this.done) return;
    this.review = decideRest(this.review, decision);
    await this.settle();
  }

  /** The request was answered or cancelled elsewhere (another client, an abort). */
  async abandon(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.restore();
  }

  /** The user typed in the file during the review: their text stays, the proposed lines
   * they did not touch go, and the change is rejected. */
  async rejectAfterUserEdit(): Promise<void> {
    if (this.done) return;
    this.done = true;
    await this.show({ text: withoutProposals(this.shown, this.document.getText()), blocks: [] });
    await this.answer({ optionId: "reject_once" });
  }

  /** A change of the buffer that is not ours: the user typed in it during the review. */
  isForeign(event: vscode.TextDocumentChangeEvent): boolean {
    return !this.done && this.applying === 0 && event.document === this.document && event.contentChanges.length > 0 && event.document.getText() !== this.shown.text;
  }

  /** Decorate the editors that show the file. */
  decorate(editors: readonly vscode.TextEditor[]): void {
    const removed: vscode.Range[] = [];
    const added: vscode.Range[] = [];
    for (const block of this.blocks) {
      if (block.addedStart > block.removedStart) removed.push(new vscode.Range(block.removedStart, 0, block.addedStart - 1, 0));
      if (block.end > block.addedStart) added.push(new vscode.Range(block.addedStart, 0, block.end - 1, 0));
    }
    for (const editor of editors) {
      if (editor.document !== this.document) continue;
      editor.setDecorations(removedLines, removed);
      editor.setDecorations(addedLines, added);
    }
  }

  private async settle(): Promise<void> {
    const answer = answerOf(this.review);
    if (!answer) {
      await this.show(layout(this.review));
      return;
    }
    this.done = true;
    // The daemon applies the answer to the file as it was: the buffer goes back first.
    await this.restore();
    await this.answer(answer);
  }

  private async restore(): Promise<void> {
    await this.show({ text: this.review.oldText, blocks: [] });
    if (!this.wasDirty && this.document.isDirty && this.document.getText() === this.review.oldText) await this.document.save();
  }

  /** Turn the buffer into `next` (whole-line edits only), then redraw the decorations. */
  private async show(next: Layout): Promise<void> {
    const current = this.document.getText();
    const edit = new vscode.WorkspaceEdit();
    for (const change of lineEdits(current, next.text)) {
      edit.replace(this.document.uri, new vscode.Range(this.document.positionAt(change.from), this.document.positionAt(change.to)), change.text);
    }
    this.applying++;
    try {
      if (edit.size && !(await vscode.workspace.applyEdit(edit))) throw new Error(`could not show the change in ${this.document.uri.fsPath}`);
    } finally {
      this.applying--;
    }
    this.shown = next;
    this.decorate(vscode.window.visibleTextEditors);
    this.redraw();
  }
}
