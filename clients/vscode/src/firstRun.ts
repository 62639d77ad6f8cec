// The panel before the first message: Restricted Mode (trust the folder first), the
// first-run setup when no model provider is configured (provider, key, model), and the
// welcoming empty state (what the agent can do, model and mode, recent sessions).

import * as vscode from "vscode";

import { type AgentClient, SECRET_KEYS } from "./client";
import type { ChatController, ChatView } from "./controller";
import { saveUserSetting } from "./settings";
import type { StatusBar } from "./statusBar";
import type { RecentSession, SetupChoice, Welcome, WelcomeFromWebview } from "./welcome";

const RECENT_SESSIONS = 5;
const OLLAMA_URL = "http://localhost:11434/v1";

type SecretKey = (typeof SECRET_KEYS)[number];

/** Ask for an API key (which one, unless given) and keep it in VS Code's secret storage.
 * Returns the key's name, or undefined when the user cancelled. */
export async function askApiKey(secrets: vscode.SecretStorage, name?: SecretKey, optional = false): Promise<SecretKey | undefined> {
  const picked = name ?? (await vscode.window.showQuickPick([...SECRET_KEYS], { title: "Which API key?" }));
  const which = SECRET_KEYS.find((key) => key === picked);
  if (!which) return undefined;
  const value = await vscode.window.showInputBox({
    title: which,
    prompt: optional
      ? "The server's API key, if it needs one (leave empty for Ollama). Kept in VS Code's secret storage."
      : "Kept in VS Code's secret storage, never in settings or logs.",
    password: true,
    ignoreFocusOut: true,
  });
  if (value === undefined) return undefined;
  await (value ? secrets.store(which, value) : secrets.delete(which));
  return which;
}

export interface FirstRunDeps {
  readonly client: AgentClient;
  readonly view: ChatView;
  readonly controller: ChatController;
  readonly statusBar: StatusBar;
  readonly secrets: vscode.SecretStorage;
  /** (Re)start the daemon, reporting a failure to the user. */
  restart(): Promise<void>;
}

export class FirstRun {
  /** True while the setup writes settings: the extension then restarts the daemon itself. */
  settingUp = false;
  /** Why the daemon did not start, until it runs. */
  private startError: string | undefined;

  constructor(private readonly deps: FirstRunDeps) {}

  /** What the panel should show before a first message, as of now. */
  async welcome(): Promise<Welcome> {
    if (!vscode.workspace.isTrusted) return { state: "untrusted" };
    const { client } = this.deps;
    if (!client.running) return this.startError ? { state: "stopped", message: this.startError } : { state: "starting" };
    this.startError = undefined;
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const status = await client.request("agent/providerStatus", cwd ? { cwd } : {});
    if (!status.configured) return { state: "setup" };
    this.deps.statusBar.session(status.model, status.permissionMode);
    const listed = await client.request("agent/listSessions", { ...(cwd ? { cwd } : {}), limit: 4 * RECENT_SESSIONS });
    // A session without a turn (a chat opened and left empty) has nothing to resume.
    const resumable = listed.sessions.filter((s) => s.turns > 0).slice(0, RECENT_SESSIONS);
    const recent: RecentSession[] = resumable.map((s) => ({
      sessionId: s.sessionId,
      title: s.title || "(no message yet)",
      turns: s.turns,
      updatedAt: s.updatedAt,
    }));
    return { state: "ready", provider: status.provider ?? "", model: status.model, mode: status.permissionMode, recent };
  }

  /** Tell the panel what to show; a daemon that cannot answer yet shows "starting". */
  async refresh(): Promise<void> {
    let welcome: Welcome;
    try {
      welcome = await this.welcome();
    } catch (error) {
      this.deps.client.log.warn(`welcome: ${error instanceof Error ? error.message : String(error)}`);
      welcome = { state: "starting" };
    }
    this.deps.view.post({ type: "welcome", welcome });
    // Set up and running: an earlier "no provider" or "stopped" line no longer holds.
    if (welcome.state === "ready") this.deps.view.post({ type: "status", level: "info", text: "" });
  }

  /** The daemon did not start: the panel says why and offers the log and a restart. */
  startFailed(message: string): void {
    this.startError = message;
    void this.refresh();
  }

  async handle(message: WelcomeFromWebview): Promise<void> {
    switch (message.type) {
      case "trustFolder":
        // VS Code's own trust editor: the user trusts the folder there, never silently.
        await vscode.commands.executeCommand("workbench.trust.manage");
        return;
      case "setUpProvider":
        return this.setUp(message.choice);
      case "resumeSession":
        return this.deps.controller.resume(message.sessionId);
      case "pickModelOrMode":
        await vscode.commands.executeCommand("agentls.pickModelOrMode");
        return;
      case "showLog":
        this.deps.client.log.show();
        return;
      case "restartServer":
        await vscode.commands.executeCommand("agentls.restartServer");
        return;
      case "openSettings":
        await vscode.commands.executeCommand("workbench.action.openSettings", "agentls.");
        return;
    }
  }

  /** Provider, key and model, then a daemon that uses them; the typed message stays. */
  async setUp(choice: SetupChoice): Promise<void> {
    let baseUrl = "";
    if (choice === "compatible") {
      const url = await vscode.window.showInputBox({
        title: "OpenAI-compatible server: its base URL",
        prompt: "Ollama, vLLM, llama.cpp, LiteLLM… The URL ends in /v1.",
        value: OLLAMA_URL,
        ignoreFocusOut: true,
        validateInput: (text) => (/^https?:\/\/\S+$/.test(text.trim()) ? undefined : "A URL starting with http:// or https://"),
      });
      if (!url) return;
      baseUrl = url.trim();
    }
    const keyName = choice === "anthropic" ? "ANTHROPIC_API_KEY" : "OPENAI_API_KEY";
    const stored = await askApiKey(this.deps.secrets, keyName, choice === "compatible");
    if (!stored) return;
    this.settingUp = true;
    try {
      await saveUserSetting("provider", choice === "anthropic" ? "anthropic" : "openai");
      await saveUserSetting("baseUrl", baseUrl || undefined);
      await saveUserSetting("model", undefined);
      this.deps.controller.onServerRestarted();
      await this.deps.restart();
      const model = await this.pickModel();
      if (model) {
        await saveUserSetting("model", model);
        this.deps.controller.onServerRestarted();
        await this.deps.restart();
      }
    } finally {
      this.settingUp = false;
    }
    await this.refresh();
  }

  /** The model, from the server's own list when it has one, else typed. */
  private async pickModel(): Promise<string | undefined> {
    try {
      const listed = await this.deps.client.request("agent/listModels", {});
      const items = listed.models.map((m) => ({ label: m.id, description: m.current ? "default" : m.displayName ?? "" }));
      const picked = await vscode.window.showQuickPick(items, { title: `Model (${listed.provider})`, ignoreFocusOut: true });
      return picked?.label;
    } catch (error) {
      const reason = error instanceof Error ? error.message : String(error);
      this.deps.client.log.info(`first run: no model list (${reason}); asking for a name`);
      return vscode.window.showInputBox({ title: "Model name", prompt: reason, ignoreFocusOut: true });
    }
  }
}
