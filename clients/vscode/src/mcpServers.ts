// The session's MCP servers (agent/listMcpServers) as a tree: each server with its status,
// transport, source and tools, kept live by mcp_status events; and what the view does to
// them (agent/restartMcpServer, agent/setMcpServerEnabled). No vscode here: mcpView.ts
// draws it, the daemon driver test runs it against a real daemon.

import type { Requester } from "./requester";
import type { McpServerEntry, McpStatusEvent, McpToolEntry } from "./wire";

export type McpStatus = McpServerEntry["status"];
type Look = { label: string; icon: string; color?: string };

/** Each status in words and as a codicon (ThemeIcon id, and its colour id when it has one). */
export const STATUS_LOOK: Readonly<Record<McpStatus, Look>> = {
  ready: { label: "ready", icon: "pass-filled", color: "testing.iconPassed" },
  starting: { label: "starting", icon: "loading~spin" },
  failed: { label: "failed", icon: "error", color: "errorForeground" },
  awaiting_approval: { label: "awaiting approval", icon: "shield", color: "editorWarning.foreground" },
  disabled: { label: "disabled", icon: "circle-slash", color: "disabledForeground" },
  stopped: { label: "stopped", icon: "debug-stop" },
};

/** A status's look; a status this client does not know yet is shown by its name. */
export function lookOf(status: string): Look {
  return (STATUS_LOOK as Partial<Record<string, Look>>)[status] ?? { label: status, icon: "circle-outline" };
}

/** A server's row: name, then status · transport · tools; source, version and error in the tooltip. */
export function serverRow(entry: McpServerEntry): { label: string; description: string; tooltip: string } {
  const count = entry.tools.length;
  const parts = [lookOf(entry.status).label, entry.transport, `${count} tool${count === 1 ? "" : "s"}`];
  // Restarts (and retries) show: a server that keeps failing is seen at a glance.
  if (entry.attempts > 1) parts.push(`${entry.attempts} starts`);
  const lines = [
    `${entry.name}${entry.serverVersion ? ` v${entry.serverVersion}` : ""} (${entry.transport})`,
    `from ${entry.source}`,
    `starts so far: ${entry.attempts}`,
    ...(entry.error ? [`error: ${entry.error}`] : []),
  ];
  return { label: entry.name, description: parts.join(" · "), tooltip: lines.join("\n") };
}

/** A tool's row: the name its server gives it (the model's `mcp__server__tool` in the
 * tooltip), marked read-only. */
export function toolRow(tool: McpToolEntry): { label: string; description: string; tooltip: string; readOnly: boolean } {
  return {
    label: tool.serverName || tool.name,
    description: tool.readOnly ? "read-only" : "",
    tooltip: `${tool.name}${tool.readOnly ? " (read-only: the server says it changes nothing; it still asks)" : ""}\n${tool.description}`,
    readOnly: tool.readOnly,
  };
}

/** The menu key of a server (package.json's `viewItem`): which actions its status allows. */
export function serverContext(entry: McpServerEntry): string {
  return entry.status === "disabled" ? "mcpServer.disabled" : "mcpServer.enabled";
}

/** The entries after an mcp_status event: the server's status, error and starts; a server
 * not listed yet gets an entry of its own until the next list fills in its tools. */
export function applyStatus(entries: readonly McpServerEntry[], event: McpStatusEvent): McpServerEntry[] {
  const known = entries.some((e) => e.name === event.server);
  const base: McpServerEntry[] = known
    ? [...entries]
    : [...entries, { name: event.server, status: event.status, transport: event.transport, source: "", attempts: 0, tools: [], resources: [], prompts: [] }];
  return base.map((entry) => {
    if (entry.name !== event.server) return entry;
    // A disabled server is stopped by it: it stays shown as disabled.
    const status = entry.status === "disabled" && event.status === "stopped" ? "disabled" : event.status;
    const rest: McpServerEntry = { ...entry };
    delete rest.error;
    return {
      ...rest,
      status,
      transport: event.transport,
      attempts: Math.max(entry.attempts, event.attempt ?? entry.attempts),
      ...(event.error ? { error: event.error } : {}),
    };
  });
}

/** Whether an event says more than the fold can show (the tools of a server that became ready). */
export function needsList(entries: readonly McpServerEntry[], event: McpStatusEvent): boolean {
  const entry = entries.find((e) => e.name === event.server);
  return !entry || (event.status === "ready" && event.toolCount !== entry.tools.length);
}

/** Where a stdio server's stderr is kept (PROTOCOL.md, MCP servers). */
export function stderrLogPath(home: string, sessionId: string, name: string): string {
  return `${home}/sessions/${sessionId}/mcp/${name}.stderr.log`;
}

/** The daemon's data folder as its config.py finds it, from the environment given. */
export function agentlsHome(env: Readonly<Record<string, string | undefined>>, userHome: string): string {
  if (env.AGENTLS_HOME) return env.AGENTLS_HOME;
  if (env.XDG_DATA_HOME) return `${env.XDG_DATA_HOME}/agentls`;
  return `${userHome}/.local/share/agentls`;
}

/** The servers of the session shown in the chat, listed, followed and acted on. */
export class McpServers {
  /** The servers as last listed and folded; empty when no session is open. */
  entries: McpServerEntry[] = [];

  constructor(private readonly request: Requester) {}

  async list(sessionId: string | null): Promise<McpServerEntry[]> {
    this.entries = sessionId ? (await this.request("agent/listMcpServers", { sessionId })).servers : [];
    return this.entries;
  }

  /** Fold an event in; true when the tree should list again to show what changed. */
  observe(event: McpStatusEvent): boolean {
    const listAgain = needsList(this.entries, event);
    this.entries = applyStatus(this.entries, event);
    return listAgain;
  }

  /** Stop and start it again (a server that gave up too); mcp_status events follow. */
  async restart(sessionId: string, name: string): Promise<McpServerEntry[]> {
    await this.request("agent/restartMcpServer", { sessionId, name });
    return this.list(sessionId);
  }

  /** Disable (stopped, its tools gone, remembered for the project) or enable it again. */
  async setEnabled(sessionId: string, name: string, enabled: boolean): Promise<McpServerEntry[]> {
    await this.request("agent/setMcpServerEnabled", { sessionId, name, enabled });
    return this.list(sessionId);
  }
}
