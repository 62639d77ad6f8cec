// `@`'s session list: typed keystrokes share one agent/listSessions, not one each.

import assert from "node:assert/strict";
import { test } from "node:test";

import { sessionMentions, type SessionSummary } from "../src/mentions";
import { SessionListCache } from "../src/sessionListCache";

const SESSIONS: SessionSummary[] = [
  { sessionId: "sess_a", title: "Where is greet defined?", turns: 1, updatedAt: "2026-11-27T01:00:00Z" },
  { sessionId: "sess_b", title: "Fix the port", turns: 2, updatedAt: "2026-11-26T01:00:00Z" },
];

/** A daemon stand-in that counts agent/listSessions requests, and a clock the test moves. */
function counted(): { cache: SessionListCache<SessionSummary[]>; requests: () => number; clock: { now: number } } {
  let requests = 0;
  const clock = { now: 1_000 };
  const cache = new SessionListCache(
    () => {
      requests += 1;
      return Promise.resolve(SESSIONS);
    },
    5_000,
    () => clock.now,
  );
  return { cache, requests: () => requests, clock };
}

/** What the controller does per keystroke of `@…`: ask the sessions, offer the matching ones. */
async function typeMention(cache: SessionListCache<SessionSummary[]>, typed: string, clock: { now: number }): Promise<string[]> {
  let offered: string[] = [];
  for (let end = 1; end <= typed.length; end += 1) {
    clock.now += 120;
    offered = sessionMentions(await cache.get(), typed.slice(0, end), null).map((m) => m.label);
  }
  return offered;
}

test("the keystrokes of one @ menu ask agent/listSessions once", async () => {
  const { cache, requests, clock } = counted();
  assert.deepEqual(await typeMention(cache, "greet", clock), ["Where is greet defined?"]);
  assert.equal(requests(), 1);
});

test("a menu opened after a few seconds asks again; so does one after a deletion", async () => {
  const { cache, requests, clock } = counted();
  await typeMention(cache, "fix", clock);
  clock.now += 5_000;
  assert.deepEqual(await typeMention(cache, "port", clock), ["Fix the port"]);
  assert.equal(requests(), 2);
  cache.forget();
  await cache.get();
  assert.equal(requests(), 3);
});

test("keystrokes during one request share it, and a failed request is not kept", async () => {
  let requests = 0;
  let fail = true;
  const cache = new SessionListCache(() => {
    requests += 1;
    return fail ? Promise.reject(new Error("daemon gone")) : Promise.resolve(SESSIONS);
  }, 5_000);
  const both = await Promise.allSettled([cache.get(), cache.get()]);
  assert.deepEqual(both.map((r) => r.status), ["rejected", "rejected"]);
  assert.equal(requests, 1);
  await new Promise((resolve) => setImmediate(resolve));
  fail = false;
  assert.equal((await cache.get()).length, 2);
  assert.equal(requests, 2);
});
