// The language client of the daemon: one it spawns (stdio), or a running `agentls --tcp`
// it joins with the token from its discovery file; restart after a crash, edits saved.

import * as vscode from "vscode";
import {
  type ApplyWorkspaceEditParams,
  type ApplyWorkspaceEditRequest,
  type ApplyWorkspaceEditResult,
  CloseAction,
  ErrorAction,
  LanguageClient,
  type LanguageClientOptions,
  type ServerOptions,
  type StaticFeature,
  State,
  TransportKind,
} from "vscode-languageclient/node";

import { describe, initializeFailure, openSocket } from "./daemonSocket";
import { type LspDiagnostic, languageOfFile, mayReportDiagnostics, toLspDiagnostics } from "./diagnostics";
import { type DaemonAddress, DiscoveryError, findDaemon, localContext } from "./discovery";
import { answerNavigation } from "./editorNavigation";
import { EDITOR_REQUESTS } from "./navigation";
import { RedactingLog } from "./redactingLog";
import { serverCommand } from "./server";
import { initializationOptions, readSettings } from "./settings";
import type { AgentEvent, Params, RequestMethod, Result } from "./wire";

/** Tells the daemon which of its requests this editor answers (PROTOCOL.md, server → client). */
const editorDiagnosticsFeature: StaticFeature = {
  fillClientCapabilities(capabilities) {
    const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
    capabilities.experimental = { ...experimental, agentls: { ...EDITOR_REQUESTS } };
  },
  initialize() {},
  getState: () => ({ kind: "static" }),
  clear() {},
};

/**
 * vscode-languageclient whose failed start() is reported once, by the caller of start()
 * (startServer's toast says why and offers the log). The library also raises a forced
 * "couldn't create connection to server" toast for any failed start; while we await
 * start() its errors go to the log only. Its own restarts after a crash keep theirs.
 */
class StartReportedClient extends LanguageClient {
  reportsOwnStart = false;

  override error(message: string, data?: unknown, showNotification: boolean | "force" = true): void {
    super.error(message, data, this.reportsOwnStart ? false : showNotification);
  }
}

export const SECRET_KEYS = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AZURE_OPENAI_API_KEY"] as const;
const MAX_RESTARTS = 4;

export interface AgentClientEvents {
  onEvent(event: AgentEvent): void;
  onStateChange(running: boolean, message?: string): void;
}

/** The daemon through vscode-languageclient, with the agent/* methods typed. */
export class AgentClient implements vscode.Disposable {
  private client: StartReportedClient | undefined;
  private restarts = 0;
  /** The running daemon joined over TCP (undefined when the daemon is spawned). */
  private joined: DaemonAddress | undefined;
  /** Whether this start reached Running: a close before it is a refusal, not a crash. */
  private initialized = false;

  constructor(
    private readonly context: vscode.ExtensionContext,
    readonly log: vscode.LogOutputChannel,
    private readonly events: AgentClientEvents,
  ) {}

  get running(): boolean {
    return this.client?.state === State.Running;
  }

  async start(): Promise<void> {
    const connect = readSettings().connect;
    this.joined = undefined;
    this.initialized = false;
    const serverOptions = connect === "spawn" ? await this.spawnOptions() : this.joinOptions(connect);
    const clientOptions: LanguageClientOptions = {
      // Every file, any scheme a workspace can have, so open buffers reach the daemon.
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }, { scheme: "vscode-remote" }],
      outputChannel: this.log,
      // The message trace never shows the token (initialize carries it).
      traceOutputChannel: new RedactingLog(this.log, () => this.joined?.token),
      // Read when initialize is sent: a restart may have found another daemon.
      initializationOptions: () => {
        const options = initializationOptions(readSettings());
        return this.joined ? { ...options, authToken: this.joined.token } : options;
      },
      // A refused token is reported once, by start(), not by the client's own notification.
      initializationFailedHandler: () => false,
      middleware: { workspace: { handleApplyEdit: (params, next) => this.applyEdit(params, next) } },
      errorHandler: {
        error: () => ({ action: ErrorAction.Continue }),
        closed: () => this.onClosed(),
      },
    };
    this.client = new StartReportedClient("agentls", "agentls", serverOptions, clientOptions);
    this.client.registerFeature(editorDiagnosticsFeature);
    this.client.onDidChangeState((change) => {
      if (change.newState !== State.Running) return;
      this.initialized = true;
      this.events.onStateChange(true);
    });
    this.client.reportsOwnStart = true;
    try {
      await this.client.start();
    } catch (error) {
      throw this.startFailure(error);
    } finally {
      this.client.reportsOwnStart = false;
    }
    this.client.onNotification("agent/event", (event: AgentEvent) => this.events.onEvent(event));
    // The daemon asks for a file's diagnostics (its Diagnostics tool, and new errors after an edit).
    this.client.onRequest("agent/diagnostics", (params: { uri: string }) => this.diagnostics(params.uri));
    answerNavigation(this.client);
  }

  /** A file's diagnostics, and whether anything that reports them looks at it: a language
   * server or linter of its language (the open document's, or else the file name's). */
  private diagnostics(uri: string): { diagnostics: LspDiagnostic[]; watched: boolean } {
    const target = vscode.Uri.parse(uri);
    const found = vscode.languages.getDiagnostics(target);
    const open = vscode.workspace.textDocuments.find((d) => d.uri.toString() === target.toString());
    const extensions = vscode.extensions.all;
    const language = open?.languageId ?? languageOfFile(target.path.split("/").pop() ?? "", extensions);
    const watched = found.length > 0 || mayReportDiagnostics(language, extensions, this.context.extension.id);
    return { diagnostics: toLspDiagnostics(found), watched };
  }

  /** Not found, refused or silent: already said. Closed during initialize: the token. */
  private startFailure(error: unknown): unknown {
    if (error instanceof DiscoveryError || !this.joined || this.initialized) return error;
    return new DiscoveryError(initializeFailure(this.joined, error));
  }

  /** Run the daemon: `agentls.serverPath` or the bundled one, over stdio. */
  private async spawnOptions(): Promise<ServerOptions> {
    const server = await serverCommand(this.context.extensionPath);
    const secrets = await this.secretEnv();
    this.log.info(`starting the daemon: ${[server.command, ...server.args].join(" ")}`);
    return {
      command: server.command,
      args: server.args,
      transport: TransportKind.stdio,
      options: { env: { ...process.env, ...server.env, ...secrets } },
    };
  }

  /** Join a running daemon; found again on each (re)start, as its file changes with it. */
  private joinOptions(connect: "discover" | { file: string }): ServerOptions {
    // Found now, so a missing or untrusted file fails start() with its own message.
    this.joined = findDaemon(connect, localContext());
    return async () => {
      this.joined ??= findDaemon(connect, localContext());
      this.initialized = false;
      this.log.info(`joining ${describe(this.joined)}`);
      const socket = await openSocket(this.joined);
      // detached: stopping the client leaves the shared daemon running.
      return { reader: socket, writer: socket, detached: true };
    };
  }

  async restart(): Promise<void> {
    await this.stop();
    this.restarts = 0;
    await this.start();
  }

  async stop(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    if (client?.isRunning()) await client.stop(2000);
  }

  async request<M extends RequestMethod>(method: M, params: Params<M>): Promise<Result<M>> {
    if (!this.client) throw new Error("The agentls server is not running.");
    return this.client.sendRequest<Result<M>>(method, params);
  }

  async notify(method: "agent/didChangeEditorState", params: unknown): Promise<void> {
    if (this.running) await this.client?.sendNotification(method, params);
  }

  dispose(): void {
    void this.stop();
  }

  private onClosed() {
    if (this.joined && !this.initialized) {
      // Closed during initialize: the daemon refused the token; trying again cannot help.
      return { action: CloseAction.DoNotRestart, message: initializeFailure(this.joined, "closed"), handled: true };
    }
    // A restart looks for the daemon again (it may have been restarted itself).
    if (this.joined) this.joined = undefined;
    this.restarts += 1;
    const again = this.restarts <= MAX_RESTARTS;
    const message = again
      ? `The agentls server stopped; restarting it (${this.restarts} of ${MAX_RESTARTS}).`
      : "The agentls server stopped too often and was not restarted. See its log, then run 'agentls: Restart Server'.";
    this.events.onStateChange(false, message);
    return { action: again ? CloseAction.Restart : CloseAction.DoNotRestart, message, handled: true };
  }

  /** Apply, then save what was touched, so disk and buffer agree and nothing stays dirty. */
  private async applyEdit(
    params: ApplyWorkspaceEditParams,
    next: ApplyWorkspaceEditRequest.HandlerSignature,
  ): Promise<ApplyWorkspaceEditResult> {
    const result = await next(params, new vscode.CancellationTokenSource().token);
    if (!("applied" in result)) return { applied: false, failureReason: result.message };
    if (!result.applied || !readSettings().saveEdits) return result;
    for (const uri of touchedUris(params)) {
      const document = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri);
      if (document?.isDirty && !(await document.save())) {
        return { applied: false, failureReason: `Could not save ${document.uri.fsPath} after the edit.` };
      }
    }
    return result;
  }

  private async secretEnv(): Promise<Record<string, string>> {
    const env: Record<string, string> = {};
    for (const name of SECRET_KEYS) {
      const value = await this.context.secrets.get(name);
      if (value) env[name] = value;
    }
    return env;
  }
}

function touchedUris(params: ApplyWorkspaceEditParams): string[] {
  const uris = new Set<string>();
  for (const change of params.edit.documentChanges ?? []) {
    if ("textDocument" in change) uris.add(change.textDocument.uri);
    else if ("uri" in change) uris.add(change.uri);
  }
  for (const uri of Object.keys(params.edit.changes ?? {})) uris.add(uri);
  return [...uris].map((u) => vscode.Uri.parse(u).toString());
}
