// A real VS Code (code-server) in acceptEdits mode: lines 2-10 of values.py selected,
// "agentls: Edit Selection…" with an instruction; the scripted model's one Edit (two
// hunks) is still asked about, and shown in the editor itself: each hunk's old line above
// its proposed one, with Accept / Reject CodeLenses. The first hunk is accepted, the
// second rejected: only the first lands on disk, the model is told of the revision, and
// the chat shows the turn (the instruction, the answer) but no review. The answer's second
// Edit is reviewed next and accepted with Ctrl+Enter. Then the turn is
// rewound from the panel (Rewind… on its message, code only) and the file is back. Last, a
// second inline edit is stopped with Escape while its change is shown: nothing is left.
//
//   node drive-inline.mjs --url URL --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const home = arg("--home");

const OLD = Array.from({ length: 12 }, (_, i) => `line${i + 1} = ${i + 1}\n`).join("");
const FIRST_HUNK = OLD.replace("line2 = 2\n", "line2 = 20\n");
const BOTH_EDITS = FIRST_HUNK.replace("line12 = 12\n", "line12 = 120\n");
const INSTRUCTION = "bump lines 2 and 10";

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
const editor = () => page.locator(".part.editor .monaco-editor").first();
/** Monaco draws spaces as no-break spaces. */
const spaced = (text) => text.replaceAll(" ", "[\\s\\u00a0]");
const lens = (title) => editor().locator(".codelens-decoration a", { hasText: new RegExp(`^[\\s\\u00a0]*${spaced(title)}[\\s\\u00a0]*$`) });
const line = (text) => editor().locator(".view-line", { hasText: new RegExp(`^${spaced(text)}[\\s\\u00a0]*$`) });
const onDisk = () => readFileSync(path.join(workspace, "values.py"), "utf8");

async function until(check, what, timeout = 30_000) {
  const deadline = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(what());
    await page.waitForTimeout(200);
  }
}

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("selection", async () => {
  await page.locator(".explorer-viewlet .monaco-list-row", { hasText: "values.py" }).dblclick();
  await editor().locator(".view-lines").click();
  await page.keyboard.press("Control+Home");
  await page.keyboard.press("ArrowDown");
  for (let i = 0; i < 8; i++) await page.keyboard.press("Shift+ArrowDown");
  await page.keyboard.press("Shift+End");
  await page.locator(".statusbar-item", { hasText: "selected" }).first().waitFor({ timeout: 20_000 });
});

await step("instruction", async () => {
  // The daemon is up: the status bar names the model.
  await page.locator(".statusbar-item", { hasText: "scripted" }).first().waitFor({ timeout: 90_000 });
  await command("agentls: Edit Selection…");
  const box = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-widget", { hasText: "values.py, lines 2-10" }).waitFor({ timeout: 30_000 });
  await box.fill(INSTRUCTION);
  await box.press("Enter");
});

await step("inline diff", async () => {
  // Asked even in acceptEdits, and shown in the editor: old lines above the proposed ones.
  await lens("Accept").first().waitFor({ timeout: 90_000 });
  for (const text of ["line2 = 2", "line2 = 20", "line10 = 10", "line10 = 100"]) await line(text).waitFor({ timeout: 10_000 });
  await lens("Accept All").waitFor({ timeout: 10_000 });
  await lens("Reject All").waitFor({ timeout: 10_000 });
  if ((await lens("Accept").count()) !== 2) throw new Error(`${await lens("Accept").count()} Accept lenses for two hunks`);
  await page.screenshot({ path: path.join(artifacts, "inline-diff.png") });
  // Nothing is written while the review is open.
  if (onDisk() !== OLD) throw new Error("the file changed before the review was answered");
});

await step("accept one hunk", async () => {
  await lens("Accept").first().click();
  // The first hunk keeps only its new line; the second still shows both.
  await line("line2 = 2").waitFor({ state: "detached", timeout: 20_000 });
  await line("line10 = 100").waitFor({ timeout: 10_000 });
  // CodeLenses are asked again a moment after the buffer changes.
  await lens("Accept All").waitFor({ state: "detached", timeout: 20_000 });
  if ((await lens("Accept").count()) !== 1) throw new Error("the accepted hunk still has its lenses");
  await shot("inline-02-one-decided");
});

await step("reject the other", async () => {
  await lens("Reject").first().click();
  await until(() => onDisk() === FIRST_HUNK, () => `values.py on disk: ${JSON.stringify(onDisk())}`);
  await line("line10 = 100").waitFor({ state: "detached", timeout: 20_000 });
  await line("line2 = 20").waitFor({ timeout: 10_000 });
  await shot("inline-03-answered");
});

await step("second edit by key", async () => {
  // The same answer's second Edit is reviewed next, once the first is written.
  await line("line12 = 120").waitFor({ timeout: 30_000 });
  await lens("Accept").first().waitFor({ timeout: 20_000 });
  if (onDisk() !== FIRST_HUNK) throw new Error(`values.py while the second edit waits: ${JSON.stringify(onDisk())}`);
  await line("line1 = 1").click();
  await page.keyboard.press("Control+Enter");
  await until(() => onDisk() === BOTH_EDITS, () => `values.py after Ctrl+Enter: ${JSON.stringify(onDisk())}`);
  await line("line12 = 12").waitFor({ state: "detached", timeout: 20_000 });
  await page.locator(".tab.dirty").waitFor({ state: "detached", timeout: 20_000 });
});

await step("chat", async () => {
  await command("agentls: Focus Chat");
  await chat().locator(".assistant .markdown", { hasText: "Bumped lines 2 and 10." }).waitFor({ timeout: 60_000 });
  await chat().locator(".user .bubble", { hasText: INSTRUCTION }).waitFor({ timeout: 10_000 });
  await chat().locator(".user .inline-target", { hasText: "Inline edit · values.py:2-10" }).waitFor({ timeout: 10_000 });
  // The chat shows no diff or answer buttons for it: that review was the editor's.
  if (await chat().locator(".permission .diff-preview, .permission button[data-option]").count()) throw new Error("the chat shows the inline review");
  await shot("inline-04-chat");
});

await step("daemon transcript", async () => {
  const sessions = path.join(home, "sessions");
  const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`transcripts: ${files.join(", ")}`);
  const records = readFileSync(path.join(sessions, files[0]), "utf8");
  if (!records.includes(INSTRUCTION)) throw new Error("the instruction is not in the transcript");
  if (!records.includes("applied it with revisions")) throw new Error("the model was not told that a hunk was left out");
  if (!records.includes('"inlineEdit"') && !records.includes("<inlineEdit")) throw new Error("the turn is not marked as an inline edit");
});

await step("rewind", async () => {
  await chat().locator('.user button[data-action="rewind"]').first().click();
  const box = page.locator(".quick-input-widget input");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Code only" }).waitFor({ timeout: 20_000 });
  await box.fill("Code only");
  await box.press("Enter");
  await page.locator(".quick-input-widget", { hasText: "Rewind preview" }).waitFor({ timeout: 30_000 });
  await box.fill("Rewind");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "Rewind" }).first().waitFor({ timeout: 20_000 });
  await box.press("Enter");
  await until(() => onDisk() === OLD, () => `values.py after the rewind: ${JSON.stringify(onDisk())}`);
  await shot("inline-05-rewound");
});

await step("escape stops it", async () => {
  // A second inline edit, stopped with Escape while its change waits in the editor: the
  // turn is aborted, the proposed lines go, and the buffer is the file again, saved.
  await line("line5 = 5").click();
  // Its key this time: Ctrl+Shift+I, which takes it only with a selection (without one the
  // key stays Format Document's).
  await page.keyboard.press("Home");
  await page.keyboard.press("Shift+End");
  await page.keyboard.press("Control+Shift+I");
  await page.locator(".quick-input-widget", { hasText: "values.py, line 5" }).waitFor({ timeout: 30_000 });
  await page.locator(".quick-input-widget input").fill("make it 50");
  await page.locator(".quick-input-widget input").press("Enter");
  await line("line5 = 50").waitFor({ timeout: 60_000 });
  await lens("Accept").first().waitFor({ timeout: 20_000 });
  await line("line1 = 1").click();
  await page.keyboard.press("Escape");
  await line("line5 = 50").waitFor({ state: "detached", timeout: 20_000 });
  await lens("Accept").first().waitFor({ state: "detached", timeout: 20_000 });
  await page.locator(".tab.dirty").waitFor({ state: "detached", timeout: 20_000 });
  if (onDisk() !== OLD) throw new Error(`values.py after Escape: ${JSON.stringify(onDisk())}`);
  await command("agentls: Focus Chat");
  await chat().locator(".user .bubble", { hasText: "make it 50" }).waitFor({ timeout: 20_000 });
  await shot("inline-06-stopped");
});

await browser.close();
