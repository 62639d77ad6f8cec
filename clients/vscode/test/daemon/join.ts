// The extension's join path against a real `agentls --tcp`: find it as the setting
// "discover" does, open the socket as the client does, and talk JSON-RPC over it.
// tests/test_client_vscode_tcp.py starts the daemon, runs this and reads its report: one
// JSON object per line, `{"step": ..., ...}`.
//
//   node dist-test/join-daemon.js WORKSPACE

import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import * as net from "node:net";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { type MessageConnection, StreamMessageReader, StreamMessageWriter, createMessageConnection } from "vscode-jsonrpc/node";

import { describe, initializeFailure, openSocket } from "../../src/daemonSocket";
import { type DaemonAddress, DiscoveryError, findDaemon, localContext } from "../../src/discovery";

const workspace = process.argv[2] ?? process.cwd();
const report = (step: string, fields: Record<string, unknown> = {}) => console.log(JSON.stringify({ step, ...fields }));

async function connect(address: DaemonAddress): Promise<{ connection: MessageConnection; closed: Promise<void> }> {
  const socket = await openSocket(address);
  const connection = createMessageConnection(new StreamMessageReader(socket), new StreamMessageWriter(socket));
  const closed = new Promise<void>((resolve) => connection.onClose(() => resolve()));
  connection.listen();
  return { connection, closed };
}

function initialize(connection: MessageConnection, token: string): Promise<{ capabilities: object }> {
  const params = {
    processId: process.pid,
    rootUri: null,
    capabilities: {},
    initializationOptions: { authToken: token, provider: "scripted" },
  };
  return connection.sendRequest("initialize", params);
}

/** A scripted turn through the joined daemon: its answer comes back as agent/event. */
async function turn(connection: MessageConnection): Promise<string> {
  const ended = new Promise<string>((resolve) => {
    connection.onNotification("agent/event", (event: { type: string; stopReason?: string }) => {
      if (event.type === "turn_completed") resolve(event.stopReason ?? "");
    });
  });
  const params = { cwd: workspace, provider: "scripted", script: [{ text: "joined over TCP" }] };
  const session = await connection.sendRequest<{ sessionId: string }>("agent/newSession", params);
  await connection.sendRequest("agent/submitMessage", { sessionId: session.sessionId, text: "hello" });
  return ended;
}

async function joinAndTurn(address: DaemonAddress): Promise<void> {
  const { connection, closed } = await connect(address);
  const result = await initialize(connection, address.token);
  await connection.sendNotification("initialized", {});
  report("initialized", { capabilities: typeof result.capabilities });
  report("turn", { stopReason: await turn(connection) });
  // What LanguageClient.stop() sends: it must end this connection, not the shared daemon.
  await connection.sendRequest("shutdown");
  await connection.sendNotification("exit");
  await closed;
  connection.dispose();
  report("stopped");
}

/** A wrong token: the daemon answers initialize with an error or closes during it. */
async function wrongToken(address: DaemonAddress): Promise<void> {
  const forged = { ...address, token: "0".repeat(64) };
  const { connection, closed } = await connect(forged);
  let failure: unknown;
  try {
    await Promise.race([initialize(connection, forged.token), closed.then(() => Promise.reject(new Error("closed")))]);
  } catch (error) {
    failure = error;
  }
  const closedAfter = await Promise.race([closed.then(() => true), new Promise((r) => setTimeout(() => r(false), 10_000))]);
  connection.dispose();
  report("wrong token", {
    refused: failure !== undefined,
    closed: closedAfter,
    message: failure === undefined ? "" : initializeFailure(forged, failure),
  });
}

/** A discovery file whose port nothing listens on, checked as the extension checks it. */
async function refused(): Promise<void> {
  const free = await new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
  const base = mkdtempSync(path.join(tmpdir(), "agentls-join-"));
  const context = { ...localContext(), env: { XDG_RUNTIME_DIR: base } };
  const folder = path.join(base, `agentls-${context.uid}`);
  mkdirSync(folder, { mode: 0o700 });
  const token = "ab".repeat(32);
  const body = JSON.stringify({ host: "127.0.0.1", port: free, pid: process.pid, token });
  writeFileSync(path.join(folder, `tcp-${process.pid}.json`), body, { mode: 0o600 });
  try {
    await openSocket(findDaemon("discover", context));
    report("refused", { message: "" });
  } catch (error) {
    report("refused", { message: error instanceof DiscoveryError ? error.message : String(error) });
  }
}

async function main(): Promise<void> {
  const address = findDaemon("discover", localContext());
  report("discovered", { port: address.port, pid: address.pid, file: address.file, where: describe(address) });
  await joinAndTurn(address);
  await wrongToken(address);
  // The daemon still serves after one window stopped and a stranger was turned away.
  await joinAndTurn(findDaemon("discover", localContext()));
  await refused();
}

main().then(
  () => process.exit(0),
  (error: unknown) => {
    report("error", { message: error instanceof Error ? error.message : String(error) });
    process.exit(1);
  },
);
