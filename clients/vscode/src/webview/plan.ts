// Two permission cards with more to show than a diff: a plan to approve (ExitPlanMode: the
// plan as markdown, Approve / Approve and accept edits / Keep planning with feedback /
// Reject) and a patch (apply_patch: every file it adds, changes, deletes or moves, each
// opening in VS Code's diff editor, approved or rejected as a whole).

import type { PatchFile } from "../patch";
import { PATCH_LETTERS } from "../patch";
import type { PermissionItem } from "../reducer";
import { ANSWER_KEYS } from "../permissionKeys";
import { type OptionId, answerId, plural } from "../words";
import { type ButtonWeight, button, element, icon } from "./dom";
import { renderMarkdown } from "./markdown";
import type { PermissionActions } from "./permission";

/** The plan options in the order the card offers them, with their weight. */
const PLAN_OPTIONS: ReadonlyArray<[OptionId, ButtonWeight, string]> = [
  ["plan_approve", "primary", "check"],
  ["plan_approve_accept_edits", "secondary", "check-all"],
  ["plan_keep_planning", "secondary", "comment"],
  ["plan_reject", "quiet", "close"],
];

/** The plan card's body: the plan, a feedback box, the four answers. */
export function drawPlan(item: PermissionItem, actions: PermissionActions): HTMLElement[] {
  const body = element("div", "plan-body markdown");
  renderMarkdown(body, item.plan ?? "");
  body.tabIndex = 0;
  body.setAttribute("role", "document");
  body.setAttribute("aria-label", "The plan");
  const feedback = element("textarea", "plan-feedback") as HTMLTextAreaElement;
  feedback.rows = 2;
  feedback.placeholder = "What should change? (Ctrl+Enter: Keep planning)";
  feedback.setAttribute("aria-label", "Feedback on the plan");
  const answer = (optionId: OptionId): void => {
    const text = feedback.value.trim();
    const withText = optionId === "plan_keep_planning" || optionId === "plan_reject";
    actions.answer(item.id, optionId, withText && text ? text : undefined);
  };
  feedback.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      answer("plan_keep_planning");
    } else if (event.key === "Escape") {
      event.stopPropagation();
      feedback.closest<HTMLElement>(".permission")?.focus();
    }
  });
  const row = element("div", "options");
  for (const [optionId, weight, iconName] of PLAN_OPTIONS) {
    const option = item.options.find((o) => answerId(o) === optionId);
    if (!option) continue;
    const choice = button({ label: option.name, weight, icon: iconName, key: ANSWER_KEYS[option.kind], onClick: () => answer(optionId) });
    choice.dataset.option = optionId;
    row.append(choice);
  }
  return [body, feedback, row];
}

/** A patch's files: what happens to each, its +/− lines, and its diff a click away. */
export function drawPatchFiles(files: readonly PatchFile[], open: (index?: number) => void): HTMLElement {
  const box = element("div", "patch-files");
  const head = element("div", "patch-head");
  const added = files.reduce((n, f) => n + f.added, 0);
  const removed = files.reduce((n, f) => n + f.removed, 0);
  head.append(icon("files"), element("span", "patch-count", plural(files.length, "file")), element("span", "added", `+${added}`), element("span", "removed", `−${removed}`));
  const all = button({ label: "Review all", icon: "diff-multiple", key: "v", onClick: () => open(), title: "Open every file's diff in the diff editor" });
  all.dataset.action = "review";
  head.append(all);
  box.append(head);
  files.forEach((file, index) => {
    const row = element("div", "patch-file");
    row.dataset.kind = file.kind;
    row.dataset.path = file.path;
    const name = baseName(file.path);
    const letter = element("span", `patch-kind ${file.kind}`, PATCH_LETTERS[file.kind]);
    letter.title = file.kind;
    const label = element("a", "diff-name", file.movedFrom ? `${baseName(file.movedFrom)} → ${name}` : name) as HTMLAnchorElement;
    label.href = "#";
    label.title = file.movedFrom ? `${file.movedFrom} → ${file.path}` : file.path;
    label.addEventListener("click", (event) => {
      event.preventDefault();
      open(index);
    });
    row.append(letter, label, element("span", "added", `+${file.added}`), element("span", "removed", `−${file.removed}`));
    box.append(row);
  });
  return box;
}

function baseName(path: string): string {
  return path.split(/[\\/]/).pop() ?? path;
}
