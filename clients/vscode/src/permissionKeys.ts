// The keys that answer a permission request when its card has focus, the same in every
// agentls client: y allow once, a always allow, n reject, d always reject (deny always),
// v open the full review. Pure, so the mapping is tested apart from the webview.

import type { OptionKind } from "./words";

export type CardKeyAction = { type: "answer"; kind: OptionKind } | { type: "review" };

export const ANSWER_KEYS: Record<OptionKind, string> = {
  allow_once: "y",
  allow_always: "a",
  reject_once: "n",
  reject_always: "d",
};

export const REVIEW_KEY = "v";

/** What a key pressed on a pending card does, given what the request offers; undefined: nothing. */
export function cardKeyAction(key: string, offered: readonly OptionKind[], hasDiff: boolean): CardKeyAction | undefined {
  const pressed = key.toLowerCase();
  if (pressed === REVIEW_KEY) return hasDiff ? { type: "review" } : undefined;
  const kind = offered.find((k) => ANSWER_KEYS[k] === pressed);
  return kind ? { type: "answer", kind } : undefined;
}
