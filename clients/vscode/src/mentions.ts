// What `@` in the message box offers, in groups (files, folders, symbols, problems, other
// sessions), and the attachment URIs each becomes (PROTOCOL.md, attachments): a folder is
// its directory's file:// URI, problems are `agentls:diagnostics[?uri=…]`, a session is
// `agentls:session/<id>`, a symbol its file with the symbol's range and name. Pure (no
// vscode import) so it is tested apart from the editor.

import type { Attachment, MentionGroup } from "./bridge";

/** The order groups are listed in, and how many of each the list shows at most. */
export const GROUP_CAPS: Readonly<Record<MentionGroup, number>> = { file: 20, folder: 8, symbol: 12, problems: 2, session: 8 };
const GROUP_ORDER = Object.keys(GROUP_CAPS) as MentionGroup[];

/** Words that find the problems entries besides their labels. */
const PROBLEM_WORDS = ["problems", "diagnostics", "errors", "warnings"];
const SESSION_LABEL_MAX = 40;

export function diagnosticsUri(fileUri?: string): string {
  return fileUri ? `agentls:diagnostics?uri=${encodeURIComponent(fileUri)}` : "agentls:diagnostics";
}

export function sessionUri(sessionId: string): string {
  return `agentls:session/${sessionId}`;
}

function contains(text: string, query: string): boolean {
  return text.toLowerCase().includes(query.toLowerCase());
}

/** The directories between a workspace root (left out) and a file (left out), as URIs. */
export function ancestorFolders(fileUri: string, rootUri: string): string[] {
  const root = rootUri.replace(/\/+$/, "");
  if (!fileUri.startsWith(`${root}/`)) return [];
  const parts = fileUri.slice(root.length + 1).split("/").slice(0, -1);
  return parts.map((_, index) => `${root}/${parts.slice(0, index + 1).join("/")}`);
}

/** Folders of these files (under their roots) whose own name contains `query`: shallowest first. */
export function foldersMatching(fileUris: readonly string[], rootUris: readonly string[], query: string): string[] {
  const found = new Set<string>();
  for (const file of fileUris) {
    const root = rootUris.find((r) => file.startsWith(`${r.replace(/\/+$/, "")}/`));
    if (root === undefined) continue;
    for (const folder of ancestorFolders(file, root)) {
      if (contains(decodeURIComponent(folder.split("/").pop() ?? ""), query)) found.add(folder);
    }
  }
  const depth = (uri: string): number => uri.split("/").length;
  return [...found].sort((a, b) => depth(a) - depth(b) || a.localeCompare(b)).slice(0, GROUP_CAPS.folder);
}

/** A folder's entry: `label` is its workspace-relative path. */
export function folderMention(uri: string, label: string): Attachment {
  return { uri, label: `${label.replace(/\/+$/, "")}/`, group: "folder" };
}

export interface ProblemCounts {
  errors: number;
  warnings: number;
}

function countsText(counts: ProblemCounts): string {
  const parts = [];
  if (counts.errors) parts.push(`${counts.errors} error${counts.errors === 1 ? "" : "s"}`);
  if (counts.warnings) parts.push(`${counts.warnings} warning${counts.warnings === 1 ? "" : "s"}`);
  return parts.length ? parts.join(", ") : "none now";
}

/** "Problems" (every open file's) and, with an active file, "Problems in <file>", if the query finds them. */
export function problemMentions(
  query: string,
  all: ProblemCounts,
  active?: { uri: string; name: string; counts: ProblemCounts },
): Attachment[] {
  const offers: Attachment[] = [{ uri: diagnosticsUri(), label: "Problems", detail: countsText(all), group: "problems" }];
  if (active) {
    offers.push({ uri: diagnosticsUri(active.uri), label: `Problems in ${active.name}`, detail: countsText(active.counts), group: "problems" });
  }
  const byWord = PROBLEM_WORDS.some((word) => word.startsWith(query.toLowerCase()));
  return offers.filter((offer) => byWord || contains(offer.label, query));
}

export interface SessionSummary {
  sessionId: string;
  title: string;
  turns: number;
  updatedAt: string;
}

/** Other sessions whose title contains the query (the current one left out), as listed (newest first). */
export function sessionMentions(sessions: readonly SessionSummary[], query: string, current: string | null): Attachment[] {
  return sessions
    .filter((s) => s.sessionId !== current && contains(s.title, query))
    .slice(0, GROUP_CAPS.session)
    .map((s) => {
      const title = s.title.replace(/\s+/g, " ").trim() || "(untitled)";
      const label = title.length > SESSION_LABEL_MAX ? `${title.slice(0, SESSION_LABEL_MAX - 1)}…` : title;
      return { uri: sessionUri(s.sessionId), label, detail: `${s.turns} turn${s.turns === 1 ? "" : "s"} · ${s.updatedAt.slice(0, 10)}`, group: "session" };
    });
}

/** A symbol's entry: its file, the symbol's range and name; the detail says where it is. */
export function symbolMention(symbol: { name: string; kind: string; uri: string; range: Attachment["range"] & object; where: string }): Attachment {
  return {
    uri: symbol.uri,
    range: symbol.range,
    name: symbol.name,
    label: symbol.name,
    detail: `${symbol.kind} · ${symbol.where}:${symbol.range.start.line + 1}`,
    group: "symbol",
  };
}

/** Every group's offers in one list: group by group, each capped. */
export function arrangeMentions(offers: readonly Attachment[]): Attachment[] {
  return GROUP_ORDER.flatMap((group) => offers.filter((o) => (o.group ?? "file") === group).slice(0, GROUP_CAPS[group]));
}

/** Two attachments are the same when they point at the same thing (a label may repeat: two symbols `run`). */
export function sameAttachment(a: Attachment, b: Attachment): boolean {
  return a.uri === b.uri && JSON.stringify(a.range ?? null) === JSON.stringify(b.range ?? null) && a.name === b.name;
}

/** What picking an offer puts in the box: `@` and its label, spaces kept out of file paths. */
export function mentionText(offer: Attachment): string {
  return `@${offer.label} `;
}

/** The attachments still wanted: an `@` mention whose text was taken out of the box goes
 * with it; dropped files and pasted images (no group) stay until their chip is removed. */
export function keptMentions(attachments: readonly Attachment[], text: string): Attachment[] {
  return attachments.filter((a) => a.group === undefined || text.includes(mentionText(a).trimEnd()));
}
