# cargo-machete (pinned): .ci/run fails on a dependency that no crate uses.
# Installed into cargo's own bin directory; skipped when that version is there.
set -euo pipefail
version=0.9.2
if [ "$(cargo machete --version 2>/dev/null || true)" != "$version" ]; then
  cargo install --quiet --locked cargo-machete --version "$version"
fi
