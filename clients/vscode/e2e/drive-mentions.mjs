// A real VS Code (code-server) serving the daemon's navigation and the `@` menu: with
// main.ts open and its TypeScript loaded, the scripted model calls GoToDefinition,
// FindReferences and WorkspaceSymbols on `greet`; the editor answers through its own
// providers and the tool results in the daemon's transcript name the places it gave.
// Then `@` in the message box offers the problems of the active file, a folder (src/) and
// a symbol (greet, from the editor's workspace symbols); the two picked show as chips in
// the box and on the sent message, and the daemon's transcript shows the model got the
// folder's listing and the symbol's lines. Then "Problems in main.ts" is sent (the model
// gets TypeScript's error, fetched by the daemon from the editor), and in a new chat `@`
// offers the first chat by its title: the model gets its messages.
//
//   node drive-mentions.mjs --url URL --workspace DIR --artifacts DIR --home AGENTLS_HOME

import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { arg, openWorkbench } from "./workbench.mjs";

const url = arg("--url");
const workspace = arg("--workspace");
const artifacts = arg("--artifacts");
const home = arg("--home");

const { browser, page, shot, step, command, chat } = await openWorkbench(artifacts);

/** Every session's transcript, one after the other. */
function transcriptFile() {
  const sessions = path.join(home, "sessions");
  const files = readdirSync(sessions).filter((f) => f.endsWith(".jsonl"));
  return files.map((file) => readFileSync(path.join(sessions, file), "utf8")).join("");
}

/** The daemon's transcript, its JSON string escapes undone, so quotes read as written. */
function transcript() {
  return transcriptFile().replaceAll('\\"', '"');
}

function transcriptRecords() {
  return transcriptFile().trim().split("\n").map((line) => JSON.parse(line));
}

/** Milliseconds from typing to an offer drawn (a figure for the report, not a check). */
async function offeredAfter(typed, offer) {
  const start = Date.now();
  await typed();
  await offer.waitFor({ timeout: 60_000 });
  return Date.now() - start;
}

await step("workbench", async () => {
  await page.goto(`${url}/?folder=${encodeURIComponent(workspace)}`);
  await page.locator(".monaco-workbench").waitFor({ timeout: 90_000 });
});

await step("typescript loaded", async () => {
  // Quick Open main.ts; its deliberate error, underlined, says TypeScript has the project.
  await page.keyboard.press("Control+P");
  await page.locator(".quick-input-widget input").fill("main.ts");
  await page.locator(".quick-input-list .monaco-list-row", { hasText: "main.ts" }).first().waitFor({ timeout: 30_000 });
  await page.keyboard.press("Enter");
  await page.locator(".tab", { hasText: "main.ts" }).waitFor({ timeout: 30_000 });
  await page.locator(".monaco-editor .squiggly-error").first().waitFor({ timeout: 120_000 });
});

await step("definition", async () => {
  await command("agentls: Focus Chat");
  const input = chat().locator("#input");
  await input.waitFor({ timeout: 60_000 });
  await input.fill("Where is greet defined?");
  await input.press("Enter");
  await chat().locator(".assistant .markdown", { hasText: "greet is defined in src/util.ts." }).waitFor({ timeout: 90_000 });
  await shot("mentions-01-definition");
  // The editor's answer: `greet`'s name in src/util.ts, line 1, column 17 (1-based).
  const text = transcript();
  if (!text.includes("src/util.ts:1:17: export function greet")) {
    throw new Error(`no definition from the editor in the transcript: ${text.slice(-3000)}`);
  }
  // FindReferences and WorkspaceSymbols, answered the same way: the call in main.ts, the function.
  for (const expected of ["main.ts:3:13: console.log(greet(", /src\/util\.ts:1:\d+: function greet/]) {
    if (typeof expected === "string" ? !text.includes(expected) : !expected.test(text)) {
      throw new Error(`${String(expected)} is not in the transcript: ${text.slice(-3000)}`);
    }
  }
  // app.py: code-server has Python's grammar but nothing that checks Python, and says so
  // (`watched: false`), so the model is not told the file is clean.
  if (!text.includes("app.py: nothing in the editor checks this file")) {
    throw new Error(`the Diagnostics of app.py do not say it is unchecked: ${text.slice(-3000)}`);
  }
  // A figure for the report, not a check: the call's message to its result, as recorded.
  const records = transcriptRecords();
  const at = (part) => records.find((r) => r.type === "message" && r.message.content.some((b) => b.type === part))?.ts;
  // (the three calls run together; their results share one message)
  console.log(`figure: GoToDefinition, FindReferences, WorkspaceSymbols calls → results ${Math.round(1000 * (at("tool_result") - at("tool_use")))} ms`);
});

await step("problems offered", async () => {
  const input = chat().locator("#input");
  await input.click();
  await input.pressSequentially("@Prob");
  const offer = chat().locator(".completion", { hasText: "Problems in main.ts" });
  await offer.waitFor({ timeout: 30_000 });
  await offer.locator(".completion-tag", { hasText: "problems" }).waitFor({ timeout: 10_000 });
  await offer.locator(".completion-detail", { hasText: "1 error" }).waitFor({ timeout: 10_000 });
  await input.fill("");
});

await step("folder mention", async () => {
  const input = chat().locator("#input");
  const offer = chat().locator(".completion", { hasText: "src/" }).filter({ has: chat().locator(".completion-tag", { hasText: "folder" }) });
  const took = await offeredAfter(() => input.pressSequentially("Explain @sr"), offer);
  console.log(`figure: "Explain @sr" typed → folder offered ${took} ms`);
  await shot("mentions-02-folder-offered");
  await offer.click();
  await chat().locator("#attachments .chip.folder", { hasText: "src/" }).waitFor({ timeout: 10_000 });
  const value = await input.inputValue();
  if (value !== "Explain @src/ ") throw new Error(`the box holds ${JSON.stringify(value)}`);
});

await step("symbol mention", async () => {
  const input = chat().locator("#input");
  const offer = chat().locator(".completion", { hasText: "greet" }).filter({ has: chat().locator(".completion-tag", { hasText: "symbol" }) });
  const took = await offeredAfter(() => input.pressSequentially("and @greet"), offer.first());
  console.log(`figure: "and @greet" typed → symbol offered ${took} ms`);
  await offer.locator(".completion-detail", { hasText: "src/util.ts:1" }).first().waitFor({ timeout: 10_000 });
  await chat().locator("#completions").screenshot({ path: path.join(artifacts, "mention-menu.png") });
  await offer.first().click();
  await chat().locator("#attachments .chip.symbol", { hasText: "greet" }).waitFor({ timeout: 10_000 });
});

await step("sent with mentions", async () => {
  await chat().locator("#input").press("Enter");
  await chat().locator(".assistant .markdown", { hasText: "I see the folder and the symbol." }).waitFor({ timeout: 90_000 });
  const chips = chat().locator(".item.user").last().locator(".mentions .chip");
  await chips.first().waitFor({ timeout: 10_000 });
  const labels = await chips.allTextContents();
  // VS Code's TypeScript names a function with its parentheses.
  if (labels.join(", ") !== "src/, greet()") throw new Error(`the sent message shows ${labels.join(", ")}`);
  if (await chat().locator("#attachments .chip").count()) throw new Error("the box kept its chips after sending");
  await chat().locator(".item.user").last().screenshot({ path: path.join(artifacts, "sent-mentions.png") });
});

await step("daemon transcript", async () => {
  const records = transcript();
  // The folder (its listing) and the symbol (its file, the symbol's lines, its name) reached the model.
  if (!/<attachment path="src\/" listing="(?:git|walk)">\\nutil\.ts/.test(records)) throw new Error("the folder's listing is not in the message");
  if (!records.includes('<attachment path="src/util.ts" lines="1-3" name="greet()">')) throw new Error("the symbol is not in the message");
});

await step("problems sent", async () => {
  const input = chat().locator("#input");
  await input.pressSequentially("Fix @Prob");
  const offer = chat().locator(".completion", { hasText: "Problems in main.ts" });
  await offer.waitFor({ timeout: 30_000 });
  await offer.click();
  await chat().locator("#attachments .chip.problems", { hasText: "Problems in main.ts" }).waitFor({ timeout: 10_000 });
  await input.press("Enter");
  await chat().locator(".assistant .markdown", { hasText: "I see the problems." }).waitFor({ timeout: 90_000 });
  // The daemon asked the editor for main.ts's diagnostics: TypeScript's error, 1-based.
  const records = transcript();
  if (!/<attachment uri="agentls:diagnostics" path="main\.ts">[^<]*4:14 error: Type 'string' is not assignable/.test(records)) {
    throw new Error(`main.ts's problems are not in the message: ${records.slice(records.lastIndexOf("agentls:diagnostics") - 200).slice(0, 1200)}`);
  }
});

await step("session mention", async () => {
  await chat().locator("#new-session").click();
  await chat().locator(".item.user").first().waitFor({ state: "detached", timeout: 30_000 });
  const input = chat().locator("#input");
  await input.click();
  await input.pressSequentially("Go on from @Where");
  const offer = chat().locator(".completion", { hasText: "Where is greet defined?" }).filter({ has: chat().locator(".completion-tag", { hasText: "session" }) });
  await offer.waitFor({ timeout: 30_000 });
  await offer.click();
  await chat().locator("#attachments .chip.session", { hasText: "Where is greet defined?" }).waitFor({ timeout: 10_000 });
  await input.press("Enter");
  // The scripted model's script starts again in a new session: its first turn's answer.
  await chat().locator(".assistant .markdown", { hasText: "greet is defined in src/util.ts." }).waitFor({ timeout: 90_000 });
  const records = transcript();
  if (!/<attachment uri="agentls:session\/sess_[0-9a-f]+">[^<]*assistant: greet is defined in src\/util\.ts\./.test(records)) {
    throw new Error(`the first session is not in the message: ${records.slice(records.lastIndexOf("agentls:session") - 200).slice(0, 1200)}`);
  }
});

await browser.close();
