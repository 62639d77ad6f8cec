// Words a user reads: counts with the right plural ("1 turn", "2 turns"), and a
// permission answer in words rather than its option id. Pure, shared by the panel and the
// host.

import type { PermissionOption, RespondPermissionParams } from "./wire";

/** "1 line", "2 lines"; `many` for a plural that is not the word plus "s". */
export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString("en-US")} ${count === 1 ? one : many}`;
}

export type OptionKind = PermissionOption["kind"];

/** What the card says once the user picked an option of this kind. */
export const ANSWERED: Record<OptionKind, string> = {
  allow_once: "Allowed once",
  allow_always: "Always allowed",
  reject_once: "Rejected",
  reject_always: "Always rejected",
};

export type OptionId = RespondPermissionParams["optionId"];

/** What a plan's card says once answered (its options' kinds would say "Always allowed"). */
export const PLAN_ANSWERED: Partial<Record<OptionId, string>> = {
  plan_approve: "Approved",
  plan_approve_accept_edits: "Approved, edits accepted",
  plan_keep_planning: "Sent back to planning",
  plan_reject: "Plan rejected",
};

const OPTION_IDS: readonly string[] = [
  "allow_once",
  "allow_always",
  "reject_once",
  "reject_always",
  "plan_approve",
  "plan_approve_accept_edits",
  "plan_keep_planning",
  "plan_reject",
] satisfies OptionId[];

/** The id an answer sends: the option's own (a plan's are not its kind), else its kind. */
export function answerId(option: PermissionOption): OptionId {
  return OPTION_IDS.includes(option.optionId) ? (option.optionId as OptionId) : option.kind;
}
