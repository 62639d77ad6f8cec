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

/** LSP's severities are vscode's plus one (1 error … 4 hint). */
export function toLspDiagnostics(items: readonly EditorDiagnostic[]): LspDiagnostic[] {
  return items.map((item) => {
    const code = typeof item.code === "object" ? item.code.value : item.code;
    return {
      range: { start: { ...item.range.start }, end: { ...item.range.end } },
      severity: item.severity + 1,
      message: item.message,
      ...(item.source ? { source: item.source } : {}),
      ...(code !== undefined ? { code } : {}),
    };
  });
}
