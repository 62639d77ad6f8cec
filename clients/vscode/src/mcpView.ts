// The "MCP Servers" view of the agentls sidebar, Claude Code's /mcp and Cline's MCP panel
// as a tree: the shown chat's servers with their status, transport, source and tools (and
// why one failed), kept live by mcp_status events; Restart, Enable/Disable and Show Log on
// each server.

import * as os from "node:os";
import * as vscode from "vscode";

import { McpServers, agentlsHome, lookOf, serverContext, serverRow, stderrLogPath, toolRow } from "./mcpServers";
import { type Requester, failureText } from "./requester";
import type { AgentEvent, McpServerEntry, McpToolEntry } from "./wire";

export const MCP_VIEW_ID = "agentls.mcpServers";

type Node = { kind: "server"; entry: McpServerEntry } | { kind: "tool"; tool: McpToolEntry } | { kind: "error"; text: string };

export class McpView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly model: McpServers;
  private sessionId: string | null = null;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: Array<{ dispose(): unknown }>;

  constructor(request: Requester) {
    this.model = new McpServers(request);
    this.view = vscode.window.createTreeView(MCP_VIEW_ID, { treeDataProvider: this });
    const act = (how: (sessionId: string, name: string) => Promise<unknown>) => (node?: Node) => this.act(node, how);
    this.disposables = [
      this.view,
      this.changed,
      vscode.commands.registerCommand("agentls.mcp.refresh", () => this.refresh()),
      vscode.commands.registerCommand("agentls.mcp.restart", act((s, n) => this.model.restart(s, n))),
      vscode.commands.registerCommand("agentls.mcp.disable", act((s, n) => this.model.setEnabled(s, n, false))),
      vscode.commands.registerCommand("agentls.mcp.enable", act((s, n) => this.model.setEnabled(s, n, true))),
      vscode.commands.registerCommand("agentls.mcp.showLog", (node?: Node) => this.showLog(node)),
    ];
    this.showEmpty();
  }

  /** The chat shows another session (or none): its servers. */
  setSession(sessionId: string | null): void {
    if (sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    void this.refresh();
  }

  /** mcp_status: the server's row changes at once; a server that became ready is listed
   * again for its tools. */
  onEvent(event: AgentEvent): void {
    if (event.type !== "mcp_status" || event.sessionId !== this.sessionId) return;
    if (this.model.observe(event)) void this.refresh();
    else this.changed.fire();
  }

  async refresh(): Promise<void> {
    try {
      await this.model.list(this.sessionId);
    } catch (error) {
      this.view.message = `The MCP servers could not be listed: ${failureText(error)}`;
      return;
    }
    this.showEmpty();
    this.changed.fire();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "error") {
      const item = new vscode.TreeItem(node.text);
      item.tooltip = node.text;
      item.iconPath = new vscode.ThemeIcon("warning", new vscode.ThemeColor("errorForeground"));
      return item;
    }
    if (node.kind === "tool") {
      const row = toolRow(node.tool);
      const item = new vscode.TreeItem(row.label);
      item.description = row.description;
      item.tooltip = row.tooltip;
      item.iconPath = new vscode.ThemeIcon(row.readOnly ? "eye" : "tools");
      return item;
    }
    const row = serverRow(node.entry);
    const expandable = node.entry.tools.length > 0 || !!node.entry.error;
    const item = new vscode.TreeItem(row.label, expandable ? vscode.TreeItemCollapsibleState.Collapsed : vscode.TreeItemCollapsibleState.None);
    item.id = `mcp:${node.entry.name}`;
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = `${serverContext(node.entry)}.${node.entry.transport}`;
    const look = lookOf(node.entry.status);
    item.iconPath = new vscode.ThemeIcon(look.icon, look.color ? new vscode.ThemeColor(look.color) : undefined);
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (!node) return this.model.entries.map((entry) => ({ kind: "server", entry }));
    if (node.kind !== "server") return [];
    const error: Node[] = node.entry.error ? [{ kind: "error", text: node.entry.error }] : [];
    return [...error, ...node.entry.tools.map((tool): Node => ({ kind: "tool", tool }))];
  }

  private async act(node: Node | undefined, how: (sessionId: string, name: string) => Promise<unknown>): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId || node?.kind !== "server") return;
    try {
      await how(sessionId, node.entry.name);
    } catch (error) {
      void vscode.window.showErrorMessage(`agentls: ${failureText(error)}`);
    }
    this.changed.fire();
  }

  /** A stdio server's stderr, kept by the daemon per session, in an editor. */
  private async showLog(node?: Node): Promise<void> {
    if (!this.sessionId || node?.kind !== "server") return;
    const home = agentlsHome(process.env, os.homedir());
    const uri = vscode.Uri.file(stderrLogPath(home, this.sessionId, node.entry.name));
    try {
      await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(uri), { preview: true });
    } catch {
      void vscode.window.showInformationMessage(`agentls: ${node.entry.name} has written nothing to stderr yet (${uri.fsPath}).`);
    }
  }

  private showEmpty(): void {
    this.view.message = !this.sessionId
      ? "Open a chat to see its session's MCP servers."
      : this.model.entries.length
        ? undefined
        : "No MCP server is configured (mcpServers in .mcp.json, .agentls/settings.json or your settings).";
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}
