// The chat's view state, folded from agent/event notifications and the client's own actions.
// Pure: no vscode, no DOM. The webview renders whatever this returns; the tests drive it
// with events alone.

import { type ContextReport, parseContextReport } from "./contextReport";
import { hunks } from "./hunks";
import { type PatchFile, patchFiles } from "./patch";
import { type DiffPreview, diffPreview } from "./preview";
import { type RunningNote, drawnBefore, returnNotice, startSeq } from "./reattach";
import { type TypedLine, typedLine } from "./typedInput";
import { type WorktreeItem, worktreeCard, worktreeResolved } from "./worktreeCard";
import type {
  AgentEvent,
  DisplayMessage,
  FileDiff,
  InlineEditTarget,
  Location,
  MessageCompleted,
  NewSessionResult,
  PermissionOption,
  MergeConflictEntry,
  PlanEntryParam as PlanEntry,
  ResumeSessionResult,
  SandboxEscalation,
  ToolCallEvent,
  TurnError,
} from "./wire";
import { ANSWERED, PLAN_ANSWERED, answerId } from "./words";

/** A content block, as in `message_completed` (and in resumed history). */
export type ContentBlock = MessageCompleted["content"][number];

export type ToolStatus = "pending" | "in_progress" | "completed" | "failed" | "cancelled" | "declined";

export interface UserItem {
  kind: "user";
  id: string;
  text: string;
  /** The turn this message began (from `turn_started` or its `message_completed`): what
   * Rewind takes back. Unknown for a message shown from a resumed session's history. */
  turnId?: string;
  /** For an inline edit's instruction: the lines it was about ("app.py:3-5"). */
  inlineEdit?: string;
  /** The labels of what it was sent with (`@` mentions, attachments), drawn as chips. */
  mentions?: string[];
}

export interface AssistantItem {
  kind: "assistant";
  id: string;
  text: string;
  thinking: string;
  streaming: boolean;
}

export interface ToolItem {
  kind: "tool";
  id: string;
  name: string;
  toolKind: ToolCallEvent["kind"];
  title: string;
  input: Record<string, unknown>;
  locations: Location[];
  status: ToolStatus;
  output: string;
  diff?: FileDiff;
  truncated: boolean;
  /** The user took this edit back (Undo on the card or in the turn's review). */
  undone?: boolean;
  /** For a Task call: the sub-agent it started, shown inside the card. */
  agent?: AgentRun;
  /** How the user answered the call's permission request, in words; its card folds into this one. */
  answer?: string;
  /** Its permission request waits for the user: the request's card stands for this one. */
  asking?: boolean;
  /** A completed apply_patch: every file it changed, in patch order. */
  diffs?: FileDiff[];
  /** A `!command` the user typed: its card opens by itself. */
  userShell?: boolean;
  /** A WriteStdin call: what it typed, under the shell's name. */
  typed?: TypedLine;
}

/** A sub-agent's work as its Task card shows it: its calls and its latest text. */
export interface AgentRun {
  agentId: string;
  type: string;
  /** `running` until it ends, then its stop reason. */
  status: string;
  calls: Array<{ id: string; title: string; status: ToolStatus }>;
  messageId: string;
  text: string;
}

export interface PermissionItem {
  kind: "permission";
  id: string;
  toolCallId: string;
  title: string;
  input: Record<string, unknown>;
  options: PermissionOption[];
  state: "pending" | "selected" | "cancelled";
  optionId?: string;
  /** Once answered or cancelled: what happened, in words ("Allowed once", "Cancelled"). */
  answer?: string;
  /** For a file change: the file now and what the call would make it. */
  diff?: FileDiff;
  /** An inline edit's change: reviewed in the editor, so the card shows no diff or answers. */
  inlineEdit?: true;
  /** That change as the diff lines the card shows with the request. */
  preview?: DiffPreview;
  /** For ExitPlanMode: the plan (markdown) the user approves; the options are the plan's. */
  plan?: string;
  /** For apply_patch: every file the patch changes (the diffs in `diffs`, same order). */
  files?: PatchFile[];
  diffs?: FileDiff[];
  /** The sandbox's question: run this one command again outside it, once. */
  sandboxEscalation?: SandboxEscalation;
  /** A plugin's trust question: the plugin and every command its hooks and servers run. */
  pluginTrust?: { plugin: string; runs: string[] };
}

export interface QuestionItem {
  kind: "question";
  id: string;
  question: string;
  choices: string[];
  state: "pending" | "answered" | "cancelled";
  answer?: string;
}

export interface NoticeItem {
  kind: "notice";
  id: string;
  level: "info" | "warning" | "error";
  message: string;
}

/** /context's answer, drawn as a bar of what fills the window. */
export interface ContextItem {
  kind: "context";
  id: string;
  report: ContextReport;
}

export interface TurnEndItem {
  kind: "turnEnd";
  id: string;
  stopReason: string;
  error?: TurnError;
}

export interface CompactionItem {
  kind: "compaction";
  id: string;
  tokensBefore: number;
  tokensAfter: number;
}

/** One file a turn changed: its edits (tool call ids, in order) and line counts. */
export interface ChangedFile {
  path: string;
  toolCallIds: string[];
  added: number;
  removed: number;
  created: boolean;
}

/** What a turn changed, shown when it ends ("Review all changes"). */
export interface SummaryItem {
  kind: "summary";
  id: string;
  files: ChangedFile[];
  /** The turn it sums up: its Changes button asks agent/turnDiff (shell changes included). */
  turnId?: string;
}

export type Item =
  | SummaryItem
  | UserItem
  | AssistantItem
  | ToolItem
  | PermissionItem
  | QuestionItem
  | NoticeItem
  | TurnEndItem
  | CompactionItem
  | ContextItem
  | WorktreeItem;

export type { WorktreeItem };

export interface QueuedMessage {
  turnId: string;
  text: string;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  contextTokens: number;
  contextWindow: number;
  costUsd?: number;
}

export interface ViewState {
  sessionId: string | null;
  /** The highest `seq` applied; events at or below it are duplicates. */
  lastSeq: number;
  /** Events that arrived ahead of a gap, by `seq`, applied once the gap fills. */
  early: Record<number, AgentEvent>;
  items: Item[];
  runningTurn: string | null;
  queued: QueuedMessage[];
  usage: Usage | null;
  /** The last turn's error when it can be retried (the retry button resends its text). */
  retryable: { text: string } | null;
  /** What the last finished turn cost in US dollars (`turn_completed.costUsd`), when known. */
  lastTurnCostUsd: number | null;
  /** The last turn stopped at the turn limit: "Continue" runs another (agent/continueTurn). */
  limitReached: { turns: number; maxTurns: number } | null;
  /** The model's plan (TodoWrite), whole, as the last `plan` event or the resume gave it. */
  plan: PlanEntry[];
  /** The session's slash commands (`available_commands`), for completion in the input. */
  commands: SlashCommand[];
  lastUserText: string;
  /** The inline edit whose turn started and whose instruction is not shown yet. */
  inlineTurn: { turnId: string; label: string } | null;
  /** Older messages of a resumed session were left out: agent/getMessages's `before`. */
  olderCursor: string | null;
  /** After a re-attach, until the running turn ends: the messages the history drew, whose
   * events sent again are skipped. */
  drawn: Record<string, true> | null;
  /** Mentions sent with a turn whose user message is not in the chat yet, by turn id. */
  mentionsByTurn: Record<string, string[]>;
}

export type SlashCommand = Extract<AgentEvent, { type: "available_commands" }>["commands"][number];

export type Action =
  | { type: "event"; event: AgentEvent }
  | {
      type: "session";
      sessionId: string;
      messages?: DisplayMessage[];
      plan?: PlanEntry[];
      olderCursor?: string;
      /** The seq the events that follow come after (a resume's). */
      lastSeq?: number;
      /** A re-attach: the turn running now, and what the chat says about the noted turn. */
      runningTurn?: string;
      notice?: { level: "info"; message: string };
    }
  | { type: "older"; sessionId: string; messages: DisplayMessage[]; cursor: string | null }
  | { type: "submitted"; text: string; turnId: string; queued: boolean; mentions?: string[] }
  | { type: "undone"; toolCallIds: string[] }
  /** An applied agent/rewind of the conversation: its removed messages leave the chat. */
  | { type: "rewound"; removedMessageIds: string[]; message: string }
  /** A merge that could not be done: its conflicts go on the worktree's card. */
  | { type: "worktreeConflicts"; agentId: string; conflicts: MergeConflictEntry[] };

/** The daemon's answer to agent/newSession, agent/resumeSession or agent/forkSession. */
export type OpenedSession = NewSessionResult | ResumeSessionResult;

/** The one action for a session that was opened, new or with its history (resume, fork);
 * `note` when it is the re-attach to a turn that ran when the window went. */
export function sessionOpened(result: OpenedSession, note?: RunningNote): Action {
  if (!("messages" in result)) return { type: "session", sessionId: result.sessionId };
  return {
    type: "session",
    sessionId: result.sessionId,
    messages: result.messages,
    ...(result.plan ? { plan: result.plan } : {}),
    ...(result.messagesCursor ? { olderCursor: result.messagesCursor } : {}),
    lastSeq: startSeq(result, note),
    ...(note && result.runningTurnId ? { runningTurn: result.runningTurnId } : {}),
    ...(note ? { notice: returnNotice(result) } : {}),
  };
}

/** Events held back waiting for a gap before they are applied anyway. */
export const MAX_EARLY = 64;
const USER_CONTEXT = "<userContext>";

export function initialState(): ViewState {
  return {
    sessionId: null,
    lastSeq: 0,
    early: {},
    items: [],
    runningTurn: null,
    queued: [],
    usage: null,
    retryable: null,
    limitReached: null,
    lastTurnCostUsd: null,
    plan: [],
    commands: [],
    lastUserText: "",
    inlineTurn: null,
    olderCursor: null,
    drawn: null,
    mentionsByTurn: {},
  };
}

export function reduce(state: ViewState, action: Action): ViewState {
  switch (action.type) {
    case "session":
      return opening(action);
    case "older":
      // A page from before the first message shown (a page never starts with tool results
      // whose calls are on the page before, so it folds on its own).
      if (action.sessionId !== state.sessionId) return state;
      return { ...state, items: [...history(action.messages), ...state.items], olderCursor: action.cursor };
    case "submitted":
      return withMentions(submitted(state, action.text, action.turnId, action.queued), action.turnId, action.mentions);
    case "event":
      return receive(state, action.event);
    case "rewound":
      return rewound(state, action.removedMessageIds, action.message);
    case "undone":
      return { ...state, items: state.items.map((i) => markUndone(i, action.toolCallIds)) };
    case "worktreeConflicts":
      return updateItem(state, "worktree", action.agentId, (w) => ({ ...w, conflicts: action.conflicts }));
  }
}

/** A session's first state: its history, the seq its next events follow, and after a
 * re-attach the running turn and the messages whose events come again. */
function opening(action: Extract<Action, { type: "session" }>): ViewState {
  const messages = action.messages ?? [];
  const notice: NoticeItem[] = action.notice ? [{ kind: "notice", id: "notice-reattach", ...action.notice }] : [];
  return {
    ...initialState(),
    sessionId: action.sessionId,
    lastSeq: action.lastSeq ?? 0,
    items: [...history(messages), ...notice],
    plan: action.plan ?? [],
    olderCursor: action.olderCursor ?? null,
    runningTurn: action.runningTurn ?? null,
    drawn: action.runningTurn ? Object.fromEntries(messages.map((m) => [m.messageId, true as const])) : null,
  };
}

/** Apply events in `seq` order: drop duplicates, hold early ones until the gap fills. */
function receive(state: ViewState, event: AgentEvent): ViewState {
  if (state.sessionId !== null && event.sessionId !== state.sessionId) return state;
  if (event.seq <= state.lastSeq || event.seq in state.early) return state;
  // The usual case, in order: applied at once, nothing held is copied.
  if (event.seq === state.lastSeq + 1) return applyHeld(apply({ ...state, lastSeq: event.seq }, event));
  const early = { ...state.early, [event.seq]: event };
  if (Object.keys(early).length <= MAX_EARLY) return { ...state, early };
  // A gap that never fills must not stall the chat: skip to the first event held.
  const first = Math.min(...Object.keys(early).map(Number));
  return applyHeld({ ...state, early, lastSeq: first - 1 });
}

/** Apply the held events that are next in order now. */
function applyHeld(state: ViewState): ViewState {
  let next = state;
  for (let held = next.early[next.lastSeq + 1]; held !== undefined; held = next.early[next.lastSeq + 1]) {
    const seq = held.seq;
    const early = Object.fromEntries(Object.entries(next.early).filter(([s]) => Number(s) !== seq));
    next = apply({ ...next, early, lastSeq: seq }, held);
  }
  return next;
}

function submitted(state: ViewState, text: string, turnId: string, queued: boolean): ViewState {
  const base = { ...state, lastUserText: text, retryable: null };
  if (!queued) return base;
  return { ...base, queued: [...state.queued, { turnId, text }] };
}

/** A sub-agent's event, folded into its Task card; what needs the user stays in the chat. */
function applyChild(state: ViewState, event: AgentEvent, callId: string): ViewState {
  const run = (change: (agent: AgentRun) => AgentRun): ViewState =>
    updateItem(state, "tool", callId, (t) => (t.agent ? { ...t, agent: change(t.agent) } : t));
  switch (event.type) {
    case "subagent_started":
      return updateItem(state, "tool", callId, (t) => ({
        ...t,
        agent: { agentId: event.agentId ?? "", type: event.subagentType, status: "running", calls: [], messageId: "", text: "" },
      }));
    case "subagent_completed": {
      const ended = run((a) => ({ ...a, status: event.stopReason }));
      // An isolated agent's worktree waits for the user: its card follows the Task's.
      const card = worktreeCard(event);
      return card ? upsert(ended, card) : ended;
    }
    case "tool_call":
      return run((a) => ({ ...a, calls: [...a.calls, { id: event.toolCallId, title: event.title, status: "pending" }] }));
    case "tool_call_update":
      return run((a) => ({ ...a, calls: a.calls.map((c) => (c.id === event.toolCallId ? { ...c, status: event.status } : c)) }));
    case "text_delta":
      return run((a) => (a.messageId === event.messageId ? { ...a, text: a.text + event.text } : { ...a, messageId: event.messageId, text: event.text }));
    case "usage":
      // The session's usage counts the agents' calls too.
      return apply(state, { ...event, agentId: undefined, parentToolCallId: undefined });
    default:
      return state;
  }
}

function apply(state: ViewState, event: AgentEvent): ViewState {
  const parent = "parentToolCallId" in event ? event.parentToolCallId : undefined;
  const ask = event.type === "permission_request" || event.type === "permission_resolved" || event.type === "ask_user" || event.type === "ask_user_resolved" || event.type === "notice";
  if (parent && !ask) return applyChild(state, event, parent);
  if (state.drawn && drawnBefore(state.drawn, event)) return state;
  switch (event.type) {
    case "turn_started": {
      const started: ViewState = {
        ...state,
        // The last turn's end loses its Retry / Continue buttons: redrawn as a new object.
        items: state.items.map((i, n) => (n === state.items.length - 1 && i.kind === "turnEnd" ? { ...i } : i)),
        limitReached: null,
        runningTurn: event.turnId,
        queued: state.queued.filter((q) => q.turnId !== event.turnId),
        inlineTurn: event.inlineEdit ? { turnId: event.turnId, label: inlineLabel(event.inlineEdit) } : state.inlineTurn,
      };
      return withTurn(started, event.userMessageId, event.turnId);
    }
    case "text_delta":
      return updateAssistant(state, event.messageId, (m) => ({ ...m, text: m.text + event.text }));
    case "thinking_delta":
      return updateAssistant(state, event.messageId, (m) => ({ ...m, thinking: m.thinking + event.text }));
    case "message_discarded":
      return { ...state, items: state.items.filter((i) => !(i.kind === "assistant" && i.id === event.messageId)) };
    case "message_completed": {
      const shown = completed(state, event.messageId, event.role, event.content);
      return event.role === "user" && event.turnId ? withTurn(shown, event.messageId, event.turnId) : shown;
    }
    case "tool_call":
      return upsert(state, toolItem(event));
    case "tool_call_update":
      return updateItem(state, "tool", event.toolCallId, (t) => ({
        ...t,
        status: event.status,
        // Allowed with every change reverted in the review: the call was declined after all.
        ...(event.status === "declined" && t.answer?.startsWith("Allowed") ? { answer: REJECTED_IN_REVIEW } : {}),
        // Bash streams its output in pieces while in progress; the final content replaces them.
        output: event.content === undefined ? t.output : event.status === "in_progress" ? t.output + event.content : event.content,
        truncated: event.truncated ?? t.truncated,
        ...(event.diff ? { diff: event.diff } : {}),
        ...(event.diffs ? { diffs: event.diffs } : {}),
        // A completed change names the line it starts at in each file: the card links there.
        ...(event.locations ? { locations: event.locations } : {}),
      }));
    case "permission_request":
      return upsert(updateItem(state, "tool", event.toolCallId, (t) => ({ ...t, asking: true })), {
        kind: "permission",
        id: event.requestId,
        toolCallId: event.toolCallId,
        title: event.title,
        input: event.input,
        options: event.options,
        state: "pending",
        // A patch is listed file by file (its one-file `diff` is for clients without that).
        ...(event.inlineEdit ? { inlineEdit: true } : event.diffs ? { diffs: event.diffs, files: patchFiles(event.diffs) } : event.diff ? { diff: event.diff, preview: diffPreview(event.diff) } : {}),
        ...(event.plan !== undefined ? { plan: event.plan } : {}),
        ...(event.sandboxEscalation ? { sandboxEscalation: event.sandboxEscalation } : {}),
        ...pluginTrust(event.toolCallId, event.input),
      });
    case "permission_resolved":
      return permissionResolved(state, event.requestId, event.outcome, event.optionId);
    case "ask_user":
      return upsert(state, {
        kind: "question",
        id: event.requestId,
        question: event.question,
        choices: event.choices ?? [],
        state: "pending",
      });
    case "ask_user_resolved":
      return updateItem(state, "question", event.requestId, (q) => ({
        ...q,
        state: event.outcome,
        ...(event.answer !== undefined ? { answer: event.answer } : {}),
      }));
    case "permission_mode_changed":
      // The mode is the status bar's (the controller's); an approved plan's change, inside
      // its turn, is also a line in the chat, where the user just answered.
      if (!event.turnId) return state;
      return append(state, { kind: "notice", id: `notice-${event.seq}`, level: "info", message: `Mode: ${MODE_WORDS[event.permissionMode]}` });
    case "compaction":
      return append(state, {
        kind: "compaction",
        id: `compaction-${event.seq}`,
        tokensBefore: event.tokensBefore,
        tokensAfter: event.tokensAfter,
      });
    case "usage":
      return {
        ...state,
        usage: {
          inputTokens: (state.usage?.inputTokens ?? 0) + event.inputTokens,
          outputTokens: (state.usage?.outputTokens ?? 0) + event.outputTokens,
          contextTokens: event.contextTokens,
          contextWindow: event.contextWindow,
          ...(event.costUsd !== undefined ? { costUsd: (state.usage?.costUsd ?? 0) + event.costUsd } : {}),
        },
      };
    case "notice":
      return append(state, { kind: "notice", id: `notice-${event.seq}`, level: event.level, message: event.message });
    case "plan":
      return { ...state, plan: event.entries };
    case "subagent_started":
    case "subagent_completed":
    // Background shells are listed on demand (agent/listShells); the chat shows no card.
    case "shell_status":
      return state;
    case "worktree_resolved":
      return event.agentId ? updateItem(state, "worktree", event.agentId, (w) => worktreeResolved(w, event)) : state;
    case "mcp_status":
      return mcpStatus(state, event);
    case "hook_result":
      return hookResult(state, event);
    case "command_output":
      return commandOutput(state, event);
    case "available_commands":
      return { ...state, commands: event.commands };
    case "turn_limit_reached":
      return { ...state, limitReached: { turns: event.turns, maxTurns: event.maxTurns } };
    case "turn_completed":
      return { ...turnCompleted(state, event.turnId, event.stopReason, event.error, event.turns), lastTurnCostUsd: event.costUsd ?? null };
  }
}

export const REJECTED_IN_REVIEW = "Rejected in review";

/** A permission mode in words, as the chat says it after a plan's approval. */
export const MODE_WORDS: Record<Extract<AgentEvent, { type: "permission_mode_changed" }>["permissionMode"], string> = {
  default: "default (asks before edits and commands)",
  acceptEdits: "accept edits (asks before commands)",
  plan: "plan (read-only)",
  bypassPermissions: "bypass permissions (asks nothing)",
};

type CommandOutputEvent = Extract<AgentEvent, { type: "command_output" }>;

/** A local command's answer: /context as its bar, a `!command`'s output in its Bash card
 * (opened), anything else (or a failure) as a line in the chat. */
function commandOutput(state: ViewState, event: CommandOutputEvent): ViewState {
  const id = `notice-${event.seq}`;
  if (!event.isError && event.command === "context") {
    const report = parseContextReport(event.text);
    if (report) return append(state, { kind: "context", id: `context-${event.seq}`, report });
  }
  if (!event.isError && event.command === "!") {
    const shell = [...state.items].reverse().find((i): i is ToolItem => i.kind === "tool" && i.name === "Bash");
    if (shell) return updateItem(state, "tool", shell.id, (t) => ({ ...t, userShell: true }));
  }
  return append(state, { kind: "notice", id, level: event.isError ? "error" : "info", message: event.text });
}

/** The request's card says how it was answered, and so does its tool call's card. */
function permissionResolved(state: ViewState, requestId: string, outcome: "selected" | "cancelled", optionId?: string): ViewState {
  const request = state.items.find((i): i is PermissionItem => i.kind === "permission" && i.id === requestId);
  if (!request) return state;
  const answer = answerText(request.options, outcome, optionId);
  const answered = updateItem(state, "permission", requestId, (p) => ({ ...p, state: outcome, answer, ...(optionId ? { optionId } : {}) }));
  return updateItem(answered, "tool", request.toolCallId, (t) => ({ ...t, answer, asking: false }));
}

/** A resolved request in words: the picked option's meaning, never its id. */
function answerText(options: readonly PermissionOption[], outcome: "selected" | "cancelled", optionId?: string): string {
  if (outcome === "cancelled") return "Cancelled";
  const option = options.find((o) => o.optionId === optionId) ?? options.find((o) => o.kind === optionId);
  const plan = option ? PLAN_ANSWERED[answerId(option)] : undefined;
  if (plan) return plan;
  if (option) return `${ANSWERED[option.kind]}${option.rule ? ` (${option.rule})` : ""}`;
  return "Answered";
}

type McpStatus = Extract<AgentEvent, { type: "mcp_status" }>;
type HookOutcome = Extract<AgentEvent, { type: "hook_result" }>;

/** An MCP server that fails, or comes back after failing, is worth a line in the chat;
 * one starting or ready at first is not (the status bar lists the servers). */
function mcpStatus(state: ViewState, event: McpStatus): ViewState {
  const id = `notice-${event.seq}`;
  if (event.status === "failed") {
    return append(state, { kind: "notice", id, level: "warning", message: `MCP server ${event.server} failed: ${event.error ?? "no reason given"}` });
  }
  if (event.status === "ready" && (event.attempt ?? 1) > 1) {
    return append(state, { kind: "notice", id, level: "info", message: `MCP server ${event.server} is back (${event.toolCount ?? 0} tools).` });
  }
  return state;
}

function hookResult(state: ViewState, event: HookOutcome): ViewState {
  const level = event.outcome === "success" ? "info" : "warning";
  const what = event.outcome === "success" ? "said" : event.outcome === "blocked" ? "blocked" : event.outcome === "timeout" ? "timed out" : "failed";
  const detail = event.message ? `: ${event.message}` : "";
  return append(state, { kind: "notice", id: `notice-${event.seq}`, level, message: `${event.event} hook \`${event.command}\` ${what}${detail}` });
}

function turnCompleted(state: ViewState, turnId: string, stopReason: string, error: TurnError | undefined, turns: number): ViewState {
  const items = state.items.map((i) => (i.kind === "assistant" && i.streaming ? { ...i, streaming: false } : i));
  const end: TurnEndItem = { kind: "turnEnd", id: `end-${turnId}`, stopReason, ...(error ? { error } : {}) };
  // A turn with no model call (a local command: /context, /mode, `!`, `#`) has no user
  // message of its own, so the edits since the last one are the turn before's: no summary.
  const files = turns > 0 ? changedFiles(items) : [];
  const summary: SummaryItem[] = files.length ? [{ kind: "summary", id: `summary-${turnId}`, files, turnId }] : [];
  return {
    ...state,
    items: [...items, ...summary, ...(stopReason === "end_turn" ? [] : [end])],
    runningTurn: state.runningTurn === turnId ? null : state.runningTurn,
    drawn: state.runningTurn === turnId ? null : state.drawn,
    // A queued turn aborted before it ran ends without ever starting.
    queued: state.queued.filter((q) => q.turnId !== turnId),
    retryable: error?.retryable ? { text: state.lastUserText } : null,
  };
}

/** The user message `messageId` began `turnId` (and takes the mentions it was sent with). */
function withTurn(state: ViewState, messageId: string, turnId: string): ViewState {
  const inline = state.inlineTurn?.turnId === turnId ? state.inlineTurn.label : undefined;
  const mentions = state.mentionsByTurn[turnId];
  const marked = updateItem(state, "user", messageId, (u) =>
    u.turnId === turnId && !inline && !mentions
      ? u
      : { ...u, turnId, ...(inline ? { inlineEdit: inline } : {}), ...(mentions ? { mentions } : {}) },
  );
  if (marked === state) return marked;
  // Once its message is shown, the inline edit is told apart by the message itself.
  const settled = inline ? { ...marked, inlineTurn: null } : marked;
  if (!mentions) return settled;
  const waiting = Object.entries(settled.mentionsByTurn).filter(([turn]) => turn !== turnId);
  return { ...settled, mentionsByTurn: Object.fromEntries(waiting) };
}

/** An inline edit's lines as the chat names them: the file's name and 1-based lines (a
 * selection that ends at the start of a line ends on the line before). */
export function inlineLabel(target: InlineEditTarget): string {
  const name = decodeURIComponent(target.uri.split("/").pop() ?? target.uri);
  const first = target.range.start.line + 1;
  const { line, character } = target.range.end;
  const last = Math.max(first, character === 0 && line > target.range.start.line ? line : line + 1);
  return `${name}:${first === last ? first : `${first}-${last}`}`;
}

/** A turn's mentions go on its user message, or wait for it (its events may come first). */
function withMentions(state: ViewState, turnId: string, mentions: string[] | undefined): ViewState {
  if (!mentions?.length) return state;
  const shown = state.items.find((i) => i.kind === "user" && i.turnId === turnId);
  if (!shown) return { ...state, mentionsByTurn: { ...state.mentionsByTurn, [turnId]: mentions } };
  return updateItem(state, "user", shown.id, (u) => ({ ...u, mentions }));
}

/** The chat after a rewind of the conversation: from the first removed message on, nothing
 * stays (every later turn went with it), and a line says what the rewind did. */
function rewound(state: ViewState, removed: readonly string[], message: string): ViewState {
  const gone = new Set(removed);
  const cut = state.items.findIndex((i) => (i.kind === "user" || i.kind === "assistant") && gone.has(i.id));
  const kept = cut < 0 ? state.items : state.items.slice(0, cut);
  const notice: NoticeItem = { kind: "notice", id: `rewound-${state.lastSeq}-${kept.length}`, level: "info", message };
  return { ...state, items: [...kept, notice], retryable: null, limitReached: null, lastUserText: "" };
}

/** Undone edits, and the summaries that list them (new objects, so they are redrawn). */
function markUndone(item: Item, ids: readonly string[]): Item {
  if (item.kind === "tool" && ids.includes(item.id)) return { ...item, undone: true };
  if (item.kind === "summary" && item.files.some((f) => f.toolCallIds.some((id) => ids.includes(id)))) return { ...item };
  return item;
}

/** The files the last turn's edits changed (the edits after its user message). */
function changedFiles(items: Item[]): ChangedFile[] {
  let start = items.length;
  while (start > 0 && items[start - 1]?.kind !== "user") start--;
  const edits = items.slice(start).filter((i): i is ToolItem & { diff: FileDiff } => i.kind === "tool" && i.status === "completed" && !!i.diff);
  const byPath = new Map<string, ToolItem[]>();
  for (const edit of edits) byPath.set(edit.diff.path, [...(byPath.get(edit.diff.path) ?? []), edit]);
  return [...byPath].map(([path, tools]) => {
    const change = combinedDiff(tools);
    const lines = hunks(change.oldText ?? "", change.newText);
    return {
      path,
      toolCallIds: tools.map((t) => t.id),
      added: lines.reduce((n, h) => n + h.newEnd - h.newStart, 0),
      removed: lines.reduce((n, h) => n + h.oldEnd - h.oldStart, 0),
      created: change.oldText === undefined,
    };
  });
}

/** The file before the first of these edits and after the last. */
export function combinedDiff(tools: readonly ToolItem[]): FileDiff {
  const first = tools[0]?.diff;
  const last = tools.at(-1)?.diff;
  const old = first?.oldText;
  return { path: first?.path ?? "", ...(old === undefined ? {} : { oldText: old }), newText: last?.newText ?? "" };
}

function completed(state: ViewState, id: string, role: "user" | "assistant", content: ContentBlock[], turnId?: string): ViewState {
  if (role === "assistant") {
    const text = textOf(content);
    const thinking = content.flatMap((b) => (b.type === "thinking" ? [b.thinking] : [])).join("");
    if (!text && !thinking) return state;
    return upsert(state, { kind: "assistant", id, text, thinking, streaming: false });
  }
  // A tool-results message is shown through its tool cards; only typed text is a user item.
  const text = userText(content);
  return text ? append(state, { kind: "user", id, text, ...(turnId ? { turnId } : {}) }) : state;
}

function history(messages: DisplayMessage[]): Item[] {
  let state: ViewState = initialState();
  for (const message of messages) {
    // The schema types resumed content loosely; the protocol says it is message_completed's.
    const content = message.content as unknown as ContentBlock[];
    // A resumed user message that began a turn keeps it: Rewind… and Changes are offered.
    state = completed(state, message.messageId, message.role, content, message.turnId ?? undefined);
    // How each call was announced when it ran (an older daemon sends none: the name stands).
    const announced = new Map((message.toolCalls ?? []).map((c) => [c.toolCallId, c]));
    for (const block of content) {
      if (block.type === "tool_use") {
        const call = announced.get(block.id);
        state = upsert(state, {
          kind: "tool",
          id: block.id,
          name: block.name,
          toolKind: call?.kind ?? "other",
          title: call?.title ?? block.name,
          input: block.input,
          locations: (call?.locations ?? []).map((at): Location => (at.line == null ? { path: at.path } : { path: at.path, line: at.line })),
          status: "completed",
          output: "",
          truncated: false,
        });
      } else if (block.type === "tool_result") {
        const output = typeof block.content === "string" ? block.content : textOf(block.content);
        state = updateItem(state, "tool", block.toolUseId, (t) => ({
          ...t,
          status: block.isError ? "failed" : "completed",
          output,
        }));
      }
    }
  }
  return state.items;
}

function textOf(content: ContentBlock[]): string {
  return content.flatMap((b) => (b.type === "text" ? [b.text] : [])).join("");
}

function userText(content: ContentBlock[]): string {
  return content
    .flatMap((b) => (b.type === "text" && !b.text.startsWith(USER_CONTEXT) ? [b.text] : []))
    .join("\n\n");
}

/** A plugin's trust question (`plugin_…` toolCallId, input `{plugin, runs}`). */
function pluginTrust(toolCallId: string, input: Record<string, unknown>): { pluginTrust?: { plugin: string; runs: string[] } } {
  if (!toolCallId.startsWith("plugin_") || typeof input.plugin !== "string") return {};
  const runs = Array.isArray(input.runs) ? input.runs.filter((r): r is string => typeof r === "string") : [];
  return { pluginTrust: { plugin: input.plugin, runs } };
}

function toolItem(event: ToolCallEvent): ToolItem {
  const typed = event.name === "WriteStdin" ? typedLine(event.input) : undefined;
  return {
    kind: "tool",
    id: event.toolCallId,
    name: event.name,
    toolKind: event.kind,
    title: event.title,
    input: event.input,
    locations: event.locations ?? [],
    status: "pending",
    output: "",
    truncated: false,
    ...(typed ? { typed } : {}),
  };
}

/** Change the streaming answer `id`, starting it on its first delta. */
function updateAssistant(state: ViewState, id: string, change: (m: AssistantItem) => AssistantItem): ViewState {
  const index = state.items.findIndex((i) => i.kind === "assistant" && i.id === id);
  const current = state.items[index];
  const items = state.items.slice();
  if (index < 0 || current?.kind !== "assistant") {
    items.push(change({ kind: "assistant", id, text: "", thinking: "", streaming: true }));
  } else {
    items[index] = change(current);
  }
  return { ...state, items };
}

function append(state: ViewState, item: Item): ViewState {
  return { ...state, items: [...state.items, item] };
}

/** Replace the item of the same kind and id, or append it. */
function upsert(state: ViewState, item: Item): ViewState {
  const index = state.items.findIndex((i) => i.kind === item.kind && i.id === item.id);
  if (index < 0) return append(state, item);
  const items = state.items.slice();
  items[index] = item;
  return { ...state, items };
}

function updateItem<K extends Item["kind"]>(
  state: ViewState,
  kind: K,
  id: string,
  change: (item: Extract<Item, { kind: K }>) => Extract<Item, { kind: K }>,
): ViewState {
  const index = state.items.findIndex((i) => i.kind === kind && i.id === id);
  const current = state.items[index];
  if (index < 0 || current === undefined) return state;
  const items = state.items.slice();
  items[index] = change(current as Extract<Item, { kind: K }>);
  return { ...state, items };
}

/** Pending permission requests, oldest first (for the notification when the panel is hidden). */
export function pendingPermissions(state: ViewState): PermissionItem[] {
  return state.items.filter((i): i is PermissionItem => i.kind === "permission" && i.state === "pending");
}
