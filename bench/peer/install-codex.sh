#!/bin/sh
# Installs the pinned codex CLI under bench/peer/node/ (gitignored). Not
# part of CI: the peer harness only.
set -eu
VERSION=0.169.0
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/node"
if [ -x "$here/node/node_modules/.bin/codex" ] &&
   "$here/node/node_modules/.bin/codex" --version 2>/dev/null | grep -q "$VERSION"; then
  exit 0
fi
cd "$here/node"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --save-exact "@openai/codex@$VERSION"
"$here/node/node_modules/.bin/codex" --version
