// The event reducer alone: events in, view state out.

import assert from "node:assert/strict";
import { test } from "node:test";

import { type Action, type Item, MAX_EARLY, initialState, inlineLabel, pendingPermissions, reduce, sessionOpened } from "../src/reducer";
import type { AgentEvent, DisplayMessage } from "../src/wire";

const SESSION = "sess_1";

/** Events with `seq` 1, 2, 3… and the session id filled in. */
function numbered(events: Array<Record<string, unknown>>, from = 1): AgentEvent[] {
  return events.map((e, i) => ({ sessionId: SESSION, seq: from + i, ...e }) as unknown as AgentEvent);
}

function run(events: AgentEvent[], start = reduce(initialState(), { type: "session", sessionId: SESSION })) {
  return events.reduce((state, event) => reduce(state, { type: "event", event }), start);
}

function kinds(items: Item[]): string[] {
  return items.map((i) => i.kind);
}

const TURN = [
  { type: "turn_started", turnId: "t1", userMessageId: "u1" },
  {
    type: "message_completed",
    turnId: "t1",
    messageId: "u1",
    role: "user",
    content: [
      { type: "text", text: "<userContext>\n<currentTime>now</currentTime>\n</userContext>" },
      { type: "text", text: "What port?" },
    ],
  },
  { type: "text_delta", turnId: "t1", messageId: "a1", text: "Let me " },
  { type: "text_delta", turnId: "t1", messageId: "a1", text: "read it." },
  {
    type: "tool_call",
    turnId: "t1",
    toolCallId: "c1",
    name: "Read",
    kind: "read",
    title: "Read app.py",
    input: { file_path: "app.py" },
    locations: [{ path: "/w/app.py", line: 0 }],
  },
  { type: "tool_call_update", turnId: "t1", toolCallId: "c1", status: "in_progress" },
  { type: "tool_call_update", turnId: "t1", toolCallId: "c1", status: "completed", content: "PORT = 8000" },
  { type: "text_delta", turnId: "t1", messageId: "a2", text: "Port 8000." },
  { type: "turn_completed", turnId: "t1", stopReason: "end_turn", turns: 2, usage: {} },
];

test("a turn folds into user text, streamed answers and a tool card", () => {
  const state = run(numbered(TURN));
  assert.deepEqual(kinds(state.items), ["user", "assistant", "tool", "assistant"]);
  const [user, first, tool, last] = state.items;
  assert.equal(user?.kind === "user" && user.text, "What port?");
  assert.equal(first?.kind === "assistant" && first.text, "Let me read it.");
  assert.equal(tool?.kind === "tool" && tool.status, "completed");
  assert.equal(tool?.kind === "tool" && tool.output, "PORT = 8000");
  assert.equal(last?.kind === "assistant" && last.streaming, false);
  assert.equal(state.runningTurn, null);
  assert.equal(state.lastSeq, TURN.length);
});

test("duplicate events are applied once", () => {
  const events = numbered(TURN);
  const doubled = events.flatMap((e) => [e, e]);
  assert.deepEqual(run(doubled), run(events));
});

test("out-of-order events wait for the gap and then apply in seq order", () => {
  const events = numbered(TURN);
  const shuffled = [events[0], events[3], events[2], events[1], ...events.slice(4)].filter(
    (e): e is AgentEvent => e !== undefined,
  );
  const midway = run(shuffled.slice(0, 3));
  assert.equal(midway.lastSeq, 1);
  assert.equal(Object.keys(midway.early).length, 2);
  assert.deepEqual(run(shuffled), run(events));
});

test("a gap that never fills does not stall the chat forever", () => {
  const late = numbered(
    Array.from({ length: MAX_EARLY + 1 }, () => ({ type: "text_delta", turnId: "t1", messageId: "a1", text: "x" })),
    2,
  );
  const state = run(late);
  const [answer] = state.items;
  assert.equal(answer?.kind === "assistant" && answer.text.length, MAX_EARLY + 1);
});

test("another session's events are ignored", () => {
  const other = { ...numbered(TURN)[2], sessionId: "sess_other" } as AgentEvent;
  assert.deepEqual(run([other]).items, []);
});

test("a discarded retry attempt's text is replaced, not doubled", () => {
  const events = numbered([
    { type: "turn_started", turnId: "t1", userMessageId: "u1" },
    { type: "text_delta", turnId: "t1", messageId: "a1", text: "The answer is forty" },
    { type: "message_discarded", turnId: "t1", messageId: "a1", reason: "retry" },
    { type: "notice", turnId: "t1", level: "warning", message: "Retrying in 1.0 s", retrying: true, attempt: 1 },
    { type: "text_delta", turnId: "t1", messageId: "a2", text: "The answer is 42." },
    { type: "message_completed", turnId: "t1", messageId: "a2", role: "assistant", content: [{ type: "text", text: "The answer is 42." }] },
  ]);
  const state = run(events);
  const answers = state.items.filter((i) => i.kind === "assistant");
  assert.equal(answers.length, 1);
  assert.equal(answers[0]?.kind === "assistant" && answers[0].text, "The answer is 42.");
  assert.deepEqual(kinds(state.items), ["notice", "assistant"]);
});

test("queued messages show until their turn starts, and leave when aborted unstarted", () => {
  let state = run(numbered(TURN.slice(0, 1)));
  const submit = (text: string, turnId: string): Action => ({ type: "submitted", text, turnId, queued: true });
  state = reduce(state, submit("and tests?", "t2"));
  state = reduce(state, submit("and docs?", "t3"));
  assert.deepEqual(state.queued.map((q) => q.text), ["and tests?", "and docs?"]);
  state = run(
    numbered(
      [
        { type: "turn_completed", turnId: "t1", stopReason: "aborted", turns: 1, usage: {} },
        { type: "turn_started", turnId: "t2", userMessageId: "u2" },
        { type: "turn_completed", turnId: "t3", stopReason: "aborted", turns: 0, usage: {} },
      ],
      2,
    ),
    state,
  );
  assert.deepEqual(state.queued, []);
  assert.equal(state.runningTurn, "t2");
});

test("permission requests are pending until resolved, whoever resolves them", () => {
  const events = numbered([
    { type: "turn_started", turnId: "t1", userMessageId: "u1" },
    {
      type: "permission_request",
      turnId: "t1",
      requestId: "perm_1",
      toolCallId: "c1",
      title: "Edit app.py",
      input: { file_path: "app.py" },
      options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }],
    },
  ]);
  let state = run(events);
  assert.equal(pendingPermissions(state).length, 1);
  assert.equal(pendingPermissions(state)[0]?.diff, undefined);
  state = run(numbered([{ type: "permission_resolved", turnId: "t1", requestId: "perm_1", outcome: "cancelled" }], 3), state);
  assert.equal(pendingPermissions(state).length, 0);
  const [item] = state.items;
  assert.equal(item?.kind === "permission" && item.state, "cancelled");
});

test("an answered request says what was picked in words, never the option id", () => {
  const options = [
    { optionId: "allow_once", name: "Allow once", kind: "allow_once" },
    { optionId: "allow_always", name: "Always allow", kind: "allow_always", rule: "Edit(./app.py)" },
    { optionId: "reject_once", name: "Reject", kind: "reject_once" },
    { optionId: "reject_always", name: "Always reject", kind: "reject_always", rule: "Edit(./app.py)" },
  ];
  const answered = (resolved: Record<string, unknown>) => {
    const state = run(
      numbered([
        { type: "permission_request", turnId: "t1", requestId: "p1", toolCallId: "c1", title: "Edit app.py", input: {}, options },
        { type: "permission_resolved", turnId: "t1", requestId: "p1", ...resolved },
      ]),
    );
    const [item] = state.items;
    return item?.kind === "permission" ? item.answer : undefined;
  };
  assert.equal(answered({ outcome: "selected", optionId: "allow_once" }), "Allowed once");
  assert.equal(answered({ outcome: "selected", optionId: "allow_always" }), "Always allowed (Edit(./app.py))");
  assert.equal(answered({ outcome: "selected", optionId: "reject_once" }), "Rejected");
  assert.equal(answered({ outcome: "selected", optionId: "reject_always" }), "Always rejected (Edit(./app.py))");
  assert.equal(answered({ outcome: "cancelled" }), "Cancelled");
});

test("a tool call is marked as asking while its permission request waits", () => {
  const state = run(
    numbered([
      { type: "tool_call", turnId: "t1", toolCallId: "c1", name: "Bash", kind: "execute", title: "Run ls", input: {} },
      { type: "permission_request", turnId: "t1", requestId: "p1", toolCallId: "c1", title: "Run ls", input: {}, options: [] },
    ]),
  );
  const [tool] = state.items;
  assert.equal(tool?.kind === "tool" && tool.asking, true);
});

test("the answer shows on the tool call's card, and a change reverted whole in review reads as rejected", () => {
  const options = [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }];
  const request = (id: string, call: string) => [
    { type: "tool_call", turnId: "t1", toolCallId: call, name: "Edit", kind: "edit", title: "Edit app.py", input: {} },
    { type: "permission_request", turnId: "t1", requestId: id, toolCallId: call, title: "Edit app.py", input: {}, options },
    { type: "permission_resolved", turnId: "t1", requestId: id, outcome: "selected", optionId: "allow_once" },
  ];
  const state = run(
    numbered([
      ...request("p1", "c1"),
      { type: "tool_call_update", turnId: "t1", toolCallId: "c1", status: "completed", content: "ok" },
      ...request("p2", "c2"),
      { type: "tool_call_update", turnId: "t1", toolCallId: "c2", status: "declined", content: "The user reviewed this change and rejected all of it" },
    ]),
  );
  const answers = state.items.flatMap((i) => (i.kind === "tool" ? [[i.id, i.answer]] : []));
  assert.ok(state.items.every((i) => i.kind !== "tool" || !i.asking));
  assert.deepEqual(answers, [
    ["c1", "Allowed once"],
    ["c2", "Rejected in review"],
  ]);
});

test("a file change's request comes with its diff preview, before any click", () => {
  const diff = { path: "/w/app.py", oldText: "PORT = 8000\n", newText: "PORT = 9000\n" };
  const state = run(
    numbered([
      { type: "permission_request", turnId: "t1", requestId: "p1", toolCallId: "c1", title: "Edit app.py", input: {}, options: [], diff },
    ]),
  );
  const preview = pendingPermissions(state)[0]?.preview;
  assert.ok(preview, "no preview with the request");
  assert.deepEqual(
    preview.lines.map((l) => `${l.kind} ${l.text}`),
    ["removed PORT = 8000", "added PORT = 9000"],
  );
  assert.equal(preview.added, 1);
});

test("an inline edit's instruction is shown with the lines it is about, and Rewind knows its turn", () => {
  const range = { start: { line: 1, character: 0 }, end: { line: 9, character: 11 } };
  const state = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1", inlineEdit: { uri: "file:///w/my%20values.py", range } },
      { type: "message_completed", turnId: "t1", messageId: "u1", role: "user", content: [{ type: "text", text: "bump them" }] },
    ]),
  );
  const user = state.items.find((i) => i.kind === "user");
  assert.deepEqual(user, { kind: "user", id: "u1", text: "bump them", turnId: "t1", inlineEdit: "my values.py:2-10" });
  assert.equal(state.inlineTurn, null);
  // An ordinary turn after it is not marked.
  const next = run(numbered([...TURN], 3), state);
  assert.equal(next.items.filter((i) => i.kind === "user" && i.inlineEdit).length, 1);
});

test("an inline edit's lines: one line, and a selection that ends at a line's start", () => {
  const at = (sl: number, sc: number, el: number, ec: number) => inlineLabel({ uri: "file:///w/a.py", range: { start: { line: sl, character: sc }, end: { line: el, character: ec } } });
  assert.equal(at(4, 0, 4, 9), "a.py:5");
  assert.equal(at(4, 0, 4, 0), "a.py:5");
  assert.equal(at(1, 0, 3, 0), "a.py:2-3");
});

test("an inline edit's request is marked as reviewed in the editor, with no diff on its card", () => {
  const diff = { path: "/w/app.py", oldText: "PORT = 8000\n", newText: "PORT = 9000\n" };
  const state = run(
    numbered([
      { type: "permission_request", turnId: "t1", requestId: "p1", toolCallId: "c1", title: "Edit app.py", input: {}, options: [], diff, inlineEdit: true },
    ]),
  );
  const card = pendingPermissions(state)[0];
  assert.ok(card?.inlineEdit);
  assert.equal(card.preview, undefined);
  assert.equal(card.diff, undefined);
});

test("a file change's request carries the change to review", () => {
  const diff = { path: "/w/app.py", oldText: "PORT = 8000\n", newText: "PORT = 9000\n" };
  const state = run(
    numbered([
      {
        type: "permission_request",
        turnId: "t1",
        requestId: "perm_2",
        toolCallId: "c2",
        title: "Edit app.py",
        input: {},
        options: [],
        diff,
      },
    ]),
  );
  assert.deepEqual(pendingPermissions(state)[0]?.diff, diff);
});

test("a retryable error offers the last message again", () => {
  let state = reduce(run([]), { type: "submitted", text: "fix it", turnId: "t1", queued: false });
  state = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      {
        type: "turn_completed",
        turnId: "t1",
        stopReason: "error",
        turns: 0,
        usage: {},
        error: { code: "model_errors", message: "overloaded", retryable: true },
      },
    ]),
    state,
  );
  assert.deepEqual(state.retryable, { text: "fix it" });
  assert.equal(state.items.at(-1)?.kind, "turnEnd");
});

test("usage adds up tokens and keeps the latest context fill", () => {
  const state = run(
    numbered([
      { type: "usage", turnId: "t1", inputTokens: 100, outputTokens: 10, cacheReadTokens: 0, cacheWriteTokens: 0, contextTokens: 110, contextWindow: 1000 },
      { type: "usage", turnId: "t1", inputTokens: 50, outputTokens: 5, cacheReadTokens: 0, cacheWriteTokens: 0, contextTokens: 165, contextWindow: 1000, costUsd: 0.01 },
    ]),
  );
  assert.deepEqual(state.usage, { inputTokens: 150, outputTokens: 15, contextTokens: 165, contextWindow: 1000, costUsd: 0.01 });
});

test("a resumed session renders its history, tool results on their cards", () => {
  const messages: DisplayMessage[] = [
    {
      messageId: "u1",
      role: "user",
      content: [
        { type: "text", text: "<userContext>\n</userContext>" },
        { type: "text", text: "What port?" },
      ],
    },
    {
      messageId: "a1",
      role: "assistant",
      content: [
        { type: "text", text: "Reading." },
        { type: "tool_use", id: "c1", name: "Read", input: { file_path: "app.py" } },
      ],
    },
    { messageId: "r1", role: "user", content: [{ type: "tool_result", toolUseId: "c1", content: "PORT = 8000", isError: false }] },
    { messageId: "a2", role: "assistant", content: [{ type: "text", text: "8000." }] },
  ];
  const state = reduce(initialState(), { type: "session", sessionId: SESSION, messages });
  assert.deepEqual(kinds(state.items), ["user", "assistant", "tool", "assistant"]);
  const tool = state.items[2];
  assert.equal(tool?.kind === "tool" && tool.output, "PORT = 8000");
  assert.equal(state.sessionId, SESSION);
  // Live events continue from the resumed history.
  const next = run(numbered([{ type: "text_delta", turnId: "t9", messageId: "a3", text: "More." }]), state);
  assert.equal(next.items.length, 5);
});

test("a resumed tool card shows the call as it was announced live: title, kind, places", () => {
  const messages: DisplayMessage[] = [
    {
      messageId: "a1",
      role: "assistant",
      content: [
        { type: "tool_use", id: "c1", name: "Read", input: { file_path: "app.py" } },
        { type: "tool_use", id: "c2", name: "Bash", input: { command: "make" } },
        { type: "tool_use", id: "c3", name: "Gone", input: {} },
      ],
      toolCalls: [
        { toolCallId: "c1", kind: "read", title: "Read app.py", locations: [{ path: "/ws/app.py", line: null }] },
        { toolCallId: "c2", kind: "execute", title: "make", locations: [{ path: "/ws", line: 3 }] },
      ],
    },
  ];
  const state = reduce(initialState(), { type: "session", sessionId: SESSION, messages });
  const cards = state.items.flatMap((i) => (i.kind === "tool" ? [[i.title, i.toolKind, i.locations]] : []));
  assert.deepEqual(cards, [
    ["Read app.py", "read", [{ path: "/ws/app.py" }]],
    ["make", "execute", [{ path: "/ws", line: 3 }]],
    // A call the daemon did not announce (or an older daemon): its name, kind other.
    ["Gone", "other", []],
  ]);
});

test("a completed change's card links to the line it starts at; a failed one keeps the file", () => {
  const state = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      { type: "tool_call", turnId: "t1", toolCallId: "e1", name: "Edit", kind: "edit", title: "Edit app.py", input: {}, locations: [{ path: "/w/app.py" }] },
      { type: "tool_call_update", turnId: "t1", toolCallId: "e1", status: "in_progress" },
      {
        type: "tool_call_update",
        turnId: "t1",
        toolCallId: "e1",
        status: "completed",
        content: "ok",
        diff: { path: "/w/app.py", oldText: "a\nb\n", newText: "a\nB\n" },
        locations: [{ path: "/w/app.py", line: 1 }],
      },
      { type: "tool_call", turnId: "t1", toolCallId: "e2", name: "Edit", kind: "edit", title: "Edit b.py", input: {}, locations: [{ path: "/w/b.py" }] },
      { type: "tool_call_update", turnId: "t1", toolCallId: "e2", status: "failed", content: "not found" },
    ]),
  );
  const places = state.items.flatMap((i) => (i.kind === "tool" ? [[i.id, i.locations]] : []));
  assert.deepEqual(places, [
    ["e1", [{ path: "/w/app.py", line: 1 }]],
    ["e2", [{ path: "/w/b.py" }]],
  ]);
});

/** A turn whose edits changed `app.py` twice and created `new.py`. */
function editTurn(): AgentEvent[] {
  const edit = (id: string, path: string, oldText: string | undefined, newText: string) => [
    { type: "tool_call", turnId: "t1", toolCallId: id, name: "Edit", kind: "edit", title: `Edit ${path}`, input: {} },
    {
      type: "tool_call_update",
      turnId: "t1",
      toolCallId: id,
      status: "completed",
      content: "ok",
      diff: { path, ...(oldText === undefined ? {} : { oldText }), newText },
    },
  ];
  return numbered([
    { type: "turn_started", turnId: "t1", userMessageId: "u1" },
    { type: "message_completed", turnId: "t1", messageId: "u1", role: "user", content: [{ type: "text", text: "go" }] },
    ...edit("e1", "/w/app.py", "a\nb\nc\n", "A\nb\nc\n"),
    ...edit("e2", "/w/app.py", "A\nb\nc\n", "A\nb\nc\nd\ne\n"),
    ...edit("e3", "/w/new.py", undefined, "x\ny\n"),
    { type: "tool_call", turnId: "t1", toolCallId: "e4", name: "Edit", kind: "edit", title: "Edit gone.py", input: {} },
    { type: "tool_call_update", turnId: "t1", toolCallId: "e4", status: "failed", content: "not found" },
    { type: "turn_completed", turnId: "t1", stopReason: "end_turn", turns: 4, usage: {} },
  ]);
}

test("a turn that changed files ends with a summary of each file's +/- lines", () => {
  const state = run(editTurn());
  const summary = state.items.at(-1);
  assert.ok(summary?.kind === "summary");
  assert.deepEqual(summary.files, [
    { path: "/w/app.py", toolCallIds: ["e1", "e2"], added: 3, removed: 1, created: false },
    { path: "/w/new.py", toolCallIds: ["e3"], added: 2, removed: 0, created: true },
  ]);
  // A turn with no completed edit has no summary.
  assert.ok(!run(numbered(TURN)).items.some((i) => i.kind === "summary"));
});

test("undone edits are marked and their summary is a new object to redraw", () => {
  const before = run(editTurn());
  const after = reduce(before, { type: "undone", toolCallIds: ["e1", "e2"] });
  const undone = after.items.filter((i) => i.kind === "tool" && i.undone).map((i) => i.id);
  assert.deepEqual(undone, ["e1", "e2"]);
  assert.notEqual(after.items.at(-1), before.items.at(-1));
  // Items the undo did not touch keep their identity: the webview leaves them alone.
  const untouched = (items: Item[]) => items.find((i) => i.id === "e3");
  assert.equal(untouched(after.items), untouched(before.items));
});

test("Bash output pieces add up while it runs; the final content replaces them", () => {
  const update = (status: string, content?: string) => ({ type: "tool_call_update", turnId: "t1", toolCallId: "b", status, ...(content === undefined ? {} : { content }) });
  const events = numbered([
    { type: "tool_call", turnId: "t1", toolCallId: "b", name: "Bash", kind: "execute", title: "Bash: make", input: {} },
    update("in_progress"),
    update("in_progress", "line 1\n"),
    update("in_progress", "line 2\n"),
  ]);
  const running = run(events);
  const tool = running.items.find((i) => i.kind === "tool");
  assert.equal(tool?.kind === "tool" && tool.output, "line 1\nline 2\n");
  const done = run(numbered([update("completed", "line 1\nline 2\nexit 0")], events.length + 1), running);
  const final = done.items.find((i) => i.kind === "tool");
  assert.equal(final?.kind === "tool" && final.output, "line 1\nline 2\nexit 0");
});

test("a turn stopped at the turn limit can be continued, and the offer goes when the next turn starts", () => {
  let state = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      { type: "turn_limit_reached", turnId: "t1", turns: 2, maxTurns: 2 },
      { type: "turn_completed", turnId: "t1", stopReason: "max_turns", turns: 2, usage: {} },
    ]),
  );
  assert.deepEqual(state.limitReached, { turns: 2, maxTurns: 2 });
  const end = state.items.at(-1);
  assert.equal(end?.kind, "turnEnd");
  state = run(numbered([{ type: "turn_started", turnId: "t2", userMessageId: "u9", continued: true }], 4), state);
  assert.equal(state.limitReached, null);
  assert.equal(state.runningTurn, "t2");
  // A new object, so the renderer redraws it without the Continue button.
  assert.notEqual(state.items.at(-1), end);
  assert.deepEqual(state.items.at(-1), end);
});

test("the plan is replaced whole by each plan event and comes back with a resumed session", () => {
  const first = [
    { content: "Read", status: "in_progress", priority: "medium" },
    { content: "Fix", status: "pending", priority: "high" },
  ];
  const second = [
    { content: "Read", status: "completed", priority: "medium" },
    { content: "Fix", status: "in_progress", priority: "high" },
  ];
  const state = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      { type: "plan", turnId: "t1", entries: first },
      { type: "plan", turnId: "t1", entries: second },
    ]),
  );
  assert.deepEqual(state.plan, second);
  const resumed = reduce(initialState(), { type: "session", sessionId: SESSION, messages: [], plan: second as never });
  assert.deepEqual(resumed.plan, second);
  assert.deepEqual(reduce(initialState(), { type: "session", sessionId: SESSION }).plan, []);
});

test("a new, resumed or forked session opens through one action, over whatever chat was shown", () => {
  const shown = run(numbered(TURN));
  const common = { model: "m", permissionMode: "default" as const, tools: [] };
  const fresh = reduce(shown, sessionOpened({ ...common, sessionId: "sess_new" }));
  assert.deepEqual(fresh, { ...initialState(), sessionId: "sess_new" });
  const messages: DisplayMessage[] = [{ messageId: "u1", role: "user", content: [{ type: "text", text: "Hi" }] }];
  const plan = [{ content: "Read", status: "pending" as const, priority: "low" as const }];
  const resumed = reduce(shown, sessionOpened({ ...common, sessionId: "sess_old", messages, plan }));
  assert.equal(resumed.sessionId, "sess_old");
  assert.deepEqual(kinds(resumed.items), ["user"]);
  assert.deepEqual(resumed.plan, plan);
  assert.equal(resumed.runningTurn, null);
  // A fork or resume with no plan (null on the wire) has an empty one.
  assert.deepEqual(reduce(shown, sessionOpened({ ...common, sessionId: "sess_fork", messages, plan: null })).plan, []);
});

test("a sub-agent's events fold into its Task card, while its permission request stays in the chat", () => {
  const child = { parentToolCallId: "task1", agentId: "agent_1" };
  const state = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      { type: "tool_call", turnId: "t1", toolCallId: "task1", name: "Task", kind: "think", title: "explore agent: find", input: {} },
      { type: "subagent_started", turnId: "t1", ...child, subagentType: "explore", description: "find" },
      { type: "text_delta", turnId: "t1", ...child, messageId: "m1", text: "Looking" },
      { type: "tool_call", turnId: "t1", ...child, toolCallId: "g1", name: "Grep", kind: "search", title: "Grep port", input: {} },
      { type: "tool_call_update", turnId: "t1", ...child, toolCallId: "g1", status: "completed", content: "app.py:1" },
      { type: "permission_request", turnId: "t1", ...child, requestId: "p1", toolCallId: "w1", title: "Write x", input: {}, options: [] },
      { type: "text_delta", turnId: "t1", ...child, messageId: "m2", text: "Found it." },
      { type: "usage", turnId: "t1", ...child, inputTokens: 10, outputTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0, contextTokens: 12, contextWindow: 100 },
      { type: "subagent_completed", turnId: "t1", ...child, stopReason: "end_turn", turns: 2, toolCalls: 1, usage: {}, durationMs: 5 },
    ]),
  );
  assert.deepEqual(kinds(state.items), ["tool", "permission"]);
  const card = state.items[0] as Extract<Item, { kind: "tool" }>;
  assert.deepEqual(card.agent, {
    agentId: "agent_1",
    type: "explore",
    status: "end_turn",
    calls: [{ id: "g1", title: "Grep port", status: "completed" }],
    messageId: "m2",
    text: "Found it.",
  });
  assert.equal(state.usage?.inputTokens, 10);
});

test("an MCP server's failure and its return, and a blocking hook, become notices; quiet starts do not", () => {
  const state = run(
    numbered([
      { type: "mcp_status", server: "docs", status: "starting", transport: "stdio", attempt: 1 },
      { type: "mcp_status", server: "docs", status: "ready", transport: "stdio", toolCount: 3, attempt: 1 },
      { type: "mcp_status", server: "docs", status: "failed", transport: "stdio", error: "it exited", attempt: 1 },
      { type: "mcp_status", server: "docs", status: "ready", transport: "stdio", toolCount: 3, attempt: 2 },
      { type: "hook_result", event: "PreToolUse", command: "./guard.sh", outcome: "blocked", message: "no rm" },
    ]),
  );
  const notices = state.items.flatMap((i) => (i.kind === "notice" ? [[i.level, i.message]] : []));
  assert.deepEqual(notices, [
    ["warning", "MCP server docs failed: it exited"],
    ["info", "MCP server docs is back (3 tools)."],
    ["warning", "PreToolUse hook `./guard.sh` blocked: no rm"],
  ]);
});

test("a local slash command's answer is shown, and the session's commands are kept for completion", () => {
  const state = run(
    numbered([
      { type: "available_commands", commands: [{ name: "cost", description: "Show the session's spend", source: "builtin" }] },
      { type: "command_output", turnId: "t1", command: "cost", text: "2 turns, 2,000 tokens in" },
      { type: "command_output", turnId: "t2", command: "model", text: "Unknown model", isError: true },
    ]),
  );
  assert.deepEqual(state.commands.map((c) => c.name), ["cost"]);
  const notices = state.items.flatMap((i) => (i.kind === "notice" ? [[i.level, i.message]] : []));
  assert.deepEqual(notices, [
    ["info", "2 turns, 2,000 tokens in"],
    ["error", "Unknown model"],
  ]);
});

test("a resumed session's older messages come a page at a time, before the ones shown", () => {
  const common = { model: "m", permissionMode: "default" as const, tools: [] };
  const last: DisplayMessage[] = [
    { messageId: "r1", role: "user", content: [{ type: "tool_result", toolUseId: "c1", content: "PORT = 8000", isError: false }] },
    { messageId: "a2", role: "assistant", content: [{ type: "text", text: "8000." }] },
  ];
  const resumed = reduce(initialState(), sessionOpened({ ...common, sessionId: SESSION, messages: last.slice(1), messagesCursor: "2" }));
  assert.equal(resumed.olderCursor, "2");
  const older: DisplayMessage[] = [
    { messageId: "u1", role: "user", content: [{ type: "text", text: "What port?" }] },
    {
      messageId: "a1",
      role: "assistant",
      content: [{ type: "tool_use", id: "c1", name: "Read", input: { file_path: "app.py" } }],
    },
    last[0] as DisplayMessage,
  ];
  const paged = reduce(resumed, { type: "older", sessionId: SESSION, messages: older, cursor: null });
  assert.deepEqual(kinds(paged.items), ["user", "tool", "assistant"]);
  const tool = paged.items[1];
  assert.equal(tool?.kind === "tool" && tool.output, "PORT = 8000");
  assert.equal(paged.olderCursor, null);
  // A page that comes back after another session was opened is dropped.
  assert.equal(reduce(initialState(), { type: "older", sessionId: SESSION, messages: older, cursor: null }).items.length, 0);
  assert.equal(reduce(initialState(), sessionOpened({ ...common, sessionId: SESSION, messages: [] })).olderCursor, null);
});

const PLAN_OPTIONS = [
  { optionId: "plan_approve", name: "Approve (ask before edits)", kind: "allow_once" },
  { optionId: "plan_approve_accept_edits", name: "Approve, accept edits", kind: "allow_always" },
  { optionId: "plan_keep_planning", name: "Keep planning", kind: "reject_once" },
  { optionId: "plan_reject", name: "Reject", kind: "reject_always" },
];

test("a plan to approve is a card with the plan; its approval switches the mode as a line in the chat", () => {
  const plan = "# Plan\n\n1. Write hello.txt";
  const asked = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      { type: "tool_call", turnId: "t1", toolCallId: "p1", name: "ExitPlanMode", kind: "think", title: "Present the plan", input: { plan } },
      { type: "tool_call_update", turnId: "t1", toolCallId: "p1", status: "in_progress" },
      { type: "permission_request", turnId: "t1", requestId: "r1", toolCallId: "p1", title: "Approve the plan", input: { plan }, options: PLAN_OPTIONS, plan },
    ]),
  );
  const card = pendingPermissions(asked)[0];
  assert.ok(card);
  assert.equal(card.plan, plan);
  assert.deepEqual(card.options.map((o) => o.optionId), PLAN_OPTIONS.map((o) => o.optionId));
  const approved = run(
    numbered(
      [
        { type: "permission_resolved", turnId: "t1", requestId: "r1", outcome: "selected", optionId: "plan_approve_accept_edits" },
        { type: "permission_mode_changed", turnId: "t1", permissionMode: "acceptEdits" },
        // A change by agent/setPermissionMode or /mode (no turn) is the status bar's alone.
        { type: "permission_mode_changed", permissionMode: "plan" },
      ],
      5,
    ),
    asked,
  );
  const tool = approved.items.find((i) => i.kind === "tool");
  assert.equal(tool?.kind === "tool" && tool.answer, "Approved, edits accepted");
  const notices = approved.items.flatMap((i) => (i.kind === "notice" ? [i.message] : []));
  assert.deepEqual(notices, ["Mode: accept edits (asks before commands)"]);
});

test("an apply_patch request lists every file; its completed call keeps every diff", () => {
  const diffs = [
    { path: "/w/a.py", oldText: "x\n", newText: "y\n", kind: "update" },
    { path: "/w/b.md", newText: "new\n", kind: "add" },
  ];
  const state = run(
    numbered([
      { type: "tool_call", turnId: "t1", toolCallId: "c1", name: "apply_patch", kind: "edit", title: "Apply a patch", input: { input: "*** Begin Patch" } },
      {
        type: "permission_request",
        turnId: "t1",
        requestId: "r1",
        toolCallId: "c1",
        title: "Apply a patch to 2 files",
        input: {},
        options: [{ optionId: "allow_once", name: "Allow once", kind: "allow_once" }],
        diffs,
      },
      { type: "permission_resolved", turnId: "t1", requestId: "r1", outcome: "selected", optionId: "allow_once" },
      { type: "tool_call_update", turnId: "t1", toolCallId: "c1", status: "completed", content: "Applied the patch: 2 files changed.", diffs },
    ]),
  );
  const request = state.items.find((i) => i.kind === "permission");
  assert.ok(request?.kind === "permission");
  assert.deepEqual(request.files?.map((f) => [f.kind, f.path, f.added, f.removed]), [
    ["update", "/w/a.py", 1, 1],
    ["add", "/w/b.md", 1, 0],
  ]);
  // Listed file by file, so no one-file preview (nor its per-hunk review) stands for it.
  assert.equal(request.preview, undefined);
  const tool = state.items.find((i) => i.kind === "tool");
  assert.deepEqual(tool?.kind === "tool" && tool.diffs?.map((d) => d.path), ["/w/a.py", "/w/b.md"]);
});

test("/context is drawn as a bar; a !command's output stays in its Bash card, opened", () => {
  const text = "Context of m: about 1,000 of 10,000 tokens (10%)\n  Messages         1,000 tokens  10.0%  (2 messages)\n  Free space       9,000 tokens  90.0%";
  const state = run(
    numbered([
      { type: "command_output", turnId: "t1", command: "context", text },
      { type: "turn_completed", turnId: "t1", stopReason: "end_turn", turns: 0, usage: {} },
      { type: "tool_call", turnId: "t2", toolCallId: "b1", name: "Bash", kind: "execute", title: "ls", input: { command: "ls" } },
      { type: "tool_call_update", turnId: "t2", toolCallId: "b1", status: "completed", content: "app.py" },
      { type: "command_output", turnId: "t2", command: "!", text: "app.py" },
      { type: "turn_completed", turnId: "t2", stopReason: "end_turn", turns: 0, usage: {}, costUsd: 0 },
      { type: "command_output", turnId: "t3", command: "#", text: "Added to AGENTS.md" },
    ]),
  );
  assert.deepEqual(kinds(state.items), ["context", "tool", "notice"]);
  const context = state.items[0];
  assert.deepEqual(context?.kind === "context" && context.report.parts.map((p) => p.tokens), [1000, 9000]);
  const shell = state.items[1];
  assert.equal(shell?.kind === "tool" && shell.userShell, true);
  assert.equal(state.lastTurnCostUsd, 0);
});

test("the last turn's cost is kept from turn_completed, and unknown when it has none", () => {
  const priced = run(numbered([{ type: "turn_completed", turnId: "t1", stopReason: "end_turn", turns: 1, usage: {}, costUsd: 0.0123 }]));
  assert.equal(priced.lastTurnCostUsd, 0.0123);
  const unpriced = run(numbered([{ type: "turn_completed", turnId: "t2", stopReason: "end_turn", turns: 1, usage: {} }], 2), priced);
  assert.equal(unpriced.lastTurnCostUsd, null);
});

test("a local command's turn after a turn that edited a file does not list that file again", () => {
  const edited = run(
    numbered([
      { type: "turn_started", turnId: "t1", userMessageId: "u1" },
      { type: "message_completed", turnId: "t1", messageId: "u1", role: "user", content: [{ type: "text", text: "Write it" }] },
      { type: "tool_call", turnId: "t1", toolCallId: "w1", name: "Write", kind: "edit", title: "Write a.txt", input: {} },
      { type: "tool_call_update", turnId: "t1", toolCallId: "w1", status: "completed", content: "ok", diff: { path: "/w/a.txt", newText: "a\n" } },
      { type: "turn_completed", turnId: "t1", stopReason: "end_turn", turns: 2, usage: {} },
      { type: "command_output", turnId: "t2", command: "mode", text: "The permission mode is now default." },
      { type: "turn_completed", turnId: "t2", stopReason: "end_turn", turns: 0, usage: {} },
    ]),
  );
  assert.deepEqual(kinds(edited.items), ["user", "tool", "summary", "notice"]);
});
