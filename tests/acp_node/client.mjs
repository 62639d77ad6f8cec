// An ACP client on the official TypeScript SDK (@agentclientprotocol/sdk, stable v1
// entrypoint), for tests/test_acp_node_client.py: a second, independent implementation of
// the client side checking `agentls acp`.
//
//   node client.mjs scenario.json
//
// It starts the scenario's agent command, initializes, runs the steps in order and prints
// one JSON object: each step's result or error, every session/update (in order, with its
// session), every permission request and its answer, every fs read and write, and the
// wire itself (each JSON-RPC message in and out), all numbered in one sequence `seq`.
//
// The scenario (JSON):
//   agent: ["python", "-m", "agentls", "acp"]    the agent's argv
//   cwd: "/abs/dir"                              sessions' cwd (and the agent's)
//   fs: {read: true, write: true}                client capabilities
//   buffers: {"/abs/path": "text"}               unsaved buffers fs/read_text_file serves
//   permission: {optionId: "allow_once"}         the answer to every permission request,
//            or "cancel-on-cancel"                or: held until session/cancel, then cancelled
//            or {optionId, hold: true}            or: held until the step releases it
//   steps: [
//     {op: "new", as: "s", meta: {...}}                       session/new (named "s")
//     {op: "prompt", session: "s", text: "..."}               session/prompt
//     {op: "prompt", session: "s", text: "...", cancelAfterPermission: true}
//         session/prompt; at its first permission request, session/cancel
//     {op: "load", sessionId: "...", as: "s", meta: {...}}    session/load
//     {op: "setMode", session: "s", modeId: "acceptEdits"}   session/set_mode
//     {op: "prompt", session: "s", text: "...", cancelRequestAfterUpdate: true}
//         session/prompt; at its first session/update, the SDK's request cancellation
//         (an AbortSignal: `$/cancel_request`)
//     {op: "prompt", session: "s", text: "...", steerAtPermission: "more"}
//         session/prompt; at its first permission request (held: permission
//         {optionId, hold: true}), a second prompt `/steer more`, then the answer
//     {op: "list"} (the scenario's cwd)  {op: "resume", session: "s"}  {op: "close", session: "s"}
//         session/list, session/resume, session/close
//     {op: "delete", session: "s"} or {op: "delete", sessionId: "..."}     session/delete
//     {op: "prompt", session: "s", text: "...", deleteAt: "chunk" | "permission"}
//         session/prompt; at its first agent_message_chunk, or at its first (held)
//         permission request, session/delete of its session (the held request is
//         answered after the delete's answer); the result is {prompt, delete}: each
//         {result} or {error}
//   ]
//   Steps new, load and resume take `additionalDirectories: ["/abs", …]`. The output's
//   `initializeParsed` is the initialize answer as the SDK's stable v1 schema parses it.

import { spawn } from "node:child_process";
import { readFileSync, writeFileSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk";

// The SDK's own zod schema of stable v1 (not in its package exports, so by file): the
// initialize answer parsed with it keeps only the fields that schema names.
const { zInitializeResponse } = await import(
  new URL("./node_modules/@agentclientprotocol/sdk/dist/v1/schema/zod.gen.js", import.meta.url).href
);

const STEP_TIMEOUT_MS = 60_000;

const scenario = JSON.parse(readFileSync(process.argv[2], "utf8"));
const buffers = new Map(Object.entries(scenario.buffers ?? {}));

let seq = 0;
const out = {
  initialize: null,
  initializeParsed: null,
  steps: [],
  updates: [],
  permissions: [],
  reads: [],
  writes: [],
  wire: [],
  errors: [],
  exit: null,
};
/** Session ids by the names steps give them. */
const sessions = new Map();
/** Permission requests held until their session is cancelled: sessionId -> [resolve]. */
const held = new Map();
/** Waiters for a session's next permission request: sessionId -> [resolve]. */
const permissionWaiters = new Map();

/** @param {unknown} error */
function errorOf(error) {
  if (error && typeof error === "object" && "code" in error) {
    return { code: error.code, message: error.message, data: error.data ?? null };
  }
  return { code: null, message: String(error?.stack ?? error), data: null };
}

/** A TransformStream of JSON-RPC messages that records each one on the wire list. */
function tap(dir) {
  return new TransformStream({
    transform(message, controller) {
      out.wire.push({ seq: ++seq, dir, message });
      controller.enqueue(message);
    },
  });
}

function withTimeout(promise, what) {
  let timer;
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out: ${what}`)), STEP_TIMEOUT_MS);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

const app = acp
  .client({ name: "agentls-tests-node" })
  .onNotification(acp.methods.client.session.update, ({ params }) => {
    out.updates.push({ seq: ++seq, sessionId: params.sessionId, update: params.update });
    for (const wake of updateWaiters.get(params.sessionId) ?? []) wake(params);
    updateWaiters.delete(params.sessionId);
  })
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const record = { seq: ++seq, request: params, answer: null };
    out.permissions.push(record);
    for (const wake of permissionWaiters.get(params.sessionId) ?? []) wake(params);
    permissionWaiters.delete(params.sessionId);
    let outcome;
    if (scenario.permission === "cancel-on-cancel" || scenario.permission.hold) {
      await new Promise((resolve) => {
        const list = held.get(params.sessionId) ?? [];
        list.push(resolve);
        held.set(params.sessionId, list);
      });
      outcome = scenario.permission.hold
        ? { outcome: "selected", optionId: scenario.permission.optionId }
        : { outcome: "cancelled" };
    } else {
      outcome = { outcome: "selected", optionId: scenario.permission.optionId };
    }
    record.answer = { seq: ++seq, outcome };
    return { outcome };
  })
  .onRequest(acp.methods.client.fs.readTextFile, ({ params }) => {
    const read = { seq: ++seq, ...params, source: null };
    out.reads.push(read);
    let text;
    if (buffers.has(params.path)) {
      read.source = "buffer";
      text = buffers.get(params.path);
    } else {
      try {
        text = readFileSync(params.path, "utf8");
        read.source = "disk";
      } catch {
        read.source = "missing";
        throw acp.RequestError.resourceNotFound(params.path);
      }
    }
    if (params.line != null || params.limit != null) {
      const start = Math.max((params.line ?? 1) - 1, 0);
      const lines = text.split("\n");
      text = lines.slice(start, params.limit != null ? start + params.limit : undefined).join("\n");
    }
    return { content: text };
  })
  .onRequest(acp.methods.client.fs.writeTextFile, ({ params }) => {
    out.writes.push({ seq: ++seq, ...params });
    mkdirSync(dirname(params.path), { recursive: true });
    writeFileSync(params.path, params.content, "utf8");
    buffers.delete(params.path);
    return {};
  });

/** @type {Map<string, Array<(params: any) => void>>} */
const updateWaiters = new Map();

/** @param {string} sessionId */
function nextUpdate(sessionId) {
  return new Promise((resolve) => {
    const list = updateWaiters.get(sessionId) ?? [];
    list.push(resolve);
    updateWaiters.set(sessionId, list);
  });
}

/** @param {string} sessionId  The session's next agent_message_chunk. */
async function nextChunk(sessionId) {
  for (;;) {
    const params = await nextUpdate(sessionId);
    if (params.update.sessionUpdate === "agent_message_chunk") return params;
  }
}

/** A request's answer or error, as a value. */
async function settle(promise) {
  try {
    return { result: await promise };
  } catch (error) {
    return { error: errorOf(error) };
  }
}

/** @param {string} sessionId */
function nextPermission(sessionId) {
  return new Promise((resolve) => {
    const list = permissionWaiters.get(sessionId) ?? [];
    list.push(resolve);
    permissionWaiters.set(sessionId, list);
  });
}

/**
 * @param {acp.ClientContext} agent
 * @param {any} step
 */
/** A step's `additionalDirectories`, when it names some, as session/new, load and resume take them. */
function roots(step) {
  return step.additionalDirectories ? { additionalDirectories: step.additionalDirectories } : {};
}

async function runStep(agent, step) {
  const sessionId = step.sessionId ?? sessions.get(step.session);
  switch (step.op) {
    case "new": {
      const result = await agent.request(acp.methods.agent.session.new, {
        cwd: step.cwd ?? scenario.cwd,
        mcpServers: [],
        ...roots(step),
        ...(step.meta ? { _meta: step.meta } : {}),
      });
      if (step.as) sessions.set(step.as, result.sessionId);
      return result;
    }
    case "load": {
      const result = await agent.request(acp.methods.agent.session.load, {
        sessionId,
        cwd: step.cwd ?? scenario.cwd,
        mcpServers: [],
        ...roots(step),
        ...(step.meta ? { _meta: step.meta } : {}),
      });
      if (step.as) sessions.set(step.as, sessionId);
      return result;
    }
    case "prompt": {
      const asked = step.cancelAfterPermission ? nextPermission(sessionId) : null;
      const updated = step.cancelRequestAfterUpdate ? nextUpdate(sessionId) : null;
      const abort = new AbortController();
      const answer = agent.request(
        acp.methods.agent.session.prompt,
        { sessionId, prompt: [{ type: "text", text: step.text }] },
        { cancellationSignal: abort.signal },
      );
      if (step.deleteAt) {
        // The session is deleted under its running prompt: at the turn's first text chunk
        // ("chunk"), or at its first (held) permission request ("permission"), which is
        // answered only after the delete's answer. Both answers are kept.
        const reached = step.deleteAt === "permission" ? nextPermission(sessionId) : nextChunk(sessionId);
        await Promise.race([reached, answer]);
        const deleted = await settle(agent.request(acp.methods.agent.session.delete, { sessionId }));
        for (const release of held.get(sessionId) ?? []) release();
        held.delete(sessionId);
        return { prompt: await settle(answer), delete: deleted };
      }
      if (step.steerAtPermission) {
        // At the turn's (held) permission request, a second prompt steers it; then the
        // request is answered and both prompts wait for the one turn.
        await Promise.race([nextPermission(sessionId), answer]);
        const steer = agent.request(acp.methods.agent.session.prompt, {
          sessionId,
          prompt: [{ type: "text", text: `/steer ${step.steerAtPermission}` }],
        });
        // Time for the agent to take the steer before the turn goes on (a slow machine too).
        await new Promise((resolve) => setTimeout(resolve, 2000));
        for (const release of held.get(sessionId) ?? []) release();
        held.delete(sessionId);
        return { first: await answer, steer: await steer };
      }
      if (updated) {
        await Promise.race([updated, answer]);
        abort.abort();
      }
      if (asked) {
        await Promise.race([asked, answer]);
        await agent.notify(acp.methods.agent.session.cancel, { sessionId });
        // The protocol: the client answers the session's pending permission requests
        // with `cancelled` once it has sent session/cancel.
        for (const release of held.get(sessionId) ?? []) release();
        held.delete(sessionId);
      }
      return await answer;
    }
    case "list":
      // This scenario's folder only: the daemon's AGENTLS_HOME holds other tests' sessions.
      return await agent.request(acp.methods.agent.session.list, { cwd: step.cwd ?? scenario.cwd });
    case "resume":
      return await agent.request(acp.methods.agent.session.resume, {
        sessionId,
        cwd: step.cwd ?? scenario.cwd,
        mcpServers: [],
        ...roots(step),
      });
    case "close":
      return await agent.request(acp.methods.agent.session.close, { sessionId });
    case "delete":
      // A stable v1 method of the SDK's own (methods.agent.session.delete), typed params.
      return await agent.request(acp.methods.agent.session.delete, { sessionId });
    case "setMode":
      return await agent.request(acp.methods.agent.session.setMode, {
        sessionId,
        modeId: step.modeId,
      });
    default:
      throw new Error(`unknown step op ${step.op}`);
  }
}

const child = spawn(scenario.agent[0], scenario.agent.slice(1), {
  cwd: scenario.cwd,
  stdio: ["pipe", "pipe", "inherit"],
});
const exited = new Promise((resolve) => child.on("exit", (code, signal) => resolve({ code, signal })));
const wire = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const outgoing = tap("out");
void outgoing.readable.pipeTo(wire.writable).catch(() => {});
const stream = { readable: wire.readable.pipeThrough(tap("in")), writable: outgoing.writable };

try {
  await app.connectWith(stream, async (agent) => {
    out.initialize = await withTimeout(
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        clientCapabilities: {
          fs: { readTextFile: !!scenario.fs?.read, writeTextFile: !!scenario.fs?.write },
          terminal: false,
        },
        clientInfo: { name: "agentls-tests-node", version: "1" },
      }),
      "initialize",
    );
    out.initializeParsed = zInitializeResponse.parse(out.initialize);
    for (const step of scenario.steps) {
      const record = { op: step.op, session: step.session ?? step.as ?? null };
      out.steps.push(record);
      try {
        record.result = await withTimeout(runStep(agent, step), `${step.op} step`);
      } catch (error) {
        record.error = errorOf(error);
        out.errors.push({ seq: ++seq, op: step.op, ...record.error });
      }
      record.seq = ++seq;
      record.sessionId = step.sessionId ?? sessions.get(step.session ?? step.as) ?? null;
    }
  });
} catch (error) {
  out.errors.push({ seq: ++seq, op: "connection", ...errorOf(error) });
}

child.stdin.end();
const killer = setTimeout(() => child.kill("SIGKILL"), 10_000);
out.exit = await exited;
clearTimeout(killer);
process.stdout.write(JSON.stringify(out) + "\n");
