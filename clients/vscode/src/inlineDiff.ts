// An inline edit's change as the editor shows it under review: each hunk's old lines
// (to be removed) above its proposed lines, until the user decides it; a kept hunk then
// shows only its new lines, a rejected one only its old. When every hunk is decided, the
// answer is the file with only the kept hunks. Pure: no vscode, tested apart.

import { type Hunk, hunks, splitLines } from "./hunks";

export type Decision = "undecided" | "accepted" | "rejected";

export interface InlineReview {
  oldText: string;
  newText: string;
  hunks: Hunk[];
  decisions: Decision[];
}

/** Where one hunk sits in the shown text: lines [removedStart, addedStart) are its old
 * lines, [addedStart, end) its proposed ones (either may be empty). */
export interface HunkBlock {
  index: number;
  decision: Decision;
  removedStart: number;
  addedStart: number;
  end: number;
}

export interface Layout {
  text: string;
  /** The undecided hunks, each where its lines are in `text`. */
  blocks: HunkBlock[];
}

export type InlineAnswer = { optionId: "allow_once"; acceptedText: string } | { optionId: "reject_once" };

export function startReview(oldText: string, newText: string): InlineReview {
  const list = hunks(oldText, newText);
  return { oldText, newText, hunks: list, decisions: list.map(() => "undecided") };
}

export function decide(review: InlineReview, index: number, decision: Decision): InlineReview {
  return { ...review, decisions: review.decisions.map((d, i) => (i === index ? decision : d)) };
}

/** Every hunk not decided yet gets `decision`. */
export function decideRest(review: InlineReview, decision: Decision): InlineReview {
  return { ...review, decisions: review.decisions.map((d) => (d === "undecided" ? decision : d)) };
}

/** The text the editor shows, and where the undecided hunks are in it. */
export function layout(review: InlineReview): Layout {
  const a = splitLines(review.oldText);
  const b = splitLines(review.newText);
  const out: string[] = [];
  const blocks: HunkBlock[] = [];
  let oldLine = 0;
  review.hunks.forEach((hunk, index) => {
    out.push(...a.slice(oldLine, hunk.oldStart));
    oldLine = hunk.oldEnd;
    const removed = a.slice(hunk.oldStart, hunk.oldEnd);
    const added = b.slice(hunk.newStart, hunk.newEnd);
    const decision = review.decisions[index] ?? "undecided";
    if (decision === "accepted") out.push(...added);
    else if (decision === "rejected") out.push(...removed);
    else {
      const removedStart = out.length;
      // The old last line may lack its newline: the proposed lines still start a line.
      out.push(...removed.map((line, i) => (i === removed.length - 1 && added.length && !line.endsWith("\n") ? `${line}\n` : line)));
      const addedStart = out.length;
      out.push(...added);
      blocks.push({ index, decision, removedStart, addedStart, end: out.length });
    }
  });
  out.push(...a.slice(oldLine));
  return { text: out.join(""), blocks };
}

/** The file with only the accepted hunks (an undecided one counts as rejected). */
export function acceptedText(review: InlineReview): string {
  return layout(decideRest(review, "rejected")).text;
}

/** The answer once every hunk is decided: the kept hunks, or a rejection when none is. */
export function answerOf(review: InlineReview): InlineAnswer | undefined {
  if (review.decisions.some((d) => d === "undecided")) return undefined;
  if (!review.decisions.some((d) => d === "accepted")) return { optionId: "reject_once" };
  return { optionId: "allow_once", acceptedText: acceptedText(review) };
}

/** One replacement of whole lines: characters [from, to) of the current text become `text`. */
export interface TextEdit {
  from: number;
  to: number;
  text: string;
}

/** The smallest line replacements that turn `current` into `target`, last first (so
 * applying them in order never moves the text of the next). */
export function lineEdits(current: string, target: string): TextEdit[] {
  const a = splitLines(current);
  const b = splitLines(target);
  const offsets = [0];
  for (const line of a) offsets.push((offsets.at(-1) ?? 0) + line.length);
  return hunks(current, target)
    .map((h) => ({ from: offsets[h.oldStart] ?? 0, to: offsets[h.oldEnd] ?? 0, text: b.slice(h.newStart, h.newEnd).join("") }))
    .reverse();
}

/** The block (undecided hunk) whose lines hold `line`, or the first after it. */
export function blockAt(blocks: readonly HunkBlock[], line: number): HunkBlock | undefined {
  return blocks.find((b) => line >= b.removedStart && line < Math.max(b.end, b.removedStart + 1)) ?? blocks.find((b) => b.removedStart >= line);
}

/** The buffer after the user typed in it during the review (`current`, from the shown
 * `layout`): their text kept, the proposed lines of each hunk they did not touch taken out. */
export function withoutProposals(shown: Layout, current: string): string {
  const edits = hunks(shown.text, current);
  const lines = splitLines(current);
  const drop = new Set<number>();
  for (const block of shown.blocks) {
    const touched = edits.some((e) => e.oldStart < Math.max(block.end, block.removedStart + 1) && e.oldEnd > block.removedStart - (e.oldStart === e.oldEnd ? 1 : 0));
    if (touched) continue;
    const before = edits.filter((e) => e.oldEnd <= block.removedStart);
    const shift = before.reduce((n, e) => n + (e.newEnd - e.newStart) - (e.oldEnd - e.oldStart), 0);
    for (let line = block.addedStart; line < block.end; line++) drop.add(line + shift);
  }
  return lines.filter((_, i) => !drop.has(i)).join("");
}
