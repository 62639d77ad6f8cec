// Rewind and fork in pure terms: the turn a user message began, the chat after a rewind,
// the preview's rows, and the texts a unified diff joins.

import assert from "node:assert/strict";
import { test } from "node:test";

import { initialState, reduce } from "../src/reducer";
import { previewRows, reverseDiff, rewoundText, textAfter, turnOfMessage } from "../src/rewind";
import type { AgentEvent } from "../src/wire";

const SESSION = "sess_1";

function turn(n: number, seq: number): AgentEvent[] {
  const events: Array<Record<string, unknown>> = [
    { type: "turn_started", turnId: `t${n}`, userMessageId: `u${n}` },
    { type: "message_completed", turnId: `t${n}`, messageId: `u${n}`, role: "user", content: [{ type: "text", text: `ask ${n}` }] },
    { type: "message_completed", turnId: `t${n}`, messageId: `a${n}`, role: "assistant", content: [{ type: "text", text: `answer ${n}` }] },
    { type: "turn_completed", turnId: `t${n}`, stopReason: "end_turn", turns: 1, usage: {} },
  ];
  return events.map((e, i) => ({ sessionId: SESSION, seq: seq + i, ...e }) as unknown as AgentEvent);
}

function twoTurns() {
  const start = reduce(initialState(), { type: "session", sessionId: SESSION });
  return [...turn(1, 1), ...turn(2, 5)].reduce((state, event) => reduce(state, { type: "event", event }), start);
}

test("each user message knows the turn it began", () => {
  const state = twoTurns();
  assert.equal(turnOfMessage(state.items, "u1"), "t1");
  assert.equal(turnOfMessage(state.items, "u2"), "t2");
  assert.equal(turnOfMessage(state.items, "a1"), undefined);
});

test("a user message from a resumed history has no turn to rewind", () => {
  const state = reduce(initialState(), {
    type: "session",
    sessionId: SESSION,
    messages: [{ messageId: "u9", role: "user", content: [{ type: "text", text: "old" }] }],
  });
  assert.equal(turnOfMessage(state.items, "u9"), undefined);
});

test("a rewind of the conversation drops the removed messages and everything after them", () => {
  const state = reduce(twoTurns(), { type: "rewound", removedMessageIds: ["u2", "a2"], message: "Rewound: 2 messages removed." });
  assert.deepEqual(
    state.items.map((i) => (i.kind === "notice" ? `notice:${i.message}` : `${i.kind}:${i.id}`)),
    ["user:u1", "assistant:a1", "notice:Rewound: 2 messages removed."],
  );
});

test("a rewind of files alone keeps the chat and says what went back", () => {
  const before = twoTurns();
  const state = reduce(before, { type: "rewound", removedMessageIds: [], message: "Rewound: 1 file restored." });
  assert.equal(state.items.length, before.items.length + 1);
  assert.deepEqual(state.items.slice(0, -1), before.items);
});

const DIFF = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n-PORT = 9000\n+PORT = 8000\n HOST = 1\n";

test("a restore diff applied forward gives the file the rewind puts back", () => {
  assert.equal(textAfter("PORT = 9000\nHOST = 1\n", DIFF), "PORT = 8000\nHOST = 1\n");
  assert.equal(reverseDiff(reverseDiff(DIFF)), DIFF);
  // A diff that does not fit the text now: no whole file.
  assert.equal(textAfter("PORT = 7000\nHOST = 1\n", DIFF), undefined);
});

test("the preview lists files that go back, conflicts and the messages that go", () => {
  const rows = previewRows(
    {
      restored: ["/w/app.py"],
      deleted: ["/w/new.txt"],
      conflicts: [{ path: "/w/mine.py", reason: "changed since the agent last wrote it" }],
      failed: [],
      messagesRemoved: 4,
      removedMessageIds: ["u2", "a2", "u3", "a3"],
      files: [{ path: "/w/app.py", diff: DIFF, added: 1, removed: 1, created: false, deleted: false }],
    },
    "both",
    (p) => p.replace("/w/", ""),
  );
  assert.deepEqual(
    rows.map((r) => [r.label, r.description, !!r.change]),
    [
      ["$(file) app.py", "restored +1 −1", true],
      ["$(file) new.txt", "deleted (the agent created it)", false],
      ["$(warning) mine.py", "left alone: changed since the agent last wrote it", false],
      ["$(comment-discussion) 4 messages leave the conversation", "", false],
    ],
  );
});

test("the chat's line after a rewind counts what it did", () => {
  const answer = { restored: ["/w/a"], deleted: [], conflicts: [], failed: [], messagesRemoved: 2, removedMessageIds: ["u", "a"] };
  assert.equal(rewoundText(answer, "both"), "Rewound: 1 file restored, 2 messages removed.");
  assert.equal(rewoundText(answer, "files"), "Rewound: 1 file restored.");
});
