// The rules and MCP servers views in pure terms (grouping, rows, the fold of mcp_status),
// and the resumed history's turns that let Rewind… and Changes be offered on it.

import assert from "node:assert/strict";
import { test } from "node:test";

import { agentlsHome, applyStatus, lookOf, needsList, serverContext, serverRow, stderrLogPath, toolRow } from "../src/mcpServers";
import { groupRules, ruleRow } from "../src/permissionRules";
import { initialState, reduce } from "../src/reducer";
import { turnOfMessage } from "../src/rewind";
import type { DisplayMessage, McpServerEntry, McpStatusEvent, PermissionRuleInfo } from "../src/wire";

const RULES: PermissionRuleInfo[] = [
  { rule: "Bash(npm test:*)", behavior: "allow", scope: "local" },
  { rule: "Read(./.env)", behavior: "deny", scope: "project" },
  { rule: "Edit(src/**)", behavior: "allow", scope: "user" },
];

test("rules are grouped allow, ask, deny, in the daemon's order, empty groups kept", () => {
  const groups = groupRules(RULES);
  assert.deepEqual(
    groups.map((g) => [g.behavior, g.rules.map((r) => r.rule)]),
    [
      ["allow", ["Bash(npm test:*)", "Edit(src/**)"]],
      ["ask", []],
      ["deny", ["Read(./.env)"]],
    ],
  );
});

test("a rule's row shows its scope, and the file that keeps it in the tooltip", () => {
  const row = ruleRow(RULES[0] as PermissionRuleInfo);
  assert.equal(row.label, "Bash(npm test:*)");
  assert.equal(row.description, "local");
  assert.match(row.tooltip, /settings\.local\.json/);
});

const FX: McpServerEntry = {
  name: "fx",
  status: "ready",
  transport: "stdio",
  source: "agent/newSession",
  attempts: 1,
  serverVersion: "1.2.3",
  tools: [
    { name: "mcp__fx__echo", serverName: "echo", description: "Says the text back.", readOnly: true },
    { name: "mcp__fx__add", serverName: "add", description: "Adds two integers.", readOnly: false },
  ],
  resources: [],
  prompts: [],
};

function status(fields: Partial<McpStatusEvent>): McpStatusEvent {
  return { type: "mcp_status", sessionId: "s", seq: 1, server: "fx", status: "starting", transport: "stdio", ...fields };
}

test("a server's row: status, transport and tool count; its tools by their own names", () => {
  assert.equal(serverRow(FX).description, "ready · stdio · 2 tools");
  assert.equal(serverRow({ ...FX, attempts: 3 }).description, "ready · stdio · 2 tools · 3 starts");
  assert.match(serverRow({ ...FX, error: "boom" }).tooltip, /error: boom/);
  const [echo, add] = FX.tools.map(toolRow);
  assert.match(echo?.tooltip ?? "", /^mcp__fx__echo/);
  assert.deepEqual([echo?.label, echo?.description, add?.label, add?.description], ["echo", "read-only", "add", ""]);
  assert.equal(serverRow({ ...FX, status: "awaiting_approval" }).description.split(" · ")[0], "awaiting approval");
  assert.equal(lookOf("someday").label, "someday");
});

test("a disabled server offers Enable, any other Restart and Disable", () => {
  assert.equal(serverContext(FX), "mcpServer.enabled");
  assert.equal(serverContext({ ...FX, status: "disabled" }), "mcpServer.disabled");
});

test("mcp_status folds into the server's row: status, error and starts", () => {
  const failed = applyStatus([FX], status({ status: "failed", error: "gave up after 3 tries", attempt: 3 }));
  assert.deepEqual([failed[0]?.status, failed[0]?.error, failed[0]?.attempts], ["failed", "gave up after 3 tries", 3]);
  const again = applyStatus(failed, status({ status: "starting", attempt: 4 }));
  assert.equal(again[0]?.error, undefined);
  assert.equal(again[0]?.tools.length, 2);
  // Disabling stops the server: it stays shown as disabled.
  assert.equal(applyStatus([{ ...FX, status: "disabled" }], status({ status: "stopped" }))[0]?.status, "disabled");
});

test("an unknown server or a ready one with other tools asks for the list again", () => {
  assert.equal(needsList([FX], status({ server: "new" })), true);
  assert.equal(applyStatus([FX], status({ server: "new" })).map((e) => e.name).join(), "fx,new");
  assert.equal(needsList([FX], status({ status: "ready", toolCount: 2 })), false);
  assert.equal(needsList([FX], status({ status: "ready", toolCount: 3 })), true);
  assert.equal(needsList([FX], status({ status: "failed" })), false);
});

test("the stderr log is where the daemon keeps it, under its data folder", () => {
  assert.equal(stderrLogPath("/h", "sess_1", "fx"), "/h/sessions/sess_1/mcp/fx.stderr.log");
  assert.equal(agentlsHome({ AGENTLS_HOME: "/a" }, "/home/u"), "/a");
  assert.equal(agentlsHome({ XDG_DATA_HOME: "/x" }, "/home/u"), "/x/agentls");
  assert.equal(agentlsHome({}, "/home/u"), "/home/u/.local/share/agentls");
});

test("a resumed user message that began a turn keeps it, so Rewind… and Changes are offered", () => {
  const messages: DisplayMessage[] = [
    { messageId: "u1", role: "user", turnId: "t1", content: [{ type: "text", text: "change the port" }] },
    { messageId: "a1", role: "assistant", content: [{ type: "text", text: "done" }] },
    { messageId: "u2", role: "user", content: [{ type: "text", text: "an older message without a turn" }] },
  ];
  const state = reduce(initialState(), { type: "session", sessionId: "s", messages });
  assert.equal(turnOfMessage(state.items, "u1"), "t1");
  assert.equal(turnOfMessage(state.items, "u2"), undefined);
  const older = reduce(state, { type: "older", sessionId: "s", messages: [{ messageId: "u0", role: "user", turnId: "t0", content: [{ type: "text", text: "first" }] }], cursor: null });
  assert.equal(turnOfMessage(older.items, "u0"), "t0");
});
