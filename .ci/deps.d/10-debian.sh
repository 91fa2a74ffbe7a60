# Debian packages: ripgrep (Grep is compared with the real rg), python3, git;
# for the sandbox tests: curl (requests through the proxy), iproute2 (a
# network namespace holding an HTTP server at a foreign address), attr
# (setfattr, refused under the floor).
set -euo pipefail
need=()
command -v rg >/dev/null 2>&1 || need+=(ripgrep)
command -v python3 >/dev/null 2>&1 || need+=(python3)
command -v git >/dev/null 2>&1 || need+=(git)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v ip >/dev/null 2>&1 || need+=(iproute2)
command -v setfattr >/dev/null 2>&1 || need+=(attr)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi
