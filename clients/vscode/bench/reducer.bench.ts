// How fast the reducer folds a long streamed answer: a 2,000-line reply as text_delta
// events (about 20 characters each), after a history of 200 items; a re-attach after a
// window reload; and a large apply_patch request and /context's report (below). Prints
// numbers. Last, an isolated agent's worktree diff taken back to whole files for the diff
// editor (View diff), the same file brought forward for a rewind preview, and a rewind of
// the conversation in a 3,000-item chat.

import { parseContextReport } from "../src/contextReport";
import { type ViewState, initialState, reduce, sessionOpened } from "../src/reducer";
import { reverseDiff, textAfter } from "../src/rewind";
import { textBefore } from "../src/worktreeCard";
import type { AgentEvent, DisplayMessage, ResumeSessionResult } from "../src/wire";

const LINES = 2000;
const line = "    result = compute(value, options)  # a line of code\n";
let seq = 0;
const event = (e: Record<string, unknown>): AgentEvent => ({ sessionId: "s", seq: ++seq, ...e }) as unknown as AgentEvent;

let state: ViewState = reduce(initialState(), { type: "session", sessionId: "s" });
for (let i = 0; i < 100; i++) {
  state = reduce(state, { type: "event", event: event({ type: "text_delta", messageId: `old${i}`, text: "earlier answer" }) });
  state = reduce(state, {
    type: "event",
    event: event({ type: "tool_call", toolCallId: `c${i}`, name: "Read", kind: "read", title: "Read x", input: {} }),
  });
}
const text = line.repeat(LINES);
const deltas: AgentEvent[] = [];
for (let at = 0; at < text.length; at += 20) {
  deltas.push(event({ type: "text_delta", messageId: "long", text: text.slice(at, at + 20) }));
}
const started = performance.now();
for (const delta of deltas) state = reduce(state, { type: "event", event: delta });
const seconds = (performance.now() - started) / 1000;
const last = state.items.at(-1);
if (last?.kind !== "assistant" || last.text.length !== text.length) throw new Error("the answer was not folded whole");
console.log(`reducer: ${deltas.length} text_delta events (${LINES} lines) after 200 items`);
console.log(`  ${(seconds * 1000).toFixed(1)} ms in all, ${((seconds / deltas.length) * 1e6).toFixed(2)} µs per event, ${Math.round(deltas.length / seconds).toLocaleString("en")} events/s`);

// A re-attach after a window reload: the last 200 messages of a session, then the running
// turn's events sent again (1,000 deltas of a message the history drew, skipped, then
// 1,000 of a new one), as the reducer folds them.
const history: DisplayMessage[] = Array.from({ length: 200 }, (_, i) => ({
  messageId: `m${i}`,
  role: i % 2 ? ("assistant" as const) : ("user" as const),
  content: [{ type: "text" as const, text: `message ${i}: ${line}` }],
}));
const resumed: ResumeSessionResult = { sessionId: "s", model: "m", permissionMode: "default", tools: [], messages: history, lastSeq: 5000, runningTurnId: "t" };
let resent = 4000;
const again = (e: Record<string, unknown>): AgentEvent => ({ sessionId: "s", seq: ++resent, ...e }) as unknown as AgentEvent;
const replay = [
  again({ type: "turn_started", turnId: "t", userMessageId: "m198" }),
  ...Array.from({ length: 1000 }, () => again({ type: "text_delta", turnId: "t", messageId: "m199", text: "twenty characters.. " })),
  ...Array.from({ length: 1000 }, () => again({ type: "text_delta", turnId: "t", messageId: "live", text: "twenty characters.. " })),
];
const opening = performance.now();
let back = reduce(initialState(), sessionOpened(resumed, { sessionId: "s", lastSeq: 4000 }));
const opened = performance.now();
for (const e of replay) back = reduce(back, { type: "event", event: e });
const folded = performance.now();
if (back.lastSeq !== resent || back.items.at(-1)?.kind !== "assistant") throw new Error("the re-attach was not folded");
console.log(`re-attach: ${history.length} messages of history, then ${replay.length} events sent again (half of a message drawn already)`);
console.log(`  ${(opened - opening).toFixed(1)} ms to open, ${(folded - opened).toFixed(1)} ms to fold the events (${(((folded - opened) / replay.length) * 1000).toFixed(2)} µs per event)`);

// An apply_patch request of 50 files of 2,000 lines, 10 lines changed in each: the reducer
// counts every file's +/- lines (a line diff per file) when the request arrives.
const FILES = 50;
const body = Array.from({ length: 2000 }, (_, i) => `line ${i} of the file\n`);
const diffs = Array.from({ length: FILES }, (_, f) => {
  const changed = body.map((l, i) => (i % 200 === 7 ? `changed ${l}` : l));
  return { path: `/w/src/file${f}.py`, oldText: body.join(""), newText: changed.join(""), kind: "update" };
});
const patchRequest = event({ type: "permission_request", requestId: "rp", toolCallId: "cp", title: "Patch", input: {}, options: [], diffs });
const patchStart = performance.now();
const patched = reduce(state, { type: "event", event: patchRequest });
const patchMs = performance.now() - patchStart;
const patchItem = patched.items.at(-1);
if (patchItem?.kind !== "permission" || patchItem.files?.length !== FILES || patchItem.files[0]?.added !== 10) throw new Error("the patch was not listed");
console.log(`apply_patch request: ${FILES} files of ${body.length} lines, 10 changed lines each`);
console.log(`  ${patchMs.toFixed(1)} ms to fold (${(patchMs / FILES).toFixed(2)} ms per file)`);

const report = [
  "Context of claude-sonnet-4-5: about 45,592 of 200,000 tokens (23%)",
  "  System prompt      2,723 tokens   1.4%",
  "  Tools             14,669 tokens   7.3%",
  "  MCP tools          6,000 tokens   3.0%  (40 tools)",
  "  Memory files       1,057 tokens   0.5%  (2 files)",
  "  Skills               143 tokens   0.1%  (1 skill)",
  "  Messages          21,000 tokens  10.5%  (120 messages)",
  "  Free space       154,408 tokens  77.2%",
].join("\n");
const parseStart = performance.now();
for (let i = 0; i < 10_000; i++) parseContextReport(report);
const parseUs = ((performance.now() - parseStart) / 10_000) * 1000;
console.log(`/context report: ${parseUs.toFixed(2)} µs to read back into the bar's parts`);

// View diff of a worktree: a 2,000-line file with a changed line every 200, its old text
// taken back from the worktree's copy and the unified diff (3 lines of context).
const newLines = body.map((l, i) => (i % 200 === 7 ? `changed ${l}` : l));
const hunkText = newLines.flatMap((l, i) => {
  if (i % 200 !== 7) return [];
  const context = (from: number, to: number) => body.slice(from, to).map((c) => ` ${c}`);
  return [`@@ -${i - 2},7 +${i - 2},7 @@\n`, ...context(i - 3, i), `-${body[i] ?? ""}`, `+${l}`, ...context(i + 1, i + 4)];
});
const worktreeDiff = `--- a/big.py\n+++ b/big.py\n${hunkText.join("")}`;
const beforeStart = performance.now();
const RUNS = 200;
let whole: string | undefined;
for (let i = 0; i < RUNS; i++) whole = textBefore(newLines.join(""), worktreeDiff);
const beforeMs = (performance.now() - beforeStart) / RUNS;
if (whole !== body.join("")) throw new Error("the worktree file's old text did not come back");
console.log(`worktree View diff: a ${body.length}-line file, ${hunkText.filter((h) => h.startsWith("@@")).length} hunks, taken back whole`);
console.log(`  ${(beforeMs * 1000).toFixed(0)} µs per file`);

// A rewind preview's file: the same 2,000-line file brought forward to what the rewind puts
// back (its diff applied forward, through the diff read the other way round), as the
// preview opens it in the diff editor; and that reversal alone.
const afterStart = performance.now();
let restored: string | undefined;
for (let i = 0; i < RUNS; i++) restored = textAfter(body.join(""), worktreeDiff);
const afterMs = (performance.now() - afterStart) / RUNS;
if (restored !== newLines.join("")) throw new Error("the rewind preview's file did not come out whole");
if (reverseDiff(reverseDiff(worktreeDiff)) !== worktreeDiff) throw new Error("a diff read twice the other way round changed");
console.log(`rewind preview: the same file brought to its restored text`);
console.log(`  ${(afterMs * 1000).toFixed(0)} µs per file`);

// A rewind of the conversation in a long chat: 1,000 turns of 4 items, cut at the middle.
let chat: ViewState = reduce(initialState(), { type: "session", sessionId: "r" });
let rseq = 0;
const rev = (e: Record<string, unknown>): AgentEvent => ({ sessionId: "r", seq: ++rseq, ...e }) as unknown as AgentEvent;
for (let t = 0; t < 1000; t++) {
  for (const e of [
    { type: "turn_started", turnId: `t${t}`, userMessageId: `u${t}` },
    { type: "message_completed", turnId: `t${t}`, messageId: `u${t}`, role: "user", content: [{ type: "text", text: `ask ${t}` }] },
    { type: "tool_call", turnId: `t${t}`, toolCallId: `c${t}`, name: "Read", kind: "read", title: "Read x", input: {} },
    { type: "message_completed", turnId: `t${t}`, messageId: `a${t}`, role: "assistant", content: [{ type: "text", text: `answer ${t}` }] },
    { type: "turn_completed", turnId: `t${t}`, stopReason: "end_turn", turns: 1, usage: {} },
  ]) chat = reduce(chat, { type: "event", event: rev(e) });
}
const removed = Array.from({ length: 500 }, (_, i) => [`u${500 + i}`, `a${500 + i}`]).flat();
const cutStart = performance.now();
const cut = reduce(chat, { type: "rewound", removedMessageIds: removed, message: "Rewound." });
const cutMs = performance.now() - cutStart;
if (cut.items.length !== 1501) throw new Error(`the rewind kept ${cut.items.length} items`);
console.log(`rewind in the panel: ${chat.items.length} items, ${removed.length} messages removed`);
console.log(`  ${cutMs.toFixed(2)} ms`);

// A resumed page of 200 messages (100 user, 100 assistant) opened with and without the turn
// each user message began (DisplayMessage.turnId, which offers Rewind… and Changes on them).
const page = (withTurns: boolean): DisplayMessage[] =>
  Array.from({ length: 200 }, (_, i) => ({
    messageId: `p${i}`,
    role: i % 2 ? ("assistant" as const) : ("user" as const),
    ...(withTurns && i % 2 === 0 ? { turnId: `t${i}` } : {}),
    content: [{ type: "text" as const, text: `message ${i}: ${line}` }],
  }));
const OPENS = 50;
const openMs = (messages: DisplayMessage[]): number => {
  const t0 = performance.now();
  for (let i = 0; i < OPENS; i++) reduce(initialState(), { type: "session", sessionId: "p", messages });
  return (performance.now() - t0) / OPENS;
};
const plainPage = page(false);
const turnPage = page(true);
openMs(turnPage);
const plainMs = openMs(plainPage);
const turnMs = openMs(turnPage);
const opened200 = reduce(initialState(), { type: "session", sessionId: "p", messages: turnPage });
if (opened200.items.filter((i) => i.kind === "user" && i.turnId).length !== 100) throw new Error("the resumed turns were not kept");
console.log(`resumed page of 200 messages, with the turns of its 100 user messages and without`);
console.log(`  ${turnMs.toFixed(2)} ms with, ${plainMs.toFixed(2)} ms without (×${(turnMs / plainMs).toFixed(2)})`);
