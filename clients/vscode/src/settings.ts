// The one place that reads and writes VS Code's `agentls.*` configuration: every other
// module takes a typed `Settings` from here (settingValues.ts has the type and parsing).

import * as vscode from "vscode";

import { RESTART_KEYS, type SetupKey, type Settings, settingsFrom } from "./settingValues";

export { type Settings, initializationOptions } from "./settingValues";

const SECTION = "agentls";

/** The settings as they stand now (read afresh: the user may have changed them). */
export function readSettings(): Settings {
  const config = vscode.workspace.getConfiguration(SECTION);
  return settingsFrom((key, fallback) => config.get(key, fallback));
}

/** Write a first-run choice to the user's settings; undefined removes it. */
export async function saveUserSetting(key: SetupKey, value: string | undefined): Promise<void> {
  await vscode.workspace.getConfiguration(SECTION).update(key, value, vscode.ConfigurationTarget.Global);
}

/** What a configuration change touched, or undefined when no agentls setting changed. */
export interface SettingsChange {
  permissionMode: boolean;
  model: boolean;
  /** A setting that applies when the daemon restarts. */
  needsRestart: boolean;
}

export function settingsChange(change: vscode.ConfigurationChangeEvent): SettingsChange | undefined {
  if (!change.affectsConfiguration(SECTION)) return undefined;
  const affects = (key: string) => change.affectsConfiguration(`${SECTION}.${key}`);
  return {
    permissionMode: affects("permissionMode"),
    model: affects("model"),
    needsRestart: RESTART_KEYS.some(affects),
  };
}
