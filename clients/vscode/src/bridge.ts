// Messages between the extension host and the chat webview (both directions, typed).

import type { Action, ViewState } from "./reducer";
import type { WelcomeFromWebview, WelcomeToWebview } from "./welcome";
import type { RespondPermissionParams, WireRange } from "./wire";

/** What an `@` mention points at (mentions.ts): a file, a folder, a symbol, problems, a session. */
export type MentionGroup = "file" | "folder" | "symbol" | "problems" | "session";

/** A file (or some of its lines), a folder, a symbol, problems, another session, or a pasted
 * image (a data: URI), the next message carries. */
export interface Attachment {
  uri: string;
  range?: WireRange;
  label: string;
  /** For a pasted image: the name the model reads; for a symbol, its name. */
  name?: string;
  /** What `@` offered it as (a file when absent), and what the offer says beside its label. */
  group?: MentionGroup;
  detail?: string;
}

export interface ContextChip {
  /** What the next message carries: "app.py:10-14", or null when there is no editor. */
  label: string | null;
  include: boolean;
}

/** When the webview's document started loading and its script started, in epoch ms. */
export interface WebviewTiming {
  documentStart: number;
  scriptStart: number;
  ready: number;
}

export type ToWebview =
  | { type: "action"; action: Action }
  | { type: "snapshot"; state: ViewState }
  | { type: "context"; context: ContextChip }
  | { type: "status"; text: string; level: "info" | "error" }
  | { type: "focusInput"; prefill?: string }
  | { type: "attach"; attachment: Attachment }
  | { type: "files"; query: string; files: Attachment[] }
  | WelcomeToWebview;

export type FromWebview =
  | { type: "ready"; timing?: WebviewTiming }
  | { type: "send"; text: string; attachments?: Attachment[] }
  | { type: "findFiles"; query: string }
  | { type: "steer"; turnId: string; text: string }
  | { type: "abort" }
  | { type: "continueTurn" }
  /** `message`: a plan's feedback (Keep planning) or why it was rejected. */
  | { type: "permission"; requestId: string; optionId: RespondPermissionParams["optionId"]; message?: string }
  | { type: "answer"; requestId: string; answer: string }
  | { type: "newSession" }
  | { type: "history" }
  | { type: "older" }
  | { type: "includeContext"; include: boolean }
  | { type: "openLocation"; path: string; line?: number }
  /** `index`: one file of an apply_patch call (its `diffs`). */
  | { type: "openDiff"; toolCallId: string; index?: number }
  /** `index`: one file of a pending patch; without it, every file. */
  | { type: "review"; requestId: string; index?: number }
  | { type: "undo"; toolCallIds: string[] }
  | { type: "reviewTurn"; summaryId: string }
  /** From a user message: rewind to before it (asks what, previews, applies), or fork a
   * new chat that ends just before it, its text in the box (edit and resend). */
  | { type: "rewind"; messageId: string }
  | { type: "fork"; messageId: string }
  /** A turn's changes as agent/turnDiff gives them (what shell commands changed too). */
  | { type: "turnChanges"; turnId: string }
  /** An isolated agent's worktree: its diff, or merge or discard it. */
  | { type: "worktree"; agentId: string; action: "view" | "merge" | "discard" }
  | { type: "insertCode"; code: string }
  | { type: "copy"; text: string }
  | WelcomeFromWebview;
