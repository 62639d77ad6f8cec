// `@` mentions: what each group offers and the attachment URIs they become; a turn's
// mentions drawn on its user message whichever comes first, its events or the request's answer.

import assert from "node:assert/strict";
import { test } from "node:test";

import type { Attachment } from "../src/bridge";
import {
  GROUP_CAPS,
  ancestorFolders,
  keptMentions,
  arrangeMentions,
  diagnosticsUri,
  foldersMatching,
  mentionText,
  problemMentions,
  sameAttachment,
  sessionMentions,
  symbolMention,
} from "../src/mentions";
import { initialState, reduce, type Action } from "../src/reducer";
import type { AgentEvent } from "../src/wire";

const ROOT = "file:///home/u/proj";

test("a file's folders lie between the workspace root and the file, both left out", () => {
  assert.deepEqual(ancestorFolders(`${ROOT}/src/lib/util.ts`, `${ROOT}/`), [`${ROOT}/src`, `${ROOT}/src/lib`]);
  assert.deepEqual(ancestorFolders(`${ROOT}/top.ts`, ROOT), []);
  assert.deepEqual(ancestorFolders("file:///elsewhere/a.ts", ROOT), []);
});

test("folders are offered by their own name (any case), shallowest first, each once", () => {
  const files = [`${ROOT}/src/lib/util.ts`, `${ROOT}/src/lib/deep/x.ts`, `${ROOT}/packages/lib2/y.ts`, `${ROOT}/src/Library/z.ts`];
  assert.deepEqual(foldersMatching(files, [ROOT], "lib"), [
    `${ROOT}/packages/lib2`,
    `${ROOT}/src/lib`,
    `${ROOT}/src/Library`,
  ]);
  assert.deepEqual(foldersMatching(files, ["file:///other"], "lib"), []);
});

test("problems are every file's or the active file's, as agentls:diagnostics URIs", () => {
  const file = "file:///home/u/proj/app%20v2.ts";
  assert.equal(diagnosticsUri(), "agentls:diagnostics");
  assert.equal(diagnosticsUri(file), "agentls:diagnostics?uri=file%3A%2F%2F%2Fhome%2Fu%2Fproj%2Fapp%2520v2.ts");
  const active = { uri: file, name: "app v2.ts", counts: { errors: 1, warnings: 0 } };
  const offers = problemMentions("", { errors: 3, warnings: 2 }, active);
  assert.deepEqual(
    offers.map((o) => [o.label, o.uri, o.detail]),
    [
      ["Problems", "agentls:diagnostics", "3 errors, 2 warnings"],
      ["Problems in app v2.ts", diagnosticsUri(file), "1 error"],
    ],
  );
  // "err" finds them by a word of theirs; a file name finds the active file's; others do not.
  assert.equal(problemMentions("err", { errors: 0, warnings: 0 }, active).length, 2);
  assert.deepEqual(problemMentions("v2", { errors: 0, warnings: 0 }, active).map((o) => o.label), ["Problems in app v2.ts"]);
  assert.deepEqual(problemMentions("util", { errors: 0, warnings: 0 }, active), []);
  assert.equal(problemMentions("", { errors: 0, warnings: 0 })[0]?.detail, "none now");
});

test("other sessions are offered by title as agentls:session URIs, the current one left out", () => {
  const sessions = [
    { sessionId: "sess_a", title: "Fix the   login bug", turns: 3, updatedAt: "2026-11-25T10:00:00Z" },
    { sessionId: "sess_b", title: "Current chat about login", turns: 1, updatedAt: "2026-11-26T10:00:00Z" },
    { sessionId: "sess_c", title: "x".repeat(80), turns: 1, updatedAt: "2026-11-24T10:00:00Z" },
  ];
  const offers = sessionMentions(sessions, "LOGIN", "sess_b");
  assert.deepEqual(offers, [
    { uri: "agentls:session/sess_a", label: "Fix the login bug", detail: "3 turns · 2026-11-25", group: "session" },
  ]);
  const labels = sessionMentions(sessions, "xxx", null).map((o) => o.label);
  assert.equal(labels.length, 1);
  assert.ok(labels.every((label) => label.length === 40 && label.endsWith("…")));
});

test("a symbol is its file with the symbol's range and name", () => {
  const range = { start: { line: 9, character: 0 }, end: { line: 14, character: 1 } };
  const offer = symbolMention({ name: "parseArgs", kind: "function", uri: `${ROOT}/src/cli.ts`, range, where: "src/cli.ts" });
  assert.deepEqual(offer, {
    uri: `${ROOT}/src/cli.ts`,
    range,
    name: "parseArgs",
    label: "parseArgs",
    detail: "function · src/cli.ts:10",
    group: "symbol",
  });
  assert.equal(mentionText(offer), "@parseArgs ");
});

test("offers are listed group by group (files, folders, symbols, problems, sessions), each capped", () => {
  const of = (group: Attachment["group"], count: number): Attachment[] =>
    Array.from({ length: count }, (_, i) => ({ uri: `u:${group ?? "file"}${i}`, label: `${group ?? "file"}${i}`, ...(group ? { group } : {}) }));
  const mixed = [...of("session", 1), ...of("symbol", 20), ...of(undefined, 25), ...of("problems", 1), ...of("folder", 2)];
  const arranged = arrangeMentions(mixed);
  const groups = arranged.map((o) => o.group ?? "file");
  assert.deepEqual([...new Set(groups)], ["file", "folder", "symbol", "problems", "session"]);
  assert.equal(groups.filter((g) => g === "file").length, GROUP_CAPS.file);
  assert.equal(groups.filter((g) => g === "symbol").length, GROUP_CAPS.symbol);
});

test("two symbols of one name are two attachments; one file twice is one", () => {
  const range = (line: number) => ({ start: { line, character: 0 }, end: { line, character: 3 } });
  const a = { uri: "file:///a.ts", range: range(1), name: "run", label: "run" };
  assert.ok(!sameAttachment(a, { ...a, range: range(7) }));
  assert.ok(sameAttachment({ uri: "file:///a.ts", label: "a.ts" }, { uri: "file:///a.ts", label: "a.ts" }));
});

test("a mention whose text left the box is dropped; dropped files and pasted images stay", () => {
  const folder = { uri: `${ROOT}/src`, label: "src/", group: "folder" as const };
  const file = { uri: `${ROOT}/a.ts`, label: "a.ts", group: "file" as const };
  const dropped = { uri: `${ROOT}/b.ts`, label: "b.ts" };
  const image = { uri: "data:image/png;base64,AAAA", label: "pasted image 1.png", name: "pasted image 1.png" };
  const all = [folder, file, dropped, image];
  assert.deepEqual(keptMentions(all, "Explain @src/ and @a.ts"), all);
  assert.deepEqual(keptMentions(all, "Explain @src and @a.ts"), [file, dropped, image]);
  assert.deepEqual(keptMentions(all, "nothing"), [dropped, image]);
});

const SESSION = "sess_1";
const started = (seq: number): Action => ({
  type: "event",
  event: { type: "turn_started", sessionId: SESSION, seq, turnId: "t1", userMessageId: "u1" } as unknown as AgentEvent,
});
const userMessage = (seq: number): Action => ({
  type: "event",
  event: {
    type: "message_completed",
    sessionId: SESSION,
    seq,
    turnId: "t1",
    messageId: "u1",
    role: "user",
    content: [{ type: "text", text: "Look at these" }],
  } as unknown as AgentEvent,
});
const submitted: Action = { type: "submitted", text: "Look at these", turnId: "t1", queued: false, mentions: ["src/", "Problems"] };

test("a message's mentions are drawn on it, whether the turn's events or the request's answer come first", () => {
  const open = reduce(initialState(), { type: "session", sessionId: SESSION });
  for (const order of [
    [submitted, started(1), userMessage(2)],
    [started(1), submitted, userMessage(2)],
    [started(1), userMessage(2), submitted],
  ]) {
    const state = order.reduce(reduce, open);
    const user = state.items.find((i) => i.kind === "user");
    assert.deepEqual(user?.kind === "user" ? user.mentions : undefined, ["src/", "Problems"]);
    assert.deepEqual(state.mentionsByTurn, {});
  }
});
