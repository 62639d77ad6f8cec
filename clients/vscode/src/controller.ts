// One chat: its session on the daemon, the view state, and what the user does in the panel.

import * as vscode from "vscode";

import type { Attachment, FromWebview, ToWebview } from "./bridge";
import type { AgentClient } from "./client";
import { DiffContent } from "./diffs";
import { findMentions, type MentionContext } from "./mentionSources";
import { NO_PROVIDER_MESSAGE, isProviderMissing } from "./providerMissing";
import type { Reviews } from "./review";
import {
  type Action,
  type OpenedSession,
  type PermissionItem,
  type SummaryItem,
  type ToolItem,
  type ViewState,
  combinedDiff,
  initialState,
  reduce,
  sessionOpened,
} from "./reducer";
import type { RunningNote } from "./reattach";
import { turnOfMessage } from "./rewind";
import { RewindFlow } from "./rewindFlow";
import { revertChange } from "./undo";
import { pickSessionRow, type PickerChoice } from "./sessionPicker";
import { SessionListCache } from "./sessionListCache";
import { deleteQuestion, deletedNotice, deleteWarning, savedRow, type SessionRow } from "./sessionRows";
import type { StatusBar } from "./statusBar";
import { PATCH_LETTERS } from "./patch";
import { answerId } from "./words";
import { pluginRows } from "./plugins";
import { Worktrees } from "./worktrees";
import type { AgentEvent, FileDiff, PermissionRequest, PluginInfo, RespondPermissionParams, ResumeSessionResult, SessionInfo, SetPermissionModeParams } from "./wire";

const PERMISSION_MODES: readonly SetPermissionModeParams["permissionMode"][] = [
  "default",
  "acceptEdits",
  "plan",
  "bypassPermissions",
];

export interface ChatView {
  readonly visible: boolean;
  post(message: ToWebview): void;
  reveal(): void;
}

/** A chat kept open while another is shown: its events still fold into its state. */
interface ParkedChat {
  state: ViewState;
  model: string;
  mode: string;
}

export class ChatController {
  private shown: string | null = null;
  private model = "";
  private mode = "default";
  private creating: Promise<string> | undefined;
  private state: ViewState = initialState();
  private readonly parked = new Map<string, ParkedChat>();
  /** `@` offers the project's sessions: listed once per few seconds, not per keystroke. */
  private readonly mentionSessions = new SessionListCache(() => this.listSessionsForMentions(), MENTION_SESSIONS_TTL_MS);
  /** The installed plugins, as the last agent/newSession listed them (a resume does not). */
  private plugins: PluginInfo[] | undefined;
  private readonly worktrees: Worktrees;
  private readonly rewinds: RewindFlow;
  /** The panel's welcome (first-run view, empty state) may have changed: a session could
   * not start for want of a provider, or an empty chat is shown again. */
  onWelcomeStale: () => void = () => undefined;
  /** The chat shows another session, or none (the rules and MCP views follow it). */
  onSessionChanged: (sessionId: string | null) => void = () => undefined;

  /** The session of the chat shown; every change of it is told through onSessionChanged. */
  private get sessionId(): string | null {
    return this.shown;
  }

  private set sessionId(sessionId: string | null) {
    if (sessionId === this.shown) return;
    this.shown = sessionId;
    this.onSessionChanged(sessionId);
  }

  constructor(
    private readonly client: AgentClient,
    private readonly view: ChatView,
    private readonly statusBar: StatusBar,
    private readonly diffs: DiffContent,
    private readonly reviews: Reviews,
  ) {
    this.worktrees = new Worktrees(client, diffs, (action) => this.dispatch(action));
    this.rewinds = new RewindFlow(client, diffs, (action) => this.dispatch(action));
  }

  /** Every agent/event from the daemon: the shown chat's, or a parked chat's. */
  onEvent(event: AgentEvent): void {
    if (event.sessionId !== this.sessionId) {
      this.onParkedEvent(event);
      return;
    }
    this.dispatch({ type: "event", event });
    if (event.type === "usage") this.statusBar.usage(event.contextTokens, event.contextWindow, this.state.usage?.costUsd);
    // An inline edit's change is reviewed in the editor (src/inlineEdit.ts), not asked here.
    if (event.type === "permission_request" && !event.inlineEdit && !this.view.visible) void this.askInNotification(event);
    if (event.type === "permission_resolved") void this.reviews.close(event.requestId);
    if (event.type === "permission_mode_changed") {
      // An approved plan (or another window, or /mode) switched the session's mode.
      this.mode = event.permissionMode;
      this.statusBar.session(this.model, event.permissionMode);
    }
  }

  /** The server restarted: the daemon's sessions are gone, so the next message starts anew. */
  onServerRestarted(): void {
    this.sessionId = null;
    this.creating = undefined;
    this.parked.clear();
  }

  async handle(message: FromWebview): Promise<void> {
    try {
      await this.route(message);
    } catch (error) {
      // A message that could not be sent goes back into the box: never lost.
      if (message.type === "send") this.view.post({ type: "restoreInput", text: message.text });
      const text = error instanceof Error ? error.message : String(error);
      this.client.log.error(text);
      if (isProviderMissing(error)) {
        // The daemon's 1004 names environment variables; the panel names its own setup.
        this.view.post({ type: "status", level: "error", text: NO_PROVIDER_MESSAGE });
        this.onWelcomeStale();
        return;
      }
      this.view.post({ type: "status", level: "error", text });
    }
  }

  /** A new chat; the shown one stays open (History lists it) unless it is empty. */
  async newSession(): Promise<void> {
    this.park();
    this.sessionId = null;
    this.creating = undefined;
    this.state = initialState();
    this.onWelcomeStale();
    await this.session();
  }

  /** Close the shown chat's session and show the last parked chat, or a new one. */
  async closeSession(): Promise<void> {
    const closing = this.sessionId;
    if (closing) await this.client.request("agent/closeSession", { sessionId: closing });
    this.sessionId = null;
    const last = [...this.parked.keys()].at(-1);
    if (last) {
      this.show(last);
      return;
    }
    this.creating = undefined;
    this.state = initialState();
    this.view.post({ type: "snapshot", state: this.state });
    this.onWelcomeStale();
  }

  /** The shown chat's session, opened if there is none (an inline edit runs in it). */
  currentSession(): Promise<string> {
    return this.session();
  }

  async abort(): Promise<void> {
    if (this.sessionId) await this.client.request("agent/abort", { sessionId: this.sessionId });
  }

  /** Another round of model calls after a turn stopped at the turn limit. */
  async continueTurn(): Promise<void> {
    if (this.sessionId) await this.client.request("agent/continueTurn", { sessionId: this.sessionId });
  }

  async send(text: string, attachments: Attachment[] = []): Promise<void> {
    const sessionId = await this.session();
    const wire = attachments.map((a) => ({
      uri: a.uri,
      ...(a.range ? { range: a.range } : {}),
      ...(a.name ? { name: a.name } : {}),
    }));
    const result = await this.client.request("agent/submitMessage", {
      sessionId,
      text,
      ...(wire.length ? { attachments: wire } : {}),
    });
    const mentions = attachments.map((a) => a.label);
    this.dispatch({ type: "submitted", text, turnId: result.turnId, queued: result.queued, ...(mentions.length ? { mentions } : {}) });
  }

  /** What `@` needs of the daemon: the project's sessions, this one left out by mentions.ts. */
  private mentionContext(): MentionContext {
    return { currentSession: this.sessionId, sessions: () => this.mentionSessions.get() };
  }

  private async listSessionsForMentions(): Promise<SessionInfo[]> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    return (await this.client.request("agent/listSessions", { ...(cwd ? { cwd } : {}), limit: SESSION_PAGE })).sessions;
  }

  private async route(message: FromWebview): Promise<void> {
    switch (message.type) {
      case "ready":
        // A new or reloaded webview starts from the chat as it stands.
        this.view.post({ type: "snapshot", state: this.state });
        return;
      case "send":
        return this.send(message.text, message.attachments);
      case "findFiles":
        this.view.post({ type: "files", query: message.query, files: await findMentions(message.query, this.mentionContext()) });
        return;
      case "steer":
        return this.steer(message.turnId, message.text);
      case "abort":
        return this.abort();
      case "continueTurn":
        return this.continueTurn();
      case "permission":
        return this.respond(message.requestId, message.optionId, undefined, message.message);
      case "answer":
        await this.client.request("agent/respondAskUser", {
          sessionId: await this.session(),
          requestId: message.requestId,
          answer: message.answer,
        });
        return;
      case "newSession":
        return this.newSession();
      case "history":
        return this.pickSession();
      case "older":
        return this.older();
      case "includeContext":
        return vscode.commands.executeCommand("agentls.includeContext", message.include);
      case "openLocation":
        return this.openLocation(message.path, message.line);
      case "openDiff":
        return this.openDiff(message.toolCallId, message.index);
      case "review":
        return this.review(message.requestId, message.index);
      case "undo":
        return this.undo(message.toolCallIds);
      case "reviewTurn":
        return this.reviewTurn(message.summaryId);
      case "rewind":
        return this.rewind(message.messageId);
      case "fork":
        return this.fork(message.messageId);
      case "turnChanges":
        return this.rewinds.turnChanges(await this.session(), message.turnId);
      case "worktree": {
        const card = this.state.items.find((i) => i.kind === "worktree" && i.id === message.agentId);
        const names = card?.kind === "worktree" ? { branch: card.branch, root: card.path } : { branch: message.agentId };
        return this.worktrees.act(await this.session(), message.agentId, message.action, names);
      }
      case "insertCode":
        await vscode.window.activeTextEditor?.insertSnippet(new vscode.SnippetString().appendText(message.code));
        return;
      case "copy":
        return vscode.env.clipboard.writeText(message.text);
    }
  }

  /** Answer a permission request; an allowed change that was reviewed applies as reviewed;
   * `message` is a plan's feedback. */
  async respond(requestId: string, optionId: RespondPermissionParams["optionId"], sessionId?: string, message?: string): Promise<void> {
    const accepted = optionId.startsWith("allow") ? this.reviews.acceptedText(requestId) : undefined;
    await this.client.request("agent/respondPermission", {
      sessionId: sessionId ?? (await this.session()),
      requestId,
      optionId,
      ...(accepted === undefined ? {} : { acceptedText: accepted }),
      ...(message ? { message } : {}),
    });
  }

  /** "agentls: Worktrees…": the shown session's isolated agents' worktrees. */
  async pickWorktree(): Promise<void> {
    if (!this.sessionId) {
      void vscode.window.showInformationMessage("agentls: no session is open; resume one first (agentls: Switch or Resume Session…).");
      return;
    }
    await this.worktrees.pick(this.sessionId);
  }

  /** "agentls: Plugins": what the last new session listed as installed. */
  async showPlugins(): Promise<void> {
    if (!this.plugins) await this.session();
    const plugins = this.plugins;
    if (!plugins) {
      // Only agent/newSession lists them; this window has only resumed sessions so far.
      void vscode.window.showInformationMessage("agentls: plugins are listed when a new session opens (agentls: New Session).");
      return;
    }
    if (!plugins.length) {
      void vscode.window.showInformationMessage("agentls: no plugin is installed (agentls plugin add PATH|GIT-URL).");
      return;
    }
    await vscode.window.showQuickPick(pluginRows(plugins), { title: "agentls: Plugins", placeHolder: "Installed plugins (agentls plugin enable|disable NAME changes the next session)" });
  }

  /** Switch to an open chat, or pick an earlier session of this workspace (newest first,
   * searchable, a page at a time) and resume it; a saved session's trash button deletes
   * it (after a modal), and the list is read again. */
  async pickSession(): Promise<void> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    for (;;) {
      const open: SessionRow[] = [...this.parked].reverse().map(([sessionId, chat]) => ({
        label: titleOf(chat.state),
        description: chat.state.runningTurn ? "open · running" : "open",
        detail: pendingCount(chat.state) ? "waiting for your permission" : "",
        sessionId,
        deletable: false,
      }));
      const earlier: SessionRow[] = [];
      let cursor: string | undefined;
      let choice: PickerChoice;
      for (;;) {
        const listed = await this.client.request("agent/listSessions", {
          ...(cwd ? { cwd } : {}),
          limit: SESSION_PAGE,
          ...(cursor ? { cursor } : {}),
        });
        cursor = listed.nextCursor ?? undefined;
        earlier.push(...listed.sessions.filter((s) => !this.parked.has(s.sessionId)).map((s) => savedRow(s, this.sessionId)));
        const more: SessionRow[] = cursor ? [{ label: "$(history) Older sessions…", description: "", detail: "", sessionId: "", deletable: false }] : [];
        const rows = [...open, ...earlier, ...more];
        if (!rows.length) {
          void vscode.window.showInformationMessage("agentls: no earlier sessions in this workspace.");
          return;
        }
        choice = await pickSessionRow(rows, "Switch to an open chat, or resume an earlier session");
        if (!choice) return;
        if (choice.kind === "delete" || choice.row.sessionId) break;
      }
      if (choice.kind === "pick") return this.resume(choice.row.sessionId);
      await this.deleteSession(choice.row);
    }
  }

  /** agent/deleteSession after a modal; the chat is cleared when it showed that session. */
  private async deleteSession(row: SessionRow): Promise<void> {
    const shown = row.sessionId === this.sessionId;
    const question = deleteQuestion(row, shown);
    const answer = await vscode.window.showWarningMessage(question.message, { modal: true, detail: question.detail }, "Delete");
    if (answer !== "Delete") return;
    const done = await this.client.request("agent/deleteSession", { sessionId: row.sessionId });
    const warning = deleteWarning(done.warnings);
    if (warning) void vscode.window.showWarningMessage(warning);
    this.mentionSessions.forget();
    if (shown) {
      this.sessionId = null;
      this.creating = undefined;
      this.state = initialState();
      this.view.post({ type: "snapshot", state: this.state });
      this.onWelcomeStale();
      // Not left on the dead session: a new empty chat, and a notification saying so (the
      // panel's status line would be cleared by the empty state's refresh).
      void vscode.window.showInformationMessage(deletedNotice(row.label));
    }
  }

  /** Show an earlier session's history and go on in it (agent/resumeSession). */
  async resume(sessionId: string): Promise<void> {
    if (sessionId === this.sessionId) return;
    if (this.parked.has(sessionId)) {
      this.park();
      this.show(sessionId);
      return;
    }
    // Only the last messages: a long session's older ones come page by page (older()).
    const result = await this.client.request("agent/resumeSession", { sessionId, messageLimit: MESSAGE_PAGE });
    this.park();
    this.opened(result);
  }

  /** Come back to the turn that ran when the window closed: its session resumed from the
   * seq the note kept, so the daemon sends the turn's events again (src/reattach.ts). */
  async reattach(note: RunningNote): Promise<ResumeSessionResult> {
    const result = await this.client.request("agent/resumeSession", { sessionId: note.sessionId, lastSeq: note.lastSeq, messageLimit: MESSAGE_PAGE });
    if (this.sessionId !== note.sessionId) this.park();
    this.parked.delete(note.sessionId);
    this.opened(result, note);
    return result;
  }

  /** Rewind to before a user message (its turn and every later one), as the user chooses. */
  async rewind(messageId: string): Promise<void> {
    const turnId = turnOfMessage(this.state.items, messageId);
    if (!this.sessionId || !turnId) return;
    if (this.state.runningTurn) {
      void vscode.window.showInformationMessage("agentls: a turn is running; stop it before you rewind.");
      return;
    }
    await this.rewinds.rewind(this.sessionId, turnId);
  }

  /** Edit and resend: a new chat that ends just before the message, its text in the box. */
  async fork(messageId: string): Promise<void> {
    const message = this.state.items.find((i) => i.kind === "user" && i.id === messageId);
    if (!this.sessionId || message?.kind !== "user") return;
    const result = await this.client.request("agent/forkSession", { sessionId: this.sessionId, messageId });
    this.park();
    this.opened(result);
    this.view.post({ type: "restoreInput", text: message.text });
  }

  /** The page of messages before the first one shown (agent/getMessages). */
  async older(): Promise<void> {
    const { sessionId, olderCursor } = this.state;
    if (!sessionId || !olderCursor) return;
    const page = await this.client.request("agent/getMessages", { sessionId, before: olderCursor, limit: MESSAGE_PAGE });
    this.dispatch({ type: "older", sessionId, messages: page.messages, cursor: page.nextCursor ?? null });
  }

  /** Pick the session's model from the server's list (agent/listModels). */
  async pickModel(): Promise<void> {
    const sessionId = await this.session();
    const listed = await this.client.request("agent/listModels", { sessionId });
    const items = listed.models.map((m) => ({
      label: m.id,
      description: m.current ? "current" : m.displayName ?? "",
    }));
    const picked = await vscode.window.showQuickPick(items, { title: `Model (${listed.provider})` });
    if (!picked) return;
    await this.client.request("agent/setModel", { sessionId, model: picked.label });
    this.model = picked.label;
    this.statusBar.session(picked.label, this.mode);
  }

  /** Apply a model to the open session (from the settings); a later session reads it itself. */
  async setModel(model: string): Promise<void> {
    if (!this.sessionId || model === this.model) return;
    await this.client.request("agent/setModel", { sessionId: this.sessionId, model });
    this.model = model;
    this.statusBar.session(model, this.mode);
  }

  async setMode(mode: string): Promise<void> {
    const permissionMode = PERMISSION_MODES.find((m) => m === mode);
    if (!this.sessionId || !permissionMode) return;
    await this.client.request("agent/setPermissionMode", { sessionId: this.sessionId, permissionMode });
    this.mode = permissionMode;
    this.statusBar.session(this.model, permissionMode);
  }

  async pickMode(): Promise<void> {
    await this.session();
    const picked = await vscode.window.showQuickPick([...PERMISSION_MODES], { title: "Permission mode" });
    if (picked) await this.setMode(picked);
  }

  /** A queued message sent now: taken off the queue and given to the running turn. */
  private async steer(turnId: string, text: string): Promise<void> {
    const sessionId = await this.session();
    await this.client.request("agent/abort", { sessionId, turnId });
    await this.client.request("agent/submitMessage", { sessionId, text, delivery: "steer" });
  }

  private session(): Promise<string> {
    if (this.sessionId) return Promise.resolve(this.sessionId);
    // A failed creation (no provider yet) is not kept: the next message tries again.
    this.creating ??= this.create().catch((error: unknown) => {
      this.creating = undefined;
      throw error;
    });
    return this.creating;
  }

  private async create(): Promise<string> {
    const cwd = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
    const result = await this.client.request("agent/newSession", cwd ? { cwd } : {});
    return this.opened(result);
  }

  /** The one path for a session the daemon opened (new, resumed or forked): it becomes the
   * shown chat, its model and mode go to the status bar, its history (if any) to the view. */
  private opened(result: OpenedSession, note?: RunningNote): string {
    this.sessionId = result.sessionId;
    this.creating = undefined;
    this.model = result.model;
    this.mode = result.permissionMode;
    this.statusBar.session(result.model, result.permissionMode);
    this.statusBar.setSandbox(result.sandbox ?? undefined);
    if (!("messages" in result)) this.plugins = result.plugins ?? [];
    this.dispatch(sessionOpened(result, note));
    return result.sessionId;
  }

  /** Keep the shown chat open in the background (an empty one is closed instead). */
  private park(): void {
    if (!this.sessionId) return;
    if (this.state.items.length) {
      this.parked.set(this.sessionId, { state: this.state, model: this.model, mode: this.mode });
    } else {
      void this.client.request("agent/closeSession", { sessionId: this.sessionId }).catch(() => undefined);
    }
  }

  /** Bring a parked chat to the panel. */
  private show(sessionId: string): void {
    const chat = this.parked.get(sessionId);
    if (!chat) return;
    this.parked.delete(sessionId);
    this.sessionId = sessionId;
    this.creating = undefined;
    this.state = chat.state;
    this.model = chat.model;
    this.mode = chat.mode;
    this.statusBar.session(chat.model, chat.mode);
    const usage = chat.state.usage;
    if (usage) this.statusBar.usage(usage.contextTokens, usage.contextWindow, usage.costUsd);
    this.view.post({ type: "snapshot", state: chat.state });
  }

  /** A parked chat's event: folded into its state; its permission requests still reach the user. */
  private onParkedEvent(event: AgentEvent): void {
    const chat = this.parked.get(event.sessionId);
    if (!chat) return;
    chat.state = reduce(chat.state, { type: "event", event });
    if (event.type === "permission_resolved") void this.reviews.close(event.requestId);
    if (event.type !== "permission_request" || event.inlineEdit) return;
    const names = event.options.map((o) => o.name);
    const sessionId = event.sessionId;
    void vscode.window.showInformationMessage(`agentls (${titleOf(chat.state)}): ${event.title}`, "Show", ...names).then(async (picked) => {
      if (picked === "Show") {
        this.park();
        this.show(sessionId);
        this.view.reveal();
        return;
      }
      const option = event.options.find((o) => o.name === picked);
      const stillPending = this.parked.get(sessionId)?.state.items.some((i) => i.kind === "permission" && i.id === event.requestId && i.state === "pending");
      if (option && stillPending) await this.respond(event.requestId, answerId(option), sessionId);
    });
  }

  private dispatch(action: Action): void {
    this.state = reduce(this.state, action);
    this.view.post({ type: "action", action });
  }

  /** The panel is hidden: the same choices (and Review) in a notification. */
  private async askInNotification(request: PermissionRequest): Promise<void> {
    const names = request.options.map((o) => o.name);
    const review = request.diff || request.diffs ? ["Review"] : [];
    const picked = await vscode.window.showInformationMessage(`agentls: ${request.title}`, ...review, ...names);
    const pending = this.state.items.some((i) => i.kind === "permission" && i.id === request.requestId && i.state === "pending");
    if (!pending || !picked) return;
    if (picked === "Review") {
      this.view.reveal();
      return this.review(request.requestId);
    }
    const option = request.options.find((o) => o.name === picked);
    if (option) await this.respond(request.requestId, answerId(option));
  }

  private async openLocation(path: string, line?: number): Promise<void> {
    const document = await vscode.workspace.openTextDocument(vscode.Uri.file(path));
    const position = new vscode.Position(Math.max(0, line ?? 0), 0);
    await vscode.window.showTextDocument(document, {
      preview: true,
      preserveFocus: true,
      selection: new vscode.Range(position, position),
    });
  }

  private async openDiff(toolCallId: string, index?: number): Promise<void> {
    const tool = this.state.items.find((i): i is ToolItem => i.kind === "tool" && i.id === toolCallId);
    const file = index === undefined ? undefined : tool?.diffs?.[index];
    if (file) await this.showDiff(`${toolCallId}-${index ?? 0}`, file, patchLabel(file));
    else if (tool?.diff) await this.showDiff(toolCallId, tool.diff, "agentls");
  }

  /** The change a permission request would make, opened for review before the user answers:
   * an edit in the per-hunk review; a patch's files (one, or all) in the diff editor, to
   * approve or reject as a whole on the card. */
  private async review(requestId: string, index?: number): Promise<void> {
    const request = this.state.items.find((i): i is PermissionItem => i.kind === "permission" && i.id === requestId);
    if (!request || request.state !== "pending") return;
    if (request.diffs) {
      const chosen = index === undefined ? request.diffs.map((d, i) => [d, i] as const) : request.diffs.flatMap((d, i) => (i === index ? [[d, i] as const] : []));
      for (const [diff, i] of chosen) await this.showDiff(`${requestId}-${i}`, diff, `patch ${i + 1} of ${request.diffs.length}: ${patchLabel(diff)}`, chosen.length > 1);
      return;
    }
    if (request.diff) await this.reviews.show(requestId, request.diff);
  }

  /** Take edits back, file by file, and tell the session so the model knows. */
  private async undo(toolCallIds: string[]): Promise<void> {
    const edits = this.state.items.filter(
      (i): i is ToolItem => i.kind === "tool" && toolCallIds.includes(i.id) && !!i.diff && !i.undone,
    );
    const byPath = new Map<string, ToolItem[]>();
    for (const edit of edits) byPath.set(edit.diff?.path ?? "", [...(byPath.get(edit.diff?.path ?? "") ?? []), edit]);
    for (const [path, tools] of byPath) {
      if ((await revertChange(combinedDiff(tools))) !== "reverted") continue;
      const ids = tools.map((t) => t.id);
      this.dispatch({ type: "undone", toolCallIds: ids });
      if (!this.sessionId) continue;
      const name = vscode.workspace.asRelativePath(path);
      const calls = tools.map((t) => t.title).join(", ");
      await this.client.request("agent/noteUserAction", {
        sessionId: this.sessionId,
        text: `The user undid your change to ${name} (${calls}): the file is back to its text from before that change. Read it again before you change it.`,
      });
    }
  }

  /** A turn's changes one file at a time, each in the diff editor, kept or undone. */
  private async reviewTurn(summaryId: string): Promise<void> {
    const summary = this.state.items.find((i): i is SummaryItem => i.kind === "summary" && i.id === summaryId);
    if (!summary) return;
    const total = summary.files.length;
    for (const [index, file] of summary.files.entries()) {
      const tools = this.state.items.filter((i): i is ToolItem => i.kind === "tool" && file.toolCallIds.includes(i.id) && !i.undone);
      if (!tools.length) continue;
      await this.showDiff(`${summaryId}-${index}`, combinedDiff(tools), `change ${index + 1} of ${total}`);
      const name = vscode.workspace.asRelativePath(file.path);
      const choice = await vscode.window.showInformationMessage(
        `agentls: ${name} +${file.added} −${file.removed} (${index + 1} of ${total})`,
        "Keep",
        "Undo",
        "Stop Reviewing",
      );
      if (choice === "Undo") await this.undo(file.toolCallIds);
      else if (choice !== "Keep") return;
    }
  }

  /** VS Code's diff editor, without taking focus from where the user is typing; `keep`:
   * a tab of its own (a patch's files open side by side), not the one preview tab. */
  private async showDiff(key: string, diff: FileDiff, label: string, keep = false): Promise<void> {
    const [before, after] = this.diffs.pair(key, diff);
    const name = vscode.workspace.asRelativePath(diff.path);
    await vscode.commands.executeCommand("vscode.diff", before, after, `${name} (${label})`, {
      preserveFocus: true,
      preview: !keep,
    });
  }
}

/** What a patch does to one file, in words for its diff tab's title. */
function patchLabel(diff: FileDiff): string {
  const kind = diff.kind ?? (diff.oldText === undefined ? "add" : "update");
  const moved = diff.movedFrom ? ` from ${vscode.workspace.asRelativePath(diff.movedFrom)}` : "";
  return `${PATCH_LETTERS[kind]}${moved}`;
}

/** A chat's title: its first message, cut short. */
function titleOf(state: ViewState): string {
  const first = state.items.find((i) => i.kind === "user");
  const text = first?.kind === "user" ? first.text.replace(/\s+/g, " ").trim() : "";
  return text ? (text.length > 60 ? `${text.slice(0, 59)}…` : text) : "(no message yet)";
}

function pendingCount(state: ViewState): number {
  return state.items.filter((i) => i.kind === "permission" && i.state === "pending").length;
}

/** Sessions per page of the history pick, messages per page of a resumed chat. */
const SESSION_PAGE = 200;
/** How long `@` reuses the session list it asked for (a menu's keystrokes come within it). */
const MENTION_SESSIONS_TTL_MS = 5_000;
const MESSAGE_PAGE = 200;
