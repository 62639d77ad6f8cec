// Bundle the extension (Node, CommonJS, `vscode` external) and the webview (browser IIFE)
// with esbuild; `--tests` bundles the unit tests for `node --test` instead, and the join
// and reload checks that tests/test_client_vscode_tcp.py runs against a real daemon (not a *.test.js,
// so `node --test dist-test/` leaves it out).
import { build } from "esbuild";
import { copyFileSync, mkdirSync, readdirSync } from "node:fs";

const tests = process.argv.includes("--tests");
const common = { bundle: true, sourcemap: true, logLevel: "warning", target: "es2022" };

if (tests) {
  const entryPoints = readdirSync("test")
    .filter((f) => f.endsWith(".test.ts"))
    .map((f) => `test/${f}`);
  await build({ ...common, entryPoints, outdir: "dist-test", platform: "node", format: "cjs" });
  await build({ ...common, entryPoints: ["test/daemon/join.ts"], outfile: "dist-test/join-daemon.js", platform: "node", format: "cjs" });
  await build({ ...common, entryPoints: ["test/daemon/reload.ts"], outfile: "dist-test/reload-daemon.js", platform: "node", format: "cjs" });
  await build({ ...common, entryPoints: ["test/daemon/worktree.ts"], outfile: "dist-test/worktree-daemon.js", platform: "node", format: "cjs" });
  await build({ ...common, entryPoints: ["test/daemon/rewind.ts"], outfile: "dist-test/rewind-daemon.js", platform: "node", format: "cjs" });
  await build({ ...common, entryPoints: ["test/daemon/views.ts"], outfile: "dist-test/views-daemon.js", platform: "node", format: "cjs" });
} else {
  // The panel draws VS Code's own icons: the codicon font and its stylesheet, next to panel.css.
  mkdirSync("media/codicons", { recursive: true });
  for (const file of ["codicon.css", "codicon.ttf"]) copyFileSync(`node_modules/@vscode/codicons/dist/${file}`, `media/codicons/${file}`);
  await Promise.all([
    build({
      ...common,
      entryPoints: ["src/extension.ts"],
      outfile: "dist/extension.js",
      platform: "node",
      format: "cjs",
      external: ["vscode"],
      minify: true,
    }),
    build({
      ...common,
      entryPoints: ["src/webview/main.ts"],
      outfile: "dist/webview.js",
      platform: "browser",
      format: "iife",
      minify: true,
    }),
  ]);
}
