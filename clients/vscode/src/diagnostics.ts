// The editor's diagnostics for the daemon's `agent/diagnostics` request, as LSP Diagnostics,
// and whether anything in the editor looks at the file (`watched`: when nothing does, the
// daemon does not wait after an edit for errors that will never come, and tells the model
// the file is unchecked). Pure (no vscode import) so it is tested apart from the editor.

/** The fields of a vscode.Diagnostic this needs (vscode's severity: 0 error … 3 hint). */
export interface EditorDiagnostic {
  range: { start: { line: number; character: number }; end: { line: number; character: number } };
  severity: number;
  message: string;
  source?: string;
  code?: string | number | { value: string | number };
}

export interface LspDiagnostic {
  range: EditorDiagnostic["range"];
  severity: number;
  message: string;
  source?: string;
  code?: string | number;
}

/** A vscode.Position's line and character are getters over private fields: read them, since
 * a spread or JSON.stringify of the object would carry `_line` and `_character` instead. */
function position(at: { line: number; character: number }): { line: number; character: number } {
  return { line: at.line, character: at.character };
}

/** LSP's severities are vscode's plus one (1 error … 4 hint). */
export function toLspDiagnostics(items: readonly EditorDiagnostic[]): LspDiagnostic[] {
  return items.map((item) => {
    const code = typeof item.code === "object" ? item.code.value : item.code;
    return {
      range: { start: position(item.range.start), end: position(item.range.end) },
      severity: item.severity + 1,
      message: item.message,
      ...(item.source ? { source: item.source } : {}),
      ...(code !== undefined ? { code } : {}),
    };
  });
}

/** What `watched` reads of an installed extension: vscode.Extension's id and manifest. */
export interface InstalledExtension {
  id: string;
  packageJSON: {
    main?: string;
    browser?: string;
    isBuiltin?: boolean;
    activationEvents?: string[];
    contributes?: { languages?: { id: string; extensions?: string[]; filenames?: string[] }[] };
  };
}

/** The language VS Code gives a file it has not opened: its file name, then its longest
 * matching extension, as the installed extensions declare them; plaintext otherwise. */
export function languageOfFile(fileName: string, extensions: readonly InstalledExtension[]): string {
  const name = fileName.toLowerCase();
  let best: { id: string; length: number } | undefined;
  for (const extension of extensions) {
    for (const language of extension.packageJSON.contributes?.languages ?? []) {
      if (language.filenames?.some((f) => f.toLowerCase() === name)) return language.id;
      for (const suffix of language.extensions ?? []) {
        const lower = suffix.toLowerCase();
        if (name.endsWith(lower) && lower.length > (best?.length ?? 0)) best = { id: language.id, length: lower.length };
      }
    }
  }
  return best?.id ?? "plaintext";
}

/** Third-party activation that may lint any file: at every start, for any language, or
 * for a workspace. */
const ANY_FILE = (event: string) =>
  event === "*" || event === "onStartupFinished" || event === "onLanguage" || event.startsWith("workspaceContains:");

/**
 * Whether anything installed may report diagnostics for files of `languageId`: an extension
 * with code (not `selfId`) that the language activates (explicitly, or implicitly by
 * contributing it, as VS Code 1.74+ does), or a third-party one that starts with every
 * window. Built-in extensions that start with every window (git, merge conflicts) lint no
 * files; a grammar-only one (Python's, without Pylance) has no code at all.
 */
export function mayReportDiagnostics(languageId: string, extensions: readonly InstalledExtension[], selfId: string): boolean {
  return extensions.some((extension) => {
    const manifest = extension.packageJSON;
    if (extension.id.toLowerCase() === selfId.toLowerCase() || !(manifest.main || manifest.browser)) return false;
    const events = manifest.activationEvents ?? [];
    const contributed = (manifest.contributes?.languages ?? []).map((language) => `onLanguage:${language.id}`);
    if ([...events, ...contributed].includes(`onLanguage:${languageId}`)) return true;
    const builtin = manifest.isBuiltin === true || extension.id.toLowerCase().startsWith("vscode.");
    return !builtin && events.some(ANY_FILE);
  });
}
