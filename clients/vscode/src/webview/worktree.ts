// An isolated agent's worktree card: its branch, each file with +/−, and View diff, Merge
// and Discard until it is resolved (here or in another window); a failed merge's
// conflicts are listed with their reasons.

import type { FromWebview } from "../bridge";
import type { WorktreeItem } from "../reducer";
import { plural } from "../words";
import { type ButtonSpec, button, element, icon } from "./dom";

const STATE_WORDS: Record<WorktreeItem["state"], string> = {
  ready: "waiting for you: not in your working tree yet",
  merged: "merged into your working tree",
  discarded: "discarded",
};

const ACTIONS: Array<Omit<ButtonSpec, "onClick"> & { action: "view" | "merge" | "discard" }> = [
  { action: "view", label: "View diff", icon: "diff", title: "Open each file the agent changed in the diff editor" },
  { action: "merge", label: "Merge", icon: "git-merge", weight: "primary", title: "Bring these changes into your working tree, uncommitted" },
  { action: "discard", label: "Discard", icon: "trash", weight: "quiet", title: "Delete the worktree and its branch (asks first)" },
];

export function drawWorktree(target: HTMLElement, item: WorktreeItem, post: (message: FromWebview) => void): void {
  target.dataset.state = item.state;
  const title = element("div", "title");
  title.append(icon("git-branch"), element("span", "branch", item.branch), element("span", "added", `+${item.added}`), element("span", "removed", `−${item.removed}`));
  const status = element("div", "worktree-state", `${plural(item.files.length, "file")} changed in the agent's worktree, ${STATE_WORDS[item.state]}`);
  const rows = item.files.map((file) => {
    const row = element("div", "changed-file");
    row.dataset.path = file.path;
    row.append(element("span", "location", file.path), element("span", "added", `+${file.added}`), element("span", "removed", `−${file.removed}`));
    if (file.status !== "modified") row.append(element("span", "created", file.status === "added" ? "new" : "deleted"));
    return row;
  });
  const parts: HTMLElement[] = [title, status, ...rows];
  if (item.conflicts.length) {
    const list = element("div", "worktree-conflicts");
    list.append(element("div", "", `Not merged: ${plural(item.conflicts.length, "conflict")} (nothing was written)`));
    for (const conflict of item.conflicts) list.append(element("div", "conflict", `${conflict.path}: ${conflict.reason}`));
    parts.push(list);
  }
  if (item.state === "ready") {
    const actions = element("div", "options");
    for (const spec of ACTIONS) {
      const node = button({ ...spec, onClick: () => post({ type: "worktree", agentId: item.id, action: spec.action }) });
      node.dataset.action = spec.action;
      actions.append(node);
    }
    parts.push(actions);
  }
  target.replaceChildren(...parts);
}
