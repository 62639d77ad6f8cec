// Hunks of a reviewed change and reverting one of them.

import assert from "node:assert/strict";
import { test } from "node:test";

import { type Hunk, hunkAt, hunks, revertHunk, splitLines } from "../src/hunks";

const OLD = "a\nb\nc\nd\ne\nf\ng\nh\n";

test("splitLines keeps endings and a last line without one", () => {
  assert.deepEqual(splitLines("x\ny"), ["x\n", "y"]);
  assert.deepEqual(splitLines("x\r\n\n"), ["x\r\n", "\n"]);
  assert.deepEqual(splitLines(""), []);
  assert.equal(splitLines("é\nü").join(""), "é\nü");
});

test("a change, an insertion and a deletion are three hunks", () => {
  const proposed = "A\nb\nc\nnew\nd\ne\ng\nh\n";
  assert.deepEqual(hunks(OLD, proposed), [
    { oldStart: 0, oldEnd: 1, newStart: 0, newEnd: 1 },
    { oldStart: 3, oldEnd: 3, newStart: 3, newEnd: 4 },
    { oldStart: 5, oldEnd: 6, newStart: 6, newEnd: 6 },
  ]);
});

test("reverting every hunk in any order gives the old text back", () => {
  const proposed = "A\nb\nc\nnew\nd\ne\ng\nh\nend\n";
  for (const order of [[0, 1, 2, 3], [3, 2, 1, 0], [1, 3, 0, 2]]) {
    let text = proposed;
    const all = hunks(OLD, proposed);
    assert.equal(all.length, 4);
    for (const index of order) {
      // Hunks are found again after each revert, as the review does: lines move.
      const target = all[index];
      const now = hunks(OLD, text).find((h) => h.oldStart === target?.oldStart && h.oldEnd === target.oldEnd);
      assert.ok(now, `hunk ${index} still there`);
      text = revertHunk(OLD, text, now);
    }
    assert.equal(text, OLD);
  }
});

test("reverting one hunk keeps the others and the user's own edits", () => {
  const proposed = "A\nb\nc\nd\ne\nf\ng\nH\n";
  const edited = proposed.replace("A\n", "A!\n");
  const [first, second] = hunks(OLD, edited) as [Hunk, Hunk];
  assert.equal(revertHunk(OLD, edited, second), "A!\nb\nc\nd\ne\nf\ng\nh\n");
  assert.equal(revertHunk(OLD, edited, first), OLD.replace("h\n", "H\n"));
});

test("no final newline on either side is a change of the last line", () => {
  assert.deepEqual(hunks("a\nb", "a\nb\n"), [{ oldStart: 1, oldEnd: 2, newStart: 1, newEnd: 2 }]);
  assert.deepEqual(hunks("", "x"), [{ oldStart: 0, oldEnd: 0, newStart: 0, newEnd: 1 }]);
  assert.deepEqual(hunks("same\n", "same\n"), []);
});

test("hunkAt finds the hunk under the cursor, a deletion at its place", () => {
  const list = hunks(OLD, "A\nb\nc\nd\ne\ng\nh\n");
  assert.equal(hunkAt(list, 0), list[0]);
  assert.equal(hunkAt(list, 2), undefined);
  assert.equal(hunkAt(list, 5), list[1]);
});

test("a large file with scattered changes diffs to exactly those lines", () => {
  const lines = Array.from({ length: 5000 }, (_, i) => `line ${i}\n`);
  const changed = lines.map((l, i) => (i % 500 === 7 ? `changed ${i}\n` : l));
  const found = hunks(lines.join(""), changed.join(""));
  assert.equal(found.length, 10);
  assert.ok(found.every((h) => h.oldEnd - h.oldStart === 1 && h.newEnd - h.newStart === 1));
});
