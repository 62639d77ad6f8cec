// The chat's transcript: the list of items the reducer folded, each drawn into its own
// element and drawn again only when the reducer replaced that item. The composer (the
// message box below it) is composer.ts; main.ts routes the host's messages to both.

import type { FromWebview } from "../bridge";
import type { Item, ViewState } from "../reducer";
import { type OptionId, plural } from "../words";
import { drawContext } from "./contextBar";
import { button, element, icon } from "./dom";
import { renderMarkdown, renderStreamingMarkdown } from "./markdown";
import { drawPermission, focusNewCard, toolIcon } from "./permission";
import { drawWorktree } from "./worktree";

/** How close to the end (in pixels) still counts as reading the end. */
const AT_END_SLACK = 40;

export class Transcript {
  private state: ViewState;
  // What each rendered element was drawn from: an item object the reducer did not replace
  // is unchanged, so it is not drawn again.
  private readonly drawn = new Map<string, { item: Item; element: HTMLElement }>();
  private readonly earlier = button({ label: "Show earlier messages", icon: "history", onClick: () => this.post({ type: "older" }) });
  private readonly permissionActions = {
    answer: (requestId: string, optionId: OptionId, message?: string): void => {
      this.post({ type: "permission", requestId, optionId, ...(message ? { message } : {}) });
      // The card closes when the daemon confirms; the keyboard goes back to the message box
      // (a later request's card takes it from there).
      this.input.focus();
    },
    review: (requestId: string, index?: number): void => this.post({ type: "review", requestId, ...(index === undefined ? {} : { index }) }),
  };

  /** `input` is the composer's message box, where the keyboard goes after an answer. */
  constructor(
    private readonly root: HTMLElement,
    private readonly input: HTMLTextAreaElement,
    private readonly post: (message: FromWebview) => void,
    state: ViewState,
  ) {
    this.state = state;
    // The copy and insert buttons of code blocks in the model's answers.
    root.addEventListener("click", (event) => {
      const target = (event.target as HTMLElement).closest<HTMLElement>("[data-code-action]");
      const action = target?.dataset.codeAction;
      if (action !== "copy" && action !== "insertCode") return;
      const code = target?.closest(".code-block")?.querySelector("pre > code")?.textContent ?? "";
      this.post(action === "copy" ? { type: "copy", text: code } : { type: "insertCode", code });
    });
  }

  /** Whether the user reads the end, so it is followed after the next render. */
  get atEnd(): boolean {
    return this.root.scrollHeight - this.root.scrollTop - this.root.clientHeight < AT_END_SLACK;
  }

  scrollToEnd(): void {
    this.root.scrollTop = this.root.scrollHeight;
  }

  /** Another chat is shown: nothing drawn before is kept. */
  clear(): void {
    this.drawn.clear();
    this.root.replaceChildren();
  }

  render(state: ViewState): void {
    this.state = state;
    const keep = new Set<string>();
    let previous: HTMLElement | null = null;
    // A resumed session shows its last messages; the older ones come a page at a click.
    if (state.olderCursor) {
      if (this.root.firstChild !== this.earlier) this.root.prepend(this.earlier);
      previous = this.earlier;
    } else {
      this.earlier.remove();
    }
    for (const item of state.items) {
      const key = `${item.kind}:${item.id}`;
      keep.add(key);
      let entry = this.drawn.get(key);
      if (!entry || entry.item !== item) {
        const element = entry?.element ?? document.createElement("div");
        this.draw(element, item);
        entry = { item, element };
        this.drawn.set(key, entry);
      }
      const expected: ChildNode | null = previous ? previous.nextSibling : this.root.firstChild;
      if (expected !== entry.element) this.root.insertBefore(entry.element, expected);
      previous = entry.element;
    }
    for (const [key, entry] of this.drawn) {
      if (!keep.has(key)) {
        entry.element.remove();
        this.drawn.delete(key);
      }
    }
  }

  private draw(target: HTMLElement, item: Item): void {
    target.className = `item ${item.kind}`;
    target.dataset.kind = item.kind;
    target.dataset.id = item.id;
    switch (item.kind) {
      case "user":
        target.replaceChildren(
          ...(item.inlineEdit ? [element("div", "inline-target", `Inline edit · ${item.inlineEdit}`)] : []),
          element("div", "bubble", item.text),
          ...mentionChips(item.mentions),
          this.userActions(item),
        );
        return;
      case "assistant":
        drawAssistant(target, item);
        return;
      case "tool":
        this.drawTool(target, item);
        return;
      case "permission":
        this.drawPermission(target, item);
        return;
      case "question":
        this.drawQuestion(target, item);
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
        this.drawSummary(target, item);
        return;
      case "context":
        target.replaceChildren(...drawContext(item.report));
        return;
      case "turnEnd":
        this.drawTurnEnd(target, item);
        return;
      case "worktree":
        drawWorktree(target, item, this.post);
        return;
    }
  }

  private drawTurnEnd(target: HTMLElement, item: Extract<Item, { kind: "turnEnd" }>): void {
    const state = this.state;
    target.dataset.stopReason = item.stopReason;
    const parts: HTMLElement[] = [element("div", "", turnEndText(item, state))];
    const last = state.items.at(-1) === item;
    if (state.retryable && last) {
      const retryText = state.retryable.text;
      parts.push(button({ label: "Retry", icon: "refresh", weight: "primary", onClick: () => this.post({ type: "send", text: retryText }) }));
    }
    if (state.limitReached && last && !state.runningTurn) {
      parts.push(button({ label: "Continue", icon: "debug-continue", weight: "primary", onClick: () => this.post({ type: "continueTurn" }) }));
    }
    target.replaceChildren(...parts);
  }

  private drawTool(target: HTMLElement, item: Extract<Item, { kind: "tool" }>): void {
    const post = this.post;
    target.dataset.status = item.status;
    // While its request waits, the request's card (with the diff) stands for this one.
    target.hidden = item.asking === true;
    // A card the user opened stays open while its output streams.
    const open = target.querySelector("details")?.open ?? item.userShell === true;
    const details = element("details", "tool-card") as HTMLDetailsElement;
    details.open = open;
    const summary = element("summary", "");
    summary.append(statusIcon(item.status), icon(toolIcon(item.toolKind), "kind"), element("span", "title", item.title));
    const body: HTMLElement[] = [];
    // What a WriteStdin call typed, as a line under its shell's name.
    if (item.typed) {
      const typed = element("div", "typed-line");
      typed.append(icon("terminal"), element("span", "shell", item.typed.shell), element("code", "typed", item.typed.line));
      body.push(typed);
    }
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
    if (item.diffs) {
      // A patch: one diff per file it changed.
      item.diffs.forEach((diff, index) => {
        const name = diff.path.split(/[\\/]/).pop() ?? diff.path;
        actions.append(button({ label: name, icon: "diff", title: `Open the diff of ${diff.path}`, onClick: () => post({ type: "openDiff", toolCallId: item.id, index }) }));
      });
    } else if (item.diff) actions.append(button({ label: "Open diff", icon: "diff", onClick: () => post({ type: "openDiff", toolCallId: item.id }) }));
    if (item.diff && item.status === "completed" && !item.undone) {
      const undo = button({ label: "Undo", icon: "discard", title: "Put the file back as it was before this edit", onClick: () => post({ type: "undo", toolCallIds: [item.id] }) });
      undo.dataset.action = "undo";
      actions.append(undo);
    }
    if (actions.childElementCount) body.push(actions);
    if (item.answer) summary.append(element("span", "answer", item.answer));
    if (item.undone) summary.append(element("span", "undone", "undone"));
    if (item.agent) body.push(drawAgent(item.agent));
    // A plan presented (ExitPlanMode), also in a resumed chat: the plan as the card showed it.
    if (item.name === "ExitPlanMode" && typeof item.input.plan === "string") {
      const plan = element("div", "plan-body markdown");
      renderMarkdown(plan, item.input.plan);
      body.push(plan);
    }
    if (item.output) body.push(element("pre", "output", item.output + (item.truncated ? "\n…" : "")));
    details.replaceChildren(summary, ...body);
    target.replaceChildren(details);
  }

  /** Under a message the user wrote: Rewind… (its turn must be known), Edit & resend, Changes. */
  private userActions(item: Extract<Item, { kind: "user" }>): HTMLElement {
    const post = this.post;
    const actions = element("div", "options user-actions");
    const turnId = item.turnId;
    if (turnId) {
      const rewind = button({ label: "Rewind…", icon: "history", title: "Take code, conversation or both back to before this message", onClick: () => post({ type: "rewind", messageId: item.id }) });
      rewind.dataset.action = "rewind";
      const changes = button({ label: "Changes", icon: "diff", title: "What this turn changed, shell commands included", onClick: () => post({ type: "turnChanges", turnId }) });
      changes.dataset.action = "turn-changes";
      actions.append(rewind, changes);
    }
    const fork = button({ label: "Edit & resend", icon: "edit", title: "A new chat that ends just before this message, its text in the box to edit and send", onClick: () => post({ type: "fork", messageId: item.id }) });
    fork.dataset.action = "fork";
    actions.append(fork);
    return actions;
  }

  /** What the turn changed: each file with +/− lines, Undo per file, and a review of all. */
  private drawSummary(target: HTMLElement, item: Extract<Item, { kind: "summary" }>): void {
    const post = this.post;
    const tools = new Map(this.state.items.flatMap((i) => (i.kind === "tool" ? [[i.id, i] as const] : [])));
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
    const turnId = item.turnId;
    if (turnId) {
      const changes = button({ label: "Changes", icon: "diff", title: "What this turn changed on disk, shell commands included (agent/turnDiff)", onClick: () => post({ type: "turnChanges", turnId }) });
      changes.dataset.action = "turn-changes";
      actions.append(changes);
    }
    if (!isUndone(all)) actions.append(button({ label: "Undo all", icon: "discard", onClick: () => post({ type: "undo", toolCallIds: all }) }));
    const title = element("div", "title");
    title.append(icon("checklist"), element("span", "", `Changed ${plural(count, "file")}`));
    target.replaceChildren(title, ...rows, actions);
  }

  private drawPermission(target: HTMLElement, item: Extract<Item, { kind: "permission" }>): void {
    const tool = this.state.items.find((i) => i.kind === "tool" && i.id === item.toolCallId);
    drawPermission(target, item, tool?.kind === "tool" ? tool.toolKind : undefined, this.permissionActions);
    // Answered, it folds into its tool call's card, which says how (a sub-agent's call has
    // no card of its own in the chat: its answered request stays).
    target.hidden = item.state !== "pending" && tool !== undefined;
    focusNewCard(target, item, this.input);
  }

  private drawQuestion(target: HTMLElement, item: Extract<Item, { kind: "question" }>): void {
    const post = this.post;
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
}

function drawAssistant(target: HTMLElement, item: Extract<Item, { kind: "assistant" }>): void {
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

/** What a message was sent with (`@` mentions, attachments), as chips under it. */
function mentionChips(mentions: readonly string[] | undefined): HTMLElement[] {
  if (!mentions?.length) return [];
  const row = element("div", "mentions");
  row.append(...mentions.map((label) => element("span", "chip mention", label)));
  return [row];
}
