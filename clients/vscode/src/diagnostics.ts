// The editor's diagnostics for the daemon's `agent/diagnostics` request, as LSP Diagnostics.
// Pure (no vscode import) so it is tested apart from the editor.

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
