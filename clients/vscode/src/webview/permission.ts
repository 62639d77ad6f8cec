// A permission request in the chat: what the call would do (for a file change, the diff
// itself, with no click), one primary answer and the rest secondary, each with the key
// every agentls client uses for it (y a n d, v for the full review).

import type { PermissionItem } from "../reducer";
import { ANSWER_KEYS, REVIEW_KEY, cardKeyAction, keyHints } from "../permissionKeys";
import type { DiffPreview, PreviewLine } from "../preview";
import type { SandboxEscalation } from "../wire";
import { type OptionId, type OptionKind, answerId, plural } from "../words";
import { type ButtonWeight, button, element, icon } from "./dom";
import { drawPatchFiles, drawPlan } from "./plan";

export interface PermissionActions {
  /** `message`: a plan's feedback. */
  answer(requestId: string, optionId: OptionId, message?: string): void;
  /** `index`: one file of a patch. */
  review(requestId: string, index?: number): void;
}

/** Keys pressed this soon after a card took the focus by itself are ignored: they were
 * meant for whatever had the focus before. */
const KEY_GRACE_MS = 300;
const tookFocusAt = new Map<string, number>();

const TOOL_ICONS: Record<string, string> = {
  read: "file",
  edit: "edit",
  delete: "trash",
  move: "arrow-right",
  search: "search",
  execute: "terminal",
  think: "lightbulb",
  fetch: "globe",
};

export function toolIcon(toolKind: string | undefined): string {
  return TOOL_ICONS[toolKind ?? ""] ?? "tools";
}

/** Draw the card into `target` (the item's element, which keeps its key handler). */
export function drawPermission(target: HTMLElement, item: PermissionItem, toolKind: string | undefined, actions: PermissionActions): void {
  target.dataset.state = item.state;
  const head = element("div", "card-head");
  head.append(icon(item.state === "pending" ? toolIcon(toolKind) : answeredIcon(item)), element("span", "title", item.title));
  if (item.state !== "pending") {
    head.append(element("span", "resolved", item.answer ?? "Answered"));
    tookFocusAt.delete(item.id);
    target.removeAttribute("tabindex");
    target.replaceChildren(head);
    return;
  }
  if (item.inlineEdit) {
    // Reviewed where it is, in the editor: the chat only says so.
    target.replaceChildren(head, element("div", "inline-review", "Shown in the editor: accept or reject each change there (Esc stops the edit)."));
    return;
  }
  target.tabIndex = 0;
  target.setAttribute("role", "group");
  target.onkeydown = (event) => onCardKey(event, item, actions);
  if (item.plan !== undefined) {
    target.setAttribute("aria-label", `${item.title}. Keys: y approve, a approve and accept edits, n keep planning (type feedback), d reject.`);
    target.replaceChildren(head, ...drawPlan(item, actions));
    return;
  }
  const reviewable = item.preview !== undefined || item.files !== undefined;
  target.setAttribute("aria-label", `Permission request: ${item.title}. Keys: ${keyHints(item.options.map((o) => o.kind), reviewable)}.`);
  const parts: HTMLElement[] = [head];
  if (item.sandboxEscalation) parts.push(drawEscalation(item.sandboxEscalation));
  if (item.pluginTrust) parts.push(drawPluginRuns(item.pluginTrust));
  if (item.preview) parts.push(drawPreview(item.preview, () => actions.review(item.id)));
  if (item.files) parts.push(drawPatchFiles(item.files, (index) => actions.review(item.id, index)));
  parts.push(drawOptions(item, actions));
  const rule = item.options.find((o) => o.rule)?.rule;
  if (rule) parts.push(element("div", "rule", `“Always” saves the rule ${rule}`));
  target.replaceChildren(...parts);
}

/** The sandbox's question: the command, why the box stopped it, and that a yes runs it
 * once with no box at all. */
function drawEscalation(escalation: SandboxEscalation): HTMLElement {
  const box = element("div", "sandbox-escalation");
  const warning = element("div", "warning");
  warning.append(icon("warning"), element("span", "", "Runs OUTSIDE the sandbox, once: with your full rights, network included."));
  // It failed in the box, or the agent asks to leave the box before running it at all.
  const why = escalation.trigger === "model_request" ? `The agent asks to run it outside: ${escalation.reason}` : `It failed in the sandbox: ${escalation.reason}`;
  box.append(warning, element("pre", "command", escalation.command), element("div", "reason", why));
  return box;
}

/** A plugin's trust question: every command its hooks and MCP servers would run. */
function drawPluginRuns(trust: { plugin: string; runs: string[] }): HTMLElement {
  const box = element("div", "plugin-runs");
  box.append(element("div", "", `The plugin ${trust.plugin} would run, with your rights:`));
  for (const command of trust.runs) box.append(element("pre", "command", command));
  if (!trust.runs.length) box.append(element("div", "", "(no command listed)"));
  return box;
}

function answeredIcon(item: PermissionItem): string {
  if (item.state === "cancelled") return "circle-slash";
  return item.optionId?.startsWith("allow") ? "check" : "close";
}

const OPTION_ICONS: Partial<Record<OptionKind, string>> = { allow_once: "check", reject_once: "close" };
/** Allow once is the one primary action; Reject is secondary; the "always" answers, which
 * save a rule, are quieter still. */
const OPTION_WEIGHTS: Record<OptionKind, ButtonWeight> = { allow_once: "primary", reject_once: "secondary", allow_always: "quiet", reject_always: "quiet" };
const OPTION_ORDER: OptionKind[] = ["allow_once", "reject_once", "allow_always", "reject_always"];

function drawOptions(item: PermissionItem, actions: PermissionActions): HTMLElement {
  const row = element("div", "options");
  const options = [...item.options].sort((a, b) => OPTION_ORDER.indexOf(a.kind) - OPTION_ORDER.indexOf(b.kind));
  for (const option of options) {
    const choice = button({
      label: option.name,
      weight: OPTION_WEIGHTS[option.kind],
      key: ANSWER_KEYS[option.kind],
      onClick: () => actions.answer(item.id, answerId(option)),
      ...(OPTION_ICONS[option.kind] ? { icon: OPTION_ICONS[option.kind] } : {}),
      ...(option.rule ? { title: `${option.name}: saves the rule ${option.rule} for this session` } : {}),
    });
    choice.dataset.option = option.kind;
    row.append(choice);
  }
  return row;
}

/** The proposed change as diff lines; long lines wrap, so nothing is cut at the panel's edge. */
function drawPreview(preview: DiffPreview, review: () => void): HTMLElement {
  const box = element("div", "diff-preview");
  const name = preview.path.split(/[\\/]/).pop() ?? preview.path;
  const file = element("div", "diff-file");
  const label = element("span", "diff-name", name);
  label.title = preview.path;
  file.append(icon(preview.created ? "new-file" : "diff"), label, element("span", "added", `+${preview.added}`), element("span", "removed", `−${preview.removed}`));
  const open = button({ label: "Review", icon: "go-to-file", key: REVIEW_KEY, onClick: review, title: "Open it in the diff editor: keep or revert each change, edit it, then accept" });
  open.dataset.action = "review";
  file.append(open);
  const lines = element("div", "diff-lines");
  lines.tabIndex = 0;
  lines.setAttribute("role", "region");
  lines.setAttribute("aria-label", `Proposed change to ${name}`);
  lines.append(...preview.lines.map(drawLine));
  box.append(file, lines);
  if (preview.hidden) box.append(element("div", "diff-more", `${plural(preview.hidden, "more line")} not shown: Review shows the whole change.`));
  return box;
}

const SIGNS = { added: "+", removed: "−", context: " ", gap: "" } as const;

function drawLine(line: PreviewLine): HTMLElement {
  if (line.kind === "gap") return element("div", "line gap", `⋯ ${plural(line.count ?? 0, "unchanged line")}`);
  const row = element("div", `line ${line.kind}`);
  row.append(element("span", "number", String(line.number ?? "")), element("span", "sign", SIGNS[line.kind]), element("span", "text", line.text));
  return row;
}

function onCardKey(event: KeyboardEvent, item: PermissionItem, actions: PermissionActions): void {
  if (event.ctrlKey || event.metaKey || event.altKey || event.isComposing) return;
  if (event.target instanceof HTMLInputElement || event.target instanceof HTMLTextAreaElement) return;
  const action = cardKeyAction(event.key, item.options.map((o) => o.kind), item.preview !== undefined || item.files !== undefined);
  if (!action) return;
  event.preventDefault();
  event.stopPropagation();
  if (Date.now() - (tookFocusAt.get(item.id) ?? 0) < KEY_GRACE_MS) return;
  if (action.type === "review") return actions.review(item.id);
  const option = item.options.find((o) => o.kind === action.kind);
  if (!option) return;
  // A plan's "Keep planning" wants the user's feedback first: the key opens its box.
  const feedback = item.plan !== undefined && option.optionId === "plan_keep_planning";
  const box = feedback ? (event.currentTarget as HTMLElement).querySelector<HTMLTextAreaElement>("textarea.plan-feedback") : null;
  if (box) box.focus();
  else actions.answer(item.id, answerId(option));
}

/** Give a new request's card the focus, once, unless the user is writing a message. */
export function focusNewCard(target: HTMLElement, item: PermissionItem, input: HTMLTextAreaElement): void {
  if (item.state !== "pending" || item.inlineEdit || tookFocusAt.has(item.id)) return;
  if (document.activeElement === input && input.value.trim() !== "") return;
  tookFocusAt.set(item.id, Date.now());
  // A new card is drawn before it is placed in the transcript: focus it once it is there.
  queueMicrotask(() => target.focus());
}
