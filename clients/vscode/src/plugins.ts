// The installed plugins (agent/newSession's `plugins`) as quick-pick rows: name, version,
// enabled, what each adds to sessions, and why one cannot be read. Pure.

import type { PluginInfo } from "./wire";

export interface PluginRow {
  label: string;
  description: string;
  detail: string;
}

/** One row per plugin, in the daemon's order. */
export function pluginRows(plugins: readonly PluginInfo[]): PluginRow[] {
  return plugins.map((plugin) => ({
    label: plugin.name,
    description: [plugin.version ? `v${plugin.version}` : "", plugin.error ? "error" : plugin.enabled ? "enabled" : "disabled", plugin.source].filter(Boolean).join(" · "),
    detail: plugin.error ? `Cannot be read: ${plugin.error}` : provides(plugin),
  }));
}

/** What a plugin adds, in words: "commands: a, b · hooks · MCP servers: x". */
export function provides(plugin: PluginInfo): string {
  const parts = [
    named("commands", plugin.commands),
    named("agents", plugin.agents),
    named("skills", plugin.skills),
    plugin.hooks ? "hooks" : "",
    named("MCP servers", plugin.mcpServers),
  ].filter(Boolean);
  const what = parts.length ? parts.join(" · ") : "nothing yet";
  return plugin.description ? `${plugin.description} — ${what}` : what;
}

function named(kind: string, names: readonly string[] | undefined): string {
  return names?.length ? `${kind}: ${names.join(", ")}` : "";
}
