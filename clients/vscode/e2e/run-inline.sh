#!/usr/bin/env bash
# An inline edit in the packaged extension in code-server, driven by drive-inline.mjs:
# lines of values.py selected, "agentls: Edit Selection…", the scripted model's one Edit
# (two hunks) reviewed in the editor, one hunk accepted and one rejected, its second Edit
# reviewed next and accepted with Ctrl+Enter, then the turn
# rewound from the panel; a second one stopped with Escape during its review.
#   e2e/run-inline.sh VSIX WORK_DIR
# e2e/setup.sh installs what it runs. Everything the run writes stays under WORK_DIR;
# code-server runs in its own process group, killed on every exit path.
set -euo pipefail
source "$(dirname "$0")/code-server.sh"
prepare_work "$1" "$2"
for n in $(seq 1 12); do printf 'line%s = %s\n' "$n" "$n"; done > "$ws/values.py"
old=$(for n in $(seq 2 10); do printf 'line%s = %s\\n' "$n" "$n"; done)
new=${old/line2 = 2\\n/line2 = 20\\n}
new=${new/line10 = 10\\n/line10 = 100\\n}
# No Read first: the inline edit gives the model the file as read.
cat > "$work/script.jsonl" <<JSONL
{"tool_calls": [{"id": "e1", "name": "Edit", "input": {"file_path": "values.py", "old_string": "$old", "new_string": "$new"}}, {"id": "e1b", "name": "Edit", "input": {"file_path": "values.py", "old_string": "line12 = 12\\n", "new_string": "line12 = 120\\n"}}]}
{"text": "Bumped lines 2 and 10."}
{"tool_calls": [{"id": "e2", "name": "Edit", "input": {"file_path": "values.py", "old_string": "line5 = 5\\n", "new_string": "line5 = 50\\n"}}]}
{"text": "Made it 50."}
JSONL
write_settings '"security.workspace.trust.enabled": false,
  "agentls.provider": "scripted",
  "agentls.script": "'"$work/script.jsonl"'",
  "agentls.permissionMode": "acceptEdits"'
boot_code_server --disable-workspace-trust
node "$here/drive-inline.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --home "$AGENTLS_HOME"
