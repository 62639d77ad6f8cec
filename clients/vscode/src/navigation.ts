// The editor's answers to the daemon's navigation requests (`agent/definition`,
// `agent/references`, `agent/workspaceSymbols`), as LSP JSON. Pure (no vscode import) so it
// is tested apart from the editor; positions pass through as they are, since VS Code's are
// UTF-16 like the encoding vscode-languageclient negotiates.

/** Something with a URI string: a vscode.Uri, read through its toString(). */
export interface UriLike {
  toString(): string;
}

export interface EditorPosition {
  line: number;
  character: number;
}

export interface EditorRange {
  start: EditorPosition;
  end: EditorPosition;
}

/** vscode.Location's fields. */
export interface EditorLocation {
  uri: UriLike;
  range: EditorRange;
}

/** vscode.LocationLink's fields (a definition provider may answer with these). */
export interface EditorLocationLink {
  targetUri: UriLike;
  targetRange: EditorRange;
  targetSelectionRange?: EditorRange;
  originSelectionRange?: EditorRange;
}

/** vscode.SymbolInformation's fields (vscode's SymbolKind: 0 File … 25 TypeParameter). */
export interface EditorSymbol {
  name: string;
  kind: number;
  containerName?: string;
  location: EditorLocation;
}

export interface LspRange {
  start: EditorPosition;
  end: EditorPosition;
}

export interface LspLocation {
  uri: string;
  range: LspRange;
}

export interface LspLocationLink {
  targetUri: string;
  targetRange: LspRange;
  targetSelectionRange: LspRange;
  originSelectionRange?: LspRange;
}

export interface LspSymbolInformation {
  name: string;
  kind: number;
  containerName?: string;
  location: LspLocation;
}

/** The params of `agent/definition` and `agent/references` (LSP's own). */
export interface NavigationParams {
  textDocument: { uri: string };
  position: EditorPosition;
}

function lspRange(range: EditorRange): LspRange {
  return {
    start: { line: range.start.line, character: range.start.character },
    end: { line: range.end.line, character: range.end.character },
  };
}

function isLink(item: EditorLocation | EditorLocationLink): item is EditorLocationLink {
  return "targetUri" in item;
}

/** Locations and links as LSP's: a link keeps its shape (its selection range defaults to its range). */
export function toLspLocations(items: readonly (EditorLocation | EditorLocationLink)[] | undefined): (LspLocation | LspLocationLink)[] {
  return (items ?? []).map((item) => {
    if (!isLink(item)) return { uri: item.uri.toString(), range: lspRange(item.range) };
    return {
      targetUri: item.targetUri.toString(),
      targetRange: lspRange(item.targetRange),
      targetSelectionRange: lspRange(item.targetSelectionRange ?? item.targetRange),
      ...(item.originSelectionRange ? { originSelectionRange: lspRange(item.originSelectionRange) } : {}),
    };
  });
}

/** Symbols as LSP's SymbolInformation: LSP's SymbolKind is vscode's plus one. */
export function toLspSymbols(items: readonly EditorSymbol[] | undefined): LspSymbolInformation[] {
  return (items ?? []).map((item) => ({
    name: item.name,
    kind: item.kind + 1,
    ...(item.containerName ? { containerName: item.containerName } : {}),
    location: { uri: item.location.uri.toString(), range: lspRange(item.location.range) },
  }));
}

/** The `experimental.agentls` capabilities this editor announces: the requests it answers. */
export const EDITOR_REQUESTS = { diagnostics: true, definition: true, references: true, workspaceSymbols: true } as const;
