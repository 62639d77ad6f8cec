// Where `@` finds its offers in the editor: the workspace's files and folders, VS Code's
// own workspace symbol providers, its Problems, and the daemon's other sessions. What each
// becomes is mentions.ts's (pure); this only asks the editor and the daemon.

import * as vscode from "vscode";

import type { Attachment } from "./bridge";
import {
  arrangeMentions,
  folderMention,
  foldersMatching,
  type ProblemCounts,
  problemMentions,
  type SessionSummary,
  sessionMentions,
  symbolMention,
} from "./mentions";

const EXCLUDE = "**/{node_modules,.git}/**";
/** Files a query looks at, for itself and for the folders they are in. */
const FILE_SCAN = 200;
const FOLDER_SCAN = 400;
/** Symbol search waits for one typed character more: an empty query lists everything. */
const SYMBOL_MIN_QUERY = 2;

export interface MentionContext {
  /** The daemon's sessions (agent/listSessions), or none when it cannot be asked. */
  sessions(): Promise<SessionSummary[]>;
  currentSession: string | null;
}

/** Every group's offers for `@query`, grouped and capped; a source that fails offers nothing. */
export async function findMentions(query: string, context: MentionContext): Promise<Attachment[]> {
  const safe = query.replace(/[[\]{}*?!]/g, "");
  const settle = async (offers: Promise<Attachment[]>): Promise<Attachment[]> => offers.catch(() => []);
  const groups = await Promise.all([
    settle(files(safe)),
    settle(folders(safe)),
    settle(symbols(query)),
    settle(Promise.resolve(problems(query))),
    settle(context.sessions().then((all) => sessionMentions(all, query, context.currentSession))),
  ]);
  return arrangeMentions(groups.flat());
}

/** Workspace files whose name contains the query, shortest path first. */
async function files(safe: string): Promise<Attachment[]> {
  const found = await vscode.workspace.findFiles(`**/*${safe}*`, EXCLUDE, FILE_SCAN);
  return found
    .map((uri): Attachment => ({ uri: uri.toString(), label: vscode.workspace.asRelativePath(uri), group: "file" }))
    .sort((a, b) => a.label.length - b.label.length || a.label.localeCompare(b.label));
}

/** Folders whose name contains the query: found through the files under them. */
async function folders(safe: string): Promise<Attachment[]> {
  const under = await vscode.workspace.findFiles(`**/*${safe}*/**`, EXCLUDE, FOLDER_SCAN);
  const roots = (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.toString());
  return foldersMatching(
    under.map((u) => u.toString()),
    roots,
    safe,
  ).map((uri) => folderMention(uri, vscode.workspace.asRelativePath(vscode.Uri.parse(uri))));
}

async function symbols(query: string): Promise<Attachment[]> {
  if (query.length < SYMBOL_MIN_QUERY) return [];
  const found = await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>("vscode.executeWorkspaceSymbolProvider", query);
  return (found ?? [])
    .filter((s) => s.location.uri.scheme === "file")
    .map((s) =>
      symbolMention({
        name: s.name,
        kind: vscode.SymbolKind[s.kind].toLowerCase(),
        uri: s.location.uri.toString(),
        range: {
          start: { line: s.location.range.start.line, character: s.location.range.start.character },
          end: { line: s.location.range.end.line, character: s.location.range.end.character },
        },
        where: vscode.workspace.asRelativePath(s.location.uri),
      }),
    );
}

function counts(diagnostics: readonly vscode.Diagnostic[]): ProblemCounts {
  const of = (severity: vscode.DiagnosticSeverity): number => diagnostics.filter((d) => d.severity === severity).length;
  return { errors: of(vscode.DiagnosticSeverity.Error), warnings: of(vscode.DiagnosticSeverity.Warning) };
}

function problems(query: string): Attachment[] {
  const all = counts(vscode.languages.getDiagnostics().flatMap(([, list]) => list));
  const editor = vscode.window.activeTextEditor;
  const uri = editor?.document.uri;
  const active =
    uri?.scheme === "file"
      ? { uri: uri.toString(), name: uri.path.split("/").pop() ?? uri.path, counts: counts(vscode.languages.getDiagnostics(uri)) }
      : undefined;
  return problemMentions(query, all, active);
}
