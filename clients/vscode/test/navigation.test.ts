// The editor's definitions, references and workspace symbols as the LSP JSON the daemon's
// navigation tools read.

import assert from "node:assert/strict";
import { test } from "node:test";

import { EDITOR_REQUESTS, toLspLocations, toLspSymbols } from "../src/navigation";

/** A vscode.Uri stand-in: only its toString() is read. */
const uri = (text: string) => ({ toString: () => text, fsPath: "/not/read" });
const range = (line: number, from: number, to: number) => ({ start: { line, character: from }, end: { line, character: to } });

test("locations and location links keep their shape; a link's selection range defaults to its range", () => {
  const lsp = toLspLocations([
    { uri: uri("file:///w/util.ts"), range: range(3, 16, 22) },
    { targetUri: uri("file:///w/lib.ts"), targetRange: range(0, 0, 40), targetSelectionRange: range(0, 9, 14), originSelectionRange: range(5, 2, 7) },
    { targetUri: uri("file:///w/other.ts"), targetRange: range(8, 0, 3) },
  ]);
  assert.deepEqual(lsp, [
    { uri: "file:///w/util.ts", range: range(3, 16, 22) },
    { targetUri: "file:///w/lib.ts", targetRange: range(0, 0, 40), targetSelectionRange: range(0, 9, 14), originSelectionRange: range(5, 2, 7) },
    { targetUri: "file:///w/other.ts", targetRange: range(8, 0, 3), targetSelectionRange: range(8, 0, 3) },
  ]);
  assert.deepEqual(JSON.parse(JSON.stringify(lsp[0])), { uri: "file:///w/util.ts", range: range(3, 16, 22) });
  assert.deepEqual(toLspLocations(undefined), []);
});

test("symbols become SymbolInformation: LSP's kind is vscode's plus one, an empty container left out", () => {
  const lsp = toLspSymbols([
    { name: "greet", kind: 11, containerName: "", location: { uri: uri("file:///w/util.ts"), range: range(0, 0, 30) } },
    { name: "port", kind: 6, containerName: "Server", location: { uri: uri("file:///w/app.ts"), range: range(4, 2, 6) } },
  ]);
  assert.deepEqual(lsp, [
    { name: "greet", kind: 12, location: { uri: "file:///w/util.ts", range: range(0, 0, 30) } },
    { name: "port", kind: 7, containerName: "Server", location: { uri: "file:///w/app.ts", range: range(4, 2, 6) } },
  ]);
  assert.deepEqual(toLspSymbols(undefined), []);
});

test("the editor announces every request it answers", () => {
  assert.deepEqual(EDITOR_REQUESTS, { diagnostics: true, definition: true, references: true, workspaceSymbols: true });
});
