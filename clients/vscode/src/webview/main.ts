// The chat webview: folds the host's actions with the shared reducer and hands the state to
// its two views, the transcript (transcript.ts) and the composer (composer.ts), at most once
// a frame; the transcript touches only the items that changed.

import type { FromWebview, ToWebview } from "../bridge";
import { type ViewState, initialState, reduce } from "../reducer";
import { Composer } from "./composer";
import { Transcript } from "./transcript";
import { WelcomeView } from "./welcome";

interface VsCodeApi {
  postMessage(message: FromWebview): void;
}
declare function acquireVsCodeApi(): VsCodeApi;

const scriptStart = Date.now();
const vscode = acquireVsCodeApi();
function $(id: string): HTMLElement {
  const found = document.getElementById(id);
  if (!found) throw new Error(`the panel has no #${id}`);
  return found;
}
function post(message: FromWebview): void {
  vscode.postMessage(message);
}

let state: ViewState = initialState();
const statusLine = $("status");
const composer = new Composer(
  {
    input: $("input") as HTMLTextAreaElement,
    send: $("send") as HTMLButtonElement,
    stop: $("stop") as HTMLButtonElement,
    newSession: $("new-session") as HTMLButtonElement,
    history: $("history") as HTMLButtonElement,
    queue: $("queue"),
    contextLabel: $("context-label"),
    includeContext: $("include-context") as HTMLInputElement,
    attachments: $("attachments"),
    usage: $("usage"),
    plan: $("plan") as HTMLDetailsElement,
    planTitle: $("plan-title"),
    planEntries: $("plan-entries"),
    completions: $("completions"),
    hint: $("input-hint"),
  },
  post,
  state,
);
const transcriptElement = $("transcript");
const transcript = new Transcript(transcriptElement, composer.input, post, state);
const welcome = new WelcomeView(transcriptElement, post);
let scheduled = false;

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case "action":
      state = reduce(state, message.action);
      // A session was opened (new, resumed or forked): its chat replaces the one drawn.
      if (message.action.type === "session") transcript.clear();
      schedule();
      return;
    case "snapshot":
      state = message.state;
      transcript.clear();
      schedule();
      return;
    case "context":
      composer.showContext(message.context);
      return;
    case "status":
      statusLine.textContent = message.text;
      statusLine.className = message.level;
      return;
    case "focusInput":
      composer.focus(message.prefill);
      return;
    case "attach":
      composer.addAttachment(message.attachment);
      return;
    case "files":
      composer.offerFiles(message.query, message.files);
      return;
    case "welcome":
      welcome.show(message.welcome);
      return;
    case "restoreInput":
      composer.restore(message.text);
      return;
  }
});

function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  requestAnimationFrame(() => {
    scheduled = false;
    render();
  });
}

function render(): void {
  // Follow the end only while the user is at the end.
  const atEnd = transcript.atEnd;
  transcript.render(state);
  composer.render(state);
  welcome.setEmpty(state.items.length === 0);
  if (atEnd) transcript.scrollToEnd();
}

post({ type: "ready", timing: { documentStart: Math.round(performance.timeOrigin), scriptStart, ready: Date.now() } });
