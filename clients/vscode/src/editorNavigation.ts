// Answers the daemon's navigation requests with VS Code's own language features (its
// GoToDefinition, FindReferences and WorkspaceSymbols tools): the providers of every
// extension the window has, through the `vscode.execute*Provider` commands.

import * as vscode from "vscode";
import type { LanguageClient } from "vscode-languageclient/node";

import {
  type EditorLocation,
  type EditorLocationLink,
  type EditorSymbol,
  type NavigationParams,
  toLspLocations,
  toLspSymbols,
} from "./navigation";

type Found = (EditorLocation | EditorLocationLink)[] | undefined;

/** Where the request points, as the provider commands take it. */
function target(params: NavigationParams): [vscode.Uri, vscode.Position] {
  return [vscode.Uri.parse(params.textDocument.uri), new vscode.Position(params.position.line, params.position.character)];
}

/** Registers the three handlers on a started client. */
export function answerNavigation(client: LanguageClient): void {
  client.onRequest("agent/definition", async (params: NavigationParams) => {
    const found = await vscode.commands.executeCommand<Found>("vscode.executeDefinitionProvider", ...target(params));
    return { locations: toLspLocations(found) };
  });
  client.onRequest("agent/references", async (params: NavigationParams) => {
    const found = await vscode.commands.executeCommand<Found>("vscode.executeReferenceProvider", ...target(params));
    return { locations: toLspLocations(found) };
  });
  client.onRequest("agent/workspaceSymbols", async (params: { query: string }) => {
    const found = await vscode.commands.executeCommand<EditorSymbol[] | undefined>("vscode.executeWorkspaceSymbolProvider", params.query);
    return { symbols: toLspSymbols(found) };
  });
}
