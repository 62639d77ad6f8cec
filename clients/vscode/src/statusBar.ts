// The status-bar item: model, permission mode, the Bash sandbox and how full the context is
// (warns at 80%, and when a sandbox mode the user chose could not start).

import * as vscode from "vscode";

import type { SandboxState } from "./wire";

const WARN_AT = 0.8;

export class StatusBar implements vscode.Disposable {
  private readonly item = vscode.window.createStatusBarItem("agentls.status", vscode.StatusBarAlignment.Right, 100);
  private model = "";
  private mode = "";
  private fill: number | null = null;
  private cost: number | undefined;
  private sandbox: SandboxState | undefined;

  constructor() {
    this.item.name = "agentls";
    this.item.command = "agentls.pickModelOrMode";
    this.render("starting…");
    this.item.show();
  }

  session(model: string, mode: string): void {
    this.model = model;
    this.mode = mode;
    this.render();
  }

  /** The session's Bash sandbox (undefined: an older daemon that did not say). */
  setSandbox(sandbox: SandboxState | undefined): void {
    this.sandbox = sandbox;
    this.render();
  }

  usage(contextTokens: number, contextWindow: number, costUsd?: number): void {
    this.fill = contextWindow > 0 ? contextTokens / contextWindow : null;
    this.cost = costUsd;
    this.render();
  }

  stopped(message: string): void {
    this.render("stopped");
    this.item.tooltip = message;
  }

  ready(): void {
    this.item.command = "agentls.pickModelOrMode";
    this.render();
  }

  /** Restricted Mode: nothing runs until the folder is trusted; a click opens the trust editor. */
  untrusted(): void {
    this.render("Restricted Mode");
    this.item.command = "workbench.trust.manage";
    this.item.tooltip = "agentls starts once you trust this folder: it reads and edits files and runs commands. Click to manage Workspace Trust.";
  }

  dispose(): void {
    this.item.dispose();
  }

  private render(state?: string): void {
    const parts = ["$(sparkle)", this.model || "agentls"];
    if (this.mode && this.mode !== "default") parts.push(`· ${this.mode}`);
    if (this.sandbox?.active) parts.push("$(shield)");
    if (this.fill !== null) parts.push(`· ${Math.round(this.fill * 100)}%`);
    if (state) parts.push(`· ${state}`);
    this.item.text = parts.join(" ");
    const broken = Boolean(this.sandbox?.problem);
    const warn = broken || (this.fill !== null && this.fill >= WARN_AT);
    this.item.backgroundColor = warn ? new vscode.ThemeColor("statusBarItem.warningBackground") : undefined;
    const cost = this.cost !== undefined ? `, $${this.cost.toFixed(4)} so far` : "";
    this.item.tooltip = `agentls: ${this.model || "no session yet"}, mode ${this.mode || "default"}${
      this.fill !== null ? `, context ${Math.round(this.fill * 100)}% full` : ""
    }${cost}${sandboxNote(this.sandbox)}. Click to change the model or the mode.`;
  }
}

function sandboxNote(sandbox: SandboxState | undefined): string {
  if (!sandbox) return "";
  const note = sandbox.note ? ` (${sandbox.note})` : "";
  if (sandbox.problem) return `; the ${sandbox.mode} sandbox could not start, commands are refused: ${sandbox.problem}`;
  if (!sandbox.active) return `; Bash runs without a sandbox (${sandbox.mode})${note}`;
  const network = sandbox.network ? "network allowed" : "no network";
  return `; Bash runs in a bubblewrap sandbox, ${sandbox.mode} (${network})${note}`;
}
