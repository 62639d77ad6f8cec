// How fast the reducer folds a long streamed answer: a 2,000-line reply as text_delta
// events (about 20 characters each), after a history of 200 items. Prints numbers.

import { type ViewState, initialState, reduce } from "../src/reducer";
import type { AgentEvent } from "../src/wire";

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
