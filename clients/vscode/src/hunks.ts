// Line hunks between two texts (Myers' O(ND) diff after trimming the common ends), and
// taking one hunk back: what the review's per-hunk "Revert" does. Pure, tested apart.

/** Lines [oldStart, oldEnd) of the old text became lines [newStart, newEnd) of the new. */
export interface Hunk {
  oldStart: number;
  oldEnd: number;
  newStart: number;
  newEnd: number;
}

/** Lines with their endings kept, so joining them gives the text back byte for byte. */
export function splitLines(text: string): string[] {
  return text.match(/[^\n]*\n|[^\n]+$/g) ?? [];
}

export function hunks(oldText: string, newText: string): Hunk[] {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let endA = a.length;
  let endB = b.length;
  while (endA > start && endB > start && a[endA - 1] === b[endB - 1]) {
    endA--;
    endB--;
  }
  const matches = commonLines(a.slice(start, endA), b.slice(start, endB));
  const result: Hunk[] = [];
  let i = 0;
  let j = 0;
  for (const [mi, mj] of [...matches, [endA - start, endB - start] as const]) {
    if (mi > i || mj > j) result.push({ oldStart: start + i, oldEnd: start + mi, newStart: start + j, newEnd: start + mj });
    i = mi + 1;
    j = mj + 1;
  }
  return result;
}

/** The hunk that holds new-text line `line` (or, for a deletion, sits right at it). */
export function hunkAt(list: readonly Hunk[], line: number): Hunk | undefined {
  return list.find((h) => (h.newStart === h.newEnd ? line === h.newStart || line === h.newStart - 1 : line >= h.newStart && line < h.newEnd));
}

/** `newText` with one hunk put back as it was in `oldText`. */
export function revertHunk(oldText: string, newText: string, hunk: Hunk): string {
  const a = splitLines(oldText);
  const b = splitLines(newText);
  return [...b.slice(0, hunk.newStart), ...a.slice(hunk.oldStart, hunk.oldEnd), ...b.slice(hunk.newEnd)].join("");
}

/** Index pairs of a longest common subsequence of lines, in order (Myers, linear space for
 * the trace is not needed at the sizes reviewed: the trace is kept per edit distance). */
function commonLines(a: readonly string[], b: readonly string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const max = n + m;
  const offset = max + 1;
  const v = new Int32Array(2 * max + 3);
  const trace: Int32Array[] = [];
  let found = false;
  for (let d = 0; d <= max && !found; d++) {
    trace.push(v.slice());
    for (let k = -d; k <= d; k += 2) {
      const left = v[offset + k - 1] ?? 0;
      const right = v[offset + k + 1] ?? 0;
      let x = k === -d || (k !== d && left < right) ? right : left + 1;
      let y = x - k;
      while (x < n && y < m && a[x] === b[y]) {
        x++;
        y++;
      }
      v[offset + k] = x;
      if (x >= n && y >= m) {
        found = true;
        break;
      }
    }
  }
  // Walk the trace back from the end, collecting the diagonal (equal) steps.
  const pairs: [number, number][] = [];
  let x = n;
  let y = m;
  for (let d = trace.length - 1; d >= 0 && (x > 0 || y > 0); d--) {
    const before = trace[d] ?? v;
    const k = x - y;
    const down = k === -d || (k !== d && (before[offset + k - 1] ?? 0) < (before[offset + k + 1] ?? 0));
    const prevK = down ? k + 1 : k - 1;
    const prevX = d === 0 ? 0 : (before[offset + prevK] ?? 0);
    const prevY = prevX - prevK;
    while (x > prevX && y > prevY) {
      x--;
      y--;
      pairs.push([x, y]);
    }
    if (d > 0) {
      x = prevX;
      y = prevY;
    }
  }
  return pairs.reverse();
}
