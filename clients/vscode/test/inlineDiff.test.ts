// An inline edit's review in the editor: what the buffer shows while hunks are undecided,
// the text sent back when some are kept, and the line edits that get the buffer there.

import assert from "node:assert/strict";
import { test } from "node:test";

import { acceptedText, answerOf, blockAt, decide, decideRest, layout, lineEdits, startReview, withoutProposals } from "../src/inlineDiff";

const OLD = "def f(x):\n    return x\n\n\ndef g(y):\n    return y\n";
const NEW = "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y * 2\n";

/** What `lineEdits` leaves when applied in order, as the editor applies them. */
function applied(current: string, target: string): string {
  let text = current;
  for (const edit of lineEdits(current, target)) text = text.slice(0, edit.from) + edit.text + text.slice(edit.to);
  return text;
}

test("undecided hunks show their old lines above their proposed ones", () => {
  const shown = layout(startReview(OLD, NEW));
  assert.equal(shown.text, "def f(x):\n    return x\n    return x + 1\n\n\ndef g(y):\n    return y\n    return y * 2\n");
  assert.deepEqual(shown.blocks, [
    { index: 0, decision: "undecided", removedStart: 1, addedStart: 2, end: 3 },
    { index: 1, decision: "undecided", removedStart: 6, addedStart: 7, end: 8 },
  ]);
});

test("a kept hunk shows only its new lines, a rejected one only its old, and the blocks after move up", () => {
  const review = decide(decide(startReview(OLD, NEW), 0, "accepted"), 1, "undecided");
  const shown = layout(review);
  assert.equal(shown.text, "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y\n    return y * 2\n");
  assert.deepEqual(shown.blocks, [{ index: 1, decision: "undecided", removedStart: 5, addedStart: 6, end: 7 }]);
  assert.equal(layout(decide(startReview(OLD, NEW), 1, "rejected")).blocks.length, 1);
});

test("one hunk kept and one rejected answers allow_once with only the kept hunk", () => {
  let review = decide(startReview(OLD, NEW), 0, "accepted");
  assert.equal(answerOf(review), undefined);
  review = decide(review, 1, "rejected");
  assert.deepEqual(answerOf(review), { optionId: "allow_once", acceptedText: "def f(x):\n    return x + 1\n\n\ndef g(y):\n    return y\n" });
});

test("every hunk rejected answers reject_once; every hunk kept sends the proposal whole", () => {
  assert.deepEqual(answerOf(decideRest(startReview(OLD, NEW), "rejected")), { optionId: "reject_once" });
  assert.deepEqual(answerOf(decideRest(startReview(OLD, NEW), "accepted")), { optionId: "allow_once", acceptedText: NEW });
  assert.equal(acceptedText(startReview(OLD, NEW)), OLD);
});

test("pure insertions and deletions lay out and answer", () => {
  const inserted = "a\nnew\nb\n";
  const review = startReview("a\nb\n", inserted);
  assert.equal(layout(review).text, inserted);
  assert.deepEqual(layout(review).blocks, [{ index: 0, decision: "undecided", removedStart: 1, addedStart: 1, end: 2 }]);
  const deletion = startReview("a\nold\nb\n", "a\nb\n");
  assert.deepEqual(layout(deletion).blocks, [{ index: 0, decision: "undecided", removedStart: 1, addedStart: 2, end: 2 }]);
  assert.deepEqual(answerOf(decideRest(deletion, "accepted")), { optionId: "allow_once", acceptedText: "a\nb\n" });
});

test("an old last line without a newline still starts the proposed lines on a line of their own", () => {
  const review = startReview("a\nb", "a\nc");
  assert.equal(layout(review).text, "a\nb\nc");
  assert.deepEqual(answerOf(decideRest(review, "accepted")), { optionId: "allow_once", acceptedText: "a\nc" });
  assert.deepEqual(answerOf(decide(review, 0, "rejected")), { optionId: "reject_once" });
  assert.equal(acceptedText(review), "a\nb");
});

test("the line edits turn the buffer into each shown text and back, CRLF included", () => {
  for (const [old, proposed] of [
    [OLD, NEW],
    ["a\r\nb\r\nc\r\n", "a\r\nB\r\nc\r\nd\r\n"],
    ["x", "y\nz"],
    ["", "new file\n"],
  ] as const) {
    const review = startReview(old, proposed);
    const shown = layout(review).text;
    assert.equal(applied(old, shown), shown);
    const partly = layout(decide(review, 0, "accepted")).text;
    assert.equal(applied(shown, partly), partly);
    assert.equal(applied(partly, old), old);
  }
});

test("the block at a line is the hunk that holds it, else the next one", () => {
  const { blocks } = layout(startReview(OLD, NEW));
  assert.equal(blockAt(blocks, 2)?.index, 0);
  assert.equal(blockAt(blocks, 4)?.index, 1);
  assert.equal(blockAt(blocks, 9), undefined);
});

test("text the user typed during the review stays; the proposals they did not touch go", () => {
  const shown = layout(startReview(OLD, NEW));
  // A line typed at the top, and the second proposal's line edited by hand.
  const typed = `# mine\n${shown.text.replace("    return y * 2\n", "    return y * 3\n")}`;
  assert.equal(withoutProposals(shown, typed), "# mine\ndef f(x):\n    return x\n\n\ndef g(y):\n    return y\n    return y * 3\n");
  assert.equal(withoutProposals(shown, shown.text), OLD);
});
