// The extension's worktree card against a real daemon over stdio: an isolated agent edits
// a committed file in its worktree; the reducer folds the daemon's events into the card;
// View diff's whole-file texts come from the worktree's copy and agent/worktreeDiff; Merge
// (agent/resolveWorktree) lists a conflict with the user's own change on the card, then,
// that change undone, marks the card merged through worktree_resolved.
// tests/test_client_vscode_worktree.py makes the repository, runs this and reads its
// report: one JSON object per line, `{"step": ..., ...}`.
//
//   node dist-test/worktree-daemon.js PYTHON WORKSPACE

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import * as path from "node:path";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";

import { type ViewState, initialState, reduce, sessionOpened } from "../../src/reducer";
import type { AgentEvent, NewSessionResult, ResolveWorktreeResult, TurnDiffResult } from "../../src/wire";
import { diffPath, textBefore } from "../../src/worktreeCard";

const [python = "python3", workspace = process.cwd()] = process.argv.slice(2);
const report = (step: string, fields: Record<string, unknown> = {}) => console.log(JSON.stringify({ step, ...fields }));

const SCRIPT = [
  { tool_calls: [{ id: "t1", name: "Task", input: { description: "Edit app", prompt: "Edit app", isolation: "worktree" } }] },
  { for: "Edit app", tool_calls: [{ id: "r1", name: "Read", input: { file_path: "app.py" } }] },
  { for: "Edit app", tool_calls: [{ id: "e1", name: "Edit", input: { file_path: "app.py", old_string: "PORT = 8000", new_string: "PORT = 9000" } }] },
  { for: "Edit app", text: "Changed the port." },
  { text: "The agent is done." },
];

const daemon = spawn(python, ["-m", "agentls", "--stdio"], { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
const connection = createMessageConnection(new StreamMessageReader(daemon.stdout), new StreamMessageWriter(daemon.stdin));
let state: ViewState = initialState();
const waiters: Array<{ test: (event: AgentEvent) => boolean; resolve: () => void }> = [];
connection.onNotification("agent/event", (event: AgentEvent) => {
  state = reduce(state, { type: "event", event });
  for (const waiter of waiters.filter((w) => w.test(event))) waiter.resolve();
});
connection.listen();
const until = (test: (event: AgentEvent) => boolean) => new Promise<void>((resolve) => waiters.push({ test, resolve }));
const card = () => state.items.find((i) => i.kind === "worktree");

/** The turn, the card, View diff's texts and the merge, each reported. */
async function main(): Promise<void> {
  await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {}, initializationOptions: { provider: "scripted" } });
  await connection.sendNotification("initialized", {});
  const opened = await connection.sendRequest<NewSessionResult>("agent/newSession", { cwd: workspace, provider: "scripted", script: SCRIPT, permissionMode: "acceptEdits" });
  state = reduce(state, sessionOpened(opened));
  const ended = until((e) => e.type === "turn_completed");
  await connection.sendRequest("agent/submitMessage", { sessionId: opened.sessionId, text: "edit it in a worktree" });
  await ended;
  const shown = card();
  report("card", shown?.kind === "worktree" ? { branch: shown.branch, state: shown.state, files: shown.files, userFile: readFileSync(path.join(workspace, "app.py"), "utf8") } : { missing: true });

  if (shown?.kind === "worktree") {
    const diff = await connection.sendRequest<TurnDiffResult>("agent/worktreeDiff", { sessionId: opened.sessionId, agentId: shown.id });
    const file = diff.files[0];
    const relative = file ? diffPath(file.diff) : undefined;
    const after = relative ? readFileSync(path.join(shown.path, relative), "utf8") : "";
    report("view diff", { relative, after, before: file ? textBefore(after, file.diff) : null });
    // The user changed the same line meanwhile: the merge is refused, its conflicts listed.
    const userFile = path.join(workspace, "app.py");
    const original = readFileSync(userFile, "utf8");
    writeFileSync(userFile, original.replace("8000", "7000"));
    const refused = await connection.sendRequest<ResolveWorktreeResult>("agent/resolveWorktree", { sessionId: opened.sessionId, agentId: shown.id, action: "merge" });
    if (!refused.resolved) state = reduce(state, { type: "worktreeConflicts", agentId: shown.id, conflicts: refused.conflicts });
    const blocked = card();
    report("conflict", { resolved: refused.resolved, conflicts: blocked?.kind === "worktree" ? blocked.conflicts : null, userFile: readFileSync(userFile, "utf8") });
    writeFileSync(userFile, original);
    const resolved = until((e) => e.type === "worktree_resolved");
    const merged = await connection.sendRequest<ResolveWorktreeResult>("agent/resolveWorktree", { sessionId: opened.sessionId, agentId: shown.id, action: "merge" });
    await resolved;
    const after2 = card();
    report("merged", { resolved: merged.resolved, state: after2?.kind === "worktree" ? after2.state : null, conflicts: after2?.kind === "worktree" ? after2.conflicts : null });
  }
  await connection.sendRequest("shutdown");
  await connection.sendNotification("exit");
}

daemon.on("exit", () => process.exit(0));
void main().catch((error: unknown) => {
  report("error", { message: String(error) });
  process.exit(1);
});
