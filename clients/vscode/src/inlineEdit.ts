// "agentls: Edit Selection…": an instruction for the selected lines becomes an
// agent/inlineEdit turn of the chat's session. While it runs, the selection is marked and
// Esc stops it; the change it proposes is reviewed in the editor (src/inlineReview.ts),
// hunk by hunk from CodeLenses, never in the chat.

import * as vscode from "vscode";

import type { AgentClient } from "./client";
import type { Decision, InlineAnswer } from "./inlineDiff";
import { InlineReviewInEditor } from "./inlineReview";
import type { AgentEvent, PermissionRequest, WireRange } from "./wire";

/** The context key that is true while an inline edit's turn runs (Esc stops it). */
const RUNNING_KEY = "agentls.inlineEditRunning";
/** The context key that is true while an inline change waits for the user's review. */
const REVIEWING_KEY = "agentls.inlineReviewing";

const progressMark = vscode.window.createTextEditorDecorationType({
  isWholeLine: true,
  backgroundColor: new vscode.ThemeColor("editor.rangeHighlightBackground"),
});
const progressNote = vscode.window.createTextEditorDecorationType({
  after: { color: new vscode.ThemeColor("editorCodeLens.foreground"), margin: "0 0 0 2em" },
});

/** An inline edit's turn, from its request until it ends. */
interface InlineTurn {
  sessionId: string;
  turnId: string;
  uri: vscode.Uri;
  range: vscode.Range;
  instruction: string;
  reviewed: boolean;
}

export class InlineEdits implements vscode.Disposable {
  private turn: InlineTurn | undefined;
  private review: InlineReviewInEditor | undefined;
  /** Inline requests that came while another was under review: shown one at a time. */
  private waiting: PermissionRequest[] = [];
  /** A review is being opened: a request that comes meanwhile waits. */
  private opening = false;
  private readonly lensesChanged = new vscode.EventEmitter<void>();
  private readonly disposables: { dispose(): unknown }[];

  constructor(
    private readonly client: AgentClient,
    /** The shown chat's session, opened if there is none. */
    private readonly session: () => Promise<string>,
  ) {
    this.disposables = [
      this.lensesChanged,
      vscode.languages.registerCodeLensProvider({ scheme: "file" }, { provideCodeLenses: (document) => this.lenses(document), onDidChangeCodeLenses: this.lensesChanged.event }),
      vscode.window.onDidChangeVisibleTextEditors((editors) => {
        this.review?.decorate(editors);
        this.markProgress();
      }),
      vscode.workspace.onDidChangeTextDocument((event) => void this.onDocumentChanged(event)),
      vscode.commands.registerCommand("agentls.inlineEdit", () => this.start()),
      vscode.commands.registerCommand("agentls.inlineEdit.cancel", () => this.cancel()),
      vscode.commands.registerCommand("agentls.inlineEdit.acceptHunk", (index?: number) => this.decide("accepted", index)),
      vscode.commands.registerCommand("agentls.inlineEdit.rejectHunk", (index?: number) => this.decide("rejected", index)),
      vscode.commands.registerCommand("agentls.inlineEdit.acceptAll", () => this.review?.decideAll("accepted")),
      vscode.commands.registerCommand("agentls.inlineEdit.rejectAll", () => this.review?.decideAll("rejected")),
    ];
  }

  dispose(): void {
    void this.review?.abandon();
    for (const d of this.disposables) d.dispose();
  }

  /** Ask for the instruction, then send it as an inline edit of the selected lines. */
  async start(): Promise<void> {
    const editor = vscode.window.activeTextEditor;
    if (!editor || editor.document.uri.scheme !== "file") {
      void vscode.window.showInformationMessage("agentls: Edit Selection works in a file's editor.");
      return;
    }
    if (this.turn) {
      void vscode.window.showInformationMessage("agentls: an inline edit is already running; press Esc to stop it.");
      return;
    }
    const range = selectedLines(editor);
    const name = vscode.workspace.asRelativePath(editor.document.uri);
    const lines = range.start.line === range.end.line ? `line ${range.start.line + 1}` : `lines ${range.start.line + 1}-${range.end.line + 1}`;
    const instruction = await vscode.window.showInputBox({
      title: `agentls: Edit ${name}, ${lines}`,
      prompt: "What should change? The change is shown in the editor for you to accept or reject.",
      placeHolder: "e.g. add type hints",
      validateInput: (text) => (text.length > MAX_INSTRUCTION ? `At most ${MAX_INSTRUCTION} characters.` : undefined),
    });
    if (!instruction?.trim()) return;
    let result: { turnId: string };
    let sessionId: string;
    try {
      sessionId = await this.session();
      result = await this.client.request("agent/inlineEdit", { sessionId, uri: editor.document.uri.toString(), range: wireRange(range), instruction });
    } catch (error) {
      void vscode.window.showErrorMessage(`agentls: the inline edit could not start: ${error instanceof Error ? error.message : String(error)}`);
      return;
    }
    this.turn = { sessionId, turnId: result.turnId, uri: editor.document.uri, range, instruction, reviewed: false };
    await vscode.commands.executeCommand("setContext", RUNNING_KEY, true);
    this.markProgress();
  }

  /** Stop the inline edit's turn (its pending review, if any, is cancelled with it). */
  async cancel(): Promise<void> {
    const turn = this.turn;
    if (turn) await this.client.request("agent/abort", { sessionId: turn.sessionId, turnId: turn.turnId });
  }

  /** Every agent/event: an inline change's review opens and closes here (one this window
   * did not start too: after a reload, or from another window), and the turn ends here. */
  onEvent(event: AgentEvent): void {
    if (event.type === "permission_request" && event.inlineEdit && event.diff) void this.openReview(event);
    else if (event.type === "permission_resolved" && event.requestId === this.review?.requestId) void this.closeReview();
    else if (event.type === "permission_resolved") this.waiting = this.waiting.filter((r) => r.requestId !== event.requestId);
    else if (event.type === "turn_completed" && this.turn && event.sessionId === this.turn.sessionId && event.turnId === this.turn.turnId) void this.ended(this.turn, event.stopReason);
  }

  private async openReview(request: PermissionRequest): Promise<void> {
    const diff = request.diff;
    if (!diff) return;
    if (this.review || this.opening) {
      this.waiting.push(request);
      return;
    }
    this.opening = true;
    try {
      if (this.turn?.sessionId === request.sessionId) this.turn.reviewed = true;
      this.clearProgress();
      const refusal = diff.oldText === undefined ? NEW_FILE : undefined;
      const document = refusal ? undefined : await vscode.workspace.openTextDocument(vscode.Uri.file(diff.path));
      const stale = document && document.getText() !== diff.oldText ? CHANGED_FILE : undefined;
      if (!document || stale) {
        const message = refusal ?? stale ?? NEW_FILE;
        void vscode.window.showWarningMessage(`agentls: ${message}`);
        await this.client.request("agent/respondPermission", { sessionId: request.sessionId, requestId: request.requestId, optionId: "reject_once", message });
        this.opening = false;
        await this.showNext();
        return;
      }
      const answer = (a: InlineAnswer) => this.respond(request.sessionId, request.requestId, a);
      const review = new InlineReviewInEditor(request.requestId, document, diff.oldText ?? "", diff.newText, document.isDirty, answer, () => this.lensesChanged.fire());
      this.review = review;
      await vscode.commands.executeCommand("setContext", REVIEWING_KEY, true);
      await review.open();
    } finally {
      this.opening = false;
    }
  }

  private async respond(sessionId: string, requestId: string, answer: InlineAnswer): Promise<void> {
    await this.closeReview(false);
    await this.client.request("agent/respondPermission", { sessionId, requestId, ...answer });
    await this.showNext();
  }

  /** Take the review out of the editor; `next`: then show the next one waiting. */
  private async closeReview(next = true): Promise<void> {
    const review = this.review;
    if (!review) return;
    this.review = undefined;
    await vscode.commands.executeCommand("setContext", REVIEWING_KEY, false);
    await review.abandon();
    review.decorate(vscode.window.visibleTextEditors);
    this.lensesChanged.fire();
    if (next) await this.showNext();
  }

  private async showNext(): Promise<void> {
    const next = this.waiting.shift();
    if (next) await this.openReview(next);
  }

  private async ended(turn: InlineTurn, stopReason: string): Promise<void> {
    if (this.turn !== turn) return;
    this.turn = undefined;
    this.clearProgress();
    await this.closeReview();
    await vscode.commands.executeCommand("setContext", RUNNING_KEY, false);
    if (!turn.reviewed && stopReason !== "aborted") {
      void vscode.window.showInformationMessage(`agentls: the inline edit ended without proposing a change (${stopReason}); the chat shows its answer.`);
    }
  }

  private async decide(decision: Decision, index?: number): Promise<void> {
    const review = this.review;
    if (!review) return;
    if (index !== undefined) return review.decideHunk(index, decision);
    const editor = vscode.window.activeTextEditor;
    if (editor?.document === review.document) await review.decideAt(editor.selection.active.line, decision);
  }

  /** The user typed in the file under review: the proposal is rejected, their text stays. */
  private async onDocumentChanged(event: vscode.TextDocumentChangeEvent): Promise<void> {
    const review = this.review;
    if (!review?.isForeign(event)) return;
    void vscode.window.showWarningMessage("agentls: the file was edited during the inline review; the proposed change was rejected.");
    await review.rejectAfterUserEdit();
  }

  private lenses(document: vscode.TextDocument): vscode.CodeLens[] {
    const review = this.review;
    if (!review || document !== review.document) return [];
    return review.blocks.flatMap((block, n) => {
      const at = new vscode.Range(block.removedStart, 0, block.removedStart, 0);
      const hunk = [
        new vscode.CodeLens(at, { title: "$(check) Accept", command: "agentls.inlineEdit.acceptHunk", arguments: [block.index], tooltip: "Keep this change" }),
        new vscode.CodeLens(at, { title: "$(close) Reject", command: "agentls.inlineEdit.rejectHunk", arguments: [block.index], tooltip: "Leave these lines as they are" }),
      ];
      if (n > 0 || review.blocks.length < 2) return hunk;
      return [
        ...hunk,
        new vscode.CodeLens(at, { title: "Accept All", command: "agentls.inlineEdit.acceptAll", tooltip: "Keep every change left (Ctrl+Enter)" }),
        new vscode.CodeLens(at, { title: "Reject All", command: "agentls.inlineEdit.rejectAll", tooltip: "Reject every change left (Ctrl+Shift+Backspace)" }),
      ];
    });
  }

  /** Mark the lines the running inline edit works on, in every editor of its file. */
  private markProgress(): void {
    const turn = this.turn;
    for (const editor of vscode.window.visibleTextEditors) {
      const mine = turn && !turn.reviewed && editor.document.uri.toString() === turn.uri.toString();
      editor.setDecorations(progressMark, mine ? [turn.range] : []);
      const note = { contentText: `agentls is editing: ${short(turn?.instruction ?? "")} (Esc to stop)` };
      editor.setDecorations(progressNote, mine ? [{ range: new vscode.Range(turn.range.start.line, 0, turn.range.start.line, 0), renderOptions: { after: note } }] : []);
    }
  }

  private clearProgress(): void {
    for (const editor of vscode.window.visibleTextEditors) {
      editor.setDecorations(progressMark, []);
      editor.setDecorations(progressNote, []);
    }
  }
}

const MAX_INSTRUCTION = 20_000;
/** Why an inline change is refused without a review (the model reads it). */
const NEW_FILE = "an inline edit changes the selected file only; a new file was not created.";
const CHANGED_FILE = "the file changed after the change was proposed, so it was not applied; read it again.";

/** The selection, or the cursor's line when nothing is selected. */
function selectedLines(editor: vscode.TextEditor): vscode.Range {
  const selection = editor.selection;
  if (!selection.isEmpty) return new vscode.Range(selection.start, selection.end);
  return editor.document.lineAt(selection.active.line).range;
}

function wireRange(range: vscode.Range): WireRange {
  return { start: { line: range.start.line, character: range.start.character }, end: { line: range.end.line, character: range.end.character } };
}

function short(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > 50 ? `${line.slice(0, 49)}…` : line;
}
