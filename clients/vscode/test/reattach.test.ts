// Coming back to a running turn after a window reload: the note kept in the workspace's
// state, and the chat a resume with that note draws (history, then the events sent again).

import assert from "node:assert/strict";
import { test } from "node:test";

import { ENDED_AWAY, NOTE_KEY, type NoteStore, REATTACHED, RunningNotes, readNote } from "../src/reattach";
import { type ViewState, initialState, reduce, sessionOpened } from "../src/reducer";
import type { AgentEvent, DisplayMessage, ResumeSessionResult } from "../src/wire";

const SESSION = "sess_1";
const COMMON = { model: "m", permissionMode: "default" as const, tools: [], sessionId: SESSION };

/** context.workspaceState's shape over a Map: what the note store is given in VS Code. */
class MapStore implements NoteStore {
  readonly values = new Map<string, unknown>();
  get(key: string): unknown {
    return this.values.get(key);
  }
  update(key: string, value: unknown): Promise<void> {
    if (value === undefined) this.values.delete(key);
    else this.values.set(key, value);
    return Promise.resolve();
  }
}

function event(seq: number, fields: Record<string, unknown>, sessionId = SESSION): AgentEvent {
  return { sessionId, seq, ...fields } as unknown as AgentEvent;
}

function fold(state: ViewState, events: AgentEvent[]): ViewState {
  return events.reduce((s, e) => reduce(s, { type: "event", event: e }), state);
}

test("the note is written when a turn starts and cleared when that session's turn ends", async () => {
  const store = new MapStore();
  const notes = new RunningNotes(store);
  await notes.observe(event(41, { type: "turn_started", turnId: "t2", userMessageId: "u2" }));
  assert.deepEqual(notes.note, { sessionId: SESSION, lastSeq: 40 });
  // Another session's turn ending leaves the note alone.
  await notes.observe(event(7, { type: "turn_completed", turnId: "tx", stopReason: "end_turn" }, "sess_2"));
  assert.deepEqual(notes.note, { sessionId: SESSION, lastSeq: 40 });
  await notes.observe(event(42, { type: "text_delta", turnId: "t2", messageId: "a", text: "x" }));
  assert.deepEqual(notes.note, { sessionId: SESSION, lastSeq: 40 });
  await notes.observe(event(43, { type: "turn_completed", turnId: "t2", stopReason: "end_turn" }));
  assert.equal(notes.note, undefined);
  assert.equal(store.values.has(NOTE_KEY), false);
});

test("a note read back that is not one is ignored", () => {
  for (const junk of [undefined, null, 3, "x", {}, { sessionId: SESSION }, { sessionId: 1, lastSeq: 2 }, { sessionId: SESSION, lastSeq: -1 }, { sessionId: SESSION, lastSeq: 1.5 }]) {
    assert.equal(readNote(junk), undefined, JSON.stringify(junk));
  }
  assert.deepEqual(readNote({ sessionId: SESSION, lastSeq: 0 }), { sessionId: SESSION, lastSeq: 0 });
});

// The conversation when the window came back: the running turn's user message and its
// first answer (a Write call) are in the transcript already.
const HISTORY: DisplayMessage[] = [
  { messageId: "u0", role: "user", content: [{ type: "text", text: "Earlier question" }] },
  { messageId: "a0", role: "assistant", content: [{ type: "text", text: "Earlier answer." }] },
  { messageId: "u1", role: "user", content: [{ type: "text", text: "Write hello.txt" }] },
  {
    messageId: "a1",
    role: "assistant",
    content: [
      { type: "text", text: "Writing it." },
      { type: "tool_use", id: "c1", name: "Write", input: { file_path: "hello.txt", content: "hi" } },
    ],
  },
];

/** What the daemon sends again from the note's seq: the running turn from its start. */
const RESENT: Array<Record<string, unknown>> = [
  { type: "turn_started", turnId: "t1", userMessageId: "u1" },
  { type: "message_completed", turnId: "t1", messageId: "u1", role: "user", content: [{ type: "text", text: "Write hello.txt" }] },
  { type: "text_delta", turnId: "t1", messageId: "a1", text: "Writing " },
  { type: "text_delta", turnId: "t1", messageId: "a1", text: "it." },
  { type: "message_completed", turnId: "t1", messageId: "a1", role: "assistant", content: [{ type: "text", text: "Writing it." }] },
  { type: "tool_call", turnId: "t1", toolCallId: "c1", name: "Write", kind: "edit", title: "Write hello.txt", input: { file_path: "hello.txt" } },
  {
    type: "permission_request",
    turnId: "t1",
    requestId: "p1",
    toolCallId: "c1",
    title: "Write hello.txt",
    input: { file_path: "hello.txt" },
    options: [
      { optionId: "allow_once", kind: "allow_once", name: "Allow once" },
      { optionId: "reject_once", kind: "reject_once", name: "Reject" },
    ],
  },
];

function reattached(result: ResumeSessionResult, noteSeq: number): ViewState {
  return reduce(initialState(), sessionOpened(result, { sessionId: SESSION, lastSeq: noteSeq }));
}

test("a re-attach draws the history once, applies the events sent again at once, and the request is pending", () => {
  const result: ResumeSessionResult = { ...COMMON, messages: HISTORY, lastSeq: 57, runningTurnId: "t1" };
  const opened = reattached(result, 50);
  assert.equal(opened.runningTurn, "t1");
  assert.equal(opened.lastSeq, 50);
  const state = fold(opened, RESENT.map((e, i) => event(51 + i, e)));
  // Every event was applied, none held behind a gap.
  assert.equal(state.lastSeq, 57);
  assert.deepEqual(state.early, {});
  const users = state.items.flatMap((i) => (i.kind === "user" ? [i.text] : []));
  assert.deepEqual(users, ["Earlier question", "Write hello.txt"]);
  const answers = state.items.flatMap((i) => (i.kind === "assistant" ? [i.text] : []));
  assert.deepEqual(answers, ["Earlier answer.", "Writing it."]);
  assert.equal(state.items.filter((i) => i.kind === "tool").length, 1);
  const notice = state.items.find((i) => i.kind === "notice");
  assert.equal(notice?.kind === "notice" && notice.message, REATTACHED);
  const request = state.items.find((i) => i.kind === "permission");
  assert.equal(request?.kind === "permission" && request.state, "pending");
  // The turn goes on live: a new message is drawn, and the end clears what was skipped.
  const live = fold(state, [
    event(58, { type: "permission_resolved", turnId: "t1", requestId: "p1", outcome: "selected", optionId: "allow_once" }),
    event(59, { type: "text_delta", turnId: "t1", messageId: "a2", text: "Done." }),
    event(60, { type: "turn_completed", turnId: "t1", stopReason: "end_turn" }),
  ]);
  assert.equal(live.runningTurn, null);
  assert.equal(live.drawn, null);
  assert.deepEqual(
    live.items.flatMap((i) => (i.kind === "assistant" ? [i.text] : [])),
    ["Earlier answer.", "Writing it.", "Done."],
  );
});

test("a turn that ended while the window was away: the recorded session and a notice saying so", () => {
  const result: ResumeSessionResult = { ...COMMON, messages: HISTORY, lastSeq: 0 };
  const state = reattached(result, 50);
  assert.equal(state.runningTurn, null);
  assert.equal(state.drawn, null);
  // A rebuilt session counts from 1 again: a note's seq above the answer's is of an earlier opening.
  assert.equal(state.lastSeq, 0);
  const notice = state.items.at(-1);
  assert.equal(notice?.kind === "notice" && notice.message, ENDED_AWAY);
  assert.equal(fold(state, [event(1, { type: "turn_started", turnId: "t2", userMessageId: "u2" })]).runningTurn, "t2");
});

test("a session resumed while it runs (no note) takes the live events after the answer's seq at once", () => {
  const result: ResumeSessionResult = { ...COMMON, messages: HISTORY, lastSeq: 57, runningTurnId: "t1" };
  const state = fold(reduce(initialState(), sessionOpened(result)), [
    event(58, { type: "text_delta", turnId: "t1", messageId: "a2", text: "Live." }),
  ]);
  assert.equal(state.lastSeq, 58);
  const last = state.items.at(-1);
  assert.equal(last?.kind === "assistant" && last.text, "Live.");
  // No note: no notice.
  assert.equal(state.items.some((i) => i.kind === "notice"), false);
});
