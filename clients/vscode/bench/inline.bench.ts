// How fast an inline edit's review in the editor follows the user: a 5,000-line file whose
// proposed change has 50 hunks; the review laid out (old lines above proposed ones), then
// each hunk decided in turn, each decision laid out again and turned into the line edits
// that move the buffer there, then the buffer taken back to the file. Prints numbers.

import { answerOf, decide, layout, lineEdits, startReview } from "../src/inlineDiff";

const LINES = 5000;
const HUNKS = 50;
const lineOf = (i: number, call: string) => `    value_${i} = ${call}(${i}, options)  # a line of code\n`;
const old = Array.from({ length: LINES }, (_, i) => lineOf(i, "compute")).join("");
// Every (LINES / HUNKS)th line changed: one hunk each.
const proposed = Array.from({ length: LINES }, (_, i) => lineOf(i, i % (LINES / HUNKS) === LINES / HUNKS / 2 ? "recompute" : "compute")).join("");

const opening = performance.now();
let review = startReview(old, proposed);
let shown = layout(review).text;
const edits = lineEdits(old, shown).length;
const opened = performance.now();
if (review.hunks.length !== HUNKS) throw new Error(`${review.hunks.length} hunks, not ${HUNKS}`);

const times: number[] = [];
for (let i = 0; i < HUNKS; i++) {
  const start = performance.now();
  review = decide(review, i, i % 2 ? "rejected" : "accepted");
  const next = layout(review).text;
  lineEdits(shown, next);
  shown = next;
  times.push(performance.now() - start);
}
const closing = performance.now();
const answer = answerOf(review);
lineEdits(shown, old);
const closed = performance.now();
if (answer?.optionId !== "allow_once") throw new Error("no answer after every hunk was decided");

times.sort((a, b) => a - b);
console.log(`inline review: ${LINES}-line file, ${HUNKS} hunks`);
console.log(`  opened (hunks, layout, ${edits} line edits): ${(opened - opening).toFixed(1)} ms`);
console.log(`  one decision (layout + line edits): median ${times[HUNKS / 2]?.toFixed(2)} ms, max ${times.at(-1)?.toFixed(2)} ms`);
console.log(`  answered (acceptedText + edits back to the file): ${(closed - closing).toFixed(1)} ms`);
