// Put the daemon and its Python dependencies into bundled/, so the .vsix needs nothing
// else installed: pure-Python packages in bundled/libs, and the few compiled ones
// (pydantic-core, jiter, rpds-py) in bundled/bin/cp3XX for each Python version asked for.
// The extension puts bundled/bin/cp3XX (for the Python it found) and bundled/libs on
// PYTHONPATH. Never run on activation: it runs at build time.
//
//   node scripts/bundle-daemon.mjs [--python 3.11,3.12,3.13,3.14] [--platform manylinux2014_x86_64 ...]

import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "..", "..", "..");
const bundled = path.resolve(import.meta.dirname, "..", "bundled");
const option = (name) => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? process.argv[at + 1] : undefined;
};
const python = process.env.PYTHON ?? "python3";
const pip = (...args) => execFileSync(python, ["-m", "pip", "--disable-pip-version-check", "-q", ...args], { stdio: "inherit" });
const own = execFileSync(python, ["-c", "import sys; print(f'{sys.version_info[0]}.{sys.version_info[1]}')"]).toString().trim();
const versions = (option("--python") ?? own).split(",");
// Wheel platform tags to fetch the compiled packages for (repeatable); none: this machine's.
const platforms = process.argv.flatMap((arg, i) => (arg === "--platform" ? [process.argv[i + 1]] : []));

rmSync(bundled, { recursive: true, force: true });
const libs = path.join(bundled, "libs");
const staging = mkdtempSync(path.join(tmpdir(), "agentls-bundle-"));
pip("install", "--target", staging, "--no-compile", root);

// A distribution with compiled modules goes to bin/<tag>; everything else is shared. Its
// RECORD lists its files, so their first path parts are its top-level entries.
const compiled = new Map(); // distribution name -> version
const binaryTops = new Set();
for (const entry of readdirSync(staging)) {
  const match = /^(.+)-([^-]+)\.dist-info$/.exec(entry);
  if (!match) continue;
  const files = readFileSync(path.join(staging, entry, "RECORD"), "utf8").split("\n").map((line) => line.split(",")[0]);
  if (!files.some((file) => /\.(so|pyd)$/.test(file))) continue;
  compiled.set(match[1].replaceAll("_", "-"), match[2]);
  for (const file of files) if (file && !file.startsWith("..")) binaryTops.add(file.split("/")[0]);
}
mkdirSync(libs, { recursive: true });
for (const entry of readdirSync(staging)) {
  if (!binaryTops.has(entry) && entry !== "bin") cpSync(path.join(staging, entry), path.join(libs, entry), { recursive: true });
}
// Packages whose version another package pins exactly (pydantic pins pydantic-core).
const EXACT = new Set(["pydantic-core"]);
const skipped = [];
for (const version of versions) {
  const tag = `cp${version.replace(".", "")}`;
  const target = path.join(bundled, "bin", tag);
  mkdirSync(target, { recursive: true });
  if (version === own && !platforms.length) {
    for (const entry of binaryTops) cpSync(path.join(staging, entry), path.join(target, entry), { recursive: true });
    continue;
  }
  const where = ["--only-binary", ":all:", "--python-version", version, "--implementation", "cp", "--no-deps"];
  const install = (spec) => pip("install", "--target", target, ...where, ...platforms.flatMap((tag) => ["--platform", tag]), spec);
  for (const [name, pinned] of compiled) {
    try {
      install(`${name}==${pinned}`);
    } catch {
      // No wheel of that release for this Python (a release that dropped an old Python). A package
      // that another pins exactly cannot be swapped: this Python is left out instead.
      if (EXACT.has(name)) {
        console.log(`${name}==${pinned} has no wheel for Python ${version}: left out`);
        rmSync(target, { recursive: true, force: true });
        skipped.push(version);
        break;
      }
      console.log(`${name}==${pinned} has no wheel for Python ${version}; taking the newest that has`);
      install(name);
    }
  }
}
const manifest = { pythons: versions.filter((v) => !skipped.includes(v)), platforms: platforms.length ? platforms : ["this machine's"], compiled: Object.fromEntries(compiled) };
writeFileSync(path.join(bundled, "manifest.json"), JSON.stringify(manifest, null, 2) + "\n");
rmSync(staging, { recursive: true, force: true });
console.log(`bundled the daemon for Python ${manifest.pythons.join(", ")}${existsSync(libs) ? "" : " (no libs?)"}`);
