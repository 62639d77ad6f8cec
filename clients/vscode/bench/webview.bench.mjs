// How the real chat webview (dist/webview.js, media/panel.css) keeps up with a streamed
// answer, in Debian's Chromium through playwright-core: a 2,000-line answer (prose, lists
// and fenced code) as text_delta events at several rates, after a history of 200 items.
// Frames are timed with requestAnimationFrame; a frame over 1.5 × 16.7 ms counts as dropped.
// Prints numbers; run after `npm run build` (needs clients/vscode/e2e/setup.sh's packages).
//
//   node bench/webview.bench.mjs [--rates 200,1000,5000,max]

import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.join(here, "..");
const require = createRequire(path.join(root, "e2e", "package.json"));
const { chromium } = require("playwright-core");

const arg = (name, fallback) => (process.argv.includes(name) ? process.argv[process.argv.indexOf(name) + 1] : fallback);
const rates = arg("--rates", "200,1000,5000,max").split(",");

const LINES = 2000;
function answer() {
  const parts = [];
  for (let i = 0; parts.length < LINES; i++) {
    parts.push(`## Step ${i}`, "", `The function \`compute_${i}\` reads **each** value and checks its options.`, "");
    parts.push("- first, the input is parsed", "- then it is validated", "");
    parts.push("```python", `def compute_${i}(value, options):`, "    result = transform(value)", "    return result", "```", "");
  }
  return parts.slice(0, LINES - 1).join("\n") + "\n\nThe end of the answer.\n";
}

function events(text) {
  let seq = 0;
  const event = (e) => ({ sessionId: "s", seq: ++seq, ...e });
  const history = [];
  for (let i = 0; i < 100; i++) {
    history.push(event({ type: "text_delta", messageId: `old${i}`, text: `An earlier answer, number ${i}.` }));
    history.push(event({ type: "tool_call", toolCallId: `c${i}`, name: "Read", kind: "read", title: `Read file${i}.py`, input: {} }));
    history.push(event({ type: "tool_call_update", toolCallId: `c${i}`, status: "completed", content: "x = 1" }));
  }
  history.push(event({ type: "turn_started", turnId: "t", userMessageId: "u" }));
  const deltas = [];
  for (let at = 0; at < text.length; at += 20) deltas.push(event({ type: "text_delta", messageId: "long", text: text.slice(at, at + 20) }));
  return { history, deltas };
}

const page_html = (css, js) => `<!DOCTYPE html><html><head><style>${css}</style></head><body>
<main id="transcript"></main>
<section id="composer"><div id="queue"></div><div id="attachments"></div><div id="completions" hidden></div>
<div id="context"><label><input type="checkbox" id="include-context" checked> <span id="context-label"></span></label><span id="usage"></span></div>
<textarea id="input"></textarea><div id="actions"><span id="status"></span><button id="history"></button><button id="new-session"></button><button id="stop"></button><button id="send"></button></div></section>
<script>window.acquireVsCodeApi = () => ({ postMessage() {} });</script>
<script>${js}</script></body></html>`;

const css = readFileSync(path.join(root, "media", "panel.css"), "utf8");
const js = readFileSync(path.join(root, "dist", "webview.js"), "utf8");
const text = answer();
const { history, deltas } = events(text);

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
  headless: true,
  args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
});
console.log(`webview: ${deltas.length} text_delta events (${LINES} lines, ${text.length.toLocaleString("en")} chars) after 200 items, Chromium ${browser.version()}`);
for (const rate of rates) {
  const page = await browser.newPage({ viewport: { width: 420, height: 900 } });
  await page.setContent(page_html(css, js));
  const result = await page.evaluate(
    async ({ history, deltas, rate }) => {
      const send = (action) => window.dispatchEvent(new MessageEvent("message", { data: { type: "action", action } }));
      send({ type: "session", sessionId: "s" });
      for (const event of history) send({ type: "event", event });
      await new Promise((resolve) => setTimeout(resolve, 200));
      const frames = [];
      let last = performance.now();
      let running = true;
      const tick = (now) => {
        frames.push(now - last);
        last = now;
        if (running) requestAnimationFrame(tick);
      };
      requestAnimationFrame(tick);
      const started = performance.now();
      const perMs = rate === "max" ? Infinity : Number(rate) / 1000;
      let sent = 0;
      while (sent < deltas.length) {
        // Send what is due by now, then yield so frames can run, as postMessage does.
        const due = perMs === Infinity ? sent + 200 : Math.floor((performance.now() - started) * perMs) + 1;
        for (; sent < Math.min(due, deltas.length); sent++) send({ type: "event", event: deltas[sent] });
        await new Promise((resolve) => setTimeout(resolve, 0));
      }
      const sentIn = performance.now() - started;
      // Until the last delta is on screen.
      await new Promise((resolve) => {
        const check = () => {
          const shown = document.querySelector('[data-id="long"] .markdown')?.textContent ?? "";
          if (shown.includes("The end of the answer.")) resolve();
          else requestAnimationFrame(check);
        };
        check();
      });
      await new Promise((resolve) => requestAnimationFrame(() => requestAnimationFrame(resolve)));
      running = false;
      const total = performance.now() - started;
      const measured = frames.slice(1);
      const dropped = measured.filter((f) => f > 25).length;
      const longest = Math.max(...measured);
      const sorted = [...measured].sort((a, b) => a - b);
      const p95 = sorted[Math.floor(sorted.length * 0.95)] ?? 0;
      return { sentIn, total, frames: measured.length, dropped, longest, p95 };
    },
    { history, deltas, rate },
  );
  const shown = await page.locator('[data-id="long"] .markdown').textContent();
  if (!shown.includes("The end of the answer.") || (await page.locator('[data-id="long"] pre').count()) < 150) {
    throw new Error("the answer was not rendered whole");
  }
  const achieved = Math.round(deltas.length / (result.total / 1000));
  console.log(
    `  rate ${rate.padStart(5)} ev/s: ${(result.total / 1000).toFixed(2)} s to the last delta on screen (${achieved.toLocaleString("en")} ev/s), ` +
      `${result.frames} frames, ${result.dropped} over 25 ms (${((result.dropped / Math.max(1, result.frames)) * 100).toFixed(1)}%), ` +
      `p95 ${result.p95.toFixed(1)} ms, longest ${result.longest.toFixed(1)} ms`,
  );
  await page.close();
}
await browser.close();
