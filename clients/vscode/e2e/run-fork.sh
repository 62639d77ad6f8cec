#!/usr/bin/env bash
# Changes and Edit & resend on the panel's user messages, in the packaged extension in
# code-server, driven by drive-fork.mjs. The workspace is a git work tree (how the daemon
# sees what a shell command changed); the scripted model's first turn edits app.py and runs
# a Bash command (allowed by a click on its permission card) that makes made-by-bash.txt.
#   e2e/run-fork.sh VSIX WORK_DIR
# e2e/setup.sh installs what it runs. Everything the run writes stays under WORK_DIR;
# code-server runs in its own process group, killed on every exit path.
set -euo pipefail
source "$(dirname "$0")/code-server.sh"
prepare_work "$1" "$2"
git_in_ws() { env -u GIT_DIR -u GIT_WORK_TREE -u GIT_INDEX_FILE git -C "$ws" -c user.name=Test -c user.email=test@example.com "$@"; }
git_in_ws init -q -b main && git_in_ws add -A && git_in_ws commit -q -m start
# Each entry answers the request whose user text holds its "for" (the first unplayed one
# in file order): the fork's message is first, so a fork replaying the script from its
# start still gets its own answer rather than turn 1's tool calls.
cat > "$work/script.jsonl" <<'JSONL'
{"for": "List the files instead", "text": "Resent: app.py and made-by-bash.txt."}
{"for": "What did you make", "text": "I made made-by-bash.txt and changed the port."}
{"for": "Make the files", "tool_calls": [{"id": "r1", "name": "Read", "input": {"file_path": "app.py"}}]}
{"for": "Make the files", "tool_calls": [{"id": "e1", "name": "Edit", "input": {"file_path": "app.py", "old_string": "PORT = 8000", "new_string": "PORT = 9000"}}, {"id": "b1", "name": "Bash", "input": {"command": "printf x > made-by-bash.txt"}}]}
{"for": "Make the files", "text": "Changed the port and made made-by-bash.txt."}
JSONL
write_settings '"security.workspace.trust.enabled": false,
  "agentls.provider": "scripted",
  "agentls.script": "'"$work/script.jsonl"'",
  "agentls.permissionMode": "acceptEdits"'
boot_code_server --disable-workspace-trust
node "$here/drive-fork.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --home "$AGENTLS_HOME"
