// After the daemon is reached: come back to the turn that was running when the window
// last closed (src/reattach.ts keeps the note and decides what the chat shows).

import * as vscode from "vscode";

import type { ChatController } from "./controller";
import type { RunningNotes } from "./reattach";

/** Resume the noted session, if any, into the panel; a session that cannot be resumed any
 * more (deleted, another daemon's home) is said once and forgotten. */
export async function returnToRunningTurn(notes: RunningNotes, controller: ChatController, reveal: () => void, log: vscode.LogOutputChannel): Promise<void> {
  const note = notes.note;
  if (!note) return;
  try {
    const result = await controller.reattach(note);
    reveal();
    if (result.runningTurnId) {
      log.info(`re-attached to turn ${result.runningTurnId} of ${note.sessionId} after seq ${note.lastSeq}`);
      void vscode.window.showInformationMessage("agentls: re-attached to the running turn.");
      return;
    }
    // The turn ended while the window was away (or with the daemon it ran in).
    await notes.clear();
  } catch (error) {
    await notes.clear();
    const message = error instanceof Error ? error.message : String(error);
    log.warn(`the session running when the window closed could not be resumed: ${message}`);
    void vscode.window.showWarningMessage(`agentls: the session running when the window closed could not be resumed: ${message}`);
  }
}
