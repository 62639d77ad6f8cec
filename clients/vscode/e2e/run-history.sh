#!/usr/bin/env bash
# History's Delete in code-server, driven by drive-history.mjs: three chats with the
# scripted model, one deleted from History's trash button, the shown one deleted too.
#   e2e/run-history.sh VSIX WORK_DIR
# e2e/setup.sh installs what it runs. Everything the run writes stays under WORK_DIR;
# code-server runs in its own process group, killed on every exit path.
set -euo pipefail
source "$(dirname "$0")/code-server.sh"
prepare_work "$1" "$2"
# One reply per model call, whether a session plays the script from its start or goes on.
for _ in 1 2 3 4 5 6; do printf '{"text": "Noted."}\n'; done > "$work/script.jsonl"
write_settings '"security.workspace.trust.enabled": false,
  "agentls.provider": "scripted",
  "agentls.script": "'"$work/script.jsonl"'"'
boot_code_server --disable-workspace-trust
node "$here/drive-history.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --home "$AGENTLS_HOME"
