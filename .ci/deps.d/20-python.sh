# Python packages the tests drive real peers with: the official MCP SDK (test
# servers and a real MCP client) and the official model SDKs (their types check
# the wire formats Baton produces). Pinned; skipped when already installed.
set -euo pipefail
want=(mcp==2.3.0 anthropic==2.12.0 openai==3.54.0)
missing=()
for spec in "${want[@]}"; do
  name=${spec%%==*}; version=${spec##*==}
  have=$(python3 -c "import importlib.metadata as m; print(m.version('$name'))" 2>/dev/null || true)
  [ "$have" = "$version" ] || missing+=("$spec")
done
if [ ${#missing[@]} -gt 0 ]; then
  command -v pip3 >/dev/null 2>&1 || python3 -m ensurepip >/dev/null 2>&1 || {
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-pip >/dev/null; }
  python3 -m pip install -q --disable-pip-version-check "${missing[@]}"
fi
