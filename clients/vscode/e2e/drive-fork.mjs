// A real VS Code (code-server): Changes and Edit & resend on the panel's user messages.
// Turn 1 ("Make the files…") edits app.py and runs a Bash command that makes
// made-by-bash.txt (allowed with a click on its permission card); turn 2 asks something else. Changes on turn 1's message lists both
// files in a quick pick (the shell's file included) and opens the picked one's diff. Edit &
// resend on turn 2's message opens a new chat that ends before it, with its text in the
// box; the text is edited and sent. On disk: the fork's transcript holds turn 1 and the
// new text, not turn 2; the original transcript is as it was, and History brings the
// original chat back with both turns. Screenshots are artifacts.
//
//   node drive-fork.mjs --url URL --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const home = arg("--home");

const FIRST = "Make the files for me.";
const SECOND = "What did you make?";
const RESENT = "List the files instead.";

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
const sessions = path.join(home, "sessions");
const transcripts = () => readdirSync(sessions).filter((f) => f.endsWith(".jsonl")).sort();
const read = (name) => readFileSync(path.join(sessions, name), "utf8");
/** The texts the user wrote, in a transcript's message records (reminders left out). */
const userTexts = (name) =>
  read(name)
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line))
    .filter((r) => r.type === "message" && r.message.role === "user")
    .flatMap((r) => r.message.content.filter((b) => b.type === "text" && !b.text.startsWith("<")).map((b) => b.text));
const until = async (what, test, ms = 30_000) => {
  const deadline = Date.now() + ms;
  while (!test()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await page.waitForTimeout(250);
  }
};
const send = async (text, answer) => {
  await chat().locator("#input").fill(text);
  await chat().locator("#input").press("Enter");
  await chat().locator(".assistant", { hasText: answer }).waitFor({ timeout: 90_000 });
};
const userMessage = (text) => chat().locator(".user", { hasText: text }).first();
const pickRow = (text) => page.locator(".quick-input-list .monaco-list-row", { hasText: text }).first();

let original = "";
let before = "";

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("two turns", async () => {
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  await chat().locator("#input").fill(FIRST);
  await chat().locator("#input").press("Enter");
  // acceptEdits: the Edit goes through; the shell command is asked about.
  const card = chat().locator(`.permission[data-state="pending"]`, { hasText: "printf x > made-by-bash.txt" });
  await card.locator("button", { hasText: "Allow once" }).click({ timeout: 90_000 });
  await chat().locator(".assistant", { hasText: "Changed the port and made made-by-bash.txt" }).waitFor({ timeout: 90_000 });
  await until("made-by-bash.txt from the Bash command", () => {
    try {
      return readFileSync(path.join(workspace, "made-by-bash.txt"), "utf8") === "x";
    } catch {
      return false;
    }
  });
  if (!readFileSync(path.join(workspace, "app.py"), "utf8").includes("PORT = 9000")) throw new Error("app.py was not edited");
  await send(SECOND, "I made made-by-bash.txt");
  const names = transcripts();
  if (names.length !== 1) throw new Error(`transcripts before the fork: ${names.join(", ")}`);
  original = names[0];
  // The turn's last records are written as it ends: wait until the file holds still.
  let last = "";
  await until("the transcript to settle", () => {
    const now = read(original);
    const still = now === last && userTexts(original).includes(SECOND);
    last = now;
    return still;
  });
  await page.waitForTimeout(1_000);
  before = read(original);
});

await step("changes", async () => {
  const user = userMessage(FIRST);
  await user.hover();
  await user.locator('[data-action="turn-changes"]').click();
  await page.locator(".quick-input-widget", { hasText: "what this turn changed (2 files)" }).waitFor({ timeout: 30_000 });
  // The shell's file is listed beside the edited one.
  await pickRow("made-by-bash.txt").locator(".label-description", { hasText: "(new)" }).waitFor({ timeout: 10_000 });
  await pickRow("app.py").locator(".label-description", { hasText: "+1 −1" }).waitFor({ timeout: 10_000 });
  await pickRow("made-by-bash.txt").click();
  // The diff editor: nothing on the left, the shell's "x" on the right; the list stays.
  const tab = page.locator(".tabs-container .tab", { hasText: "made-by-bash.txt (turn's change)" });
  await tab.waitFor({ timeout: 30_000 });
  const diff = page.locator(".editor-instance .monaco-diff-editor").first();
  await diff.locator(".editor.modified .view-line", { hasText: /^x$/ }).waitFor({ timeout: 20_000 });
  await page.locator(".quick-input-widget", { hasText: "what this turn changed" }).waitFor({ timeout: 20_000 });
  await shot("fork-01-changes");
  await page.keyboard.press("Escape");
});

await step("edit and resend", async () => {
  const user = userMessage(SECOND);
  await user.hover();
  await user.locator('[data-action="fork"]').click();
  // A new chat that ends before the message: turn 1 only, the message's text in the box.
  const input = chat().locator("#input");
  const deadline = Date.now() + 30_000;
  while ((await input.inputValue()) !== SECOND) {
    if (Date.now() > deadline) throw new Error(`the box holds ${JSON.stringify(await input.inputValue())}`);
    await page.waitForTimeout(250);
  }
  await userMessage(FIRST).waitFor({ timeout: 10_000 });
  if ((await chat().locator(".user", { hasText: SECOND }).count()) !== 0) throw new Error("the fork shows the message it was cut before");
  await send(RESENT, "Resent: app.py and made-by-bash.txt");
  await shot("fork-02-resent");
});

await step("transcripts", async () => {
  await until("the fork's transcript", () => transcripts().length === 2);
  const fork = transcripts().find((name) => name !== original);
  await until("the resent text in the fork's transcript", () => userTexts(fork).includes(RESENT));
  const texts = userTexts(fork);
  if (!texts.includes(FIRST) || texts.includes(SECOND)) throw new Error(`the fork's user texts: ${JSON.stringify(texts)}`);
  if (read(original) !== before) throw new Error("the original transcript changed");
  const kept = userTexts(original);
  if (!kept.includes(FIRST) || !kept.includes(SECOND) || kept.includes(RESENT)) throw new Error(`the original's user texts: ${JSON.stringify(kept)}`);
  console.log(JSON.stringify({ original, fork, forkTexts: texts }));
});

await step("original kept", async () => {
  // The first chat stayed open behind the fork: History brings it back with both turns.
  await chat().locator("#history").click();
  const rows = page.locator(".quick-input-list .monaco-list-row");
  await rows.first().waitFor({ timeout: 30_000 });
  await rows.filter({ hasText: FIRST }).filter({ hasNotText: "Fork" }).first().click();
  await userMessage(SECOND).waitFor({ timeout: 20_000 });
  await chat().locator(".assistant", { hasText: "I made made-by-bash.txt" }).waitFor({ timeout: 10_000 });
  if ((await chat().locator(".user", { hasText: RESENT }).count()) !== 0) throw new Error("the original chat shows the fork's message");
  await shot("fork-03-original");
});

await browser.close();
