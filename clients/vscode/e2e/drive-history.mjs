// A real VS Code (code-server): History's trash button deletes a saved session. Three chats
// (Alpha, Beta, Gamma) are sent with the scripted model; Beta and Gamma are closed, so History
// lists them as saved sessions beside Alpha, the chat shown. Beta's trash button and the
// modal's Delete remove it: the reopened list has no Beta row, its transcript and listing
// entry are gone from AGENTLS_HOME/sessions, and Gamma is still listed and resumes with its
// messages. Deleting Gamma, the chat shown then, leaves a new empty chat and a notification
// saying so; a message sent there starts a new session. Screenshots are artifacts.
//
//   node drive-history.mjs --url URL --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const sessions = path.join(arg("--home"), "sessions");

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
const pickRow = (text) => page.locator(".quick-input-list .monaco-list-row", { hasText: text }).first();
/** The sessions saved under AGENTLS_HOME, by the id their transcript is named after. */
const savedIds = () => readdirSync(sessions).filter((f) => f.endsWith(".jsonl")).map((f) => f.slice(0, -".jsonl".length));
/** The saved session whose transcript holds `text` (its user message). */
const idOf = (text) => {
  const id = savedIds().find((s) => readFileSync(path.join(sessions, `${s}.jsonl`), "utf8").includes(text));
  if (!id) throw new Error(`no saved session holds "${text}"`);
  return id;
};
const until = async (what, test, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(250);
  }
};
const send = async (text) => {
  await chat().locator("#input").fill(text);
  await chat().locator("#input").press("Enter");
  await chat().locator(".user", { hasText: text }).waitFor({ timeout: 60_000 });
  await chat().locator(".assistant", { hasText: "Noted." }).last().waitFor({ timeout: 60_000 });
};
const openHistory = async () => {
  await chat().locator("#history").click();
  await page.locator(".quick-input-list .monaco-list-row").first().waitFor({ timeout: 30_000 });
};
/** The row's trash button (shown on hover), then the modal's Delete. */
const deleteRow = async (text) => {
  const row = pickRow(text);
  await row.hover();
  await row.locator(".action-label[aria-label*='Delete session']").click();
  const dialog = page.locator(".monaco-dialog-box");
  await dialog.waitFor({ timeout: 20_000 });
  await dialog.locator(".monaco-button", { hasText: "Delete" }).first().click();
  await dialog.waitFor({ state: "detached", timeout: 20_000 });
};

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("three sessions", async () => {
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  await send("Alpha question");
  for (const name of ["Beta", "Gamma"]) {
    await chat().locator("#new-session").click();
    await chat().locator(".item").first().waitFor({ state: "detached", timeout: 20_000 });
    await send(`${name} question`);
  }
  // Gamma, then Beta closed: each shows the chat parked before it, and ends up saved.
  for (const name of ["Gamma", "Beta"]) {
    await command("agentls: Close Session");
    await chat().locator(".user", { hasText: `${name} question` }).waitFor({ state: "detached", timeout: 20_000 });
  }
  await chat().locator(".user", { hasText: "Alpha question" }).waitFor({ timeout: 20_000 });
  await until("three saved sessions", () => savedIds().length === 3);
});

let beta = "";
await step("delete saved", async () => {
  beta = idOf("Beta question");
  await openHistory();
  await pickRow("Beta question").waitFor({ timeout: 20_000 });
  await deleteRow("Beta question");
  // The list is read again: Beta's row is gone, the other two are still there.
  await pickRow("Gamma question").waitFor({ timeout: 30_000 });
  await pickRow("Alpha question").waitFor({ timeout: 10_000 });
  if (await page.locator(".quick-input-list .monaco-list-row", { hasText: "Beta question" }).count()) throw new Error("Beta is still listed");
  await shot("history-01-delete");
  for (const file of [`${beta}.jsonl`, `${beta}.meta.json`, beta]) {
    if (existsSync(path.join(sessions, file))) throw new Error(`${file} is still in AGENTLS_HOME/sessions`);
  }
  if (savedIds().length !== 2) throw new Error(`saved sessions: ${savedIds().join(", ")}`);
});

await step("other resumed", async () => {
  await pickRow("Gamma question").click();
  await chat().locator(".user", { hasText: "Gamma question" }).waitFor({ timeout: 30_000 });
  await chat().locator(".assistant", { hasText: "Noted." }).first().waitFor({ timeout: 10_000 });
});

await step("delete shown", async () => {
  const gamma = idOf("Gamma question");
  await openHistory();
  await pickRow("shown now").waitFor({ timeout: 20_000 });
  await deleteRow("Gamma question");
  await pickRow("Alpha question").waitFor({ timeout: 30_000 });
  await page.keyboard.press("Escape");
  // Not left on the dead session: an empty chat, saying what became of it.
  await chat().locator(".user", { hasText: "Gamma question" }).waitFor({ state: "detached", timeout: 20_000 });
  await page.locator(".notification-toast .notification-list-item-message", { hasText: "was deleted" }).waitFor({ timeout: 20_000 });
  await shot("history-02-shown-deleted");
  await until("Gamma's transcript gone", () => !existsSync(path.join(sessions, `${gamma}.jsonl`)));
  // A message there starts a new session.
  await send("Delta question");
  await until("Delta saved", () => savedIds().length === 2);
  if (savedIds().includes(gamma)) throw new Error("Gamma came back");
});

await browser.close();
