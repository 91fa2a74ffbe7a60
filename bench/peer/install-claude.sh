#!/bin/sh
# Installs the pinned Claude Code CLI under bench/peer/node/ (gitignored).
# Not part of CI: the peer harness only. The npm package carries a native
# binary per platform (an optional dependency) that its postinstall links
# in place of the `claude` placeholder.
set -eu
VERSION=2.1.332
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$here/node"
if [ -x "$here/node/node_modules/.bin/claude" ] &&
   "$here/node/node_modules/.bin/claude" --version 2>/dev/null | grep -q "$VERSION"; then
  exit 0
fi
cd "$here/node"
[ -f package.json ] || echo '{"private": true}' > package.json
npm install --no-audit --no-fund --save-exact "@anthropic-ai/claude-code@$VERSION"
"$here/node/node_modules/.bin/claude" --version
