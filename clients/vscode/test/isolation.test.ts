// Issue 29's client side in the reducer: an isolated agent's worktree card, the sandbox's
// rerun question, a plugin's trust question, and what a WriteStdin call typed.

import assert from "node:assert/strict";
import { test } from "node:test";

import { type Item, initialState, reduce } from "../src/reducer";
import { keyHints } from "../src/permissionKeys";
import { pluginRows } from "../src/plugins";
import { commandTag } from "../src/slash";
import { visible } from "../src/typedInput";
import { diffPath, sidesOfDiff, textBefore } from "../src/worktreeCard";
import type { AgentEvent, CommandInfo } from "../src/wire";

const SESSION = "sess_1";

function numbered(events: Array<Record<string, unknown>>, from = 1): AgentEvent[] {
  return events.map((e, i) => ({ sessionId: SESSION, seq: from + i, ...e }) as unknown as AgentEvent);
}

function run(events: AgentEvent[]) {
  const start = reduce(initialState(), { type: "session", sessionId: SESSION });
  return events.reduce((state, event) => reduce(state, { type: "event", event }), start);
}

function only<K extends Item["kind"]>(items: Item[], kind: K): Extract<Item, { kind: K }>[] {
  return items.filter((i): i is Extract<Item, { kind: K }> => i.kind === kind);
}

const CHILD = { agentId: "agent_7", parentToolCallId: "task1" };
const ISOLATED = [
  { type: "turn_started", turnId: "t1", userMessageId: "u1" },
  { type: "tool_call", turnId: "t1", toolCallId: "task1", name: "Task", kind: "think", title: "Task: fix", input: { isolation: "worktree" } },
  { type: "subagent_started", turnId: "t1", ...CHILD, subagentType: "general", description: "fix" },
  {
    type: "subagent_completed",
    turnId: "t1",
    ...CHILD,
    stopReason: "end_turn",
    durationMs: 5,
    toolCalls: 2,
    turns: 2,
    usage: {},
    worktree: {
      path: "/h/sessions/s/worktrees/agent_7",
      branch: "agentls/agent_7",
      baseCommit: "abc",
      added: 3,
      removed: 1,
      files: [
        { path: "app.py", added: 2, removed: 1, status: "modified" },
        { path: "new.py", added: 1, removed: 0, status: "added" },
      ],
    },
  },
];

test("an isolated agent's worktree becomes a card with its branch and files", () => {
  const state = run(numbered(ISOLATED));
  const [card] = only(state.items, "worktree");
  assert.equal(card?.id, "agent_7");
  assert.equal(card.branch, "agentls/agent_7");
  assert.equal(card.state, "ready");
  assert.deepEqual(card.files.map((f) => [f.path, f.added, f.removed]), [["app.py", 2, 1], ["new.py", 1, 0]]);
  // The Task card still says how its agent ended.
  const [task] = only(state.items, "tool");
  assert.equal(task?.agent?.status, "end_turn");
});

test("an agent without a worktree leaves no card", () => {
  const plain = ISOLATED.map((e) => (e.type === "subagent_completed" ? { ...e, worktree: undefined } : e));
  assert.deepEqual(only(run(numbered(plain)).items, "worktree"), []);
});

test("worktree_resolved (from any window) marks the card merged or discarded", () => {
  for (const action of ["merged", "discarded"] as const) {
    const state = run(numbered([...ISOLATED, { type: "worktree_resolved", agentId: "agent_7", action, branch: "agentls/agent_7", files: [] }]));
    assert.equal(only(state.items, "worktree")[0]?.state, action);
  }
});

test("a merge's conflicts go on the card with their reasons, and a later resolve clears them", () => {
  let state = run(numbered(ISOLATED));
  state = reduce(state, { type: "worktreeConflicts", agentId: "agent_7", conflicts: [{ path: "/w/app.py", reason: "both changed lines 3-4" }] });
  assert.deepEqual(only(state.items, "worktree")[0]?.conflicts, [{ path: "/w/app.py", reason: "both changed lines 3-4" }]);
  const [resolved] = numbered([{ type: "worktree_resolved", agentId: "agent_7", action: "discarded", branch: "b", files: [] }], ISOLATED.length + 1);
  state = reduce(state, { type: "event", event: resolved as AgentEvent });
  assert.deepEqual(only(state.items, "worktree")[0]?.conflicts, []);
});

test("a worktree's file diff gives both sides of its hunks", () => {
  const diff = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n a = 1\n-b = 2\n+b = 3\n@@ -9 +9,2 @@\n z = 0\n+y = 1\n";
  assert.deepEqual(sidesOfDiff(diff), { before: "a = 1\nb = 2\n⋯\nz = 0", after: "a = 1\nb = 3\n⋯\nz = 0\ny = 1" });
});

const ESCALATION = {
  type: "permission_request",
  turnId: "t1",
  requestId: "r1",
  toolCallId: "bash1",
  title: "Run outside the sandbox: touch /etc/x",
  input: { command: "touch /etc/x" },
  options: [
    { optionId: "allow_once", name: "Run outside the sandbox once", kind: "allow_once" },
    { optionId: "reject_once", name: "Keep it in the sandbox", kind: "reject_once" },
  ],
  sandboxEscalation: { command: "touch /etc/x", reason: "the sandbox (workspace-write) refused a write", trigger: "failed_in_sandbox" },
};

test("the sandbox's rerun question keeps its command, reason and only its two options", () => {
  const [request] = only(run(numbered([ESCALATION])).items, "permission");
  assert.deepEqual(request?.sandboxEscalation, ESCALATION.sandboxEscalation);
  assert.deepEqual(request.options.map((o) => o.kind), ["allow_once", "reject_once"]);
  // Its card names only the keys of those two answers.
  assert.equal(keyHints(request.options.map((o) => o.kind), false), "y allow once, n reject");
  assert.equal(keyHints(["reject_always", "allow_once", "allow_always", "reject_once"], true), "y allow once, a always allow, n reject, d always reject, v review");
});

test("a plugin's trust question lists what it would run; another request has no such list", () => {
  const trust = {
    ...ESCALATION,
    toolCallId: "plugin_1",
    title: "Trust the plugin lint?",
    input: { plugin: "lint", runs: ["/p/lint/hook.sh", "npx lint-mcp"] },
    sandboxEscalation: undefined,
  };
  const [request] = only(run(numbered([trust])).items, "permission");
  assert.deepEqual(request?.pluginTrust, { plugin: "lint", runs: ["/p/lint/hook.sh", "npx lint-mcp"] });
  const [bash] = only(run(numbered([{ ...trust, toolCallId: "bash1" }])).items, "permission");
  assert.equal(bash?.pluginTrust, undefined);
});

test("a WriteStdin call shows what it typed under its shell's name", () => {
  const call = { type: "tool_call", turnId: "t1", toolCallId: "w1", name: "WriteStdin", kind: "execute", title: "Write to shell_1: 1 + 1⏎", input: { shell_id: "shell_1", input: "1 + 1\n\u0003\u0004\t\u007f" } };
  const [tool] = only(run(numbered([call])).items, "tool");
  assert.deepEqual(tool?.typed, { shell: "shell_1", line: "1 + 1⏎^C^D\t^?" });
  const [bash] = only(run(numbered([{ ...call, name: "Bash" }])).items, "tool");
  assert.equal(bash?.typed, undefined);
  assert.equal(visible("y\r\n"), "y⏎⏎");
});

test("a plugin's slash command is tagged as the plugin's", () => {
  const command: CommandInfo = { name: "lint:fix", description: "Fix lint", source: "plugin" };
  assert.equal(commandTag(command), "plugin");
});

test("agentls: Plugins lists each plugin: version, enabled, what it provides, its error", () => {
  const rows = pluginRows([
    { name: "lint", version: "1.2.0", enabled: true, source: "path", path: "/p/lint", commands: ["lint:fix"], hooks: true, mcpServers: ["lint-mcp"] },
    { name: "old", enabled: false, source: "git", path: "/p/old", skills: ["old:s"] },
    { name: "broken", enabled: true, source: "path", path: "/p/b", error: "no plugin.json" },
  ]);
  assert.deepEqual(rows, [
    { label: "lint", description: "v1.2.0 · enabled · path", detail: "commands: lint:fix · hooks · MCP servers: lint-mcp" },
    { label: "old", description: "disabled · git", detail: "skills: old:s" },
    { label: "broken", description: "error · path", detail: "Cannot be read: no plugin.json" },
  ]);
});

test("a worktree file's whole old text comes back from its new text and the diff", () => {
  const after = "a\nB\nc\nd\ne\nf\ng\nh\ni\nj\nk\nL\nm\n";
  const diff = "--- a/src/x.txt\n+++ b/src/x.txt\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n@@ -10,4 +10,4 @@\n j\n k\n-l\n+L\n m\n";
  assert.equal(diffPath(diff), "src/x.txt");
  assert.equal(textBefore(after, diff), "a\nb\nc\nd\ne\nf\ng\nh\ni\nj\nk\nl\nm\n");
  // A text the diff does not fit (the file changed since): no guess.
  assert.equal(textBefore("other\n", diff), undefined);
  // Lines inserted at the top of an empty file, and a deleted file's path.
  assert.equal(textBefore("x\n", "--- a/e\n+++ b/e\n@@ -0,0 +1 @@\n+x\n"), "");
  assert.equal(diffPath("--- a/gone.py\n+++ /dev/null\n@@ -1 +0,0 @@\n-x\n"), "gone.py");
});
