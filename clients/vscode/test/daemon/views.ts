// The Permission Rules and MCP Servers views' logic (src/permissionRules.ts,
// src/mcpServers.ts) against a real daemon over stdio: a rule added in the local scope is
// listed and saved in .agentls/settings.local.json, a malformed one is refused with the
// daemon's message, the rule removed; the fixture MCP server (tests/mcp_fixture_server.py)
// is followed through its mcp_status events, restarted, disabled (remembered in the
// project's settings) and enabled again; and a resumed session's user message carries the
// turn it began (so the panel offers Rewind… and Changes on it).
// tests/test_client_vscode_views.py runs this and reads its report, one JSON object per
// line: `{"step": ..., ...}`.
//
//   node dist-test/views-daemon.js PYTHON WORKSPACE

import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";

import { McpServers, agentlsHome, serverRow, stderrLogPath, toolRow } from "../../src/mcpServers";
import { PermissionRules, groupRules } from "../../src/permissionRules";
import { initialState, reduce, sessionOpened } from "../../src/reducer";
import { type Requester, failureText } from "../../src/requester";
import { turnOfMessage } from "../../src/rewind";
import type { AgentEvent, McpServerEntry, McpStatusEvent, NewSessionResult, ResumeSessionResult } from "../../src/wire";

const [python = "python3", workspace = process.cwd()] = process.argv.slice(2);
const FIXTURE = path.resolve(__dirname, "..", "..", "..", "tests", "mcp_fixture_server.py");
const report = (step: string, fields: Record<string, unknown> = {}) => console.log(JSON.stringify({ step, ...fields }));

const daemon = spawn(python, ["-m", "agentls", "--stdio", "--no-daemon"], { cwd: workspace, stdio: ["pipe", "pipe", "inherit"] });
const connection = createMessageConnection(new StreamMessageReader(daemon.stdout), new StreamMessageWriter(daemon.stdin));
const request: Requester = (method, params) => connection.sendRequest(method, params);
const servers = new McpServers(request);
const statuses: McpStatusEvent[] = [];
const waiters: Array<{ test: (event: AgentEvent) => boolean; resolve: () => void }> = [];
connection.onNotification("agent/event", (event: AgentEvent) => {
  if (event.type === "mcp_status") {
    statuses.push(event);
    servers.observe(event);
  }
  for (const waiter of waiters.filter((w) => w.test(event))) waiter.resolve();
});
connection.listen();
const until = (test: (event: AgentEvent) => boolean) => new Promise<void>((resolve) => waiters.push({ test, resolve }));
const readyAgain = (attempt: number) => until((e) => e.type === "mcp_status" && e.status === "ready" && (e.attempt ?? 1) >= attempt);
const localSettings = () => {
  const file = path.join(workspace, ".agentls", "settings.local.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, unknown>) : null;
};
const rows = (entries: McpServerEntry[]) => entries.map((e) => ({ ...serverRow(e), status: e.status, tools: e.tools.map((t) => toolRow(t).label) }));

async function rules(sessionId: string): Promise<void> {
  const model = new PermissionRules(request);
  const before = await model.list(sessionId);
  await model.add(sessionId, { rule: "Bash(npm test:*)", behavior: "allow", scope: "local" });
  report("ruleAdded", { before: before.length, groups: groupRules(model.rules).map((g) => [g.behavior, g.rules.map((r) => `${r.rule} (${r.scope})`)]), settings: localSettings() });
  let refused = "";
  try {
    await model.add(sessionId, { rule: "Bash(npm test", behavior: "deny", scope: "local" });
  } catch (error) {
    refused = failureText(error);
  }
  report("ruleRefused", { message: refused, rules: model.rules.map((r) => r.rule) });
  await model.remove(sessionId, { rule: "Bash(npm test:*)", behavior: "allow", scope: "local" });
  report("ruleRemoved", { rules: model.rules.map((r) => r.rule), listed: (await model.list(sessionId)).map((r) => r.rule), settings: localSettings() });
}

async function mcp(sessionId: string): Promise<void> {
  await servers.list(sessionId);
  if (servers.entries[0]?.status !== "ready") await readyAgain(1);
  report("mcpListed", { servers: rows(await servers.list(sessionId)) });
  const restarted = readyAgain(2);
  await servers.restart(sessionId, "fx");
  await restarted;
  report("mcpRestarted", { servers: rows(servers.entries), statuses: statuses.map((s) => `${s.status}${s.attempt ? `#${s.attempt}` : ""}`) });
  await servers.setEnabled(sessionId, "fx", false);
  report("mcpDisabled", { servers: rows(servers.entries), settings: localSettings() });
  const enabled = until((e) => e.type === "mcp_status" && e.status === "ready" && statuses.filter((s) => s.status === "ready").length >= 3);
  await servers.setEnabled(sessionId, "fx", true);
  await enabled;
  report("mcpEnabled", { servers: rows(await servers.list(sessionId)), settings: localSettings() });
  let unknown = "";
  try {
    await servers.restart(sessionId, "nosuch");
  } catch (error) {
    unknown = failureText(error);
  }
  const log = stderrLogPath(agentlsHome(process.env, ""), sessionId, "fx");
  report("mcpUnknown", { message: unknown, logExists: existsSync(log) });
}

/** A turn, then the session resumed: its user message carries the turn it began. */
async function resumed(sessionId: string): Promise<void> {
  const ended = until((e) => e.type === "turn_completed" && e.sessionId === sessionId);
  const { turnId } = await connection.sendRequest<{ turnId: string }>("agent/submitMessage", { sessionId, text: "hello" });
  await ended;
  const result = await connection.sendRequest<ResumeSessionResult>("agent/resumeSession", { sessionId });
  const state = reduce(initialState(), sessionOpened(result));
  const user = state.items.find((i) => i.kind === "user");
  report("resumed", { turnId, shownTurn: user ? (turnOfMessage(state.items, user.id) ?? null) : null });
}

async function main(): Promise<void> {
  await connection.sendRequest("initialize", { processId: process.pid, rootUri: null, capabilities: {}, initializationOptions: { provider: "scripted" } });
  await connection.sendNotification("initialized", {});
  const opened = await connection.sendRequest<NewSessionResult>("agent/newSession", {
    cwd: workspace,
    provider: "scripted",
    script: [{ text: "Hello." }],
    mcpServers: [{ name: "fx", command: python, args: [FIXTURE] }],
  });
  const only = process.env.VIEWS_DRIVER_PART;
  if (!only || only === "rules") await rules(opened.sessionId);
  if (!only || only === "resumed") await resumed(opened.sessionId);
  if (!only || only === "mcp") await mcp(opened.sessionId);
  await connection.sendRequest("shutdown");
  await connection.sendNotification("exit");
}

daemon.on("exit", () => process.exit(0));
void main().catch((error: unknown) => {
  report("error", { message: failureText(error) });
  process.exit(1);
});
