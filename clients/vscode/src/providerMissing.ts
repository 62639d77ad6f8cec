// What the panel says and checks when no model provider is set up: shared by the chat
// controller (a message that fails) and the first-run view (which offers the setup).

/** The daemon's answer when no provider is configured (PROTOCOL.md, Errors). */
const PROVIDER_NOT_CONFIGURED = 1004;

export const NO_PROVIDER_MESSAGE =
  "No model provider is set up yet. Pick one above (your message stays in the box), or run " +
  "“agentls: Set API Key” and choose agentls.provider in Settings.";

/** Whether a failed request is the daemon saying no provider is configured. */
export function isProviderMissing(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === PROVIDER_NOT_CONFIGURED;
}
