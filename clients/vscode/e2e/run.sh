#!/usr/bin/env bash
# One end-to-end run of the packaged extension in code-server, driven by drive.mjs.
#   e2e/run.sh VSIX WORK_DIR
# or, with a running `agentls --tcp` whose discovery file is in $XDG_RUNTIME_DIR, by
# drive-join.mjs: the window joins it (agentls.server.connect "discover").
#   e2e/run.sh VSIX WORK_DIR join FORGED_DISCOVERY_FILE DAEMON_AGENTLS_HOME
# or, joined the same way, by drive-reload.mjs: Reload Window while a turn waits on a permission.
#   e2e/run.sh VSIX WORK_DIR reload DAEMON_AGENTLS_HOME
# or, in plan mode, by drive-plan.mjs: a plan approved from its card, then / completion,
# /context and an apply_patch reviewed file by file.
#   e2e/run.sh VSIX WORK_DIR plan
# or by drive-mentions.mjs: GoToDefinition answered by the editor's TypeScript, then `@`
# mentions (a folder and a symbol, the active file's problems, another session) sent.
#   e2e/run.sh VSIX WORK_DIR mentions
# e2e/setup.sh installs what it runs: Node 24, code-server and playwright-core. Everything the run writes stays under WORK_DIR; code-server runs
# in its own process group, killed on every exit path.
set -euo pipefail
mode=${3:-spawn}; connect=spawn
[ "$mode" = join ] || [ "$mode" = reload ] && connect=discover
source "$(dirname "$0")/code-server.sh"
prepare_work "$1" "$2"
cat > "$work/script.jsonl" <<'JSONL'
{"text": "Reading it.", "tool_calls": [{"id": "t1", "name": "Read", "input": {"file_path": "app.py"}}]}
{"tool_calls": [{"id": "t2", "name": "Edit", "input": {"file_path": "app.py", "old_string": "PORT = 8000", "new_string": "PORT = 9000"}}]}
{"tool_calls": [{"id": "t3", "name": "Edit", "input": {"file_path": "app.py", "old_string": "HOST = 'unsaved'", "new_string": "HOST = 'agent'"}}]}
{"text": "Changed the port to 9000."}
{"text": "Once upon a time, a very long story began, and it went on and on for a long while.", "delay": 0.5, "chunk": 4}
JSONL
if [ "$mode" = reload ]; then
  cat > "$work/script.jsonl" <<JSONL
{"text": "Writing it.", "tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": "$ws/hello.txt", "content": "hi\\n"}}]}
{"text": "Done."}
JSONL
fi
mode_setting=default
if [ "$mode" = plan ]; then
  mode_setting=plan
  cat > "$work/script.jsonl" <<JSONL
{"text": "Here is my plan.", "tool_calls": [{"id": "p1", "name": "ExitPlanMode", "input": {"plan": "# Greeting plan\n\n1. Write a file."}}]}
{"text": "Revised.", "tool_calls": [{"id": "p2", "name": "ExitPlanMode", "input": {"plan": "# Greeting plan, second draft\n\n1. Write \`hello.txt\` with a greeting.\n2. Say it is done."}}]}
{"tool_calls": [{"id": "w1", "name": "Write", "input": {"file_path": "$ws/hello.txt", "content": "hello from the plan\n"}}]}
{"text": "Done: hello.txt is written."}
{"tool_calls": [{"id": "ap1", "name": "apply_patch", "input": {"input": "*** Begin Patch\n*** Update File: app.py\n@@\n-PORT = 8000\n+PORT = 9000\n*** Add File: docs/new.md\n+# New\n*** End Patch"}}]}
{"text": "Patched."}
JSONL
  # The scripted model gets apply_patch (by default only OpenAI's models do).
  printf '{"applyPatchTool": true}\n' > "$AGENTLS_HOME/settings.json"
  mkdir -p "$ws/.agentls/skills/greet"
  printf -- '---\nname: greet\ndescription: Greets the user by name.\n---\nSay hello to $ARGUMENTS.\n' > "$ws/.agentls/skills/greet/SKILL.md"
fi
if [ "$mode" = mentions ]; then
  # A TypeScript project the editor's built-in TypeScript understands (one deliberate error,
  # so its diagnostics show it has loaded the project).
  mkdir -p "$ws/src"
  printf 'export function greet(name: string): string {\n  return "hi " + name;\n}\n' > "$ws/src/util.ts"
  printf 'import { greet } from "./src/util";\n\nconsole.log(greet("you"));\nexport const broken: number = "x";\n' > "$ws/main.ts"
  printf '{"compilerOptions": {"strict": true, "module": "commonjs", "target": "es2020"}, "include": ["**/*.ts"]}\n' > "$ws/tsconfig.json"
  cat > "$work/script.jsonl" <<JSONL
{"text": "Looking it up.", "tool_calls": [{"id": "d1", "name": "GoToDefinition", "input": {"file_path": "main.ts", "line": 3, "symbol": "greet"}}, {"id": "r1", "name": "FindReferences", "input": {"file_path": "main.ts", "line": 3, "symbol": "greet"}}, {"id": "s1", "name": "WorkspaceSymbols", "input": {"query": "greet"}}, {"id": "p1", "name": "Diagnostics", "input": {"file_path": "app.py"}}]}
{"text": "greet is defined in src/util.ts."}
{"text": "I see the folder and the symbol."}
{"text": "I see the problems."}
JSONL
fi
write_settings '"security.workspace.trust.enabled": false,
  "agentls.provider": "scripted",
  "agentls.script": "'"$work/script.jsonl"'",
  "agentls.permissionMode": "'"$mode_setting"'",
  "agentls.server.connect": "'"$connect"'"'
boot_code_server --disable-workspace-trust
if [ "$mode" = reload ]; then
  node "$here/drive-reload.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --daemon-home "$4"
elif [ "$mode" = mentions ]; then
  node "$here/drive-mentions.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --home "$AGENTLS_HOME"
elif [ "$mode" = plan ]; then
  node "$here/drive-plan.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" --home "$AGENTLS_HOME"
elif [ "$mode" = join ]; then
  node "$here/drive-join.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" --artifacts "$art" \
    --forged "$4" --daemon-home "$5"
else
  node "$here/drive.mjs" --url "http://127.0.0.1:$port" --workspace "$ws" \
    --artifacts "$art" --home "$AGENTLS_HOME"
fi
