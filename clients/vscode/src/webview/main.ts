// The chat webview: folds the host's actions with the shared reducer and renders the
// transcript, at most once a frame, touching only the items that changed.

import type { Attachment, ContextChip, FromWebview, ToWebview } from "../bridge";
import { type Item, type ViewState, initialState, reduce } from "../reducer";
import { type OptionKind, plural } from "../words";
import { button, element, icon } from "./dom";
import { renderStreamingMarkdown } from "./markdown";
import { drawPermission, focusNewCard, toolIcon } from "./permission";
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
const transcript = $("transcript");
const input = $("input") as HTMLTextAreaElement;
const sendButton = $("send") as HTMLButtonElement;
const stopButton = $("stop") as HTMLButtonElement;
const newButton = $("new-session") as HTMLButtonElement;
const historyButton = $("history") as HTMLButtonElement;
const statusLine = $("status");
const queueBox = $("queue");
const contextLabel = $("context-label");
const includeContext = $("include-context") as HTMLInputElement;
const attachmentBox = $("attachments");
const usageLine = $("usage");
const planBox = $("plan") as HTMLDetailsElement;
const planTitle = $("plan-title");
const planEntries = $("plan-entries");
let drawnPlan: ViewState["plan"] | null = null;
const completionBox = $("completions");

/** The composer's buttons get their codicons here, so the page's markup stays plain. */
function decorateComposer(): void {
  const decorate = (target: HTMLButtonElement, name: string, iconOnly: boolean): void => {
    const label = target.textContent;
    target.classList.add(iconOnly ? "icon" : "secondary");
    if (iconOnly) target.setAttribute("aria-label", target.title || label);
    target.replaceChildren(icon(name), ...(iconOnly ? [] : [element("span", "label", label)]));
  };
  decorate(historyButton, "history", true);
  decorate(newButton, "add", true);
  decorate(stopButton, "debug-stop", false);
  decorate(sendButton, "send", false);
  sendButton.classList.replace("secondary", "primary");
}
decorateComposer();

let attachments: Attachment[] = [];
// The `@query` being completed, and the files offered for it.
let completing: { query: string; start: number } | null = null;
let offered: Attachment[] = [];
let chosen = 0;

let state: ViewState = initialState();
const welcome = new WelcomeView(transcript, (message) => post(message));
let scheduled = false;
// What each rendered element was drawn from: an item object the reducer did not replace
// is unchanged, so it is not drawn again.
const drawn = new Map<string, { item: Item; element: HTMLElement }>();

window.addEventListener("message", (event: MessageEvent<ToWebview>) => {
  const message = event.data;
  switch (message.type) {
    case "action":
      state = reduce(state, message.action);
      if (message.action.type === "session") clearTranscript();
      schedule();
      return;
    case "snapshot":
      state = message.state;
      clearTranscript();
      schedule();
      return;
    case "context":
      showContext(message.context);
      return;
    case "status":
      statusLine.textContent = message.text;
      statusLine.className = message.level;
      return;
    case "focusInput":
      if (message.prefill) input.value = message.prefill + input.value;
      input.focus();
      return;
    case "attach":
      addAttachment(message.attachment);
      return;
    case "files":
      if (completing?.query === message.query) showCompletions(message.files);
      return;
    case "welcome":
      welcome.show(message.welcome);
      return;
    case "restoreInput":
      if (!input.value.trim()) input.value = message.text;
      input.focus();
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

function clearTranscript(): void {
  drawn.clear();
  transcript.replaceChildren();
}

function render(): void {
  // Follow the end only while the user is at the end.
  const atEnd = transcript.scrollHeight - transcript.scrollTop - transcript.clientHeight < 40;
  const keep = new Set<string>();
  let previous: HTMLElement | null = null;
  for (const item of state.items) {
    const key = `${item.kind}:${item.id}`;
    keep.add(key);
    let entry = drawn.get(key);
    if (!entry || entry.item !== item) {
      const element = entry?.element ?? document.createElement("div");
      draw(element, item);
      entry = { item, element };
      drawn.set(key, entry);
    }
    const expected: ChildNode | null = previous ? previous.nextSibling : transcript.firstChild;
    if (expected !== entry.element) transcript.insertBefore(entry.element, expected);
    previous = entry.element;
  }
  for (const [key, entry] of drawn) {
    if (!keep.has(key)) {
      entry.element.remove();
      drawn.delete(key);
    }
  }
  renderComposer();
  welcome.setEmpty(state.items.length === 0);
  if (atEnd) transcript.scrollTop = transcript.scrollHeight;
}

function renderComposer(): void {
  stopButton.disabled = state.runningTurn === null;
  usageLine.textContent = usageText();
  if (state.plan !== drawnPlan) drawPlan(state.plan);
  document.body.dataset.running = String(state.runningTurn !== null);
  queueBox.replaceChildren(
    ...state.queued.map((queued) => {
      const row = element("div", "queued");
      row.append(element("span", "queued-text", queued.text));
      const now = button("Send now", () => post({ type: "steer", turnId: queued.turnId, text: queued.text }));
      now.title = "Give it to the running turn now";
      row.append(now);
      return row;
    }),
  );
}

const PLAN_MARKS = { completed: "☑", in_progress: "◐", pending: "☐" } as const;

/** The plan above the message box: open while work remains, with what is in progress. */
function drawPlan(plan: ViewState["plan"]): void {
  drawnPlan = plan;
  planBox.hidden = plan.length === 0;
  const done = plan.filter((e) => e.status === "completed").length;
  const current = plan.find((e) => e.status === "in_progress");
  planTitle.textContent = `Plan ${done}/${plan.length}${current ? ` · ${current.content}` : ""}`;
  planEntries.replaceChildren(
    ...plan.map((entry) => {
      const row = element("li", `plan-entry ${entry.status}`, `${PLAN_MARKS[entry.status]} ${entry.content}`);
      row.dataset.priority = entry.priority;
      return row;
    }),
  );
  if (done === plan.length) planBox.open = false;
}

function draw(target: HTMLElement, item: Item): void {
  target.className = `item ${item.kind}`;
  target.dataset.kind = item.kind;
  target.dataset.id = item.id;
  switch (item.kind) {
    case "user":
      target.replaceChildren(element("div", "bubble", item.text));
      return;
    case "assistant": {
      const parts: HTMLElement[] = [];
      if (item.thinking) {
        const details = element("details", "thinking") as HTMLDetailsElement;
        details.open = target.querySelector<HTMLDetailsElement>("details.thinking")?.open ?? false;
        details.append(element("summary", "", "Thinking"), element("div", "thinking-text", item.thinking));
        parts.push(details);
      }
      // The same body element across frames: what it rendered before is kept.
      const body = target.querySelector<HTMLElement>(":scope > .markdown") ?? element("div", "markdown");
      renderStreamingMarkdown(body, item.text);
      parts.push(body);
      target.dataset.streaming = String(item.streaming);
      // Re-inserting the body would restyle and relayout all of it: only when it changes.
      if (parts.length !== target.children.length || parts.some((part, i) => target.children[i] !== part)) {
        target.replaceChildren(...parts);
      }
      return;
    }
    case "tool":
      drawTool(target, item);
      return;
    case "permission":
      showPermission(target, item);
      return;
    case "question":
      drawQuestion(target, item);
      return;
    case "notice":
      target.classList.add(item.level);
      target.replaceChildren(icon(item.level), element("div", "message", item.message));
      return;
    case "compaction":
      target.replaceChildren(
        element("div", "", `Context compacted: ${item.tokensBefore.toLocaleString("en-US")} → ${plural(item.tokensAfter, "token")}`),
      );
      return;
    case "summary":
      drawSummary(target, item);
      return;
    case "turnEnd": {
      target.dataset.stopReason = item.stopReason;
      const parts: HTMLElement[] = [element("div", "", turnEndText(item, state))];
      const last = state.items.at(-1) === item;
      if (state.retryable && last) {
        const retryText = state.retryable.text;
        parts.push(button({ label: "Retry", icon: "refresh", weight: "primary", onClick: () => post({ type: "send", text: retryText }) }));
      }
      if (state.limitReached && last && !state.runningTurn) {
        parts.push(button({ label: "Continue", icon: "debug-continue", weight: "primary", onClick: () => post({ type: "continueTurn" }) }));
      }
      target.replaceChildren(...parts);
      return;
    }
  }
}

const STOPPED: Record<string, string> = {
  max_tokens: "Stopped: the answer hit the output limit.",
  aborted: "Stopped.",
  refusal: "The model declined to answer.",
  budget_exceeded: "Stopped: the task's budget is spent.",
  stuck: "Stopped: the agent kept repeating itself.",
};

function turnEndText(item: Extract<Item, { kind: "turnEnd" }>, state: ViewState): string {
  if (item.error) return `${item.stopReason}: ${item.error.message}`;
  if (item.stopReason === "max_turns") {
    const calls = state.limitReached ? ` (${plural(state.limitReached.turns, "model call")})` : "";
    return `Reached the turn limit${calls}.`;
  }
  return STOPPED[item.stopReason] ?? `Turn ended: ${item.stopReason}`;
}

/** A sub-agent inside its Task card: its type and state, its calls, its latest words. */
function drawAgent(agent: NonNullable<Extract<Item, { kind: "tool" }>["agent"]>): HTMLElement {
  const box = element("div", "agent");
  box.dataset.status = agent.status;
  const state = agent.status === "running" ? "working" : agent.status;
  box.append(element("div", "agent-head", `${agent.type} agent · ${state} · ${plural(agent.calls.length, "tool call")}`));
  const calls = element("ul", "agent-calls");
  for (const call of agent.calls.slice(-8)) {
    const row = element("li", `status ${call.status}`);
    row.append(statusIcon(call.status), element("span", "", call.title));
    calls.append(row);
  }
  if (agent.calls.length) box.append(calls);
  if (agent.text) box.append(element("div", "agent-text", agent.text.length > 600 ? `…${agent.text.slice(-600)}` : agent.text));
  return box;
}

function drawTool(target: HTMLElement, item: Extract<Item, { kind: "tool" }>): void {
  target.dataset.status = item.status;
  // While its request waits, the request's card (with the diff) stands for this one.
  target.hidden = item.asking === true;
  // A card the user opened stays open while its output streams.
  const open = target.querySelector("details")?.open ?? false;
  const details = element("details", "tool-card") as HTMLDetailsElement;
  details.open = open;
  const summary = element("summary", "");
  summary.append(statusIcon(item.status), icon(toolIcon(item.toolKind), "kind"), element("span", "title", item.title));
  const body: HTMLElement[] = [];
  for (const location of item.locations) {
    const line = typeof location.line === "number" ? location.line : undefined;
    const link = element("a", "location", line === undefined ? location.path : `${location.path}:${line + 1}`);
    (link as HTMLAnchorElement).href = "#";
    link.addEventListener("click", (event) => {
      event.preventDefault();
      post({ type: "openLocation", path: location.path, ...(line === undefined ? {} : { line }) });
    });
    body.push(link);
  }
  const actions = element("div", "options");
  if (item.diff) actions.append(button({ label: "Open diff", icon: "diff", onClick: () => post({ type: "openDiff", toolCallId: item.id }) }));
  if (item.diff && item.status === "completed" && !item.undone) {
    const undo = button({ label: "Undo", icon: "discard", title: "Put the file back as it was before this edit", onClick: () => post({ type: "undo", toolCallIds: [item.id] }) });
    undo.dataset.action = "undo";
    actions.append(undo);
  }
  if (actions.childElementCount) body.push(actions);
  if (item.answer) summary.append(element("span", "answer", item.answer));
  if (item.undone) summary.append(element("span", "undone", "undone"));
  if (item.agent) body.push(drawAgent(item.agent));
  if (item.output) body.push(element("pre", "output", item.output + (item.truncated ? "\n…" : "")));
  details.replaceChildren(summary, ...body);
  target.replaceChildren(details);
}

/** What the turn changed: each file with +/− lines, Undo per file, and a review of all. */
function drawSummary(target: HTMLElement, item: Extract<Item, { kind: "summary" }>): void {
  const tools = new Map(state.items.flatMap((i) => (i.kind === "tool" ? [[i.id, i] as const] : [])));
  const isUndone = (ids: string[]) => ids.every((id) => tools.get(id)?.undone);
  const rows = item.files.map((file) => {
    const row = element("div", "changed-file");
    row.dataset.path = file.path;
    const link = element("a", "location", file.path.split(/[\\/]/).pop() ?? file.path) as HTMLAnchorElement;
    link.href = "#";
    link.title = file.path;
    link.addEventListener("click", (event) => {
      event.preventDefault();
      post({ type: "openLocation", path: file.path });
    });
    row.append(link, element("span", "added", `+${file.added}`), element("span", "removed", `−${file.removed}`));
    if (file.created) row.append(element("span", "created", "new"));
    if (isUndone(file.toolCallIds)) row.append(element("span", "undone", "undone"));
    else row.append(button({ label: "Undo", icon: "discard", onClick: () => post({ type: "undo", toolCallIds: file.toolCallIds }) }));
    return row;
  });
  const count = item.files.length;
  const actions = element("div", "options");
  const all = item.files.flatMap((f) => f.toolCallIds);
  const review = button({ label: "Review all changes", icon: "diff", onClick: () => post({ type: "reviewTurn", summaryId: item.id }) });
  review.dataset.action = "review-turn";
  actions.append(review);
  if (!isUndone(all)) actions.append(button({ label: "Undo all", icon: "discard", onClick: () => post({ type: "undo", toolCallIds: all }) }));
  const title = element("div", "title");
  title.append(icon("checklist"), element("span", "", `Changed ${plural(count, "file")}`));
  target.replaceChildren(title, ...rows, actions);
}

const permissionActions = {
  answer(requestId: string, kind: OptionKind): void {
    post({ type: "permission", requestId, optionId: kind });
    // The card closes when the daemon confirms; the keyboard goes back to the message box
    // (a later request's card takes it from there).
    input.focus();
  },
  review(requestId: string): void {
    post({ type: "review", requestId });
  },
};

function showPermission(target: HTMLElement, item: Extract<Item, { kind: "permission" }>): void {
  const tool = state.items.find((i) => i.kind === "tool" && i.id === item.toolCallId);
  drawPermission(target, item, tool?.kind === "tool" ? tool.toolKind : undefined, permissionActions);
  // Answered, it folds into its tool call's card, which says how (a sub-agent's call has
  // no card of its own in the chat: its answered request stays).
  target.hidden = item.state !== "pending" && tool !== undefined;
  focusNewCard(target, item, input);
}

function drawQuestion(target: HTMLElement, item: Extract<Item, { kind: "question" }>): void {
  const parts: HTMLElement[] = [element("div", "title", item.question)];
  if (item.state === "pending") {
    const row = element("div", "options");
    for (const choice of item.choices) row.append(button(choice, () => post({ type: "answer", requestId: item.id, answer: choice })));
    const answer = element("input", "answer") as HTMLInputElement;
    answer.placeholder = "Your answer, then Enter";
    answer.addEventListener("keydown", (event) => {
      if (event.key === "Enter" && answer.value.trim()) post({ type: "answer", requestId: item.id, answer: answer.value });
    });
    row.append(answer);
    parts.push(row);
  } else {
    parts.push(element("div", "resolved", item.answer ?? item.state));
  }
  target.replaceChildren(...parts);
}

function usageText(): string {
  const usage = state.usage;
  if (!usage) return "";
  const tokens = usage.inputTokens + usage.outputTokens;
  const parts = [tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k tokens` : plural(tokens, "token")];
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(usage.costUsd < 1 ? 4 : 2)}`);
  if (usage.contextWindow > 0) parts.push(`${Math.round((100 * usage.contextTokens) / usage.contextWindow)}% context`);
  return parts.join(" · ");
}

function showCompletionsChosen(): void {
  Array.from(completionBox.children).forEach((row, index) => row.classList.toggle("chosen", index === chosen));
}

const STATUS_ICONS: Record<string, string> = {
  pending: "circle-large-outline",
  in_progress: "loading",
  completed: "pass",
  failed: "error",
  cancelled: "circle-slash",
  declined: "circle-slash",
};

function statusIcon(status: string): HTMLElement {
  const node = icon(STATUS_ICONS[status] ?? "circle-filled", `status ${status}${status === "in_progress" ? " codicon-modifier-spin" : ""}`);
  node.title = status.replace("_", " ");
  return node;
}

function showContext(context: ContextChip): void {
  contextLabel.textContent = context.label ?? "no editor";
  includeContext.checked = context.include;
  includeContext.disabled = context.label === null;
}

function post(message: FromWebview): void {
  vscode.postMessage(message);
}

function send(): void {
  const text = input.value.trim();
  if (!text) return;
  post({ type: "send", text, ...(attachments.length ? { attachments } : {}) });
  input.value = "";
  attachments = [];
  renderAttachments();
}

function addAttachment(attachment: Attachment): void {
  if (!attachments.some((a) => a.label === attachment.label)) attachments = [...attachments, attachment];
  renderAttachments();
}

function imageFiles(files: FileList | undefined): File[] {
  return Array.from(files ?? []).filter((file) => file.type.startsWith("image/"));
}

let pasted = 0;

async function attachImage(file: File): Promise<void> {
  const uri = await new Promise<string>((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => (typeof reader.result === "string" ? resolve(reader.result) : reject(new Error("no image data")));
    reader.onerror = () => reject(reader.error ?? new Error("the image could not be read"));
    reader.readAsDataURL(file);
  });
  pasted += 1;
  // A pasted screenshot is "image.png" every time: number them so each keeps its chip.
  const name = file.name && file.name !== "image.png" ? file.name : `pasted image ${pasted}.${file.type.split("/")[1] ?? "png"}`;
  addAttachment({ uri, label: name, name });
}

function renderAttachments(): void {
  attachmentBox.replaceChildren(
    ...attachments.map((attachment) => {
      const chip = element("span", "chip", attachment.label);
      chip.dataset.label = attachment.label;
      const remove = button("×", () => {
        attachments = attachments.filter((a) => a !== attachment);
        renderAttachments();
      });
      remove.title = `Leave out ${attachment.label}`;
      chip.append(remove);
      return chip;
    }),
  );
}

/** `@` followed by a path fragment right before the caret asks the host for matching files. */
function updateCompletion(): void {
  const before = input.value.slice(0, input.selectionStart);
  const match = /(?:^|\s)@([^\s@]*)$/.exec(before);
  if (!match) {
    closeCompletions();
    return;
  }
  const query = match[1] ?? "";
  completing = { query, start: before.length - query.length - 1 };
  post({ type: "findFiles", query });
}

function showCompletions(files: Attachment[]): void {
  offered = files;
  chosen = 0;
  completionBox.hidden = files.length === 0;
  completionBox.replaceChildren(
    ...files.map((file, index) => {
      const row = element("div", index === chosen ? "completion chosen" : "completion", file.label);
      row.setAttribute("role", "option");
      row.addEventListener("mousedown", (event) => {
        event.preventDefault();
        pick(index);
      });
      return row;
    }),
  );
}

function closeCompletions(): void {
  completing = null;
  offered = [];
  completionBox.hidden = true;
}

function pick(index: number): void {
  const file = offered[index];
  if (!file || !completing) return;
  const end = completing.start + 1 + completing.query.length;
  input.value = `${input.value.slice(0, completing.start)}@${file.label} ${input.value.slice(end)}`;
  addAttachment(file);
  closeCompletions();
  input.focus();
}

input.addEventListener("input", updateCompletion);
input.addEventListener("keydown", (event) => {
  if (!completionBox.hidden && offered.length) {
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      event.preventDefault();
      chosen = (chosen + (event.key === "ArrowDown" ? 1 : offered.length - 1)) % offered.length;
      showCompletionsChosen();
      return;
    }
    if (event.key === "Enter" || event.key === "Tab") {
      event.preventDefault();
      pick(chosen);
      return;
    }
    if (event.key === "Escape") {
      event.stopPropagation();
      closeCompletions();
      return;
    }
  }
  if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
    event.preventDefault();
    send();
  } else if (event.key === "ArrowUp" && !input.value && state.lastUserText) {
    event.preventDefault();
    input.value = state.lastUserText;
  }
});
document.addEventListener("keydown", (event) => {
  if (event.key === "Escape" && state.runningTurn !== null) post({ type: "abort" });
});
sendButton.addEventListener("click", send);
stopButton.addEventListener("click", () => post({ type: "abort" }));
newButton.addEventListener("click", () => post({ type: "newSession" }));
historyButton.addEventListener("click", () => post({ type: "history" }));
includeContext.addEventListener("change", () => post({ type: "includeContext", include: includeContext.checked }));
transcript.addEventListener("click", (event) => {
  const target = (event.target as HTMLElement).closest<HTMLElement>("[data-code-action]");
  const action = target?.dataset.codeAction;
  if (action !== "copy" && action !== "insertCode") return;
  const code = target?.closest(".code-block")?.querySelector("pre > code")?.textContent ?? "";
  post(action === "copy" ? { type: "copy", text: code } : { type: "insertCode", code });
});

// Images pasted or dropped become inline attachments; files dropped from the explorer
// (a uri list) are attached as files.
input.addEventListener("paste", (event) => {
  const images = imageFiles(event.clipboardData?.files);
  if (!images.length) return;
  event.preventDefault();
  for (const file of images) void attachImage(file);
});
document.addEventListener("dragover", (event) => event.preventDefault());
document.addEventListener("drop", (event) => {
  event.preventDefault();
  for (const file of imageFiles(event.dataTransfer?.files)) void attachImage(file);
  const uris = (event.dataTransfer?.getData("text/uri-list") ?? "").split(/\r?\n/).filter((u) => u.startsWith("file:"));
  for (const uri of uris) addAttachment({ uri, label: decodeURIComponent(uri.split("/").pop() ?? uri) });
});

post({ type: "ready", timing: { documentStart: Math.round(performance.timeOrigin), scriptStart, ready: Date.now() } });
