// Finding a running `agentls --tcp`: its discovery file names the address and the token
// that lets a window in. Whoever can read that file can run commands as the user, so a
// file or folder that another user owns, or that others can read or write, is refused.
// No `vscode` import: the unit tests and the node-level daemon test load this as it is.

import { closeSync, fstatSync, openSync, readFileSync, readdirSync, statSync } from "node:fs";
import * as path from "node:path";

/** What a discovery file says: where the daemon listens and the token it expects. */
export interface DaemonAddress {
  host: string;
  port: number;
  pid: number;
  token: string;
  /** The discovery file it was read from (for messages; the token is never in one). */
  file: string;
}

/** Why no daemon could be joined, worded for the user. */
export class DiscoveryError extends Error {}

/** The owner and permission bits of a file or folder (a subset of fs.Stats). */
export interface Ownership {
  uid: number;
  mode: number;
}

const FILE_NAME = /^tcp-(\d+)\.json$/;

/** The daemon's private folder: `${XDG_RUNTIME_DIR or TMPDIR or /tmp}/agentls-<uid>`. */
export function discoveryDir(env: NodeJS.ProcessEnv, uid: number): string {
  const base = env.XDG_RUNTIME_DIR || env.TMPDIR || "/tmp";
  return path.join(base, `agentls-${uid}`);
}

/** Why `what` at `where` cannot be trusted with the token, or undefined when it can. */
export function privacyProblem(what: "file" | "folder", where: string, owner: Ownership, uid: number): string | undefined {
  if (owner.uid !== uid) {
    return `the discovery ${what} ${where} belongs to user ${owner.uid}, not to you (${uid}); refusing it, as another user could have planted it.`;
  }
  const shared = owner.mode & 0o077;
  if (shared !== 0) {
    const mode = (owner.mode & 0o777).toString(8).padStart(3, "0");
    const fix = what === "file" ? "600" : "700";
    return `the discovery ${what} ${where} is open to other users (mode ${mode}); refusing it, as anyone who reads the token can run commands as you. Make it yours alone (chmod ${fix}) or restart the daemon.`;
  }
  return undefined;
}

/** The address in a discovery file's text; a DiscoveryError names what is wrong. */
export function parseDiscovery(text: string, file: string): DaemonAddress {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new DiscoveryError(`the discovery file ${file} is not JSON.`);
  }
  const fields = (typeof parsed === "object" && parsed !== null ? parsed : {}) as Record<string, unknown>;
  const { host, port, pid, token } = fields;
  const valid =
    typeof host === "string" &&
    host !== "" &&
    Number.isInteger(port) &&
    Number.isInteger(pid) &&
    typeof token === "string" &&
    // 64 hex digits, or what --token-file gave: 32 or more printable ASCII, no spaces.
    /^[\x21-\x7e]{32,}$/.test(token);
  if (!valid) {
    throw new DiscoveryError(`the discovery file ${file} lacks a host, port, pid or token (is it from agentls --tcp?).`);
  }
  return { host: connectHost(host), port: port as number, pid: pid as number, token, file };
}

/** Where to connect for a bound host: a wildcard (`--allow-remote`) means its loopback. */
export function connectHost(host: string): string {
  if (host === "0.0.0.0") return "127.0.0.1";
  if (host === "::" || host === "[::]") return "::1";
  return host;
}

/** Whether a process with this pid exists (EPERM: it does, under another user). */
export function pidAlive(pid: number): boolean {
  if (pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

export interface Candidate {
  file: string;
  pid: number;
  mtimeMs: number;
}

/** The newest candidate whose daemon is alive, and the stale ones passed over. */
export function newestLive(candidates: Candidate[], alive: (pid: number) => boolean): { live?: Candidate; stale: Candidate[] } {
  const sorted = [...candidates].sort((a, b) => b.mtimeMs - a.mtimeMs || b.pid - a.pid);
  const stale: Candidate[] = [];
  for (const candidate of sorted) {
    if (alive(candidate.pid)) return { live: candidate, stale };
    stale.push(candidate);
  }
  return { stale };
}

/** How a setting `agentls.server.connect` names the daemon. */
export type ConnectSetting = "spawn" | "discover" | { file: string };

export function connectSetting(value: string | undefined): ConnectSetting {
  const trimmed = (value ?? "").trim();
  if (trimmed === "" || trimmed === "spawn") return "spawn";
  if (trimmed === "discover") return "discover";
  return { file: trimmed };
}

export interface DiscoveryContext {
  env: NodeJS.ProcessEnv;
  uid: number;
  alive: (pid: number) => boolean;
}

/** The current process's environment, uid and pid check. */
export function localContext(): DiscoveryContext {
  const uid = process.getuid?.();
  if (uid === undefined) throw new DiscoveryError("connecting to a running daemon needs a POSIX system (Linux, macOS).");
  return { env: process.env, uid, alive: pidAlive };
}

/** The daemon a `discover` or file setting names, checked: private, parsed, alive. */
export function findDaemon(setting: "discover" | { file: string }, context: DiscoveryContext): DaemonAddress {
  if (setting === "discover") return discoverNewest(context);
  const file = path.resolve(setting.file);
  const address = readPrivate(file, context.uid);
  if (!context.alive(address.pid)) {
    throw new DiscoveryError(
      `the discovery file ${file} is stale: its daemon (pid ${address.pid}) is not running. Start agentls --tcp again, or set agentls.server.connect to "discover".`,
    );
  }
  return address;
}

function discoverNewest(context: DiscoveryContext): DaemonAddress {
  const folder = discoveryDir(context.env, context.uid);
  const names = listFolder(folder, context.uid);
  const candidates: Candidate[] = [];
  for (const name of names) {
    const match = FILE_NAME.exec(name);
    if (!match) continue;
    const file = path.join(folder, name);
    const stats = statOrUndefined(file);
    if (stats?.isFile()) candidates.push({ file, pid: Number(match[1]), mtimeMs: stats.mtimeMs });
  }
  if (candidates.length === 0) {
    throw new DiscoveryError(`no running agentls daemon: no discovery file in ${folder}. Start one with agentls --tcp.`);
  }
  const { live, stale } = newestLive(candidates, context.alive);
  if (!live) {
    const pids = stale.map((c) => c.pid).join(", ");
    throw new DiscoveryError(
      `no running agentls daemon: the discovery files in ${folder} are stale (pid ${pids} not running). Start one with agentls --tcp.`,
    );
  }
  return readPrivate(live.file, context.uid, false);
}

function listFolder(folder: string, uid: number): string[] {
  const stats = statOrUndefined(folder);
  if (!stats) throw new DiscoveryError(`no running agentls daemon: ${folder} does not exist. Start one with agentls --tcp.`);
  if (!stats.isDirectory()) throw new DiscoveryError(`${folder} is not a folder.`);
  const problem = privacyProblem("folder", folder, stats, uid);
  if (problem) throw new DiscoveryError(problem);
  return readdirSync(folder);
}

/** Read a discovery file once its folder and itself are found private to `uid`. */
function readPrivate(file: string, uid: number, checkFolder = true): DaemonAddress {
  if (checkFolder) {
    const folder = path.dirname(file);
    const folderStats = statOrUndefined(folder);
    if (!folderStats) throw new DiscoveryError(`the discovery file ${file} does not exist.`);
    const problem = privacyProblem("folder", folder, folderStats, uid);
    if (problem) throw new DiscoveryError(problem);
  }
  // Checked and read through one descriptor, so the file checked is the file read.
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch {
    throw new DiscoveryError(`the discovery file ${file} does not exist (its daemon has exited?).`);
  }
  try {
    const stats = fstatSync(fd);
    if (!stats.isFile()) throw new DiscoveryError(`the discovery file ${file} is not a file.`);
    const problem = privacyProblem("file", file, stats, uid);
    if (problem) throw new DiscoveryError(problem);
    return parseDiscovery(readFileSync(fd, "utf8"), file);
  } finally {
    closeSync(fd);
  }
}

function statOrUndefined(where: string) {
  try {
    return statSync(where);
  } catch {
    return undefined;
  }
}
