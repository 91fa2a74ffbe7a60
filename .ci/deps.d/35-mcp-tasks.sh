# A real MCP peer that speaks the tasks of protocol 2025-11-25 (task-augmented
# tools/call, tasks/get, tasks/result, tasks/list, tasks/cancel): the official
# Python SDK's last 1.x release, which has them as `experimental` (2.x does
# not). It gets a venv of its own under the gitignored .ci/venv-mcp-tasks, so
# the system's mcp 2.x (20-python.sh) stays what the other tests use. Pinned;
# skipped when present.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
venv="$root/.ci/venv-mcp-tasks"
want="mcp==1.30.0"
stamp="$venv/.installed"
if [ "$(cat "$stamp" 2>/dev/null || true)" != "$want" ]; then
  python3 -m venv "$venv" 2>/dev/null || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-venv >/dev/null
    python3 -m venv "$venv"; }
  "$venv/bin/python" -m pip install -q --disable-pip-version-check "$want"
  echo "$want" >"$stamp"
fi
