// The power-user features' client side, apart from the webview: /context read back into
// a bar's numbers, slash-command (and skill) completion, the `!`/`#` hints, a patch's
// file list, and the id a plan's answer sends.

import assert from "node:assert/strict";
import { test } from "node:test";

import { parseContextReport, partSlug } from "../src/contextReport";
import { patchFiles } from "../src/patch";
import { commandTag, matchCommands, shortcutHint, slashQuery } from "../src/slash";
import type { CommandInfo, PermissionOption } from "../src/wire";
import { answerId } from "../src/words";

/** What `agentls run "/context"` printed for a project with one skill and an AGENTS.md
 * (scripted provider), byte for byte. */
export const CONTEXT_TEXT = [
  "Context of scripted: about 5,592 of 128,000 tokens (4%)",
  "  System prompt        723 tokens   0.6%",
  "  Tools              4,669 tokens   3.6%",
  "  MCP tools              0 tokens   0.0%  (0 tools)",
  "  Memory files          57 tokens   0.0%  (1 file)",
  "  Skills               143 tokens   0.1%  (1 skill)",
  "  Messages               0 tokens   0.0%  (0 messages)",
  "  Free space       122,408 tokens  95.6%",
].join("\n");

test("/context's text becomes the bar's parts, in order, free space last", () => {
  const report = parseContextReport(CONTEXT_TEXT);
  assert.ok(report);
  assert.equal(report.model, "scripted");
  assert.equal(report.used, 5592);
  assert.equal(report.window, 128000);
  assert.deepEqual(
    report.parts.map((p) => [p.name, p.tokens, p.percent, p.detail]),
    [
      ["System prompt", 723, 0.6, ""],
      ["Tools", 4669, 3.6, ""],
      ["MCP tools", 0, 0, "0 tools"],
      ["Memory files", 57, 0, "1 file"],
      ["Skills", 143, 0.1, "1 skill"],
      ["Messages", 0, 0, "0 messages"],
      ["Free space", 122408, 95.6, ""],
    ],
  );
  assert.deepEqual(report.parts.map((p) => partSlug(p.name)), ["system-prompt", "tools", "mcp-tools", "memory-files", "skills", "messages", "free-space"]);
});

test("text that is not /context's report is not read as one", () => {
  assert.equal(parseContextReport("2 turns, 2,000 tokens in"), undefined);
  assert.equal(parseContextReport("Context of m: about 1 of 2 tokens (50%)"), undefined);
});

const COMMANDS: CommandInfo[] = [
  { name: "review", description: "Review the changes", source: "builtin", argumentHint: "[focus]" },
  { name: "pdf-forms", description: "Fills PDF forms", source: "skill", argumentHint: "[arguments]" },
  { name: "context", description: "What fills the window", source: "builtin" },
  { name: "compact", description: "Compact the history", source: "builtin" },
  { name: "frontend:component", description: "A component", source: "project" },
];

test("a leading / completes commands and skills: prefix matches first, then the rest containing it", () => {
  assert.equal(slashQuery("/co"), "co");
  assert.equal(slashQuery("/"), "");
  assert.equal(slashQuery("/frontend:c"), "frontend:c");
  // Not at the start, or past the name: no completion.
  assert.equal(slashQuery("see /co"), undefined);
  assert.equal(slashQuery("/review now"), undefined);
  assert.deepEqual(matchCommands(COMMANDS, "co").map((c) => c.name), ["compact", "context", "frontend:component"]);
  assert.deepEqual(matchCommands(COMMANDS, "").map((c) => c.name), ["compact", "context", "frontend:component", "pdf-forms", "review"]);
  assert.deepEqual(matchCommands(COMMANDS, "pdf").map(commandTag), ["skill"]);
  assert.equal(commandTag(COMMANDS[0] as CommandInfo), "");
});

test("the ! and # shortcuts are hinted as the daemon reads them", () => {
  assert.match(shortcutHint("!ls -la"), /shell/);
  assert.match(shortcutHint("# use tabs"), /memory file/);
  // Not shortcuts: a bare !, a #123, a heading, a note over several lines, plain text.
  for (const text of ["!", "! ", "#123 fails", "## heading", "# a\nb", "hello"]) assert.equal(shortcutHint(text), "", text);
});

test("a patch's files: kind, path, the move's source and +/− lines", () => {
  const files = patchFiles([
    { path: "/w/docs/new.md", newText: "# New\n", kind: "add" },
    { path: "/w/src/app.py", oldText: "a\nb\n", newText: "a\nB\nc\n", kind: "update" },
    { path: "/w/old.txt", oldText: "x\ny\n", newText: "", kind: "delete" },
    { path: "/w/src/main.py", movedFrom: "/w/src/util.py", oldText: "u\n", newText: "u\n", kind: "move" },
  ]);
  assert.deepEqual(files, [
    { kind: "add", path: "/w/docs/new.md", added: 1, removed: 0 },
    { kind: "update", path: "/w/src/app.py", added: 2, removed: 1 },
    { kind: "delete", path: "/w/old.txt", added: 0, removed: 2 },
    { kind: "move", path: "/w/src/main.py", movedFrom: "/w/src/util.py", added: 0, removed: 0 },
  ]);
});

test("a plan's answer sends the plan option's id, not its kind; other requests their kind", () => {
  const plan: PermissionOption = { optionId: "plan_keep_planning", name: "Keep planning", kind: "reject_once" };
  assert.equal(answerId(plan), "plan_keep_planning");
  assert.equal(answerId({ optionId: "allow_once", name: "Allow once", kind: "allow_once" }), "allow_once");
  // An id this client does not know falls back to the kind, which every request takes.
  assert.equal(answerId({ optionId: "future_option", name: "?", kind: "reject_once" }), "reject_once");
});
