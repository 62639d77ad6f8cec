// Rewind, fork and a turn's changes against a real daemon over stdio, through the
// extension's own reducer and rewind logic (src/reducer.ts, src/rewind.ts): a turn edits a
// committed file and a shell command creates another; agent/turnDiff lists both; Edit &
// resend forks before the second message; a file the user changed since is a conflict in
// the preview; the rewind preview (dryRun) changes nothing and
// its diff gives back the old file; the rewind of both puts the files back and the panel
// drops the removed messages.
// tests/test_client_vscode_rewind.py makes the repository, runs this and reads its report:
// one JSON object per line, `{"step": ..., ...}`.
//
//   node dist-test/rewind-daemon.js PYTHON WORKSPACE

import { spawn } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";

import { type ViewState, initialState, reduce, sessionOpened } from "../../src/reducer";
import { type RewindAnswer, previewRows, rewoundText, textAfter, turnOfMessage } from "../../src/rewind";
import type { AgentEvent, NewSessionResult, ResumeSessionResult, RewindParams, TurnDiffResult } from "../../src/wire";

const [python = "python3", workspace = process.cwd()] = process.argv.slice(2);
const report = (step: string, fields: Record<string, unknown> = {}) => console.log(JSON.stringify({ step, ...fields }));

const SCRIPT = [
  { tool_calls: [{ id: "r1", name: "Read", input: { file_path: "app.py" } }] },
  {
    tool_calls: [
      { id: "e1", name: "Edit", input: { file_path: "app.py", old_string: "PORT = 8000", new_string: "PORT = 9000" } },
      { id: "b1", name: "Bash", input: { command: "echo made by a command > gen.txt" } },
    ],
  },
  { text: "Changed the port and made gen.txt." },
  { text: "Nothing more to do." },
];

const daemon = spawn(python, ["-m", "agentls", "--stdio", "--no-daemon"], { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
const connection = createMessageConnection(new StreamMessageReader(daemon.stdout), new StreamMessageWriter(daemon.stdin));
let state: ViewState = initialState();
const waiters: Array<{ test: (event: AgentEvent) => boolean; resolve: () => void }> = [];
connection.onNotification("agent/event", (event: AgentEvent) => {
  if (event.sessionId === state.sessionId) state = reduce(state, { type: "event", event });
  for (const waiter of waiters.filter((w) => w.test(event))) waiter.resolve();
});
connection.listen();
const until = (test: (event: AgentEvent) => boolean) => new Promise<void>((resolve) => waiters.push({ test, resolve }));
const file = (name: string) => (existsSync(path.join(workspace, name)) ? readFileSync(path.join(workspace, name), "utf8") : null);
const users = (s: ViewState) => s.items.flatMap((i) => (i.kind === "user" ? [{ id: i.id, text: i.text, turnId: i.turnId ?? null }] : []));
const shown = (s: ViewState) => s.items.flatMap((i) => (i.kind === "user" || i.kind === "assistant" ? [`${i.kind}:${i.text}`] : i.kind === "notice" ? [`notice:${i.message}`] : []));

async function turn(sessionId: string, text: string): Promise<void> {
  const ended = until((e) => e.type === "turn_completed" && e.sessionId === sessionId);
  await connection.sendRequest("agent/submitMessage", { sessionId, text });
  await ended;
}

/** Two turns, then Changes, Edit & resend, the preview and the rewind, each reported. */
async function main(): Promise<void> {
  await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {}, initializationOptions: { provider: "scripted" } });
  await connection.sendNotification("initialized", {});
  const opened = await connection.sendRequest<NewSessionResult>("agent/newSession", { cwd: workspace, provider: "scripted", script: SCRIPT, permissionMode: "bypassPermissions" });
  const sessionId = opened.sessionId;
  state = reduce(state, sessionOpened(opened));
  await turn(sessionId, "change the port");
  await turn(sessionId, "anything else?");
  const [first, second] = users(state);
  report("turns", { users: users(state), app: file("app.py"), gen: file("gen.txt") });
  if (!first?.turnId || !second) throw new Error("the user messages are not both shown with their turns");

  const changes = await connection.sendRequest<TurnDiffResult>("agent/turnDiff", { sessionId, turnId: first.turnId });
  report("changes", { files: changes.files.map((f) => ({ path: path.basename(f.path), created: f.created, added: f.added, removed: f.removed })) });

  const forkClock = performance.now();
  const fork = await connection.sendRequest<ResumeSessionResult>("agent/forkSession", { sessionId, messageId: second.id });
  const forkMs = Math.round(performance.now() - forkClock);
  const forked = reduce(initialState(), sessionOpened(fork));
  report("fork", { sessionId: fork.sessionId, source: sessionId, shown: shown(forked), ms: forkMs });

  // The user changed app.py since the agent did: the preview of the code lists it as a
  // conflict, left alone, and offers the rewind that overwrites it.
  const appPath = path.join(workspace, "app.py");
  const agentLeft = readFileSync(appPath, "utf8");
  writeFileSync(appPath, agentLeft.replace("9000", "7000"));
  const conflicted = await connection.sendRequest<RewindAnswer>("agent/rewind", { sessionId, turnId: first.turnId, what: "files", dryRun: true });
  report("conflict", { rows: previewRows(conflicted, "files", (p) => path.basename(p)).map((r) => `${r.label} | ${r.description}`), app: file("app.py") });
  writeFileSync(appPath, agentLeft);

  const turnId = turnOfMessage(state.items, first.id) ?? "";
  const preview: RewindParams = { sessionId, turnId, what: "both", dryRun: true };
  let clock = performance.now();
  const planned = await connection.sendRequest<RewindAnswer>("agent/rewind", preview);
  const previewMs = performance.now() - clock;
  const appDiff = planned.files?.find((f) => path.basename(f.path) === "app.py");
  const now = file("app.py") ?? "";
  report("preview", {
    rows: previewRows(planned, "both", (p) => path.basename(p)).map((r) => `${r.label} | ${r.description}`),
    restoredApp: appDiff ? textAfter(now, appDiff.diff) : null,
    app: now,
    gen: file("gen.txt"),
    shown: shown(state),
    ms: Math.round(previewMs),
  });

  const applied: RewindParams = { sessionId, turnId, what: "both", force: false };
  clock = performance.now();
  const done = await connection.sendRequest<RewindAnswer>("agent/rewind", applied);
  const rewindMs = performance.now() - clock;
  state = reduce(state, { type: "rewound", removedMessageIds: done.removedMessageIds, message: rewoundText(done, "both") });
  const resumed = await connection.sendRequest<ResumeSessionResult>("agent/resumeSession", { sessionId });
  report("rewound", { removed: done.removedMessageIds.length, shown: shown(state), app: file("app.py"), gen: file("gen.txt"), daemonMessages: resumed.messages.length, ms: Math.round(rewindMs) });
  await connection.sendRequest("shutdown");
  await connection.sendNotification("exit");
}

daemon.on("exit", () => process.exit(0));
void main().catch((error: unknown) => {
  report("error", { message: String(error) });
  process.exit(1);
});
