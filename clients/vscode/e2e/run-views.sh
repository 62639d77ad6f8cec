#!/usr/bin/env bash
# The sidebar's Permission Rules and MCP Servers views of the packaged extension in
# code-server, driven by drive-views.mjs. The user's settings configure the MCP fixture
# server (tests/mcp_fixture_server.py, run by PYTHON).
#   e2e/run-views.sh VSIX WORK_DIR PYTHON
# e2e/setup.sh installs what it runs. Everything the run writes stays under WORK_DIR;
# code-server runs in its own process group, killed on every exit path.
set -euo pipefail
source "$(dirname "$0")/code-server.sh"
prepare_work "$1" "$2"
fixture="$(cd "$here/../../.." && pwd)/tests/mcp_fixture_server.py"
printf '{"text": "Hello from the scripted model."}\n{"text": "Hello again."}\n' > "$work/script.jsonl"
printf '{"mcpServers": {"fx": {"command": "%s", "args": ["%s"]}}}\n' "$3" "$fixture" > "$AGENTLS_HOME/settings.json"
write_settings '"security.workspace.trust.enabled": false,
  "agentls.provider": "scripted",
  "agentls.script": "'"$work/script.jsonl"'"'
boot_code_server --disable-workspace-trust
node "$here/drive-views.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --home "$AGENTLS_HOME"
