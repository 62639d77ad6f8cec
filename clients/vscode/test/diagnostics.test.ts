import assert from "node:assert/strict";
import { test } from "node:test";

import { toLspDiagnostics } from "../src/diagnostics";

test("the editor's diagnostics become LSP diagnostics: severity plus one, code unwrapped", () => {
  const range = { start: { line: 2, character: 4 }, end: { line: 2, character: 10 } };
  const lsp = toLspDiagnostics([
    { range, severity: 0, message: '"x" is not defined', source: "Pylance", code: { value: "reportUndefinedVariable" } },
    { range, severity: 3, message: "unused", code: 6133 },
  ]);
  assert.deepEqual(lsp, [
    { range, severity: 1, message: '"x" is not defined', source: "Pylance", code: "reportUndefinedVariable" },
    { range, severity: 4, message: "unused", code: 6133 },
  ]);
});
