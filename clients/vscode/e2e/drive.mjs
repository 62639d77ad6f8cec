// Drive a real VS Code (code-server, in Debian's Chromium through playwright-core) through
// the agentls panel. Assertions are on what lands on disk and in the daemon's transcript;
// screenshots are kept as artifacts.
//
//   node drive.mjs --url http://127.0.0.1:PORT --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const home = arg("--home");
const timings = {};
const started = Date.now();
const mark = (name, since = started) => (timings[name] = Date.now() - since);

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);
/** The README's pictures: the chat and the start of the editor beside it. Copies of
 * these are committed in docs/. */
const readmeShot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`), clip: { x: 0, y: 0, width: 820, height: 950 } });

/** The extension's log (its output channel, as code-server writes it). */
function findLog(dir) {
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile() && entry.name === "agentls.log") return readFileSync(path.join(entry.parentPath, entry.name), "utf8");
  }
  return "";
}

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
  mark("workbench");
});

await step("unsaved edit", async () => {
  await page.locator(".explorer-viewlet .monaco-list-row", { hasText: "app.py" }).dblclick();
  await page.locator(".monaco-editor .view-lines").first().click();
  await page.keyboard.press("Control+End");
  await page.keyboard.type("HOST = 'unsaved'\n");
  await page.locator(".tab.dirty").first().waitFor({ timeout: 10_000 });
});

await step("panel", async () => {
  const opening = Date.now();
  await command("agentls: Focus Chat");
  await chat().locator("#input").waitFor({ timeout: 60_000 });
  mark("panel_ready", opening);
  // Split it with the extension's own log: VS Code until it asks for the view, then the
  // webview until its script says ready.
  const log = findLog(path.join(workspace, "..", "data", "logs"));
  const at = (pattern) => Number(new RegExp(`${pattern} at (\\d+)`).exec(log)?.[1] ?? NaN);
  timings.panel_command_to_resolve = at("panel: view resolved") - opening;
  timings.panel_resolve_to_ready = at("panel: webview ready") - at("panel: view resolved");
  const split = /document (\d+) ms after resolve, script (\d+) ms after that, ready (\d+) ms after that/.exec(log);
  if (split) [timings.panel_resolve_to_document, timings.panel_document_to_script, timings.panel_script_to_ready] = split.slice(1).map(Number);
  await shot("01-panel");
  await readmeShot("empty-state");
});

await step("turn", async () => {
  // `@` completes a workspace file and attaches it.
  await chat().locator("#input").pressSequentially("Change the port to 9000 in @app");
  await chat().locator(".completion", { hasText: "app.py" }).first().waitFor({ timeout: 20_000 });
  await chat().locator("#input").press("Enter");
  await chat().locator('.chip[data-label="app.py"]').waitFor({ timeout: 10_000 });
  await chat().locator("#input").press("End");
  await chat().locator("#input").pressSequentially(".");
  const sent = Date.now();
  await chat().locator("#input").press("Enter");
  await chat().locator(".assistant .markdown", { hasText: "Reading it." }).waitFor({ timeout: 60_000 });
  mark("first_text_painted", sent);
  const card = chat().locator('.permission[data-state="pending"]');
  const allow = card.locator('button[data-option="allow_once"]');
  await allow.waitFor({ timeout: 60_000 });
  await chat().locator(".permission .rule", { hasText: "Edit(./app.py)" }).waitFor({ timeout: 10_000 });
  mark("permission_shown", sent);
  // The change shows with the request, with no click: the old line and the new one.
  await card.locator(".diff-lines .line.removed", { hasText: "PORT = 8000" }).waitFor({ timeout: 10_000 });
  await card.locator(".diff-lines .line.added", { hasText: "PORT = 9000" }).waitFor({ timeout: 10_000 });
  // The new card took the keyboard focus from the (empty) message box.
  await chat().locator('.permission[data-state="pending"]:focus').waitFor({ timeout: 10_000 });
  await readmeShot("permission-with-diff");
  // Keys pressed right as a card takes the focus are ignored (they were meant for the
  // message box): wait out that short grace before using the card's keys.
  await page.waitForTimeout(600);
  // Review before allowing, from the keyboard (v): the proposed change opens in VS Code's
  // diff editor, and the user edits the proposed side before allowing it.
  await page.keyboard.press("v");
  const proposedLine = page.locator(".monaco-diff-editor .modified .view-line", { hasText: "PORT = 9000" });
  await proposedLine.waitFor({ timeout: 20_000 });
  const reviewTab = page.locator(".tab", { hasText: "review" });
  await reviewTab.waitFor({ timeout: 10_000 });
  await chat().locator("#context-label", { hasText: "app.py" }).waitFor({ timeout: 10_000 });
  await proposedLine.click();
  await page.keyboard.press("End");
  await page.keyboard.press("Backspace");
  await page.keyboard.type("1");
  await page.locator(".monaco-diff-editor .modified .view-line", { hasText: "PORT = 9001" }).waitFor({ timeout: 10_000 });
  await shot("02-permission-review");
  // Back on the card, y allows (what the user revised in the review).
  await card.locator(".card-head .title").click();
  await chat().locator('.permission[data-state="pending"]:focus').waitFor({ timeout: 10_000 });
  await page.keyboard.press("y");
  // The answered request's review closes by itself, and the card says what was picked.
  await reviewTab.waitFor({ state: "detached", timeout: 20_000 });
  // The answered card folds into its tool call's card, which says the answer in words.
  const answered = chat().locator(".tool .tool-card summary .answer").first();
  await answered.waitFor({ timeout: 20_000 });
  if ((await answered.textContent()) !== "Allowed once") throw new Error(`the tool card says ${await answered.textContent()}`);
  // The second edit, from the keyboard: its one change reverted at the cursor, then Accept.
  await chat().locator('.permission[data-state="pending"] button[data-action="review"]').click();
  const agentLine = page.locator(".monaco-diff-editor .modified .view-line", { hasText: "HOST = 'agent'" });
  await agentLine.waitFor({ timeout: 20_000 });
  await agentLine.click();
  await page.keyboard.press("Control+Alt+z");
  await agentLine.waitFor({ state: "detached", timeout: 10_000 });
  await shot("03-hunk-reverted");
  await page.keyboard.press("Control+Enter");
  await reviewTab.waitFor({ state: "detached", timeout: 20_000 });
  await chat().locator(".assistant .markdown", { hasText: "Changed the port to 9000." }).waitFor({ timeout: 60_000 });
  mark("final_text", sent);
  await page.locator(".tab.dirty").first().waitFor({ state: "detached", timeout: 20_000 });
  await chat().locator(".summary .changed-file", { hasText: "app.py" }).waitFor({ timeout: 20_000 });
  // The second edit, allowed with its one change reverted, reads as rejected.
  await chat().locator('.tool[data-status="declined"] .answer', { hasText: "Rejected in review" }).waitFor({ timeout: 10_000 });
  if (await chat().locator(".permission:not([hidden])").count()) throw new Error("an answered request still shows its own card");
  await readmeShot("finished-turn");
});

await step("disk", async () => {
  const text = readFileSync(path.join(workspace, "app.py"), "utf8");
  // The port as the user revised it in review; the host edit reverted in review.
  if (text !== "PORT = 9001\nHOST = 'unsaved'\n") throw new Error(`app.py on disk: ${JSON.stringify(text)}`);
});

await step("transcript", async () => {
  const sessions = path.join(home, "sessions");
  const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
  if (files.length !== 1) throw new Error(`transcripts: ${files.join(", ")}`);
  const records = readFileSync(path.join(sessions, files[0]), "utf8").trim().split("\n").map((l) => JSON.parse(l));
  const results = JSON.stringify(records.filter((r) => r.type === "message" || r.kind === "message"));
  // The Read ran on the buffer: it saw the unsaved line.
  if (!results.includes("HOST = 'unsaved'")) throw new Error("the Read did not see the unsaved text");
  // The @-completed file went with the message as an attachment.
  if (!results.includes('<attachment path=\\"app.py\\"')) throw new Error("app.py was not attached");
  // The model was told how the applied edit differs from its proposal, and that the
  // second was rejected in review.
  if (!results.includes("applied it with revisions")) throw new Error("no revision note in the Edit's result");
  if (!results.includes("+PORT = 9001")) throw new Error("the revision note lacks the user's line");
  if (!results.includes("rejected all of it")) throw new Error("the reverted edit was not declined");
});

await step("undo", async () => {
  // The turn's summary: review its one change (kept), then undo it from the summary.
  const summary = chat().locator(".summary .changed-file", { hasText: "app.py" });
  await summary.waitFor({ timeout: 10_000 });
  await chat().locator('.summary button[data-action="review-turn"]').click();
  await page.locator(".tab", { hasText: "change 1 of 1" }).waitFor({ timeout: 20_000 });
  const keep = page.locator(".notification-toast .monaco-button", { hasText: "Keep" });
  await keep.waitFor({ timeout: 20_000 });
  await shot("05-review-turn");
  await keep.click();
  await summary.locator("button", { hasText: "Undo" }).click();
  await summary.locator(".undone").waitFor({ timeout: 20_000 });
  const text = readFileSync(path.join(workspace, "app.py"), "utf8");
  if (text !== "PORT = 8000\nHOST = 'unsaved'\n") throw new Error(`app.py after undo: ${JSON.stringify(text)}`);
  await page.locator(".tab.dirty").first().waitFor({ state: "detached", timeout: 20_000 });
});

// A 1x1 PNG, pasted into the message box as a screenshot is.
const PIXEL = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==";

await step("stop", async () => {
  await chat().locator("#input").evaluate((box, base64) => {
    const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
    const data = new DataTransfer();
    data.items.add(new File([bytes], "image.png", { type: "image/png" }));
    box.dispatchEvent(new ClipboardEvent("paste", { clipboardData: data, bubbles: true, cancelable: true }));
  }, PIXEL);
  await chat().locator('.chip[data-label="pasted image 1.png"]').waitFor({ timeout: 10_000 });
  await chat().locator("#input").fill("Tell me a long story.");
  await chat().locator("#input").press("Enter");
  await chat().locator('.assistant[data-streaming="true"]').waitFor({ timeout: 30_000 });
  await chat().locator("#stop").click();
  await chat().locator(".turnEnd[data-stop-reason=\"aborted\"]", { hasText: "Stopped." }).waitFor({ timeout: 20_000 });
  await shot("06-stopped");
  // The next message told the model about the undo.
  const transcript = readdirSync(path.join(home, "sessions")).find((f) => f.endsWith(".jsonl"));
  const records = readFileSync(path.join(home, "sessions", transcript), "utf8");
  if (!records.includes("<userAction>The user undid your change to app.py")) throw new Error("the model was not told of the undo");
  // The pasted image went with the message, named, as an image block.
  if (!records.includes('<attachment name=\\"pasted image 1.png\\" image=\\"png 1x1\\"/>')) throw new Error("the pasted image is not in the message");
});

await step("switch", async () => {
  // A new chat keeps the first one open: History switches back to it as it stands.
  await chat().locator("#new-session").click();
  await chat().locator(".item").first().waitFor({ state: "detached", timeout: 20_000 });
  await chat().locator("#history").click();
  const open = page.locator(".quick-input-list .monaco-list-row", { hasText: "Change the port to 9000" });
  await open.first().waitFor({ timeout: 20_000 });
  if (!(await open.first().textContent()).includes("open")) throw new Error("the first chat is not listed as open");
  await open.first().click();
  await chat().locator(".assistant .markdown", { hasText: "Changed the port to 9000." }).waitFor({ timeout: 20_000 });
  await chat().locator(".summary .changed-file .undone").waitFor({ timeout: 20_000 });
});

await step("resume", async () => {
  // Closed, it is resumed from the daemon's transcript.
  await command("agentls: Close Session");
  await chat().locator(".item").first().waitFor({ state: "detached", timeout: 20_000 });
  await chat().locator("#history").click();
  const row = page.locator(".quick-input-list .monaco-list-row", { hasText: "Change the port to 9000" });
  await row.first().waitFor({ timeout: 20_000 });
  await row.first().click();
  await chat().locator(".user .bubble", { hasText: "Change the port to 9000 in @app.py" }).waitFor({ timeout: 20_000 });
  await chat().locator(".assistant .markdown", { hasText: "Changed the port to 9000." }).waitFor({ timeout: 20_000 });
  await chat().locator('.tool[data-status="completed"]', { hasText: "Edit" }).first().waitFor({ timeout: 20_000 });
  await shot("07-resumed");
});

console.log(`timings ${JSON.stringify(timings)}`);
await browser.close();
