// The typed settings: defaults, parsing of agentls.server.connect, and what the daemon
// receives in initializationOptions.

import assert from "node:assert/strict";
import { test } from "node:test";

import { type SettingSource, initializationOptions, settingsFrom } from "../src/settingValues";

/** A configuration holding `values`; any other key reads as its default. */
function source(values: Record<string, unknown>): SettingSource {
  return <T>(key: string, fallback: T): T => (key in values ? (values[key] as T) : fallback);
}

test("unset settings read as package.json's defaults", () => {
  assert.deepEqual(settingsFrom(source({})), {
    provider: "",
    model: "",
    baseUrl: "",
    permissionMode: "default",
    serverPath: "",
    serverArgs: [],
    pythonPath: "",
    connect: "spawn",
    saveEdits: true,
    script: "",
    openaiApi: "",
  });
});

test("server.connect is parsed once: blank spawns, a path names a discovery file", () => {
  assert.equal(settingsFrom(source({ "server.connect": "" })).connect, "spawn");
  assert.equal(settingsFrom(source({ "server.connect": " discover " })).connect, "discover");
  assert.deepEqual(settingsFrom(source({ "server.connect": "/run/a/tcp-7.json" })).connect, { file: "/run/a/tcp-7.json" });
});

test("initializationOptions sends only what is set, the base URL under its provider's name", () => {
  assert.deepEqual(initializationOptions(settingsFrom(source({}))), { permissionMode: "default" });
  const anthropic = settingsFrom(source({ provider: "anthropic", baseUrl: "http://a", model: "m", permissionMode: "plan" }));
  assert.deepEqual(initializationOptions(anthropic), { permissionMode: "plan", provider: "anthropic", model: "m", anthropicBaseUrl: "http://a" });
  const compatible = settingsFrom(source({ provider: "openai", baseUrl: "http://o/v1", script: "s.jsonl" }));
  assert.deepEqual(initializationOptions(compatible), { permissionMode: "default", provider: "openai", script: "s.jsonl", openaiBaseUrl: "http://o/v1" });
  // No provider named: the base URL is an OpenAI-compatible server's.
  assert.deepEqual(initializationOptions(settingsFrom(source({ baseUrl: "http://x/v1" }))), { permissionMode: "default", openaiBaseUrl: "http://x/v1" });
});

test("openaiApi goes to the daemon only when chosen", () => {
  assert.equal("openaiApi" in initializationOptions(settingsFrom(source({}))), false);
  assert.equal(initializationOptions(settingsFrom(source({ provider: "openai", openaiApi: "responses" }))).openaiApi, "responses");
});
