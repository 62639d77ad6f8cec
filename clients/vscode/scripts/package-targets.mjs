// One .vsix per VS Code platform target, each carrying the daemon's compiled packages
// (pydantic-core, jiter, rpds-py) built for that platform and for Python 3.11-3.14, so the
// Marketplace serves every user the right one. Pure-Python packages are the same in all.
//
//   node scripts/package-targets.mjs [--targets linux-x64,darwin-arm64] [--out dist-vsix]
//
// Needs Node >= 22 for vsce (pinned in devDependencies; clients/vscode/e2e/setup.sh installs Node 24).

import { execFileSync } from "node:child_process";
import { mkdirSync, statSync } from "node:fs";
import path from "node:path";

const here = path.resolve(import.meta.dirname, "..");
// VS Code's target names, and the wheel platform tags pip should fetch for each.
const PLATFORMS = {
  "linux-x64": ["manylinux2014_x86_64", "manylinux_2_17_x86_64"],
  "linux-arm64": ["manylinux2014_aarch64", "manylinux_2_17_aarch64"],
  "alpine-x64": ["musllinux_1_1_x86_64", "musllinux_1_2_x86_64"],
  "darwin-x64": ["macosx_10_12_x86_64"],
  "darwin-arm64": ["macosx_11_0_arm64"],
  "win32-x64": ["win_amd64"],
  "win32-arm64": ["win_arm64"],
};
const option = (name, fallback) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : fallback;
};
const targets = option("--targets", Object.keys(PLATFORMS).join(",")).split(",");
const out = path.resolve(here, option("--out", "dist-vsix"));
const pythons = option("--python", "3.11,3.12,3.13,3.14");
const vsce = option("--vsce", path.join(here, "node_modules", ".bin", "vsce"));
const run = (command, args) => execFileSync(command, args, { cwd: here, stdio: "inherit" });

mkdirSync(out, { recursive: true });
run("node", ["scripts/build.mjs"]);
for (const target of targets) {
  const tags = PLATFORMS[target];
  if (!tags) throw new Error(`unknown target ${target}; known: ${Object.keys(PLATFORMS).join(", ")}`);
  run("node", ["scripts/bundle-daemon.mjs", "--python", pythons, ...tags.flatMap((tag) => ["--platform", tag])]);
  const vsix = path.join(out, `agentls-${target}.vsix`);
  run(vsce, ["package", "--target", target, "--allow-missing-repository", "--no-rewrite-relative-links", "--no-dependencies", "--allow-package-all-secrets", "-o", vsix]);
  console.log(`${target}: ${(statSync(vsix).size / 1_048_576).toFixed(1)} MB`);
}
