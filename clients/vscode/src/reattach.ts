// Coming back to a running turn after the window reloads (Reload Window, an extension
// update, the folder closed and opened again). While a turn runs, the session and the seq
// the chat had when the turn began are kept in the workspace's state; the next activation
// resumes the session with that `lastSeq`: the answer's messages are the conversation so
// far, and the daemon sends the running turn's events again, then the live ones (a
// permission request still waiting among them). Pure: no vscode, so it is tested in node;
// src/returning.ts is the part that talks to VS Code.

import type { AgentEvent, ResumeSessionResult } from "./wire";

/** The session whose turn ran when the window went, and the seq before that turn. */
export interface RunningNote {
  sessionId: string;
  lastSeq: number;
}

/** Where a note is kept: vscode.Memento (context.workspaceState) has this shape. */
export interface NoteStore {
  get(key: string): unknown;
  update(key: string, value: unknown): PromiseLike<void>;
}

export const NOTE_KEY = "agentls.runningTurn";

/** What the chat says when it came back to the turn, in the words the Neovim client uses. */
export const REATTACHED = "re-attached to the turn that was running when the window closed";
export const ENDED_AWAY = "the turn that was running when the window closed has ended; the session is as it was recorded";

/** Events a resumed history drew already when their message is in it. */
const BY_MESSAGE: ReadonlySet<AgentEvent["type"]> = new Set(["text_delta", "thinking_delta", "message_completed", "message_discarded"]);

/** A note read back from the store, or undefined for anything that is not one. */
export function readNote(value: unknown): RunningNote | undefined {
  if (typeof value !== "object" || value === null) return undefined;
  const { sessionId, lastSeq } = value as Record<string, unknown>;
  if (typeof sessionId !== "string" || typeof lastSeq !== "number" || !Number.isInteger(lastSeq) || lastSeq < 0) return undefined;
  return { sessionId, lastSeq };
}

/** Keeps the note in step with the events: written when a turn starts, cleared when the
 * noted session's turn ends. One note per workspace: the last turn that started. */
export class RunningNotes {
  constructor(private readonly store: NoteStore) {}

  get note(): RunningNote | undefined {
    return readNote(this.store.get(NOTE_KEY));
  }

  observe(event: AgentEvent): PromiseLike<void> | undefined {
    if (event.type === "turn_started") return this.store.update(NOTE_KEY, { sessionId: event.sessionId, lastSeq: event.seq - 1 });
    // A queued turn that starts next writes the note again with its own turn_started.
    if (event.type === "turn_completed" && this.note?.sessionId === event.sessionId) return this.clear();
    return undefined;
  }

  clear(): PromiseLike<void> {
    return this.store.update(NOTE_KEY, undefined);
  }
}

/** The seq a chat starts from after a resume: the events after it are the ones the daemon
 * sends next. With a note, the seq before the noted turn (its events come again); without,
 * the answer's `lastSeq`. A note above the answer's seq is of an earlier opening of the
 * session (a rebuilt session counts from 0 again). */
export function startSeq(result: ResumeSessionResult, note?: RunningNote): number {
  const answered = result.lastSeq ?? 0;
  return note ? Math.min(note.lastSeq, answered) : answered;
}

/** The notice that says what became of the noted turn. */
export function returnNotice(result: ResumeSessionResult): { level: "info"; message: string } {
  return { level: "info", message: result.runningTurnId ? REATTACHED : ENDED_AWAY };
}

/** Whether `event`, sent again after a resume, shows what the resumed history drew already. */
export function drawnBefore(drawn: Readonly<Record<string, true>>, event: AgentEvent): boolean {
  return BY_MESSAGE.has(event.type) && "messageId" in event && drawn[event.messageId] === true;
}
