// Where streamed markdown stops changing: text before a blank line outside a code fence
// parses the same whatever follows (near enough: a later reference-style link definition
// is the exception), so the webview renders it once. Pure, tested apart.

const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The end of the last blank line after `from` that is outside a code fence (`from` is). */
export function settledEnd(text: string, from: number): number {
  let end = from;
  let fence: string | null = null;
  let at = from;
  while (at < text.length) {
    const next = text.indexOf("\n", at);
    if (next < 0) break;
    const line = text.slice(at, next);
    const marker = FENCE.exec(line)?.[1];
    if (marker && (fence === null || (marker[0] === fence[0] && marker.length >= fence.length))) {
      fence = fence === null ? marker : null;
    } else if (fence === null && line.trim() === "") {
      end = next + 1;
    }
    at = next + 1;
  }
  return end;
}
