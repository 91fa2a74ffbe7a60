# Hook tests run hook scripts as users write them: with jq and node.
set -euo pipefail
need=()
command -v jq >/dev/null 2>&1 || need+=(jq)
command -v node >/dev/null 2>&1 || need+=(nodejs)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
