// What the panel shows before a chat's first message (shared by the extension host and the
// webview, so no `vscode` import): the folder is not trusted yet, the daemon is starting,
// no model provider is set up (the first-run view), or ready (what the agent can do, the
// model and mode, recent sessions).

/** An earlier session of this folder, offered to resume with one click. */
export interface RecentSession {
  sessionId: string;
  title: string;
  turns: number;
  updatedAt: string;
}

/** The providers the first-run view offers; "compatible" is an OpenAI-compatible URL. */
export const SETUP_CHOICES = ["anthropic", "openai", "compatible"] as const;
export type SetupChoice = (typeof SETUP_CHOICES)[number];

export type Welcome =
  | { state: "untrusted" }
  | { state: "starting" }
  /** The daemon did not start (no suitable Python, a refused join…): why. */
  | { state: "stopped"; message: string }
  | { state: "setup" }
  | { state: "ready"; provider: string; model: string; mode: string; recent: RecentSession[] };

export type WelcomeToWebview =
  | { type: "welcome"; welcome: Welcome }
  /** A message that could not be sent goes back into the box (never lost). */
  | { type: "restoreInput"; text: string };

export type WelcomeFromWebview =
  | { type: "trustFolder" }
  | { type: "setUpProvider"; choice: SetupChoice }
  | { type: "resumeSession"; sessionId: string }
  | { type: "pickModelOrMode" }
  | { type: "showLog" }
  | { type: "restartServer" }
  | { type: "openSettings" };

const WELCOME_MESSAGES: ReadonlySet<string> = new Set([
  "trustFolder",
  "setUpProvider",
  "resumeSession",
  "pickModelOrMode",
  "showLog",
  "restartServer",
  "openSettings",
]);

export function isWelcomeMessage(message: { type: string }): message is WelcomeFromWebview {
  return WELCOME_MESSAGES.has(message.type);
}
