// The history picker's rows of saved sessions and what deleting one asks: pure, so the
// unit tests run it without VS Code (sessionPicker.ts shows them).

import type { SessionInfo } from "./wire";

/** A row of the history picker: `sessionId` "" for the "Older sessions…" row. */
export interface SessionRow {
  label: string;
  description: string;
  detail: string;
  sessionId: string;
  /** A saved session the user may delete (an open chat is closed first, not listed here). */
  deletable: boolean;
}

/** A saved session as the history picker lists it. */
export function savedRow(info: SessionInfo, shownId: string | null): SessionRow {
  return {
    label: info.title || "(no message yet)",
    description: `${info.turns} turn${info.turns === 1 ? "" : "s"}`,
    detail: `${new Date(info.updatedAt).toLocaleString()}${info.sessionId === shownId ? " · shown now" : ""}`,
    sessionId: info.sessionId,
    deletable: true,
  };
}

/** The modal's question and detail before agent/deleteSession. */
export function deleteQuestion(row: Pick<SessionRow, "label" | "description">, shown: boolean): { message: string; detail: string } {
  return {
    message: `Delete the session "${row.label}"?`,
    detail:
      `Its transcript, checkpoints and its agents' worktrees and branches are removed for good (${row.description}); it cannot be resumed or rewound afterwards.` +
      (shown ? " It is the chat shown now: a running turn is stopped and the chat is cleared." : ""),
  };
}

/** What the user is told when the shown chat's session was deleted: the chat is new. */
export function deletedNotice(label: string): string {
  return `agentls: "${label}" was deleted; this chat is a new one.`;
}

/** What a finished agent/deleteSession tells the user, or null when all went. */
export function deleteWarning(warnings: readonly string[] | undefined): string | null {
  if (!warnings?.length) return null;
  return `agentls: the session is deleted, but ${warnings.length === 1 ? "this was" : "these were"} left behind: ${warnings.join("; ")}`;
}
