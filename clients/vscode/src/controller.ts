// One chat: its session on the daemon, the view state, and what the user does in the panel.

import * as vscode from "vscode";

import type { FromWebview, ToWebview } from "./bridge";
import type { AgentClient } from "./client";
import { DiffContent } from "./diffs";
import { type Action, type ToolItem, type ViewState, initialState, reduce } from "./reducer";
import type { StatusBar } from "./statusBar";
import type { AgentEvent, PermissionRequest, SetPermissionModeParams } from "./wire";

export interface ChatView {
  readonly visible: boolean;
  post(message: ToWebview): void;
  reveal(): void;
}

export class ChatController {
  private sessionId: string | null = null;
  private model = "";
  private mode = "default";
  private creating: Promise<string> | undefined;
  private state: ViewState = initialState();

  constructor(
    private readonly client: AgentClient,
    private readonly view: ChatView,
    private readonly statusBar: StatusBar,
    private readonly diffs: DiffContent,
  ) {}

  /** Every agent/event from the daemon; other sessions' events are not this chat's. */
  onEvent(event: AgentEvent): void {
    if (event.sessionId !== this.sessionId) return;
    this.dispatch({ type: "event", event });
    if (event.type === "usage") this.statusBar.usage(event.contextTokens, event.contextWindow, this.state.usage?.costUsd);
    if (event.type === "permission_request" && !this.view.visible) void this.askInNotification(event);
  }

  /** The server restarted: the daemon's sessions are gone, so the next message starts anew. */
  onServerRestarted(): void {
    this.sessionId = null;
  }

  async handle(message: FromWebview): Promise<void> {
    try {
      await this.route(message);
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      this.view.post({ type: "status", level: "error", text });
      this.client.log.error(text);
    }
  }

  async newSession(): Promise<void> {
    this.sessionId = null;
    this.creating = undefined;
    this.state = initialState();
    await this.session();
  }

  async abort(): Promise<void> {
    if (this.sessionId) await this.client.request("agent/abort", { sessionId: this.sessionId });
  }

  async send(text: string): Promise<void> {
    const sessionId = await this.session();
    const result = await this.client.request("agent/submitMessage", { sessionId, text });
    this.dispatch({ type: "submitted", text, turnId: result.turnId, queued: result.queued });
  }

  private async route(message: FromWebview): Promise<void> {
    switch (message.type) {
      case "ready":
        // A new or reloaded webview starts from the chat as it stands.
        this.view.post({ type: "snapshot", state: this.state });
        return;
      case "send":
        return this.send(message.text);
      case "steer":
        return this.steer(message.turnId, message.text);
      case "abort":
        return this.abort();
      case "permission":
        await this.client.request("agent/respondPermission", {
          sessionId: await this.session(),
          requestId: message.requestId,
          optionId: message.optionId,
        });
        return;
      case "answer":
        await this.client.request("agent/respondAskUser", {
          sessionId: await this.session(),
          requestId: message.requestId,
          answer: message.answer,
        });
        return;
      case "newSession":
        return this.newSession();
      case "includeContext":
        return vscode.commands.executeCommand("agentls.includeContext", message.include);
      case "openLocation":
        return this.openLocation(message.path, message.line);
      case "openDiff":
        return this.openDiff(message.toolCallId);
      case "insertCode":
        await vscode.window.activeTextEditor?.insertSnippet(new vscode.SnippetString().appendText(message.code));
        return;
      case "copy":
        return vscode.env.clipboard.writeText(message.text);
    }
  }

  /** A queued message sent now: taken off the queue and given to the running turn. */
  /** Pick the session's model from the server's list (agent/listModels). */
  async pickModel(): Promise<void> {
    const sessionId = await this.session();
    const listed = await this.client.request("agent/listModels", { sessionId });
    const items = listed.models.map((m) => ({
      label: m.id,
      description: m.current ? "current" : m.displayName ?? "",
    }));
    const picked = await vscode.window.showQuickPick(items, { title: `Model (${listed.provider})` });
    if (!picked) return;
    await this.client.request("agent/setModel", { sessionId, model: picked.label });
    this.model = picked.label;
    this.statusBar.session(picked.label, this.mode);
  }

  async pickMode(): Promise<void> {
    const sessionId = await this.session();
    const pickedName = await vscode.window.showQuickPick(
      ["default", "acceptEdits", "plan", "bypassPermissions"],
      { title: "Permission mode" },
    );
    const modes: SetPermissionModeParams["permissionMode"][] = ["default", "acceptEdits", "plan", "bypassPermissions"];
    const picked = modes.find((m) => m === pickedName);
    if (!picked) return;
    await this.client.request("agent/setPermissionMode", { sessionId, permissionMode: picked });
    this.mode = picked;
    this.statusBar.session(this.model, picked);
  }

  private async steer(turnId: string, text: string): Promise<void> {
    const sessionId = await this.session();
    await this.client.request("agent/abort", { sessionId, turnId });
    await this.client.request("agent/submitMessage", { sessionId, text, delivery: "steer" });
  }

  private session(): Promise<string> {
    if (this.sessionId) return Promise.resolve(this.sessionId);
    this.creating ??= this.create();
    return this.creating;
  }

  private async create(): Promise<string> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const result = await this.client.request("agent/newSession", cwd ? { cwd } : {});
    this.sessionId = result.sessionId;
    this.creating = undefined;
    this.model = result.model;
    this.mode = result.permissionMode;
    this.statusBar.session(result.model, result.permissionMode);
    this.dispatch({ type: "session", sessionId: result.sessionId });
    return result.sessionId;
  }

  private dispatch(action: Action): void {
    this.state = reduce(this.state, action);
    this.view.post({ type: "action", action });
  }

  private async askInNotification(request: PermissionRequest): Promise<void> {
    const names = request.options.map((o) => o.name);
    const picked = await vscode.window.showInformationMessage(`agentls: ${request.title}`, ...names);
    const option = request.options.find((o) => o.name === picked);
    if (!option || !this.sessionId) return;
    const pending = this.state.items.some((i) => i.kind === "permission" && i.id === request.requestId && i.state === "pending");
    if (!pending) return;
    await this.client.request("agent/respondPermission", {
      sessionId: this.sessionId,
      requestId: request.requestId,
      optionId: option.kind,
    });
  }

  private async openLocation(path: string, line?: number): Promise<void> {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    const position = new vscode.Position(Math.max(0, line ?? 0), 0);
    await vscode.window.showTextDocument(document, {
      preview: true,
      preserveFocus: true,
      selection: new vscode.Range(position, position),
    });
  }

  private async openDiff(toolCallId: string): Promise<void> {
    const tool = this.state.items.find((i): i is ToolItem => i.kind === "tool" && i.id === toolCallId);
    if (!tool?.diff) return;
    const [before, after] = this.diffs.pair(toolCallId, tool.diff);
    const name = vscode.workspace.asRelativePath(tool.diff.path);
    await vscode.commands.executeCommand("vscode.diff", before, after, `${name} (agentls)`, { preserveFocus: true, preview: true });
  }
}
