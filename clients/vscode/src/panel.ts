// The chat panel: a webview view in agentls's own activity-bar container.

import { randomBytes } from "node:crypto";
import * as vscode from "vscode";

import type { FromWebview, ToWebview } from "./bridge";
import type { ChatView } from "./controller";

export const VIEW_ID = "agentls.chat";

export class ChatPanel implements vscode.WebviewViewProvider, ChatView {
  private view: vscode.WebviewView | undefined;
  private ready = false;
  private readonly outbox: ToWebview[] = [];
  onMessage: (message: FromWebview) => void = () => undefined;

  constructor(
    private readonly extensionUri: vscode.Uri,
    private readonly log: vscode.LogOutputChannel,
  ) {}

  get visible(): boolean {
    return this.view?.visible ?? false;
  }

  resolveWebviewView(view: vscode.WebviewView): void {
    // Epoch milliseconds, so the opening time can be split between VS Code and the panel.
    const resolved = Date.now();
    this.log.info(`panel: view resolved at ${resolved}`);
    this.view = view;
    this.ready = false;
    const dist = vscode.Uri.joinPath(this.extensionUri, "dist");
    const media = vscode.Uri.joinPath(this.extensionUri, "media");
    view.webview.options = { enableScripts: true, localResourceRoots: [dist, media] };
    view.webview.html = html(view.webview, dist, media);
    view.webview.onDidReceiveMessage((message: FromWebview) => {
      if (message.type === "ready") {
        const t = message.timing;
        const split = t ? `; document ${t.documentStart - resolved} ms after resolve, script ${t.scriptStart - t.documentStart} ms after that, ready ${t.ready - t.scriptStart} ms after that` : "";
        this.log.info(`panel: webview ready at ${Date.now()} (${Date.now() - resolved} ms after resolve${split})`);
        this.ready = true;
        this.onMessage(message);
        for (const queued of this.outbox.splice(0)) void view.webview.postMessage(queued);
        return;
      }
      this.onMessage(message);
    });
    view.onDidDispose(() => {
      this.view = undefined;
      this.ready = false;
    });
  }

  post(message: ToWebview): void {
    if (!this.view || !this.ready) {
      // Until the webview is ready its state comes from the snapshot it asks for; what the
      // user asked for meanwhile (an attachment, the focus) waits for it.
      if (message.type === "attach" || message.type === "focusInput") this.outbox.push(message);
      return;
    }
    void this.view.webview.postMessage(message);
  }

  /** Focus the existing panel (never a new chat). */
  reveal(): void {
    void vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }
}

function html(webview: vscode.Webview, dist: vscode.Uri, media: vscode.Uri): string {
  const nonce = randomBytes(16).toString("base64");
  const script = webview.asWebviewUri(vscode.Uri.joinPath(dist, "webview.js"));
  const style = webview.asWebviewUri(vscode.Uri.joinPath(media, "panel.css"));
  const csp = [
    "default-src 'none'",
    `style-src ${webview.cspSource}`,
    // The codicon font (media/codicons), drawn by panel.css.
    `font-src ${webview.cspSource}`,
    `img-src ${webview.cspSource} data:`,
    `script-src 'nonce-${nonce}'`,
  ].join("; ");
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="UTF-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1.0">
<link href="${style.toString()}" rel="stylesheet">
<title>agentls</title>
</head>
<body>
<main id="transcript" aria-live="polite"></main>
<section id="composer">
  <details id="plan" hidden><summary id="plan-title"></summary><ol id="plan-entries"></ol></details>
  <div id="queue"></div>
  <div id="attachments"></div>
  <div id="completions" role="listbox" hidden></div>
  <div id="context"><label><input type="checkbox" id="include-context" checked> <span id="context-label">no editor</span></label><span id="usage" title="Tokens and cost of this session; how full the context is"></span></div>
  <textarea id="input" rows="3" placeholder="Ask agentls… (/ commands and skills, @ files, !command runs in the shell, # note to memory; Enter sends, Shift+Enter new line)"></textarea>
  <div id="input-hint" role="note" hidden></div>
  <div id="actions">
    <span id="status" role="status"></span>
    <button id="history" title="Resume an earlier session">History</button>
    <button id="new-session" title="New session">New</button>
    <button id="stop" title="Stop (Escape)" disabled>Stop</button>
    <button id="send" title="Send (Enter)">Send</button>
  </div>
</section>
<script nonce="${nonce}" src="${script.toString()}"></script>
</body>
</html>`;
}
