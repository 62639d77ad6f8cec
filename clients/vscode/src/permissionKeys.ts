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

const KEY_WORDS: Record<OptionKind, string> = {
  allow_once: "allow once",
  allow_always: "always allow",
  reject_once: "reject",
  reject_always: "always reject",
};

/** The keys a card takes, in words, for its aria-label: only those of the options it
 * offers (the sandbox's rerun question has two), and v when there is a review. */
export function keyHints(offered: readonly OptionKind[], hasDiff: boolean): string {
  const order: OptionKind[] = ["allow_once", "allow_always", "reject_once", "reject_always"];
  const keys = order.filter((k) => offered.includes(k)).map((k) => `${ANSWER_KEYS[k]} ${KEY_WORDS[k]}`);
  return [...keys, ...(hasDiff ? [`${REVIEW_KEY} review`] : [])].join(", ");
}
