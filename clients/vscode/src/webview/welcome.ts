// The panel before a chat's first message: "trust this folder" in Restricted Mode, the
// first-run setup (pick a provider) when none is configured, else a welcoming empty state:
// what the agent can do, the model and permission mode, recent sessions to resume.

import { type RecentSession, type SetupChoice, type Welcome, type WelcomeFromWebview } from "../welcome";
import { plural } from "../words";

// Its stylesheet sits beside panel.css (media/); found from this script's own URL, which
// the webview's CSP (style-src: the webview's own resources) allows.
const SCRIPT_URL = (document.currentScript as HTMLScriptElement | null)?.src;

const CAN_DO = [
  "Read, search and edit the files of this folder, asking before each change, with its diff",
  "Run commands and tests, their output streaming into the chat",
  "Plan a task of several steps and keep its checklist above the message box",
  "Use what you show it: the open file and selection, @file, pasted images",
];

const MODE_WORDS: Record<string, string> = {
  default: "ask before changes and commands",
  acceptEdits: "accept edits, ask before commands",
  plan: "plan only, change nothing",
  bypassPermissions: "never ask",
};

const PROVIDER_WORDS: Record<string, string> = {
  anthropic: "Anthropic",
  openai: "OpenAI or compatible",
  azure: "Azure OpenAI",
  scripted: "scripted, offline",
};

const SETUP_BUTTONS: readonly [SetupChoice, string, string][] = [
  ["anthropic", "Anthropic (Claude)", "Your Anthropic API key, then a Claude model"],
  ["openai", "OpenAI", "Your OpenAI API key, then a model"],
  ["compatible", "OpenAI-compatible server…", "Ollama, vLLM, llama.cpp, LiteLLM: its URL (Ollama's is offered), a key if it needs one, then a model"],
];

export class WelcomeView {
  private readonly root = document.createElement("section");
  private welcome: Welcome = { state: "starting" };
  private empty = true;

  constructor(
    private readonly transcript: HTMLElement,
    private readonly post: (message: WelcomeFromWebview) => void,
  ) {
    this.root.id = "welcome";
    this.root.setAttribute("aria-label", "agentls");
    transcript.parentElement?.insertBefore(this.root, transcript);
    if (SCRIPT_URL) {
      const link = document.createElement("link");
      link.rel = "stylesheet";
      link.href = new URL("../media/welcome.css", SCRIPT_URL).toString();
      document.head.append(link);
    }
    this.draw();
  }

  show(welcome: Welcome): void {
    this.welcome = welcome;
    this.draw();
  }

  /** Whether the chat has no item yet (the empty state shows only then). */
  setEmpty(empty: boolean): void {
    if (empty === this.empty) return;
    this.empty = empty;
    this.place();
  }

  /** Trust and setup come first whatever the chat holds; the empty state only when empty. */
  private place(): void {
    const blocking = ["untrusted", "setup", "stopped"].includes(this.welcome.state);
    const shown = blocking || this.empty;
    this.root.hidden = !shown;
    this.root.dataset.state = this.welcome.state;
    this.transcript.hidden = shown && this.empty;
  }

  private draw(): void {
    const welcome = this.welcome;
    switch (welcome.state) {
      case "untrusted":
        this.root.replaceChildren(
          heading("Trust this folder to run the agent"),
          paragraph(
            "This window is in Restricted Mode. agentls reads and edits files and runs commands in this folder, so it starts only once you trust the folder.",
          ),
          actions(primary("Trust this folder…", "Opens VS Code's Workspace Trust", () => this.post({ type: "trustFolder" }))),
        );
        break;
      case "starting":
        this.root.replaceChildren(paragraph("Starting agentls…", "quiet"));
        break;
      case "stopped":
        this.root.replaceChildren(
          heading("agentls did not start"),
          paragraph(welcome.message, "error"),
          actions(
            primary("Restart agentls", "agentls: Restart Server", () => this.post({ type: "restartServer" })),
            secondary("Open Server Log", "agentls: Show Server Log", () => this.post({ type: "showLog" })),
          ),
        );
        break;
      case "setup":
        this.root.replaceChildren(
          heading("Set up a model to start"),
          paragraph("agentls works with the model provider you choose. Pick one: give its key (kept in VS Code's secret storage), then pick a model."),
          actions(
            ...SETUP_BUTTONS.map(([choice, label, title], index) => {
              const make = index === 0 ? primary : secondary;
              const node = make(label, title, () => this.post({ type: "setUpProvider", choice }));
              node.dataset.setup = choice;
              return node;
            }),
          ),
          paragraph("What you type stays in the message box meanwhile: press Enter once the model is set.", "quiet"),
          linkLine("Or set it in Settings (agentls.provider, agentls.baseUrl, agentls.model)", () => this.post({ type: "openSettings" })),
        );
        break;
      case "ready":
        this.root.replaceChildren(...this.ready(welcome));
        break;
    }
    this.place();
  }

  private ready(welcome: Extract<Welcome, { state: "ready" }>): HTMLElement[] {
    const list = document.createElement("ul");
    list.className = "can-do";
    for (const line of CAN_DO) list.append(text("li", line));
    const setup = document.createElement("div");
    setup.className = "setup-line";
    const provider = PROVIDER_WORDS[welcome.provider] ?? welcome.provider;
    setup.append(
      text("span", "Model "),
      text("strong", welcome.model),
      text("span", provider ? ` (${provider}) · Mode ` : " · Mode "),
      text("strong", welcome.mode),
      text("span", MODE_WORDS[welcome.mode] ? `: ${MODE_WORDS[welcome.mode]} ` : " "),
      linkButton("Change…", () => this.post({ type: "pickModelOrMode" })),
    );
    setup.dataset.model = welcome.model;
    setup.dataset.mode = welcome.mode;
    const parts: HTMLElement[] = [heading("What agentls can do here"), list, setup];
    parts.push(text("h3", "Recent sessions"));
    if (!welcome.recent.length) parts.push(paragraph("None in this folder yet: your first message starts one.", "quiet"));
    else parts.push(this.recent(welcome.recent));
    return parts;
  }

  private recent(sessions: RecentSession[]): HTMLElement {
    const list = document.createElement("div");
    list.className = "recent";
    for (const session of sessions) {
      const row = document.createElement("button");
      row.className = "recent-session";
      row.dataset.sessionId = session.sessionId;
      row.title = "Resume this session";
      row.append(text("span", session.title, "recent-title"));
      row.append(text("span", `${plural(session.turns, "turn")} · ${new Date(session.updatedAt).toLocaleString()}`, "recent-when"));
      row.addEventListener("click", () => this.post({ type: "resumeSession", sessionId: session.sessionId }));
      list.append(row);
    }
    return list;
  }
}

function text(tag: string, content: string, className = ""): HTMLElement {
  const node = document.createElement(tag);
  node.textContent = content;
  if (className) node.className = className;
  return node;
}

function heading(content: string): HTMLElement {
  return text("h2", content);
}

function paragraph(content: string, className = ""): HTMLElement {
  return text("p", content, className);
}

function actions(...buttons: HTMLElement[]): HTMLElement {
  const row = document.createElement("div");
  row.className = "welcome-actions";
  row.append(...buttons);
  return row;
}

function primary(label: string, title: string, onClick: () => void): HTMLButtonElement {
  const node = text("button", label, "primary") as HTMLButtonElement;
  node.title = title;
  node.addEventListener("click", onClick);
  return node;
}

function secondary(label: string, title: string, onClick: () => void): HTMLButtonElement {
  const node = primary(label, title, onClick);
  node.className = "secondary";
  return node;
}

function linkButton(label: string, onClick: () => void): HTMLButtonElement {
  const node = text("button", label, "link") as HTMLButtonElement;
  node.addEventListener("click", onClick);
  return node;
}

function linkLine(label: string, onClick: () => void): HTMLElement {
  const line = document.createElement("p");
  line.append(linkButton(label, onClick));
  return line;
}
