// What both drivers share: Debian's Chromium through playwright-core, a step runner that
// keeps a screenshot of the step that failed, the command palette, and the chat webview.

import path from "node:path";
import { chromium } from "playwright-core";

export const arg = (name) => process.argv[process.argv.indexOf(name) + 1];

/** A browser page and the helpers the drivers use on it; screenshots go to `artifacts`. */
export async function openWorkbench(artifacts) {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM ?? "/usr/bin/chromium",
    headless: true,
    args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--disable-background-networking",
      "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-dev-shm-usage"],
  });
  const page = await browser.newPage({ viewport: { width: 1500, height: 950 } });
  const shot = (name) => page.screenshot({ path: path.join(artifacts, `${name}.png`) });
  const step = async (name, action) => {
    try {
      await action();
      console.log(`ok ${name}`);
    } catch (error) {
      await shot(`failed-${name}`).catch(() => undefined);
      console.log(`FAILED ${name}: ${error.message}`);
      // What the window said by then: a toast gone from view is still in the list.
      const said = await page.locator(".notification-list-item-message").allTextContents().catch(() => []);
      for (const message of said) console.log(`notification: ${message}`);
      await browser.close();
      process.exit(1);
    }
  };
  const command = async (name) => {
    // A slow machine may list the extension's commands only once its extensions are
    // scanned: the palette is asked again for up to 90 s.
    const deadline = Date.now() + 90_000;
    for (;;) {
      await page.keyboard.press("F1");
      await page.locator(".quick-input-widget input").fill(`>${name}`);
      try {
        await page.locator(".quick-input-list .monaco-list-row", { hasText: name }).first().waitFor({ timeout: 15_000 });
        break;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await page.keyboard.press("Escape");
      }
    }
    await page.keyboard.press("Enter");
  };
  const chat = () => page.frameLocator("iframe.webview.ready").frameLocator("iframe#active-frame");
  return { browser, page, shot, step, command, chat };
}
