# Kubernetes schemas (bundled in the package, no network at test time) to
# check deploy/kubernetes/*.yaml. Pinned.
set -euo pipefail
have=$(python3 -c "import importlib.metadata as m; print(m.version('kubernetes-validate'))" 2>/dev/null || true)
if [ "$have" != "1.37.0" ]; then
  python3 -m pip install -q --disable-pip-version-check kubernetes-validate==1.37.0
fi
