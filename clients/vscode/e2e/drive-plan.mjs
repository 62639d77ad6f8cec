// A real VS Code (code-server) in plan mode: the scripted model presents its plan
// (ExitPlanMode); the panel shows it as a card (the plan as markdown, the four answers,
// the card holding the keyboard); the user sends it back with feedback (Keep planning),
// then approves the second draft with edits accepted, all from the keyboard;
// the chat and the status bar say the mode changed, and the same turn carries the plan out
// (a Write, not asked about in acceptEdits). Then the message box completes `/` with the
// session's commands and the project's skill (tagged), `/context` is drawn as a bar, and
// back in the default mode an apply_patch asks once with its files listed, one diff opened.
// Checks are on the panel, the disk and the daemon's transcript; screenshots are artifacts.
//
//   node drive-plan.mjs --url URL --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const home = arg("--home");

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
const statusItem = (text) => page.locator(".statusbar-item", { hasText: text }).first();

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("plan card", async () => {
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  await chat().locator("#input").fill("Plan a greeting file, then write it.");
  await chat().locator("#input").press("Enter");
  const card = chat().locator('.permission[data-state="pending"]');
  // The plan, rendered as markdown, and its four answers.
  await card.locator(".plan-body h1", { hasText: "Greeting plan" }).waitFor({ timeout: 90_000 });
  await card.locator(".plan-body li", { hasText: "Write a file" }).first().waitFor({ timeout: 10_000 });
  for (const option of ["plan_approve", "plan_approve_accept_edits", "plan_keep_planning", "plan_reject"]) {
    await card.locator(`button[data-option="${option}"]`).waitFor({ timeout: 10_000 });
  }
  await card.locator("textarea.plan-feedback").waitFor({ timeout: 10_000 });
  // The session opened in plan mode, and the status bar says so.
  await statusItem("plan").waitFor({ timeout: 30_000 });
  // The card took the keyboard.
  await chat().locator('.permission[data-state="pending"]:focus').waitFor({ timeout: 10_000 });
  await shot("plan-01-card");
});

await step("keep planning", async () => {
  await page.waitForTimeout(600);
  // `n` (Keep planning) takes the keyboard to the feedback box; Ctrl+Enter sends it.
  await page.keyboard.press("n");
  await chat().locator("textarea.plan-feedback:focus").waitFor({ timeout: 10_000 });
  await page.keyboard.type("Name the file hello.txt.");
  await page.keyboard.press("Control+Enter");
  // The model read the feedback and presents its second draft, on a new card.
  const card = chat().locator('.permission[data-state="pending"]');
  await card.locator(".plan-body h1", { hasText: "second draft" }).waitFor({ timeout: 60_000 });
  await card.locator(".plan-body li", { hasText: "hello.txt" }).first().waitFor({ timeout: 10_000 });
  await chat().locator(".tool .answer", { hasText: "Sent back to planning" }).waitFor({ timeout: 10_000 });
  await chat().locator('.permission[data-state="pending"]:focus').waitFor({ timeout: 10_000 });
  await card.screenshot({ path: path.join(artifacts, "plan-card.png") });
});

await step("approved", async () => {
  // Keys pressed right as a card takes the focus are ignored: wait out that grace.
  await page.waitForTimeout(600);
  // `a` answers the option of kind allow_always: "Approve, accept edits".
  await page.keyboard.press("a");
  await chat().locator(".notice", { hasText: "Mode: accept edits" }).waitFor({ timeout: 30_000 });
  await statusItem("acceptEdits").waitFor({ timeout: 30_000 });
  const answer = chat().locator(".tool .tool-card summary .answer").first();
  await answer.waitFor({ timeout: 20_000 });
  // The same turn goes on: the Write runs without asking, and the model says it is done.
  await chat().locator(".assistant .markdown", { hasText: "Done: hello.txt is written." }).waitFor({ timeout: 90_000 });
  // The turn's record is written just before turn_completed, after the last text.
  await chat().locator('body[data-running="false"]').waitFor({ timeout: 30_000 });
  if (await chat().locator('.permission[data-state="pending"]').count()) throw new Error("the Write asked in acceptEdits");
  await shot("plan-02-carried-out");
});

await step("disk", async () => {
  const text = readFileSync(path.join(workspace, "hello.txt"), "utf8");
  if (text !== "hello from the plan\n") throw new Error(`hello.txt on disk: ${JSON.stringify(text)}`);
});

await step("daemon transcript", async () => {
  const sessions = path.join(home, "sessions");
  const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`transcripts: ${files.join(", ")}`);
  const records = readFileSync(path.join(sessions, files[0]), "utf8");
  // The model read that the plan was approved, and the turn ended once, normally.
  if (!records.includes("The user approved your plan")) throw new Error("the ExitPlanMode result does not say the plan was approved");
  if (!records.includes("Name the file hello.txt.")) throw new Error("the model did not get the feedback on its first plan");
  const turns = records.trim().split("\n").map((l) => JSON.parse(l)).filter((r) => r.type === "turn");
  if (turns.length !== 1 || turns[0].stopReason !== "end_turn") throw new Error(`turn records: ${JSON.stringify(turns)}`);
});

await step("slash completion", async () => {
  const input = chat().locator("#input");
  await input.click();
  await input.pressSequentially("/gre");
  const skill = chat().locator(".completion", { hasText: "/greet" });
  await skill.waitFor({ timeout: 20_000 });
  await skill.locator(".completion-tag", { hasText: "skill" }).waitFor({ timeout: 10_000 });
  await skill.locator(".completion-detail", { hasText: "Greets the user" }).waitFor({ timeout: 10_000 });
  await shot("plan-03-skill-completion");
  await input.fill("");
  await input.pressSequentially("/conte");
  await chat().locator(".completion.chosen", { hasText: "/context" }).waitFor({ timeout: 20_000 });
  await input.press("Tab");
  if ((await input.inputValue()) !== "/context ") throw new Error(`the box holds ${JSON.stringify(await input.inputValue())}`);
  // The `!` shortcut is hinted while typed.
  await input.fill("");
  await input.pressSequentially("!ls");
  await chat().locator("#input-hint", { hasText: "shell" }).waitFor({ timeout: 10_000 });
  await input.fill("/context");
});

await step("context bar", async () => {
  await chat().locator("#input").press("Enter");
  const bar = chat().locator(".context .context-bar");
  await bar.waitFor({ timeout: 30_000 });
  for (const part of ["system-prompt", "tools", "skills", "messages", "free-space"]) {
    await bar.locator(`.segment[data-part="${part}"]`).waitFor({ timeout: 10_000 });
  }
  await chat().locator('.context tr[data-part="skills"] .part-name', { hasText: "1 skill" }).waitFor({ timeout: 10_000 });
  await chat().locator(".context").screenshot({ path: path.join(artifacts, "context-bar.png") });
});

await step("patch", async () => {
  // Back to asking before edits, then a patch of two files: one card for the whole patch.
  const input = chat().locator("#input");
  await input.fill("/mode default");
  await input.press("Enter");
  await statusItem("acceptEdits").waitFor({ state: "detached", timeout: 30_000 });
  await input.fill("Change the port and add docs.");
  await input.press("Enter");
  const card = chat().locator('.permission[data-state="pending"]');
  const files = card.locator(".patch-files .patch-file");
  await files.first().waitFor({ timeout: 60_000 });
  const listed = await files.evaluateAll((rows) => rows.map((r) => `${r.dataset.kind} ${r.querySelector(".diff-name").textContent}`));
  if (listed.join(", ") !== "update app.py, add new.md") throw new Error(`the patch card lists ${listed.join(", ")}`);
  await card.locator(".patch-head", { hasText: "2 files" }).waitFor({ timeout: 10_000 });
  await card.screenshot({ path: path.join(artifacts, "patch-card.png") });
  // A file's diff opens in VS Code's diff editor.
  await files.first().locator(".diff-name").click();
  await page.locator(".tab", { hasText: "patch 1 of 2" }).waitFor({ timeout: 20_000 });
  await page.locator(".monaco-diff-editor .modified .view-line", { hasText: "PORT = 9000" }).waitFor({ timeout: 20_000 });
  await shot("plan-04-patch-diff");
  await card.locator('button[data-option="allow_once"]').click();
  await chat().locator(".assistant .markdown", { hasText: "Patched." }).waitFor({ timeout: 60_000 });
  // Its card has a diff per file afterwards.
  await chat().locator(".tool .tool-card button", { hasText: "new.md" }).first().waitFor({ state: "attached", timeout: 20_000 });
  const app = readFileSync(path.join(workspace, "app.py"), "utf8");
  const docs = readFileSync(path.join(workspace, "docs", "new.md"), "utf8");
  if (app !== "PORT = 9000\n" || docs !== "# New\n") throw new Error(`after the patch: ${JSON.stringify([app, docs])}`);
});

await browser.close();
