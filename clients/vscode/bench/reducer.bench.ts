// How fast the reducer folds a long streamed answer: a 2,000-line reply as text_delta
// events (about 20 characters each), after a history of 200 items; and a re-attach after a
// window reload (below). Prints numbers.

import { type ViewState, initialState, reduce, sessionOpened } from "../src/reducer";
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
