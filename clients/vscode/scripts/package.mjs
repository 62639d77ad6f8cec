// `npm run package`: the one command that builds agentls.vsix from a checkout, the one the
// README gives and the end-to-end tests run. It bundles the extension, puts the daemon of
// this checkout (for the Python in $PYTHON, else python3) into bundled/, and packages
// with the vsce pinned in devDependencies and the flags that let it finish:
//   --no-dependencies: the extension is one esbuild bundle, so vsce need not walk
//     node_modules; --allow-package-all-secrets: no secret scan of the bundled daemon's
//     Python packages. (Without these two, vsce ran at full CPU for over 5 minutes and
//     was killed with no .vsix: issue 26.) --allow-missing-repository and
//     --no-rewrite-relative-links: no published home yet, so the README's screenshots
//     (docs/, packaged too) keep their relative links.
//
//   npm run package [-- --out FILE.vsix] [-- --python 3.11,3.12,3.13,3.14]

import { execFileSync } from "node:child_process";
import path from "node:path";

const MIN_NODE = 22;
const here = path.resolve(import.meta.dirname, "..");
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};

const major = Number(process.versions.node.split(".")[0]);
if (major < MIN_NODE) {
  console.error(
    `agentls: packaging needs Node >= ${MIN_NODE} (@vscode/vsce requires it); this is Node ${process.versions.node}.\n` +
      `Get one with nvm (nvm install ${MIN_NODE}; https://github.com/nvm-sh/nvm), fnm, or from https://nodejs.org,\n` +
      "then run `npm ci && npm run package` again.",
  );
  process.exit(1);
}

const out = path.resolve(option("--out") ?? path.join(here, "agentls.vsix"));
const run = (file, args) => execFileSync(file, args, { cwd: here, stdio: "inherit" });
const started = Date.now();
run(process.execPath, ["scripts/build.mjs"]);
const pythons = option("--python");
run(process.execPath, ["scripts/bundle-daemon.mjs", ...(pythons ? ["--python", pythons] : [])]);
const vsce = path.join(here, "node_modules", "@vscode", "vsce", "vsce");
run(process.execPath, [
  vsce,
  "package",
  "--allow-missing-repository",
  "--no-rewrite-relative-links",
  "--no-dependencies",
  "--allow-package-all-secrets",
  "-o",
  out,
]);
console.log(`agentls: built ${out} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
