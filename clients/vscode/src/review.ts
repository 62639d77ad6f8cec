// Review before apply: a proposed file change opens in VS Code's diff editor with an
// editable proposed side. The user keeps or reverts each hunk (the diff editor's own revert
// arrows, or a key and a title button for the hunk at the cursor) and may edit the text;
// what they accept is sent as `acceptedText`, so exactly that reaches the file.

import * as vscode from "vscode";

import { DIFF_SCHEME, type DiffContent } from "./diffs";
import { hunkAt, hunks, revertHunk } from "./hunks";
import type { FileDiff } from "./wire";

export const REVIEW_SCHEME = "agentls-review";

/** The proposed texts under review, in memory: editable, never on disk. */
class ProposedFiles implements vscode.FileSystemProvider {
  private readonly files = new Map<string, { data: Uint8Array; mtime: number }>();
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;

  set(uri: vscode.Uri, text: string): void {
    this.files.set(uri.toString(), { data: new TextEncoder().encode(text), mtime: Date.now() });
  }

  forget(uri: vscode.Uri): void {
    this.files.delete(uri.toString());
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const file = this.files.get(uri.toString());
    if (!file) throw vscode.FileSystemError.FileNotFound(uri);
    return { type: vscode.FileType.File, ctime: file.mtime, mtime: file.mtime, size: file.data.byteLength };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    const file = this.files.get(uri.toString());
    if (!file) throw vscode.FileSystemError.FileNotFound(uri);
    return file.data;
  }

  /** Saving (or auto-save) keeps the text for the review; it never accepts anything. */
  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (!this.files.has(uri.toString())) throw vscode.FileSystemError.NoPermissions(uri);
    this.files.set(uri.toString(), { data: content, mtime: Date.now() });
    this.changed.fire([{ type: vscode.FileChangeType.Changed, uri }]);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }

  readDirectory(): [string, vscode.FileType][] {
    return [];
  }

  createDirectory(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  delete(uri: vscode.Uri): never {
    throw vscode.FileSystemError.NoPermissions(uri);
  }

  rename(uri: vscode.Uri): void {
    throw vscode.FileSystemError.NoPermissions(uri);
  }
}

interface OpenReview {
  original: string;
  proposed: vscode.Uri;
}

/** The reviews of pending permission requests, by request id. */
export class Reviews implements vscode.Disposable {
  private readonly files = new ProposedFiles();
  private readonly open = new Map<string, OpenReview>();
  private readonly disposables: { dispose(): unknown }[];

  constructor(private readonly diffs: DiffContent) {
    this.disposables = [
      vscode.workspace.registerFileSystemProvider(REVIEW_SCHEME, this.files, { isCaseSensitive: true }),
    ];
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }

  /** Open (or show again) the diff of a request's proposed change, keeping the user's focus. */
  async show(requestId: string, diff: FileDiff): Promise<void> {
    const name = diff.path.split(/[\\/]/).pop() ?? "file";
    let review = this.open.get(requestId);
    if (!review) {
      const proposed = vscode.Uri.from({ scheme: REVIEW_SCHEME, path: `/${requestId}/${name}` });
      this.files.set(proposed, diff.newText);
      review = { original: diff.oldText ?? "", proposed };
      this.open.set(requestId, review);
    }
    const [before] = this.diffs.pair(requestId, diff);
    const title = `${vscode.workspace.asRelativePath(diff.path)} (review: keep or revert each change, then Accept)`;
    await vscode.commands.executeCommand("vscode.diff", before, review.proposed, title, {
      preserveFocus: true,
      preview: false,
    });
  }

  /** The text the user accepted in a request's review, or undefined when it was not opened. */
  acceptedText(requestId: string): string | undefined {
    const review = this.open.get(requestId);
    if (!review) return undefined;
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === review.proposed.toString());
    return document ? document.getText() : new TextDecoder().decode(this.files.readFile(review.proposed));
  }

  /** The request a review editor (either side of its diff) belongs to. */
  requestOf(uri: vscode.Uri | undefined): string | undefined {
    if (!uri || (uri.scheme !== REVIEW_SCHEME && uri.scheme !== DIFF_SCHEME)) return undefined;
    const requestId = uri.path.split("/")[1];
    return requestId && this.open.has(requestId) ? requestId : undefined;
  }

  /** The request is answered: close its diff without a save prompt and forget its text. */
  async close(requestId: string): Promise<void> {
    const review = this.open.get(requestId);
    if (!review) return;
    const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === review.proposed.toString());
    if (document?.isDirty) await document.save();
    const prefix = `/${requestId}/`;
    const tabs = vscode.window.tabGroups.all
      .flatMap((group) => group.tabs)
      .filter((tab) => tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.path.startsWith(prefix))
      .filter((tab) => (tab.input as vscode.TabInputTextDiff).modified.scheme === REVIEW_SCHEME);
    if (tabs.length) await vscode.window.tabGroups.close(tabs, true);
    this.open.delete(requestId);
    this.files.forget(review.proposed);
  }

  /** Put the hunk under the cursor (or at `line`) back as it was. */
  async revertHunk(editor: vscode.TextEditor | undefined, line?: number): Promise<void> {
    const requestId = this.requestOf(editor?.document.uri);
    const review = requestId ? this.open.get(requestId) : undefined;
    if (!editor || !review || editor.document.uri.scheme !== REVIEW_SCHEME) return;
    const current = editor.document.getText();
    const hunk = hunkAt(hunks(review.original, current), line ?? editor.selection.active.line);
    if (!hunk) return;
    const reverted = revertHunk(review.original, current, hunk);
    const whole = new vscode.Range(editor.document.positionAt(0), editor.document.positionAt(current.length));
    await editor.edit((edit) => edit.replace(whole, reverted));
  }

}
