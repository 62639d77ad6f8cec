// Finding a running daemon: which discovery file is picked, and which are refused.

import assert from "node:assert/strict";
import { chmodSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import * as path from "node:path";
import { test } from "node:test";

import {
  type DiscoveryContext,
  DiscoveryError,
  connectSetting,
  discoveryDir,
  findDaemon,
  newestLive,
  parseDiscovery,
  privacyProblem,
} from "../src/discovery";
import { initializeFailure } from "../src/daemonSocket";
import { redact } from "../src/redactingLog";

const UID = process.getuid?.() ?? 1000;
const TOKEN = "ab".repeat(32);

function discovery(pid: number, token = TOKEN): string {
  return JSON.stringify({ host: "127.0.0.1", port: 40000 + pid, pid, token });
}

/** A runtime folder holding `agentls-<uid>/` (mode 0700) with these files (mode 0600). */
function runtime(files: Record<string, string>, ages: Record<string, number> = {}): { env: NodeJS.ProcessEnv; folder: string } {
  const base = mkdtempSync(path.join(tmpdir(), "agentls-discovery-"));
  const folder = path.join(base, `agentls-${UID}`);
  mkdirSync(folder, { mode: 0o700 });
  chmodSync(folder, 0o700);
  for (const [name, text] of Object.entries(files)) {
    const file = path.join(folder, name);
    writeFileSync(file, text, { mode: 0o600 });
    chmodSync(file, 0o600);
    const age = ages[name] ?? 0;
    const when = new Date(Date.now() - age * 1000);
    utimesSync(file, when, when);
  }
  return { env: { XDG_RUNTIME_DIR: base }, folder };
}

function context(env: NodeJS.ProcessEnv, live: number[], uid = UID): DiscoveryContext {
  return { env, uid, alive: (pid) => live.includes(pid) };
}

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof DiscoveryError, String(error));
    return error.message;
  }
  assert.fail("expected a DiscoveryError");
}

test("the folder is under XDG_RUNTIME_DIR, else TMPDIR, else /tmp", () => {
  assert.equal(discoveryDir({ XDG_RUNTIME_DIR: "/run/user/7", TMPDIR: "/t" }, 7), "/run/user/7/agentls-7");
  assert.equal(discoveryDir({ XDG_RUNTIME_DIR: "", TMPDIR: "/t" }, 7), "/t/agentls-7");
  assert.equal(discoveryDir({}, 7), "/tmp/agentls-7");
});

test("a file or folder is trusted only when it is the user's and no one else's", () => {
  assert.equal(privacyProblem("file", "/f", { uid: 7, mode: 0o100600 }, 7), undefined);
  assert.equal(privacyProblem("folder", "/d", { uid: 7, mode: 0o40700 }, 7), undefined);
  assert.match(privacyProblem("file", "/f", { uid: 8, mode: 0o100600 }, 7) ?? "", /belongs to user 8, not to you \(7\)/);
  assert.match(privacyProblem("file", "/f", { uid: 7, mode: 0o100640 }, 7) ?? "", /open to other users \(mode 640\).*chmod 600/);
  assert.match(privacyProblem("folder", "/d", { uid: 7, mode: 0o40755 }, 7) ?? "", /mode 755.*chmod 700/);
  assert.match(privacyProblem("folder", "/d", { uid: 7, mode: 0o40701 }, 7) ?? "", /open to other users/);
});

test("a discovery file's fields are checked", () => {
  const address = parseDiscovery(discovery(42), "/f");
  assert.deepEqual(address, { host: "127.0.0.1", port: 40042, pid: 42, token: TOKEN, file: "/f" });
  assert.throws(() => parseDiscovery("{", "/f"), /not JSON/);
  assert.throws(() => parseDiscovery(JSON.stringify({ host: "127.0.0.1", port: 1, pid: 2 }), "/f"), /lacks a host, port, pid or token/);
  assert.throws(() => parseDiscovery(JSON.stringify({ host: "h", port: "1", pid: 2, token: TOKEN }), "/f"), DiscoveryError);
  assert.throws(() => parseDiscovery("[]", "/f"), DiscoveryError);
  // A token from --token-file: any 32 or more printable ASCII without spaces.
  const chosen = "my-own-token_0123456789+ABCDEFGHIJ";
  assert.equal(parseDiscovery(JSON.stringify({ host: "::1", port: 1, pid: 2, token: chosen }), "/f").token, chosen);
  for (const bad of ["short", `${chosen} x`, `${chosen}\n`, `${chosen}é`]) {
    assert.throws(() => parseDiscovery(JSON.stringify({ host: "h", port: 1, pid: 2, token: bad }), "/f"), /lacks/);
  }
});

test("a daemon bound to a wildcard address is joined on its loopback", () => {
  const at = (host: string) => parseDiscovery(JSON.stringify({ host, port: 1, pid: 2, token: TOKEN }), "/f").host;
  assert.equal(at("0.0.0.0"), "127.0.0.1");
  assert.equal(at("::"), "::1");
  assert.equal(at("127.0.0.1"), "127.0.0.1");
  assert.equal(at("::1"), "::1");
});

test("the newest file whose daemon is alive is picked; dead ones are passed over", () => {
  const candidates = [
    { file: "a", pid: 1, mtimeMs: 300 },
    { file: "b", pid: 2, mtimeMs: 200 },
    { file: "c", pid: 3, mtimeMs: 100 },
  ];
  assert.equal(newestLive(candidates, () => true).live?.file, "a");
  const picked = newestLive(candidates, (pid) => pid !== 1);
  assert.equal(picked.live?.file, "b");
  assert.deepEqual(picked.stale.map((c) => c.pid), [1]);
  assert.equal(newestLive(candidates, () => false).live, undefined);
  assert.equal(newestLive([], () => true).live, undefined);
});

test("the setting: spawn by default, discover, or a file", () => {
  assert.equal(connectSetting(undefined), "spawn");
  assert.equal(connectSetting(" "), "spawn");
  assert.equal(connectSetting("spawn"), "spawn");
  assert.equal(connectSetting("discover"), "discover");
  assert.deepEqual(connectSetting(" /run/agentls-1/tcp-5.json "), { file: "/run/agentls-1/tcp-5.json" });
});

test("discover reads the newest live daemon's file on disk", () => {
  const { env, folder } = runtime(
    { "tcp-11.json": discovery(11), "tcp-12.json": discovery(12), "tcp-13.json": discovery(13), "notes.txt": "x" },
    { "tcp-11.json": 30, "tcp-12.json": 20, "tcp-13.json": 10 },
  );
  const address = findDaemon("discover", context(env, [11, 12]));
  assert.equal(address.pid, 12);
  assert.equal(address.port, 40012);
  assert.equal(address.file, path.join(folder, "tcp-12.json"));
});

test("discover says what is missing: the folder, any file, a live daemon", () => {
  const empty = mkdtempSync(path.join(tmpdir(), "agentls-discovery-"));
  assert.match(refusal(() => findDaemon("discover", context({ XDG_RUNTIME_DIR: empty }, []))), /does not exist\. Start one with agentls --tcp/);
  const { env: none } = runtime({});
  assert.match(refusal(() => findDaemon("discover", context(none, []))), /no discovery file in .*agentls-\d+/);
  const { env: dead } = runtime({ "tcp-21.json": discovery(21), "tcp-22.json": discovery(22) }, { "tcp-21.json": 5 });
  assert.match(refusal(() => findDaemon("discover", context(dead, []))), /stale \(pid 22, 21 not running\)/);
});

test("a folder or file others can read, or another user owns, is refused", () => {
  const open = runtime({ "tcp-31.json": discovery(31) });
  chmodSync(open.folder, 0o755);
  assert.match(refusal(() => findDaemon("discover", context(open.env, [31]))), /discovery folder .* \(mode 755\)/);
  const readable = runtime({ "tcp-32.json": discovery(32) });
  chmodSync(path.join(readable.folder, "tcp-32.json"), 0o644);
  assert.match(refusal(() => findDaemon("discover", context(readable.env, [32]))), /discovery file .*tcp-32\.json is open to other users \(mode 644\)/);
  // Seen by user UID + 1, the folder and file made here belong to someone else.
  const theirs = runtime({ "tcp-33.json": discovery(33) });
  const base = path.dirname(theirs.folder);
  const planted = path.join(base, `agentls-${UID + 1}`);
  mkdirSync(planted, { mode: 0o700 });
  chmodSync(planted, 0o700);
  const pattern = new RegExp(`discovery folder .* belongs to user ${UID}, not to you \\(${UID + 1}\\)`);
  assert.match(refusal(() => findDaemon("discover", context({ XDG_RUNTIME_DIR: base }, [33], UID + 1))), pattern);
  const file = path.join(theirs.folder, "tcp-33.json");
  assert.match(refusal(() => findDaemon({ file }, context(theirs.env, [33], UID + 1))), /belongs to user/);
});

test("an explicit file is checked the same way, and a dead pid makes it stale", () => {
  const { env, folder } = runtime({ "tcp-41.json": discovery(41), "tcp-42.json": "not json" });
  const file = path.join(folder, "tcp-41.json");
  assert.equal(findDaemon({ file }, context(env, [41])).port, 40041);
  assert.match(refusal(() => findDaemon({ file }, context(env, []))), /is stale: its daemon \(pid 41\) is not running/);
  assert.match(refusal(() => findDaemon({ file: path.join(folder, "tcp-42.json") }, context(env, [42]))), /not JSON/);
  assert.match(refusal(() => findDaemon({ file: path.join(folder, "tcp-43.json") }, context(env, [43]))), /does not exist/);
  chmodSync(folder, 0o750);
  assert.match(refusal(() => findDaemon({ file }, context(env, [41]))), /discovery folder .* \(mode 750\)/);
});

test("the token never appears in a message or the trace", () => {
  const address = parseDiscovery(discovery(51), "/run/agentls-0/tcp-51.json");
  const message = initializeFailure(address, new Error(`bad token ${TOKEN}`));
  assert.ok(!message.includes(TOKEN), message);
  assert.match(message, /127\.0\.0\.1:40051 \(pid 51, from \/run\/agentls-0\/tcp-51\.json\) refused this window/);
  assert.match(initializeFailure(address, new Error("Invalid authToken")), /\(Invalid authToken\)/);
  const traced = `Sending request 'initialize - (0)'.\nParams: {"initializationOptions":{"authToken":"${TOKEN}"}}`;
  assert.equal(redact(traced, TOKEN), `Sending request 'initialize - (0)'.\nParams: {"initializationOptions":{"authToken":"<authToken>"}}`);
  assert.equal(redact(traced, undefined), traced);
});
