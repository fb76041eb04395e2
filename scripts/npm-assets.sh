#!/usr/bin/env bash
# Installs the report's chart bundles (vega, vega-lite, vega-embed) into
# node_modules/ with `npm ci` when they are missing or older than
# package-lock.json; does nothing otherwise. Run by the build (src/report/CMakeLists.txt).
# Usage: scripts/npm-assets.sh [STAMP]   (STAMP is touched on success)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
bundles=(node_modules/vega/build/vega.min.js node_modules/vega-lite/build/vega-lite.min.js
  node_modules/vega-embed/build/vega-embed.min.js)

current() {
  [ node_modules/.package-lock.json -nt package-lock.json ] || return 1
  for b in "${bundles[@]}"; do [ -s "$b" ] || return 1; done
}

# Several build directories may share this checkout: one npm ci at a time.
exec 9>"${TMPDIR:-/tmp}/iolab-npm-ci.lock"
flock 9
if ! current; then
  command -v npm >/dev/null || { echo "npm-assets: npm is missing; run scripts/install-deps.sh" >&2; exit 1; }
  echo "npm-assets: npm ci (the report's chart bundles)" >&2
  npm ci --no-audit --no-fund --prefer-offline --loglevel=error >&2
  current || { echo "npm-assets: npm ci did not produce ${bundles[*]}" >&2; exit 1; }
fi
[ -z "${1:-}" ] || touch "$1"
