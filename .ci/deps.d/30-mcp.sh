# Real MCP servers the MCP client tests run against (pinned), installed under
# the gitignored .ci/node/mcp/ of the repository. Skipped when present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="$root/.ci/node/mcp"
want=(@modelcontextprotocol/server-everything@2026.8.31 @modelcontextprotocol/server-filesystem@2026.8.31)
stamp="$dir/.installed"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "${want[*]}" ]; then
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"baton-mcp-test-servers","private":true}' >"$dir/package.json"
  (cd "$dir" && npm install --no-audit --no-fund --silent --save-exact "${want[@]}")
  echo "${want[*]}" >"$stamp"
fi
