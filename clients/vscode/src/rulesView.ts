// The "Permission Rules" view of the agentls sidebar, Claude Code's /permissions as a tree:
// the shown chat's rules under Allow, Ask and Deny, each with its scope; "Add Rule…" asks
// for the rule, its behavior and where to keep it; "Remove" takes one out. It follows the
// chat's session and lists again after a change or an "always" answer.

import * as vscode from "vscode";

import { BEHAVIORS, PermissionRules, RULE_SYNTAX, type RuleGroup, SCOPES, groupRules, ruleRow } from "./permissionRules";
import { type Requester, failureText } from "./requester";
import type { AgentEvent, PermissionRuleInfo } from "./wire";

export const RULES_VIEW_ID = "agentls.permissionRules";

type Node = { kind: "group"; group: RuleGroup } | { kind: "rule"; rule: PermissionRuleInfo };

export class RulesView implements vscode.TreeDataProvider<Node>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<void>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly model: PermissionRules;
  private sessionId: string | null = null;
  private readonly view: vscode.TreeView<Node>;
  private readonly disposables: Array<{ dispose(): unknown }>;

  constructor(request: Requester) {
    this.model = new PermissionRules(request);
    this.view = vscode.window.createTreeView(RULES_VIEW_ID, { treeDataProvider: this });
    this.disposables = [
      this.view,
      this.changed,
      vscode.commands.registerCommand("agentls.rules.add", () => this.add()),
      vscode.commands.registerCommand("agentls.rules.remove", (node?: Node) => this.remove(node)),
      vscode.commands.registerCommand("agentls.rules.refresh", () => this.refresh()),
    ];
    this.showEmpty();
  }

  /** The chat shows another session (or none): its rules. */
  setSession(sessionId: string | null): void {
    if (sessionId === this.sessionId) return;
    this.sessionId = sessionId;
    void this.refresh();
  }

  /** An "always" answer saved a rule: list again. */
  onEvent(event: AgentEvent): void {
    if (event.type === "permission_resolved" && event.sessionId === this.sessionId) void this.refresh();
  }

  async refresh(): Promise<void> {
    try {
      await this.model.list(this.sessionId);
    } catch (error) {
      this.view.message = `The rules could not be listed: ${failureText(error)}`;
      return;
    }
    this.showEmpty();
    this.changed.fire();
  }

  getTreeItem(node: Node): vscode.TreeItem {
    if (node.kind === "group") {
      const count = node.group.rules.length;
      const item = new vscode.TreeItem(node.group.label, count ? vscode.TreeItemCollapsibleState.Expanded : vscode.TreeItemCollapsibleState.None);
      // A group that gets its first rule is a new item to VS Code, so it opens expanded.
      item.id = `rules:${node.group.behavior}:${count ? "some" : "none"}`;
      item.description = count ? `${count}` : "none";
      item.tooltip = node.group.detail;
      item.contextValue = "permissionRuleGroup";
      item.iconPath = new vscode.ThemeIcon(GROUP_ICONS[node.group.behavior]);
      return item;
    }
    const row = ruleRow(node.rule);
    const item = new vscode.TreeItem(row.label);
    item.description = row.description;
    item.tooltip = row.tooltip;
    item.contextValue = "permissionRule";
    return item;
  }

  getChildren(node?: Node): Node[] {
    if (!this.sessionId) return [];
    if (!node) return groupRules(this.model.rules).map((group) => ({ kind: "group", group }));
    return node.kind === "group" ? node.group.rules.map((rule) => ({ kind: "rule", rule })) : [];
  }

  /** Ask for the rule, its behavior and its scope; the daemon's word on a malformed rule is shown. */
  private async add(): Promise<void> {
    const sessionId = this.sessionId;
    if (!sessionId) {
      void vscode.window.showInformationMessage("agentls: open a chat first; its session's rules are shown here.");
      return;
    }
    const rule = await vscode.window.showInputBox({ title: "agentls: Add a permission rule", prompt: RULE_SYNTAX, placeHolder: "Bash(npm test:*)", ignoreFocusOut: true });
    if (!rule?.trim()) return;
    const behavior = await vscode.window.showQuickPick(
      BEHAVIORS.map((b) => ({ label: b.label, detail: b.detail, behavior: b.behavior })),
      { title: `agentls: what ${rule.trim()} does` },
    );
    if (!behavior) return;
    const scope = await vscode.window.showQuickPick(
      SCOPES.map((s) => ({ label: s.label, description: s.scope, detail: s.detail, scope: s.scope })),
      { title: "agentls: where the rule is kept" },
    );
    if (!scope) return;
    await this.change(() => this.model.add(sessionId, { rule: rule.trim(), behavior: behavior.behavior, scope: scope.scope }));
  }

  private async remove(node?: Node): Promise<void> {
    const sessionId = this.sessionId;
    const rule = node?.kind === "rule" ? node.rule : undefined;
    if (!sessionId || !rule) return;
    await this.change(() => this.model.remove(sessionId, rule));
  }

  private async change(update: () => Promise<unknown>): Promise<void> {
    try {
      await update();
    } catch (error) {
      void vscode.window.showErrorMessage(`agentls: ${failureText(error)}`);
      return;
    }
    this.changed.fire();
  }

  private showEmpty(): void {
    this.view.message = this.sessionId ? undefined : "Open a chat to see its session's permission rules.";
  }

  dispose(): void {
    for (const d of this.disposables) d.dispose();
  }
}

const GROUP_ICONS: Record<PermissionRuleInfo["behavior"], string> = { allow: "pass", ask: "question", deny: "circle-slash" };
