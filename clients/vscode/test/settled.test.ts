// Where a streamed answer's markdown is settled.

import assert from "node:assert/strict";
import { test } from "node:test";

import { settledEnd } from "../src/webview/settled";

test("the end of the last blank line outside a fence", () => {
  const text = "# Title\n\nA paragraph\nstill it\n\nnext";
  assert.equal(settledEnd(text, 0), text.indexOf("next"));
  assert.equal(text.slice(0, settledEnd(text, 0)), "# Title\n\nA paragraph\nstill it\n\n");
});

test("a blank line inside a code fence does not settle, the fence's end does", () => {
  const open = "Intro\n\n```python\nx = 1\n\ny = 2\n";
  assert.equal(settledEnd(open, 0), "Intro\n\n".length);
  const closed = `${open}\`\`\`\n\nafter`;
  assert.equal(settledEnd(closed, 0), closed.indexOf("after"));
});

test("a longer fence closes only with at least as many markers of its kind", () => {
  const text = "````md\n```\n\ninner\n````\n\nout";
  assert.equal(settledEnd(text, 0), text.indexOf("out"));
  assert.equal(settledEnd("~~~\n```\n\n", 0), 0);
});

test("scanning resumes from the last settled point; no blank line, no progress", () => {
  const text = "one\n\ntwo\nthree";
  const first = settledEnd(text, 0);
  assert.equal(first, 5);
  assert.equal(settledEnd(text, first), first);
  assert.equal(settledEnd("no newline yet", 0), 0);
});
