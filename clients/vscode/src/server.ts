// Where the daemon comes from: `agentls.serverPath`, else the daemon bundled in the
// extension (`bundled/libs`) run by a Python >= 3.11 (what the daemon needs) that is found, never pip-installed.

import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import * as path from "node:path";
import { promisify } from "node:util";
import * as vscode from "vscode";

import { DAEMON_ARGS } from "./launch";
import { readSettings } from "./settings";

const run = promisify(execFile);
const MIN_PYTHON: [number, number] = [3, 11];

export interface ServerCommand {
  command: string;
  args: string[];
  env: Record<string, string>;
}

export class ServerNotFound extends Error {}

export async function serverCommand(extensionPath: string): Promise<ServerCommand> {
  const settings = readSettings();
  if (settings.serverPath) {
    return { command: settings.serverPath, args: settings.serverArgs, env: {} };
  }
  const bundled = path.join(extensionPath, "bundled");
  const built = bundledPythons(bundled);
  const [python, version] = await findPython(settings.pythonPath, built);
  const env: Record<string, string> = { PYTHONNOUSERSITE: "1" };
  if (built !== null) {
    const bin = path.join(bundled, "bin", `cp${version.join("")}`);
    env.PYTHONPATH = [bin, path.join(bundled, "libs")].join(path.delimiter);
  }
  return { command: python, args: [...DAEMON_ARGS], env };
}

/** The Python versions the bundled daemon was built for; null when none is bundled. */
function bundledPythons(bundled: string): string[] | null {
  const manifest = path.join(bundled, "manifest.json");
  if (!existsSync(manifest)) return null;
  const parsed = JSON.parse(readFileSync(manifest, "utf8")) as { pythons?: string[] };
  return parsed.pythons ?? [];
}

async function findPython(configured: string, built: string[] | null): Promise<[string, [number, number]]> {
  const versioned = (built ?? []).map((v) => `python${v}`);
  const candidates = [configured, await pythonExtensionInterpreter(), "python3", ...versioned, "python"].filter(
    (c): c is string => Boolean(c),
  );
  const tried: string[] = [];
  for (const candidate of candidates) {
    const version = await pythonVersion(candidate);
    const fits =
      version !== null &&
      (version[0] > MIN_PYTHON[0] || (version[0] === MIN_PYTHON[0] && version[1] >= MIN_PYTHON[1])) &&
      (built === null || built.includes(version.join(".")));
    if (version !== null && fits) return [candidate, version];
    tried.push(version ? `${candidate} (${version.join(".")})` : `${candidate} (not found)`);
  }
  const wanted = built ? built.join(", ") : `${MIN_PYTHON.join(".")} or newer`;
  throw new ServerNotFound(
    `agentls needs Python ${wanted} to run its bundled daemon. Tried: ${tried.join(", ")}. ` +
      "Install one, pick it with 'Python: Select Interpreter' or agentls.pythonPath, " +
      "or set agentls.serverPath to an agentls you installed from a checkout (pipx install /path/to/agentls).",
  );
}

async function pythonVersion(python: string): Promise<[number, number] | null> {
  try {
    const { stdout } = await run(python, ["-c", "import sys; print(*sys.version_info[:2])"], { timeout: 5000 });
    const [major, minor] = stdout.trim().split(" ").map(Number);
    return major !== undefined && minor !== undefined ? [major, minor] : null;
  } catch {
    return null;
  }
}

interface PythonExtensionApi {
  environments?: { getActiveEnvironmentPath(): { path: string } };
}

async function pythonExtensionInterpreter(): Promise<string | undefined> {
  const extension = vscode.extensions.getExtension<PythonExtensionApi>("ms-python.python");
  if (!extension) return undefined;
  try {
    const api = extension.isActive ? extension.exports : await extension.activate();
    return api.environments?.getActiveEnvironmentPath().path;
  } catch {
    return undefined;
  }
}
