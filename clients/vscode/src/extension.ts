// Activation: the daemon's client, the chat panel, editor state, status bar and commands.
// Nothing here waits for the model provider: the panel works as soon as the window opens.

import * as vscode from "vscode";

import { AgentClient } from "./client";
import { ChatController } from "./controller";
import { DIFF_SCHEME, DiffContent } from "./diffs";
import { DiscoveryError } from "./discovery";
import { EditorStateTracker } from "./editorState";
import { FirstRun, askApiKey } from "./firstRun";
import { McpView } from "./mcpView";
import { InlineEdits } from "./inlineEdit";
import { ChatPanel, VIEW_ID } from "./panel";
import { RunningNotes } from "./reattach";
import { returnToRunningTurn } from "./returning";
import { Reviews } from "./review";
import { RulesView } from "./rulesView";
import { ServerNotFound } from "./server";
import { readSettings, settingsChange } from "./settings";
import { StatusBar } from "./statusBar";
import { isWelcomeMessage } from "./welcome";

export function activate(context: vscode.ExtensionContext): void {
  const log = vscode.window.createOutputChannel("agentls", { log: true });
  log.info(`activated at ${Date.now()}`);
  const statusBar = new StatusBar();
  const panel = new ChatPanel(context.extensionUri, log);
  const diffs = new DiffContent();
  const reviews = new Reviews(diffs);
  // eslint-disable-next-line prefer-const
  let controller: ChatController;
  // eslint-disable-next-line prefer-const
  let firstRun: FirstRun;
  // The running turn's session and seq, kept across a reload of the window.
  const notes = new RunningNotes(context.workspaceState);
  // eslint-disable-next-line prefer-const
  let views: { rules: RulesView; mcp: McpView };
  const client = new AgentClient(context, log, {
    onEvent: (event) => {
      void notes.observe(event);
      controller.onEvent(event);
      views.rules.onEvent(event);
      views.mcp.onEvent(event);
      inlineEdits.onEvent(event);
    },
    onStateChange: (running, message) => {
      if (running) {
        statusBar.ready();
        void editorState.flush();
        void firstRun.refresh();
        return;
      }
      controller.onServerRestarted();
      statusBar.stopped(message ?? "stopped");
      if (message) panel.post({ type: "status", level: "error", text: message });
    },
  });
  controller = new ChatController(client, panel, statusBar, diffs, reviews);
  views = { rules: new RulesView((method, params) => client.request(method, params)), mcp: new McpView((method, params) => client.request(method, params)) };
  controller.onSessionChanged = (sessionId) => {
    views.rules.setSession(sessionId);
    views.mcp.setSession(sessionId);
  };
  const inlineEdits = new InlineEdits(client, () => controller.currentSession());
  const failed = (message: string) => firstRun.startFailed(message);
  const started = () => returnToRunningTurn(notes, controller, () => panel.reveal(), log);
  const restart = () => start(client, log, statusBar, "restart", failed, started);
  firstRun = new FirstRun({
    client,
    view: panel,
    controller,
    statusBar,
    secrets: context.secrets,
    restart,
  });
  controller.onWelcomeStale = () => void firstRun.refresh();
  const editorState = new EditorStateTracker(
    (params) => client.notify("agent/didChangeEditorState", params),
    (chip) => panel.post({ type: "context", context: chip }),
  );
  panel.onMessage = (message) => {
    // A new webview learns what the next message carries, and what to show until then.
    if (message.type === "ready") {
      void editorState.flush();
      void firstRun.refresh();
    }
    if (isWelcomeMessage(message)) {
      void firstRun.handle(message).catch((error: unknown) => log.error(String(error)));
      return;
    }
    if (message.type === "send" && !vscode.workspace.isTrusted) {
      // Restricted Mode: nothing runs; the message waits in the box.
      panel.post({ type: "restoreInput", text: message.text });
      void firstRun.refresh();
      return;
    }
    void controller.handle(message);
  };

  context.subscriptions.push(
    log,
    statusBar,
    client,
    views.rules,
    views.mcp,
    editorState,
    vscode.window.registerWebviewViewProvider(VIEW_ID, panel, { webviewOptions: { retainContextWhenHidden: true } }),
    vscode.workspace.registerTextDocumentContentProvider(DIFF_SCHEME, diffs),
    reviews,
    inlineEdits,
    vscode.commands.registerCommand("agentls.review.accept", () => answerReview(reviews, controller, "allow_once")),
    vscode.commands.registerCommand("agentls.review.reject", () => answerReview(reviews, controller, "reject_once")),
    vscode.commands.registerCommand("agentls.review.revertHunk", (uri?: vscode.Uri, line?: number) => {
      const editor = uri
        ? vscode.window.visibleTextEditors.find((e) => e.document.uri.toString() === uri.toString())
        : vscode.window.activeTextEditor;
      return reviews.revertHunk(editor, line);
    }),
    vscode.commands.registerCommand("agentls.focus", () => panel.reveal()),
    vscode.commands.registerCommand("agentls.newSession", async () => {
      panel.reveal();
      await controller.newSession();
    }),
    vscode.commands.registerCommand("agentls.abort", () => controller.abort()),
    vscode.commands.registerCommand("agentls.closeSession", () => controller.closeSession()),
    vscode.commands.registerCommand("agentls.history", async () => {
      panel.reveal();
      await controller.pickSession();
    }),
    vscode.commands.registerCommand("agentls.worktrees", () => controller.pickWorktree()),
    vscode.commands.registerCommand("agentls.plugins", () => controller.showPlugins()),
    vscode.commands.registerCommand("agentls.showLog", () => log.show()),
    vscode.commands.registerCommand("agentls.restartServer", async () => {
      controller.onServerRestarted();
      await restart();
    }),
    vscode.commands.registerCommand("agentls.includeContext", async (include: boolean) => {
      editorState.include = include;
      await editorState.flush();
    }),
    vscode.commands.registerCommand("agentls.askAboutSelection", () => askAboutSelection(panel)),
    vscode.commands.registerCommand("agentls.setApiKey", () => setApiKey(context, restart)),
    // Restricted Mode: the daemon starts only once the user trusts the folder.
    vscode.workspace.onDidGrantWorkspaceTrust(() => void start(client, log, statusBar, "start", failed, started)),
    vscode.commands.registerCommand("agentls.pickModelOrMode", () => pickModelOrMode(controller)),
    vscode.workspace.onDidChangeConfiguration((change) => {
      // The first-run setup restarts the daemon itself once its settings are written.
      if (!firstRun.settingUp) void settingsChanged(change, controller, restart);
    }),
  );
  void start(client, log, statusBar, "start", failed, started);
}

export function deactivate(): void {
  // The client is disposed with the subscriptions; it stops the daemon.
}

async function start(
  client: AgentClient,
  log: vscode.LogOutputChannel,
  statusBar: StatusBar,
  how: "start" | "restart" = "start",
  onFailed?: (message: string) => void,
  onStarted?: () => Promise<void>,
): Promise<void> {
  if (!vscode.workspace.isTrusted) {
    // The agent reads, edits and runs commands here: nothing starts before trust.
    log.info("the daemon waits: this folder is not trusted (Restricted Mode)");
    statusBar.untrusted();
    return;
  }
  try {
    await (how === "start" ? client.start() : client.restart());
    await onStarted?.();
  } catch (error) {
    const message =
      error instanceof ServerNotFound
        ? error.message
        : error instanceof DiscoveryError
          ? `agentls could not join the running daemon: ${error.message}`
          : `The agentls server did not start: ${String(error)}`;
    log.error(message);
    // The panel and the status bar say it too, instead of "starting…" for ever.
    statusBar.stopped(message);
    onFailed?.(message);
    const choice = await vscode.window.showErrorMessage(message, "Open Server Log");
    if (choice) log.show();
  }
}

/** Attach the selected lines to the next message and put the cursor in the message box. */
function askAboutSelection(panel: ChatPanel): void {
  const editor = vscode.window.activeTextEditor;
  if (!editor) return;
  const name = vscode.workspace.asRelativePath(editor.document.uri);
  const { start, end } = editor.selection;
  const range = { start: { line: start.line, character: start.character }, end: { line: end.line, character: end.character } };
  const lines = start.line === end.line ? `${start.line + 1}` : `${start.line + 1}-${end.line + 1}`;
  panel.reveal();
  panel.post({ type: "attach", attachment: { uri: editor.document.uri.toString(), range, label: `${name}:${lines}` } });
  panel.post({ type: "focusInput" });
}

async function setApiKey(context: vscode.ExtensionContext, restart: () => Promise<void>): Promise<void> {
  if (!(await askApiKey(context.secrets))) return;
  if (readSettings().connect !== "spawn") {
    // A daemon this window joined was started elsewhere, with its own environment.
    void vscode.window.showInformationMessage(
      "agentls: the key is stored, but the running daemon this window joined reads keys from its own environment; it is used when agentls.server.connect is \"spawn\".",
    );
    return;
  }
  // Keys reach the daemon through its environment only: restart it to use the new one.
  await restart();
}

/** Model and mode apply to the open session at once; the rest need a new daemon. */
async function settingsChanged(
  change: vscode.ConfigurationChangeEvent,
  controller: ChatController,
  restart: () => Promise<void>,
): Promise<void> {
  const changed = settingsChange(change);
  if (!changed) return;
  const settings = readSettings();
  if (changed.permissionMode) await controller.setMode(settings.permissionMode);
  if (changed.model && settings.model) await controller.setModel(settings.model);
  if (changed.needsRestart) {
    const choice = await vscode.window.showInformationMessage(
      "agentls: this setting applies when the server restarts (open chats start over).",
      "Restart Now",
    );
    if (choice) {
      controller.onServerRestarted();
      await restart();
    }
  }
}

/** Accept (as reviewed) or reject the change shown in the active review editor. */
async function answerReview(reviews: Reviews, controller: ChatController, optionId: "allow_once" | "reject_once"): Promise<void> {
  const requestId = reviews.requestOf(vscode.window.activeTextEditor?.document.uri);
  if (!requestId) {
    void vscode.window.showInformationMessage("agentls: no change under review in this editor.");
    return;
  }
  await controller.respond(requestId, optionId);
}

async function pickModelOrMode(controller: ChatController): Promise<void> {
  const pick = await vscode.window.showQuickPick(["Change model…", "Change permission mode…"]);
  if (pick === "Change model…") await controller.pickModel();
  else if (pick === "Change permission mode…") await controller.pickMode();
}
