// The session's permission rules (agent/listPermissionRules) as a tree: one group per
// behavior, each rule with the scope that keeps it; and the changes the view makes through
// agent/updatePermissionRules. No vscode here: rulesView.ts draws it, the daemon driver
// test runs it against a real daemon.

import type { Requester } from "./requester";
import type { PermissionRuleInfo } from "./wire";

export type Behavior = PermissionRuleInfo["behavior"];
export type Scope = PermissionRuleInfo["scope"];

/** Groups in the order Claude Code's /permissions shows them. */
export const BEHAVIORS: ReadonlyArray<{ behavior: Behavior; label: string; detail: string }> = [
  { behavior: "allow", label: "Allow", detail: "Runs without asking" },
  { behavior: "ask", label: "Ask", detail: "Always asks first, even where the mode or an allow rule would not" },
  { behavior: "deny", label: "Deny", detail: "Refused, in every mode (bypassPermissions too)" },
];

/** Where a rule is kept, the first (the default of an "always" answer) offered first. */
export const SCOPES: ReadonlyArray<{ scope: Scope; label: string; detail: string }> = [
  { scope: "local", label: "This project, just me", detail: ".agentls/settings.local.json (git-ignored)" },
  { scope: "project", label: "This project, shared", detail: ".agentls/settings.json (commit it for the team)" },
  { scope: "user", label: "All my projects", detail: "$AGENTLS_HOME/settings.json" },
  { scope: "session", label: "This session only", detail: "forgotten when the session ends" },
];

/** What the rule box hints: the syntax, with examples the daemon reads. */
export const RULE_SYNTAX = "Tool or Tool(specifier): Bash(npm test:*), Edit(src/**), Read(./.env), WebFetch(domain:example.com), mcp__server";

export interface RuleGroup {
  behavior: Behavior;
  label: string;
  detail: string;
  rules: PermissionRuleInfo[];
}

/** The rules by behavior, each group in the daemon's order; every group, empty ones too. */
export function groupRules(rules: readonly PermissionRuleInfo[]): RuleGroup[] {
  return BEHAVIORS.map((b) => ({ ...b, rules: rules.filter((r) => r.behavior === b.behavior) }));
}

/** A rule's row: its text, and its scope in words (the file in the tooltip). */
export function ruleRow(rule: PermissionRuleInfo): { label: string; description: string; tooltip: string } {
  const scope = SCOPES.find((s) => s.scope === rule.scope);
  return {
    label: rule.rule,
    description: rule.scope,
    tooltip: `${rule.behavior}: ${rule.rule}\n${scope ? `${scope.label} — ${scope.detail}` : rule.scope}`,
  };
}

/** The rules of the session shown in the chat, listed and changed through the daemon. */
export class PermissionRules {
  /** The last list the daemon answered; empty when no session is open. */
  rules: PermissionRuleInfo[] = [];

  constructor(private readonly request: Requester) {}

  /** The rules in force for `sessionId` (none without a session). */
  async list(sessionId: string | null): Promise<PermissionRuleInfo[]> {
    this.rules = sessionId ? (await this.request("agent/listPermissionRules", { sessionId })).rules : [];
    return this.rules;
  }

  /** Add a rule; a malformed one rejects with the daemon's -32602. */
  async add(sessionId: string, rule: PermissionRuleInfo): Promise<PermissionRuleInfo[]> {
    this.rules = (await this.request("agent/updatePermissionRules", { sessionId, add: [rule] })).rules;
    return this.rules;
  }

  /** Take a rule out of the scope that keeps it. */
  async remove(sessionId: string, rule: PermissionRuleInfo): Promise<PermissionRuleInfo[]> {
    this.rules = (await this.request("agent/updatePermissionRules", { sessionId, remove: [rule] })).rules;
    return this.rules;
  }
}
