// The composer below the transcript: the message box and its keyboard (Enter sends, ↑
// recalls, `@` mentions a file, folder, symbol, problems or session, a leading `/` a
// command or skill, Escape stops), the hint under it for the `!` and `#` shortcuts,
// attachments (chips, pasted and dropped images and files), send and stop, the queue of
// waiting messages, the plan, usage and the editor-context chip. It draws from the same
// view state as the transcript.

import type { Attachment, ContextChip, FromWebview } from "../bridge";
import { keptMentions, mentionText, sameAttachment } from "../mentions";
import type { ViewState } from "../reducer";
import { commandTag, matchCommands, shortcutHint, slashQuery } from "../slash";
import { plural } from "../words";
import { button, element, icon } from "./dom";

/** The page's composer elements, by id. */
export interface ComposerElements {
  input: HTMLTextAreaElement;
  send: HTMLButtonElement;
  stop: HTMLButtonElement;
  newSession: HTMLButtonElement;
  history: HTMLButtonElement;
  queue: HTMLElement;
  contextLabel: HTMLElement;
  includeContext: HTMLInputElement;
  attachments: HTMLElement;
  usage: HTMLElement;
  plan: HTMLDetailsElement;
  planTitle: HTMLElement;
  planEntries: HTMLElement;
  completions: HTMLElement;
  hint: HTMLElement;
}

/** A row the completion list offers: a file for `@`, a command for `/`. */
interface Offer {
  label: string;
  /** What picking it puts in the box in place of the query (with its `@` or `/`). */
  insert: string;
  detail?: string;
  tag?: string;
  attachment?: Attachment;
}

const PLAN_MARKS = { completed: "☑", in_progress: "◐", pending: "☐" } as const;

export class Composer {
  private state: ViewState;
  private attachments: Attachment[] = [];
  // The `@query` or `/query` being completed, and what is offered for it.
  private completing: { query: string; start: number; sigil: "@" | "/" } | null = null;
  private offered: Offer[] = [];
  private chosen = 0;
  private pasted = 0;
  private drawnPlan: ViewState["plan"] | null = null;

  constructor(
    private readonly ui: ComposerElements,
    private readonly post: (message: FromWebview) => void,
    state: ViewState,
  ) {
    this.state = state;
    this.decorate();
    this.listen();
  }

  get input(): HTMLTextAreaElement {
    return this.ui.input;
  }

  render(state: ViewState): void {
    this.state = state;
    const ui = this.ui;
    ui.stop.disabled = state.runningTurn === null;
    ui.usage.textContent = usageText(state);
    if (state.plan !== this.drawnPlan) this.drawPlan(state.plan);
    document.body.dataset.running = String(state.runningTurn !== null);
    ui.queue.replaceChildren(
      ...state.queued.map((queued) => {
        const row = element("div", "queued");
        row.append(element("span", "queued-text", queued.text));
        const now = button("Send now", () => this.post({ type: "steer", turnId: queued.turnId, text: queued.text }));
        now.title = "Give it to the running turn now";
        row.append(now);
        return row;
      }),
    );
  }

  /** The host puts the cursor in the box, with text before what is typed. */
  focus(prefill?: string): void {
    if (prefill) this.ui.input.value = prefill + this.ui.input.value;
    this.ui.input.focus();
  }

  /** A message that could not be sent comes back, unless something new was typed. */
  restore(text: string): void {
    if (!this.ui.input.value.trim()) this.ui.input.value = text;
    this.ui.input.focus();
  }

  showContext(context: ContextChip): void {
    this.ui.contextLabel.textContent = context.label ?? "no editor";
    this.ui.includeContext.checked = context.include;
    this.ui.includeContext.disabled = context.label === null;
  }

  addAttachment(attachment: Attachment): void {
    if (!this.attachments.some((a) => sameAttachment(a, attachment))) this.attachments = [...this.attachments, attachment];
    this.renderAttachments();
  }

  /** The host's offers for an `@query` (files, folders, symbols, problems, sessions), shown
   * if that query is still being typed; all but files are tagged with their group. */
  offerFiles(query: string, files: Attachment[]): void {
    if (this.completing?.sigil === "@" && this.completing.query === query) {
      this.showCompletions(
        files.map((file) => ({
          label: file.label,
          insert: mentionText(file),
          attachment: file,
          ...(file.detail ? { detail: file.detail } : {}),
          ...(file.group && file.group !== "file" ? { tag: file.group } : {}),
        })),
      );
    }
  }

  /** The buttons get their codicons here, so the page's markup stays plain. */
  private decorate(): void {
    const decorate = (target: HTMLButtonElement, name: string, iconOnly: boolean): void => {
      const label = target.textContent;
      target.classList.add(iconOnly ? "icon" : "secondary");
      if (iconOnly) target.setAttribute("aria-label", target.title || label);
      target.replaceChildren(icon(name), ...(iconOnly ? [] : [element("span", "label", label)]));
    };
    decorate(this.ui.history, "history", true);
    decorate(this.ui.newSession, "add", true);
    decorate(this.ui.stop, "debug-stop", false);
    decorate(this.ui.send, "send", false);
    this.ui.send.classList.replace("secondary", "primary");
  }

  private listen(): void {
    const { input, send, stop, newSession, history, includeContext } = this.ui;
    input.addEventListener("input", () => {
      this.dropDeletedMentions();
      this.updateCompletion();
      this.updateHint();
    });
    input.addEventListener("keydown", (event) => this.onKey(event));
    document.addEventListener("keydown", (event) => {
      if (event.key === "Escape" && this.state.runningTurn !== null) this.post({ type: "abort" });
    });
    send.addEventListener("click", () => this.send());
    stop.addEventListener("click", () => this.post({ type: "abort" }));
    newSession.addEventListener("click", () => this.post({ type: "newSession" }));
    history.addEventListener("click", () => this.post({ type: "history" }));
    includeContext.addEventListener("change", () => this.post({ type: "includeContext", include: includeContext.checked }));
    // Images pasted or dropped become inline attachments; files dropped from the explorer
    // (a uri list) are attached as files.
    input.addEventListener("paste", (event) => {
      const images = imageFiles(event.clipboardData?.files);
      if (!images.length) return;
      event.preventDefault();
      for (const file of images) void this.attachImage(file);
    });
    document.addEventListener("dragover", (event) => event.preventDefault());
    document.addEventListener("drop", (event) => {
      event.preventDefault();
      for (const file of imageFiles(event.dataTransfer?.files)) void this.attachImage(file);
      const uris = (event.dataTransfer?.getData("text/uri-list") ?? "").split(/\r?\n/).filter((u) => u.startsWith("file:"));
      for (const uri of uris) this.addAttachment({ uri, label: decodeURIComponent(uri.split("/").pop() ?? uri) });
    });
  }

  private onKey(event: KeyboardEvent): void {
    const input = this.ui.input;
    const offered = this.offered;
    if (!this.ui.completions.hidden && offered.length) {
      if (event.key === "ArrowDown" || event.key === "ArrowUp") {
        event.preventDefault();
        this.chosen = (this.chosen + (event.key === "ArrowDown" ? 1 : offered.length - 1)) % offered.length;
        this.showCompletionsChosen();
        return;
      }
      // Enter on a command typed in full sends it; otherwise Enter or Tab takes the offer.
      const typedInFull = this.completing?.sigil === "/" && offered[this.chosen]?.insert.trim() === input.value.trim();
      if (event.key === "Tab" || (event.key === "Enter" && !typedInFull)) {
        event.preventDefault();
        this.pick(this.chosen);
        return;
      }
      if (typedInFull) this.closeCompletions();
      if (event.key === "Escape") {
        event.stopPropagation();
        this.closeCompletions();
        return;
      }
    }
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      this.send();
    } else if (event.key === "ArrowUp" && !input.value && this.state.lastUserText) {
      event.preventDefault();
      input.value = this.state.lastUserText;
    }
  }

  private send(): void {
    const text = this.ui.input.value.trim();
    if (!text) return;
    this.post({ type: "send", text, ...(this.attachments.length ? { attachments: this.attachments } : {}) });
    this.ui.input.value = "";
    this.attachments = [];
    this.renderAttachments();
    this.updateHint();
  }

  /** A mention whose `@text` was deleted from the box loses its chip too. */
  private dropDeletedMentions(): void {
    const kept = keptMentions(this.attachments, this.ui.input.value);
    if (kept.length === this.attachments.length) return;
    this.attachments = kept;
    this.renderAttachments();
  }

  /** The `!` and `#` shortcuts say what they will do before the message goes. */
  private updateHint(): void {
    const hint = shortcutHint(this.ui.input.value);
    this.ui.hint.textContent = hint;
    this.ui.hint.hidden = hint === "";
  }

  private async attachImage(file: File): Promise<void> {
    const uri = await new Promise<string>((resolve, reject) => {
      const reader = new FileReader();
      reader.onload = () => (typeof reader.result === "string" ? resolve(reader.result) : reject(new Error("no image data")));
      reader.onerror = () => reject(reader.error ?? new Error("the image could not be read"));
      reader.readAsDataURL(file);
    });
    this.pasted += 1;
    // A pasted screenshot is "image.png" every time: number them so each keeps its chip.
    const name = file.name && file.name !== "image.png" ? file.name : `pasted image ${this.pasted}.${file.type.split("/")[1] ?? "png"}`;
    this.addAttachment({ uri, label: name, name });
  }

  private renderAttachments(): void {
    this.ui.attachments.replaceChildren(
      ...this.attachments.map((attachment) => {
        const chip = element("span", attachment.group ? `chip ${attachment.group}` : "chip", attachment.label);
        chip.dataset.label = attachment.label;
        chip.title = attachment.detail ? `${attachment.label} · ${attachment.detail}` : attachment.label;
        const remove = button("×", () => {
          this.attachments = this.attachments.filter((a) => a !== attachment);
          this.renderAttachments();
        });
        remove.title = `Leave out ${attachment.label}`;
        chip.append(remove);
        return chip;
      }),
    );
  }

  /** A leading `/name` offers the session's commands; `@` followed by a path fragment right
   * before the caret asks the host for matching files. */
  private updateCompletion(): void {
    const before = this.ui.input.value.slice(0, this.ui.input.selectionStart);
    const slash = slashQuery(before);
    if (slash !== undefined) {
      this.completing = { query: slash, start: 0, sigil: "/" };
      this.showCompletions(
        matchCommands(this.state.commands, slash).map((c) => ({
          label: `/${c.name}`,
          insert: `/${c.name} `,
          detail: [c.argumentHint, c.description].filter(Boolean).join(" — "),
          tag: commandTag(c),
        })),
      );
      return;
    }
    const match = /(?:^|\s)@([^\s@]*)$/.exec(before);
    if (!match) {
      this.closeCompletions();
      return;
    }
    const query = match[1] ?? "";
    this.completing = { query, start: before.length - query.length - 1, sigil: "@" };
    this.post({ type: "findFiles", query });
  }

  private showCompletions(offers: Offer[]): void {
    this.offered = offers;
    this.chosen = 0;
    const box = this.ui.completions;
    box.hidden = offers.length === 0;
    box.replaceChildren(
      ...offers.map((offer, index) => {
        const row = element("div", index === this.chosen ? "completion chosen" : "completion");
        row.append(element("span", "completion-label", offer.label));
        if (offer.tag) row.append(element("span", `completion-tag ${offer.tag}`, offer.tag));
        if (offer.detail) row.append(element("span", "completion-detail", offer.detail));
        row.dataset.label = offer.label;
        row.setAttribute("role", "option");
        row.addEventListener("mousedown", (event) => {
          event.preventDefault();
          this.pick(index);
        });
        return row;
      }),
    );
  }

  private showCompletionsChosen(): void {
    Array.from(this.ui.completions.children).forEach((row, index) => row.classList.toggle("chosen", index === this.chosen));
  }

  private closeCompletions(): void {
    this.completing = null;
    this.offered = [];
    this.ui.completions.hidden = true;
  }

  private pick(index: number): void {
    const offer = this.offered[index];
    const completing = this.completing;
    if (!offer || !completing) return;
    const input = this.ui.input;
    const end = completing.start + 1 + completing.query.length;
    input.value = `${input.value.slice(0, completing.start)}${offer.insert}${input.value.slice(end)}`;
    const caret = completing.start + offer.insert.length;
    input.setSelectionRange(caret, caret);
    if (offer.attachment) this.addAttachment(offer.attachment);
    this.closeCompletions();
    input.focus();
  }

  /** The plan above the message box: open while work remains, with what is in progress. */
  private drawPlan(plan: ViewState["plan"]): void {
    this.drawnPlan = plan;
    const ui = this.ui;
    ui.plan.hidden = plan.length === 0;
    const done = plan.filter((e) => e.status === "completed").length;
    const current = plan.find((e) => e.status === "in_progress");
    ui.planTitle.textContent = `Plan ${done}/${plan.length}${current ? ` · ${current.content}` : ""}`;
    ui.planEntries.replaceChildren(
      ...plan.map((entry) => {
        const row = element("li", `plan-entry ${entry.status}`, `${PLAN_MARKS[entry.status]} ${entry.content}`);
        row.dataset.priority = entry.priority;
        return row;
      }),
    );
    if (done === plan.length) ui.plan.open = false;
  }
}

function usageText(state: ViewState): string {
  const usage = state.usage;
  if (!usage) return "";
  const tokens = usage.inputTokens + usage.outputTokens;
  const parts = [tokens >= 1000 ? `${(tokens / 1000).toFixed(1)}k tokens` : plural(tokens, "token")];
  if (usage.costUsd !== undefined) parts.push(`$${usage.costUsd.toFixed(usage.costUsd < 1 ? 4 : 2)}`);
  if (state.lastTurnCostUsd !== null) parts.push(`last turn $${state.lastTurnCostUsd.toFixed(state.lastTurnCostUsd < 1 ? 4 : 2)}`);
  if (usage.contextWindow > 0) parts.push(`${Math.round((100 * usage.contextTokens) / usage.contextWindow)}% context`);
  return parts.join(" · ");
}

function imageFiles(files: FileList | undefined): File[] {
  return Array.from(files ?? []).filter((file) => file.type.startsWith("image/"));
}
