// What a permission card shows with its request, and the words around it: the diff
// preview, plurals, the answer keys.

import assert from "node:assert/strict";
import { test } from "node:test";

import { cardKeyAction } from "../src/permissionKeys";
import { MAX_PREVIEW_LINES, diffPreview } from "../src/preview";
import { plural } from "../src/words";

const lines = (n: number, word = "line") => Array.from({ length: n }, (_, i) => `${word} ${i + 1}\n`).join("");

test("a one-line edit shows the old line, the new one and the context around them", () => {
  const preview = diffPreview({ path: "/w/app.py", oldText: "import os\nPORT = 8000\nrun()\n", newText: "import os\nPORT = 9000\nrun()\n" });
  assert.deepEqual(
    preview.lines.map((l) => [l.kind, l.text, l.number]),
    [
      ["context", "import os", 1],
      ["removed", "PORT = 8000", 2],
      ["added", "PORT = 9000", 2],
      ["context", "run()", 3],
    ],
  );
  assert.equal(preview.added, 1);
  assert.equal(preview.removed, 1);
  assert.equal(preview.created, false);
  assert.equal(preview.hidden, 0);
});

test("a new file is all added lines", () => {
  const preview = diffPreview({ path: "/w/new.py", newText: "a\nb\n" });
  assert.equal(preview.created, true);
  assert.deepEqual(preview.lines.map((l) => l.kind), ["added", "added"]);
  assert.equal(preview.added, 2);
});

test("unchanged lines far from a change are folded into counted gaps", () => {
  const old = lines(20);
  const changed = old.replace("line 10\n", "line ten\n");
  const preview = diffPreview({ path: "/w/f", oldText: old, newText: changed });
  const gaps = preview.lines.filter((l) => l.kind === "gap").map((l) => l.count);
  // Lines 1-6 before the context (7-9), and lines 14-20 after it (11-13).
  assert.deepEqual(gaps, [6, 7]);
  assert.equal(preview.lines.filter((l) => l.kind === "context").length, 6);
});

test("two changes close together share their context, with no gap between them", () => {
  const old = lines(10);
  const changed = old.replace("line 4\n", "four\n").replace("line 6\n", "six\n");
  const preview = diffPreview({ path: "/w/f", oldText: old, newText: changed });
  // The one gap is line 10, after the last context line.
  assert.deepEqual(
    preview.lines.filter((l) => l.kind === "gap").map((l) => [preview.lines.indexOf(l), l.count]),
    [[preview.lines.length - 1, 1]],
  );
  assert.deepEqual(
    preview.lines.filter((l) => l.kind === "context").map((l) => l.number),
    [1, 2, 3, 5, 7, 8, 9],
  );
});

test("a large change is capped, and what is left out is counted", () => {
  const preview = diffPreview({ path: "/w/big", newText: lines(500) });
  assert.equal(preview.lines.length, MAX_PREVIEW_LINES);
  assert.equal(preview.hidden, 500 - MAX_PREVIEW_LINES);
  assert.equal(preview.added, 500);
});

test("counts have the right plural", () => {
  assert.equal(plural(1, "turn"), "1 turn");
  assert.equal(plural(2, "turn"), "2 turns");
  assert.equal(plural(0, "line"), "0 lines");
  assert.equal(plural(1, "model call"), "1 model call");
  assert.equal(plural(1200, "token"), "1,200 tokens");
  assert.equal(plural(3, "entry", "entries"), "3 entries");
});

test("y, a, n, d answer a card as every client does, v reviews, only what is offered", () => {
  const all = ["allow_once", "allow_always", "reject_once", "reject_always"] as const;
  assert.deepEqual(cardKeyAction("y", all, false), { type: "answer", kind: "allow_once" });
  assert.deepEqual(cardKeyAction("a", all, false), { type: "answer", kind: "allow_always" });
  assert.deepEqual(cardKeyAction("n", all, false), { type: "answer", kind: "reject_once" });
  assert.deepEqual(cardKeyAction("d", all, false), { type: "answer", kind: "reject_always" });
  assert.deepEqual(cardKeyAction("Y", all, false), { type: "answer", kind: "allow_once" });
  assert.deepEqual(cardKeyAction("v", all, true), { type: "review" });
  assert.equal(cardKeyAction("v", all, false), undefined);
  assert.equal(cardKeyAction("a", ["allow_once", "reject_once"], false), undefined);
  assert.equal(cardKeyAction("x", all, true), undefined);
});
