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
scenario=$3
source "$(dirname "$0")/code-server.sh"
prepare_work "$1" "$2"
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
write_settings "$agent_settings"
boot_code_server "${trust[@]}"
node "$here/drive-first-run.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" \
  --scenario "$scenario" --pgid "$pgid" --model-url "${4:-}"
