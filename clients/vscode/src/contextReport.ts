// /context's answer read back into numbers, so the panel can draw what fills the window as
// a bar. The daemon sends it as text (PROTOCOL.md, Slash commands): a heading line, then
// one line per part, "  Name   12,345 tokens  6.2%  (detail)". Pure, tested apart.

export interface ContextPart {
  name: string;
  tokens: number;
  /** Share of the window, 0–100. */
  percent: number;
  /** "3 files", "12 messages"; empty when the line has none. */
  detail: string;
}

export interface ContextReport {
  model: string;
  used: number;
  window: number;
  /** The parts in the daemon's order, "Free space" last. */
  parts: ContextPart[];
}

const HEADING = /^Context of (.+): about ([\d,]+) of ([\d,]+) tokens/;
const PART = /^\s+(\S.*?)\s+([\d,]+) tokens\s+([\d.]+)%(?:\s+\((.*)\))?\s*$/;

const count = (text: string): number => Number(text.replace(/,/g, ""));

/** The report in `text`, or undefined when it is not /context's (an older daemon's words). */
export function parseContextReport(text: string): ContextReport | undefined {
  const [first, ...rest] = text.split(/\r?\n/);
  const heading = HEADING.exec(first ?? "");
  if (!heading) return undefined;
  const parts: ContextPart[] = [];
  for (const line of rest) {
    const part = PART.exec(line);
    if (!part) continue;
    parts.push({ name: part[1] ?? "", tokens: count(part[2] ?? "0"), percent: Number(part[3]), detail: part[4] ?? "" });
  }
  if (!parts.length) return undefined;
  return { model: heading[1] ?? "", used: count(heading[2] ?? "0"), window: count(heading[3] ?? "0"), parts };
}

/** A CSS-safe name for a part's colour ("MCP tools" → "mcp-tools"). */
export function partSlug(name: string): string {
  return name.toLowerCase().replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}
