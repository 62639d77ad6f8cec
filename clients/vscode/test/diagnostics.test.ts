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

/** Like vscode.Position: its line and character are getters over private fields. */
class EditorPosition {
  constructor(
    private readonly _line: number,
    private readonly _character: number,
  ) {}
  get line(): number {
    return this._line;
  }
  get character(): number {
    return this._character;
  }
}

test("positions are read through their getters, as vscode.Position keeps them", () => {
  const range = { start: new EditorPosition(3, 13), end: new EditorPosition(3, 19) };
  const [lsp] = toLspDiagnostics([{ range, severity: 0, message: "Type 'string' is not assignable to type 'number'.", source: "ts", code: 2322 }]);
  assert.deepEqual(JSON.parse(JSON.stringify(lsp)), {
    range: { start: { line: 3, character: 13 }, end: { line: 3, character: 19 } },
    severity: 1,
    message: "Type 'string' is not assignable to type 'number'.",
    source: "ts",
    code: 2322,
  });
});
