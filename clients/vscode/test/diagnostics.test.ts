import assert from "node:assert/strict";
import { test } from "node:test";

import { languageOfFile, mayReportDiagnostics, toLspDiagnostics } from "../src/diagnostics";

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

// Manifests as code-server's built-in extensions and two marketplace ones declare them.
const PYTHON_GRAMMAR = {
  id: "vscode.python",
  packageJSON: { isBuiltin: true, contributes: { languages: [{ id: "python", extensions: [".py", ".pyi"], filenames: ["SConstruct"] }] } },
};
const TYPESCRIPT_GRAMMAR = {
  id: "vscode.typescript-basics",
  packageJSON: { isBuiltin: true, contributes: { languages: [{ id: "typescript", extensions: [".ts"] }, { id: "typescriptreact", extensions: [".tsx"] }] } },
};
const TYPESCRIPT_SERVER = {
  id: "vscode.typescript-language-features",
  packageJSON: { isBuiltin: true, main: "./dist/extension", activationEvents: ["onLanguage:typescript", "onLanguage:javascript"] },
};
const GIT = { id: "vscode.git", packageJSON: { isBuiltin: true, main: "./out/main", activationEvents: ["*", "onFileSystem:git"] } };
const EMMET = { id: "vscode.emmet", packageJSON: { isBuiltin: true, main: "./out/node/emmetNodeMain", activationEvents: ["onLanguage"] } };
const AGENTLS = { id: "agentls.agentls", packageJSON: { main: "./dist/extension.js", activationEvents: ["onStartupFinished"] } };
const BUILT_IN = [PYTHON_GRAMMAR, TYPESCRIPT_GRAMMAR, TYPESCRIPT_SERVER, GIT, EMMET, AGENTLS];

test("a file's language is its file name's, else its longest extension's, else plaintext", () => {
  const tsx = { id: "x.dts", packageJSON: { contributes: { languages: [{ id: "dts", extensions: [".d.ts"] }] } } };
  assert.equal(languageOfFile("app.py", BUILT_IN), "python");
  assert.equal(languageOfFile("APP.PY", BUILT_IN), "python");
  assert.equal(languageOfFile("SConstruct", BUILT_IN), "python");
  assert.equal(languageOfFile("main.tsx", BUILT_IN), "typescriptreact");
  assert.equal(languageOfFile("types.d.ts", [...BUILT_IN, tsx]), "dts");
  assert.equal(languageOfFile("notes.txt", BUILT_IN), "plaintext");
});

test("only a language's own checker watches it: not a grammar, a built-in that starts with every window, or agentls", () => {
  assert.equal(mayReportDiagnostics("typescript", BUILT_IN, "agentls.agentls"), true);
  // Python's grammar has no code; git and emmet start for any file but lint none.
  assert.equal(mayReportDiagnostics("python", BUILT_IN, "agentls.agentls"), false);
  assert.equal(mayReportDiagnostics("plaintext", BUILT_IN, "agentls.agentls"), false);
  // Without knowing it is itself, agentls (onStartupFinished, not built in) would count.
  assert.equal(mayReportDiagnostics("python", BUILT_IN, "someone.else"), true);
});

test("a language server that contributes its language watches it; a third-party extension of every window may lint anything", () => {
  const pylance = {
    id: "ms-python.vscode-pylance",
    packageJSON: { main: "./dist/extension", contributes: { languages: [{ id: "python" }] } },
  };
  assert.equal(mayReportDiagnostics("python", [...BUILT_IN, pylance], "agentls.agentls"), true);
  for (const activation of ["onStartupFinished", "*", "onLanguage", "workspaceContains:**/.eslintrc*"]) {
    const linter = { id: "some.linter", packageJSON: { main: "./out/extension", activationEvents: [activation] } };
    assert.equal(mayReportDiagnostics("plaintext", [...BUILT_IN, linter], "agentls.agentls"), true, activation);
  }
  // One only its command starts has not looked at anything until it reports (then the file has diagnostics).
  const onCommand = { id: "some.tool", packageJSON: { main: "./out/extension", activationEvents: ["onCommand:some.run"] } };
  assert.equal(mayReportDiagnostics("plaintext", [...BUILT_IN, onCommand], "agentls.agentls"), false);
});
