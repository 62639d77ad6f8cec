// A window reload in the middle of a turn, against a real `agentls --tcp`, with the
// extension's own note (src/reattach.ts) and reducer: the first window starts a turn whose
// Write waits for permission and goes away as LanguageClient.stop() leaves; the second finds
// the note, resumes the session with its seq and a message limit, draws what the reducer
// makes of the answer and the events sent again, answers the permission card and sees the
// turn end. tests/test_client_vscode_tcp.py runs it and reads its report (one JSON object
// per line, `{"step": ..., ...}`).
//
//   node dist-test/reload-daemon.js WORKSPACE NOTE_FILE

import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { type MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";

import { openSocket } from "../../src/daemonSocket";
import { type DaemonAddress, findDaemon, localContext } from "../../src/discovery";
import { NOTE_KEY, type NoteStore, RunningNotes } from "../../src/reattach";
import { type ViewState, initialState, pendingPermissions, reduce, sessionOpened } from "../../src/reducer";
import type { AgentEvent, ResumeSessionResult } from "../../src/wire";

const workspace = process.argv[2] ?? process.cwd();
const noteFile = process.argv[3] ?? path.join(workspace, "workspace-state.json");
const target = path.join(workspace, "hello.txt");
const report = (step: string, fields: Record<string, unknown> = {}) => console.log(JSON.stringify({ step, ...fields }));

/** context.workspaceState as VS Code keeps it: on disk, read again by the next window. */
class FileStore implements NoteStore {
  get(key: string): unknown {
    return this.all()[key];
  }
  update(key: string, value: unknown): Promise<void> {
    const others = Object.entries(this.all()).filter(([k]) => k !== key);
    writeFileSync(noteFile, JSON.stringify(Object.fromEntries(value === undefined ? others : [...others, [key, value]])));
    return Promise.resolve();
  }
  private all(): Record<string, unknown> {
    return existsSync(noteFile) ? (JSON.parse(readFileSync(noteFile, "utf8")) as Record<string, unknown>) : {};
  }
}

interface Window {
  connection: MessageConnection;
  closed: Promise<void>;
}

async function open(address: DaemonAddress): Promise<Window> {
  const socket = await openSocket(address);
  const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
  const closed = new Promise<void>((resolve) => connection.onClose(() => resolve()));
  connection.listen();
  const params = { processId: process.pid, rootUri: null, capabilities: {}, initializationOptions: { authToken: address.token, provider: "scripted" } };
  await connection.sendRequest("initialize", params);
  await connection.sendNotification("initialized", {});
  return { connection, closed };
}

/** What LanguageClient.stop() sends when the window reloads. */
async function leave(window: Window): Promise<void> {
  await window.connection.sendRequest("shutdown");
  await window.connection.sendNotification("exit");
  await window.closed;
  window.connection.dispose();
}

const SCRIPT = [
  { text: "Writing it.", tool_calls: [{ id: "c1", name: "Write", input: { file_path: target, content: "hi\n" } }] },
  { text: "Done." },
];

/** The first window: a turn that stops at the Write's permission request, then the reload. */
async function firstWindow(address: DaemonAddress, notes: RunningNotes): Promise<void> {
  const window = await open(address);
  let state: ViewState = initialState();
  const asked = new Promise<void>((resolve) => {
    window.connection.onNotification("agent/event", (event: AgentEvent) => {
      void notes.observe(event);
      state = reduce(state, { type: "event", event });
      if (event.type === "permission_request") resolve();
    });
  });
  const session = await window.connection.sendRequest<{ sessionId: string }>("agent/newSession", { cwd: workspace, provider: "scripted", script: SCRIPT });
  state = reduce(state, { type: "session", sessionId: session.sessionId });
  await window.connection.sendRequest("agent/submitMessage", { sessionId: session.sessionId, text: "Write hello.txt" });
  await asked;
  report("first window", { sessionId: session.sessionId, lastSeq: state.lastSeq, note: notes.note ?? null, pending: pendingPermissions(state).length });
  await leave(window);
}

/** The reloaded window: the note, the resume, the card answered, the turn's end. */
async function secondWindow(address: DaemonAddress, notes: RunningNotes): Promise<void> {
  const note = notes.note;
  if (!note) throw new Error("no note of the running turn was kept");
  const window = await open(address);
  let state: ViewState | undefined;
  // As the controller does: an event of a session the window does not show is not drawn.
  let dropped = 0;
  let ends = 0;
  let answered = false;
  const ended = new Promise<void>((resolve) => {
    window.connection.onNotification("agent/event", (event: AgentEvent) => {
      void notes.observe(event);
      if (state?.sessionId !== event.sessionId) {
        dropped++;
        return;
      }
      state = reduce(state, { type: "event", event });
      const [card] = pendingPermissions(state);
      if (card && !answered) {
        answered = true;
        report("card", { requestId: card.id, title: card.title });
        void window.connection.sendRequest("agent/respondPermission", { sessionId: event.sessionId, requestId: card.id, optionId: "allow_once" });
      }
      if (event.type === "turn_completed") {
        ends++;
        resolve();
      }
    });
  });
  const params = { sessionId: note.sessionId, lastSeq: note.lastSeq, messageLimit: 200 };
  const result = await window.connection.sendRequest<ResumeSessionResult>("agent/resumeSession", params);
  state = reduce(initialState(), sessionOpened(result, note));
  report("resumed", { runningTurnId: result.runningTurnId ?? null, lastSeq: result.lastSeq, messages: result.messages.length, startedAt: state.lastSeq });
  // A chat that never draws the turn's end (events held behind a gap) fails here, not at the test's timeout.
  const late = new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`the turn's end was not drawn: last seq ${state?.lastSeq}, ${Object.keys(state?.early ?? {}).length} held`)), 60_000).unref());
  await Promise.race([ended, late]);
  const items = state.items;
  report("second window", {
    dropped,
    ends,
    stopReason: items.some((i) => i.kind === "turnEnd") ? "not end_turn" : "end_turn",
    users: items.flatMap((i) => (i.kind === "user" ? [i.text] : [])),
    answers: items.flatMap((i) => (i.kind === "assistant" ? [i.text] : [])),
    notices: items.flatMap((i) => (i.kind === "notice" ? [i.message] : [])),
    permissions: items.flatMap((i) => (i.kind === "permission" ? [i.state] : [])),
    tools: items.flatMap((i) => (i.kind === "tool" ? [i.status] : [])),
    noteKept: new FileStore().get(NOTE_KEY) !== undefined,
    file: existsSync(target) ? readFileSync(target, "utf8") : null,
  });
  await leave(window);
}

async function main(): Promise<void> {
  const notes = new RunningNotes(new FileStore());
  await firstWindow(findDaemon("discover", localContext()), notes);
  await secondWindow(findDaemon("discover", localContext()), new RunningNotes(new FileStore()));
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    report("error", { message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  },
);
