// The `agentls.*` settings as one typed value, read from any key → value source (VS Code's
// configuration in settings.ts, a plain object in the unit tests), and the part of it the
// daemon reads at initialize. No `vscode` import, so `node --test` runs it.

import { type ConnectSetting, connectSetting } from "./discovery";

export interface Settings {
  /** Empty: the provider whose API key is set. */
  provider: string;
  /** Empty: the provider's default model. */
  model: string;
  baseUrl: string;
  permissionMode: string;
  /** Empty: the bundled daemon, run by a Python found automatically (server.ts). */
  serverPath: string;
  serverArgs: string[];
  pythonPath: string;
  /** `agentls.server.connect`, parsed: spawn a daemon, or join a running one. */
  connect: ConnectSetting;
  saveEdits: boolean;
  script: string;
  /** The openai provider's API: "auto", "chat" or "responses"; empty: the daemon's default. */
  openaiApi: string;
}

/** One setting's value, or `fallback` when it is unset (as WorkspaceConfiguration.get). */
export type SettingSource = <T>(key: string, fallback: T) => T;

/** The settings whose change needs a new daemon (the others apply to the open session). */
export const RESTART_KEYS = ["provider", "baseUrl", "script", "serverPath", "serverArgs", "pythonPath", "server.connect", "openaiApi"] as const;

/** The settings a first-run setup writes. */
export type SetupKey = "provider" | "baseUrl" | "model";

export function settingsFrom(get: SettingSource): Settings {
  return {
    provider: get("provider", ""),
    model: get("model", ""),
    baseUrl: get("baseUrl", ""),
    permissionMode: get("permissionMode", "default"),
    serverPath: get("serverPath", ""),
    serverArgs: get<string[]>("serverArgs", []),
    pythonPath: get("pythonPath", ""),
    connect: connectSetting(get("server.connect", "spawn")),
    saveEdits: get("saveEdits", true),
    script: get("script", ""),
    openaiApi: get("openaiApi", ""),
  };
}

/** The settings the daemon reads from initializationOptions (camelCase, as in PROTOCOL.md). */
export function initializationOptions(settings: Settings): Record<string, unknown> {
  const options: Record<string, unknown> = { permissionMode: settings.permissionMode };
  if (settings.provider) options.provider = settings.provider;
  if (settings.model) options.model = settings.model;
  if (settings.script) options.script = settings.script;
  if (settings.openaiApi) options.openaiApi = settings.openaiApi;
  if (settings.baseUrl) options[settings.provider === "anthropic" ? "anthropicBaseUrl" : "openaiBaseUrl"] = settings.baseUrl;
  return options;
}
