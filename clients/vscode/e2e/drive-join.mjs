// A real VS Code (code-server) whose settings say `agentls.server.connect: "discover"`:
// the window joins the `agentls --tcp` that tests/test_e2e_vscode.py started, runs a turn
// through it, then is pointed at a discovery file with a forged token and must say the
// daemon refused it. Checks are on the disk, the daemon's transcript and the notification.
//
//   node drive-join.mjs --url URL --workspace DIR --artifacts DIR
//     --daemon-home AGENTLS_HOME_OF_THE_DAEMON --forged DISCOVERY_FILE

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const daemonHome = arg("--daemon-home");
const forged = arg("--forged");

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);


await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("unsaved edit", async () => {
  await page.locator(".explorer-viewlet .monaco-list-row", { hasText: "app.py" }).dblclick();
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("HOST = 'unsaved'\n");
  await page.locator(".tab.dirty").first().waitFor({ timeout: 10_000 });
});

await step("joined turn", async () => {
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  await chat().locator("#input").fill("Change the port to 9000.");
  await chat().locator("#input").press("Enter");
  await chat().locator(".assistant .markdown", { hasText: "Reading it." }).waitFor({ timeout: 60_000 });
  // Each Edit's request by its place, so an answered one is never clicked again.
  for (let edit = 0; edit < 2; edit++) {
    const allow = chat().locator(".permission").nth(edit).locator('button[data-option="allow_once"]');
    await allow.click({ timeout: 60_000 });
  }
  await chat().locator(".assistant .markdown", { hasText: "Changed the port to 9000." }).waitFor({ timeout: 60_000 });
  await page.locator(".tab.dirty").first().waitFor({ state: "detached", timeout: 20_000 });
  await shot("join-01-turn");
});

await step("disk", async () => {
  const text = readFileSync(path.join(workspace, "app.py"), "utf8");
  if (text !== "PORT = 9000\nHOST = 'agent'\n") throw new Error(`app.py on disk: ${JSON.stringify(text)}`);
});

await step("daemon transcript", async () => {
  // The session is the joined daemon's: its transcript is in that daemon's home.
  const sessions = path.join(daemonHome, "sessions");
  const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`the daemon's transcripts: ${files.join(", ")}`);
  const records = readFileSync(path.join(sessions, files[0]), "utf8");
  if (!records.includes("HOST = 'unsaved'")) throw new Error("the Read did not see the window's unsaved text");
});

await step("forged token refused", async () => {
  // Pointed, in the Settings editor, at a discovery file with the right address and a
  // forged token: "Restart Now" joins again, and the daemon turns the window away.
  await command("Preferences: Open User Settings");
  await page.locator(".settings-editor").waitFor({ timeout: 30_000 });
  await page.keyboard.type("agentls.server.connect");
  const setting = page.locator(".settings-editor .setting-item-contents", { hasText: "Server: Connect" });
  const input = setting.locator("input, textarea").first();
  await input.click({ timeout: 30_000 });
  await page.keyboard.press("Control+a");
  await page.keyboard.type(forged);
  await page.keyboard.press("Tab");
  // The Settings editor writes as it is typed into: "Restart Now" may be offered for a
  // partial path, so it is clicked once the whole path is in the user settings file.
  await settingsHold(forged);
  const restart = page.locator(".notification-toast .monaco-button", { hasText: "Restart Now" });
  await restart.waitFor({ timeout: 60_000 });
  await restart.click();
  // The extension host may still have read the setting half typed (a file that does not
  // exist): then the window says so, and a restart reads it again, up to twice more.
  const failed = page.locator(".notification-toast .notification-list-item-message", { hasText: "could not join" });
  for (let attempt = 1; ; attempt++) {
    await failed.first().waitFor({ timeout: 60_000 });
    const said = await failed.allTextContents();
    const refusal = said.find((message) => message.includes("refused this window"));
    if (refusal) {
      console.log(`refusal ${JSON.stringify(refusal)}`);
      // Said once: the language client's own toast for a failed start is shown before
      // ours (same channel, in order), so it would be on screen by now.
      const toasts = page.locator(".notification-toast .notification-list-item-message");
      const twice = (await toasts.allTextContents()).filter((text) => text.includes("couldn't create connection"));
      if (twice.length) throw new Error(`the refusal was reported twice: ${twice.join(" | ")}`);
      break;
    }
    if (attempt === 3) throw new Error(`never refused: ${said.join(" | ")}`);
    console.log(`not yet the forged file: ${said.join(" | ")}`);
    await command("Notifications: Clear All Notifications");
    await command("agentls: Restart Server");
  }
  await shot("join-02-refused");
});

await browser.close();

/** Wait until VS Code's user settings file (run.sh's WORK/data) holds `text`. */
async function settingsHold(text) {
  const file = path.join(path.dirname(workspace), "data", "User", "settings.json");
  const deadline = Date.now() + 30_000;
  while (!readFileSync(file, "utf8").includes(JSON.stringify(text).slice(1, -1))) {
    if (Date.now() > deadline) throw new Error(`${file} never held ${text}: ${readFileSync(file, "utf8")}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
