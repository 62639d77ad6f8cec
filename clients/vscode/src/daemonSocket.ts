// A socket to a running `agentls --tcp`, and what to tell the user when joining it fails.
// No `vscode` import, so the node-level test drives the same code against a real daemon.

import * as net from "node:net";

import { type DaemonAddress, DiscoveryError } from "./discovery";

const CONNECT_TIMEOUT_MS = 10_000;

/** Where a daemon is, for messages: never the token. */
export function describe(address: DaemonAddress): string {
  return `the agentls daemon at ${address.host}:${address.port} (pid ${address.pid}, from ${address.file})`;
}

/** A connected socket; a refused or silent address is a DiscoveryError that says so. */
export function openSocket(address: DaemonAddress, timeoutMs = CONNECT_TIMEOUT_MS): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: address.host, port: address.port });
    const fail = (message: string) => {
      socket.destroy();
      reject(new DiscoveryError(message));
    };
    const timer = setTimeout(() => fail(`${describe(address)} did not answer within ${timeoutMs / 1000} s.`), timeoutMs);
    socket.once("connect", () => {
      clearTimeout(timer);
      socket.removeAllListeners("error");
      socket.setNoDelay(true);
      resolve(socket);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const refused = error.code === "ECONNREFUSED";
      fail(
        refused
          ? `${describe(address)} refused the connection: it is not listening there any more. Restart it, or pick another discovery file.`
          : `could not connect to ${describe(address)}: ${error.message}`,
      );
    });
  });
}

/**
 * What to say when `initialize` over the socket failed. The daemon answers a missing or
 * wrong token with an error and closes the connection, so a close (or that error) before
 * the client ran means the token was refused.
 */
export function initializeFailure(address: DaemonAddress, error: unknown): string {
  const said = (error instanceof Error ? error.message : String(error)).replace(/\.$/, "");
  const detail = said.includes(address.token) ? "" : ` (${said})`;
  return (
    `${describe(address)} refused this window: the connection was closed during initialize${detail}. ` +
    "The token in the discovery file was not accepted; the file may be from an earlier daemon on the same port. " +
    "Restart the daemon or point agentls.server.connect at its current discovery file."
  );
}
