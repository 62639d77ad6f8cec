// A real VS Code (code-server) joined to the `agentls --tcp` that tests/test_e2e_vscode.py
// started: a turn stops at its Write's permission request, "Developer: Reload Window"
// reloads the window (the extension host with it) while the daemon keeps the turn; the
// reloaded window comes back to the turn by itself, with the card still answerable.
// Checks are on the panel, the disk and the daemon's transcript.
//
//   node drive-reload.mjs --url URL --workspace DIR --artifacts DIR --daemon-home AGENTLS_HOME

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const daemonHome = arg("--daemon-home");

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
const allow = () => chat().locator(".permission").first().locator('button[data-option="allow_once"]');

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("turn waits", async () => {
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  await chat().locator("#input").fill("Write hello.txt");
  await chat().locator("#input").press("Enter");
  await allow().waitFor({ timeout: 60_000 });
  await shot("reload-01-waiting");
});

await step("reload", async () => {
  await command("Developer: Reload Window");
  // The old workbench goes; the new one comes with the extension activated again.
  await page.waitForEvent("load", { timeout: 60_000 });
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("re-attached", async () => {
  // The extension shows the panel itself when it came back to a turn.
  await chat().locator(".notice", { hasText: "re-attached to the turn that was running when the window closed" }).waitFor({ timeout: 90_000 });
  await chat().locator(".assistant .markdown", { hasText: "Writing it." }).waitFor({ timeout: 30_000 });
  await allow().waitFor({ timeout: 30_000 });
  await shot("reload-02-back");
});

await step("answered", async () => {
  await allow().click({ timeout: 30_000 });
  await chat().locator(".assistant .markdown", { hasText: "Done." }).waitFor({ timeout: 60_000 });
  // The turn's record is written just before turn_completed, after the last text.
  await chat().locator('body[data-running="false"]').waitFor({ timeout: 30_000 });
  await shot("reload-03-done");
  const counts = {
    users: await chat().locator(".user", { hasText: "Write hello.txt" }).count(),
    writing: await chat().locator(".assistant .markdown", { hasText: "Writing it." }).count(),
    done: await chat().locator(".assistant .markdown", { hasText: "Done." }).count(),
    permissions: await chat().locator(".permission").count(),
  };
  console.log(`panel ${JSON.stringify(counts)}`);
  if (counts.users !== 1 || counts.writing !== 1 || counts.done !== 1 || counts.permissions !== 1) {
    throw new Error(`the panel drew the turn ${JSON.stringify(counts)}`);
  }
});

await step("disk", async () => {
  const text = readFileSync(path.join(workspace, "hello.txt"), "utf8");
  if (text !== "hi\n") throw new Error(`hello.txt on disk: ${JSON.stringify(text)}`);
});

await step("daemon transcript", async () => {
  const sessions = path.join(daemonHome, "sessions");
  const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`the daemon's transcripts: ${files.join(", ")}`);
  const records = readFileSync(path.join(sessions, files[0]), "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line));
  const ends = records.filter((r) => r.type === "turn").map((r) => r.stopReason);
  console.log(`turn records ${JSON.stringify(ends)}`);
  if (ends.length !== 1 || ends[0] !== "end_turn") throw new Error(`turn records: ${JSON.stringify(ends)}`);
});

await browser.close();
