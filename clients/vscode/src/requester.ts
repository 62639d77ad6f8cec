// The one thing the rules and MCP views need from the daemon: a typed agent/* request.
// AgentClient.request is one; a test driver's JSON-RPC connection is another.

import type { Params, RequestMethod, Result } from "./wire";

export type Requester = <M extends RequestMethod>(method: M, params: Params<M>) => Promise<Result<M>>;

/** What a failed request says: the daemon's own message (a -32602 names the bad field). */
export function failureText(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error && "message" in error && typeof error.message === "string") return error.message;
  return String(error);
}
