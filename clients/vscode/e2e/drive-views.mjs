// A real VS Code (code-server): the agentls sidebar's Permission Rules and MCP Servers
// views, and Rewind… on a resumed chat. A message opens a session, closed and resumed from
// History: its message offers Rewind… and Changes. "Add Permission Rule…" (rule, behavior, scope from the
// quick inputs) lists the rule under Allow and writes it to .agentls/settings.local.json; a
// malformed rule is refused with the daemon's message in a notification; the rule's trash
// icon removes it from view and file. The MCP Servers view shows the user's fixture server
// ready, with its tools; Restart starts it again, Disable shows it disabled (remembered in
// the project's settings), Enable brings it back. Screenshots are artifacts.
//
//   node drive-views.mjs --url URL --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
const localSettings = () => {
  const file = path.join(workspace, ".agentls", "settings.local.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : {};
};
const until = async (what, test, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(250);
  }
};
const pane = (title) => page.locator(".pane", { has: page.locator(".pane-header", { hasText: title }) });
const row = (title, text) => pane(title).locator(".monaco-list-row", { hasText: text }).first();
/** Answer the open quick input: type into a box, or pick the row that holds `text`. */
const quick = async (text, type = false) => {
  const box = page.locator(".quick-input-widget input");
  await box.waitFor({ timeout: 30_000 });
  if (type) await box.fill(text);
  else await page.locator(".quick-input-list .monaco-list-row", { hasText: text }).first().click();
  if (type) await box.press("Enter");
  await page.waitForTimeout(300);
};
const addRule = async (rule, behavior, scope) => {
  await command("agentls: Add Permission Rule…");
  await quick(rule, true);
  await quick(behavior);
  await quick(scope);
};
/** Run a server's action from its row's context menu. */
const serverAction = async (name, label) => {
  await row("MCP Servers", name).click({ button: "right" });
  const menu = page.locator(".context-view .monaco-menu");
  await menu.waitFor({ timeout: 10_000 });
  await menu.locator(".action-label", { hasText: label }).first().click();
  // A menu that opened as the tree redrew may take the click as a hover: Enter picks the item.
  await menu.waitFor({ state: "detached", timeout: 2_000 }).catch(() => page.keyboard.press("Enter"));
};

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("session", async () => {
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  await chat().locator("#input").fill("Hello");
  await chat().locator("#input").press("Enter");
  await chat().locator(".assistant", { hasText: "Hello from the scripted model" }).waitFor({ timeout: 60_000 });
});

await step("resumed rewind", async () => {
  // Closed and resumed from the daemon's transcript: the history names the turn the user
  // message began, so Rewind… and Changes are offered on it as on a message sent here.
  await command("agentls: Close Session");
  await chat().locator(".item").first().waitFor({ state: "detached", timeout: 20_000 });
  await chat().locator("#history").click();
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Hello" }).first().click();
  const user = chat().locator(".user", { hasText: "Hello" }).first();
  await user.waitFor({ timeout: 20_000 });
  await user.hover();
  await user.locator('[data-action="turn-changes"]').waitFor({ timeout: 10_000 });
  await user.locator('[data-action="rewind"]').click();
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Code and conversation" }).waitFor({ timeout: 20_000 });
  await shot("views-00-resumed-rewind");
  await page.keyboard.press("Escape");
});

await step("rule added", async () => {
  await command("Focus on Permission Rules View");
  await addRule("Bash(npm test:*)", "Allow", "This project, just me");
  await row("Permission Rules", "Bash(npm test:*)").waitFor({ timeout: 30_000 });
  await until("the rule in settings.local.json", () => (localSettings().permissions?.allow ?? []).includes("Bash(npm test:*)"));
  await shot("views-01-rules");
});

await step("malformed rule", async () => {
  await addRule("Bash(npm test", "Deny", "This project, just me");
  await page.locator(".notification-toast .notification-list-item-message", { hasText: "Malformed permission rule" }).waitFor({ timeout: 30_000 });
  await shot("views-02-malformed");
});

await step("rule removed", async () => {
  const rule = row("Permission Rules", "Bash(npm test:*)");
  await rule.hover();
  await rule.locator(".action-label[aria-label*='Remove Permission Rule']").click();
  await rule.waitFor({ state: "detached", timeout: 30_000 });
  await until("the rule gone from settings.local.json", () => !(localSettings().permissions?.allow ?? []).includes("Bash(npm test:*)"));
});

await step("mcp listed", async () => {
  await command("Focus on MCP Servers View");
  const fx = row("MCP Servers", "fx");
  await fx.locator(".label-description", { hasText: "ready · stdio" }).waitFor({ timeout: 60_000 });
  await fx.click();
  await row("MCP Servers", "echo").waitFor({ timeout: 10_000 });
  await row("MCP Servers", "echo").locator(".label-description", { hasText: "read-only" }).waitFor({ timeout: 10_000 });
  await shot("views-03-mcp");
});

await step("mcp restarted", async () => {
  await serverAction("fx", "Restart MCP Server");
  // Its second start, shown on the row once it is ready again.
  await row("MCP Servers", "fx").locator(".label-description", { hasText: /ready · stdio · \d+ tools · 2 starts/ }).waitFor({ timeout: 60_000 });
});

await step("mcp disabled", async () => {
  await serverAction("fx", "Disable MCP Server");
  await row("MCP Servers", "fx").locator(".label-description", { hasText: "disabled" }).waitFor({ timeout: 60_000 });
  await until("fx in disabledMcpServers", () => (localSettings().disabledMcpServers ?? []).includes("fx"));
  await shot("views-04-mcp-disabled");
});

await step("mcp enabled", async () => {
  await serverAction("fx", "Enable MCP Server");
  await row("MCP Servers", "fx").locator(".label-description", { hasText: "ready · stdio" }).waitFor({ timeout: 60_000 });
  await until("fx out of disabledMcpServers", () => !(localSettings().disabledMcpServers ?? []).includes("fx"));
});

await browser.close();
