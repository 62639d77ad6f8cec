// What the message box offers as the user types its first characters: the session's slash
// commands for a leading `/` (skills tagged as such), and a hint for the `!` (shell) and
// `#` (memory) shortcuts. Pure, so the webview's composer only draws what this returns.

import type { CommandInfo } from "./wire";

/** The command name being typed: the text before the caret is `/` and name characters. */
export function slashQuery(beforeCaret: string): string | undefined {
  const match = /^\/([\w:-]*)$/.exec(beforeCaret);
  return match ? (match[1] ?? "") : undefined;
}

/** Commands whose name starts with `query` first, then those that contain it; by name. */
export function matchCommands(commands: readonly CommandInfo[], query: string, limit = 30): CommandInfo[] {
  const q = query.toLowerCase();
  const byName = (a: CommandInfo, b: CommandInfo): number => a.name.localeCompare(b.name);
  const starts = commands.filter((c) => c.name.toLowerCase().startsWith(q)).sort(byName);
  const contains = commands.filter((c) => !c.name.toLowerCase().startsWith(q) && c.name.toLowerCase().includes(q)).sort(byName);
  return [...starts, ...contains].slice(0, limit);
}

/** The tag a command's row carries: where it comes from, when that says something. */
export function commandTag(command: CommandInfo): string {
  return command.source === "builtin" ? "" : command.source;
}

/** What the box says under it while the message is a shortcut; empty otherwise. The rules
 * are the daemon's (PROTOCOL.md, Slash commands: Shortcuts). */
export function shortcutHint(text: string): string {
  if (/^![^\n]*\S/.test(text)) return "! runs this in the shell (asks like Bash); its output goes to the model with your next message.";
  if (/^#[ \t]\S/.test(text) && !text.includes("\n")) return "# adds this line to the project's memory file (AGENTS.md or CLAUDE.md).";
  return "";
}
