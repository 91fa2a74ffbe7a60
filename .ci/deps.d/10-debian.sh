# Debian packages: ripgrep (Grep is compared with the real rg), python3, git.
set -euo pipefail
need=()
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v git >/dev/null 2>&1 || need+=(git)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
