// The history picker's rows and the question before deleting a session.

import assert from "node:assert/strict";
import { test } from "node:test";

import { deleteQuestion, deleteWarning, savedRow } from "../src/sessionRows";
import type { SessionInfo } from "../src/wire";

const info: SessionInfo = {
  sessionId: "sess_a",
  cwd: "/w",
  title: "Fix the parser",
  createdAt: "2026-11-26T10:00:00Z",
  updatedAt: "2026-11-26T11:00:00Z",
  turns: 1,
};

test("a saved session's row is deletable and says when it is the chat shown now", () => {
  const row = savedRow(info, "sess_a");
  assert.equal(row.label, "Fix the parser");
  assert.equal(row.description, "1 turn");
  assert.ok(row.detail.endsWith(" · shown now"));
  assert.equal(row.deletable, true);
  assert.ok(!savedRow({ ...info, turns: 2, title: "" }, "sess_b").detail.includes("shown now"));
  assert.equal(savedRow({ ...info, turns: 2, title: "" }, null).label, "(no message yet)");
});

test("the question names the session, and warns when it is the chat shown now", () => {
  const row = savedRow(info, null);
  const other = deleteQuestion(row, false);
  assert.equal(other.message, 'Delete the session "Fix the parser"?');
  assert.ok(other.detail.includes("worktrees and branches") && !other.detail.includes("shown now"));
  assert.ok(deleteQuestion(row, true).detail.includes("a running turn is stopped"));
});

test("warnings of what git left behind are shown, none is no message", () => {
  assert.equal(deleteWarning([]), null);
  assert.equal(deleteWarning(undefined), null);
  assert.equal(
    deleteWarning(["the worktree /h/w was not removed by git: locked"]),
    "agentls: the session is deleted, but this was left behind: the worktree /h/w was not removed by git: locked",
  );
  assert.ok(deleteWarning(["a", "b"])?.includes("these were left behind: a; b"));
});
