#!/usr/bin/env bash
# The portal's real-browser test: Debian's chromium, headless, driven by playwright-core (pinned in
# tests/portal/package-lock.json, installed with `npm ci`; it never downloads a browser of its own)
# against the built target/debug/workbench. Needs Node.js 20+ with npm and /usr/bin/chromium
# (`apt-get install -y chromium`; .ci/run does that when it is missing). The only network it uses
# is the npm registry, on the first run. PORTAL_SCREENSHOTS=DIR keeps the screenshots there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/tests/portal"
printf '\n=== %s\n' "portal in headless chromium (scripts/test-portal.sh)"

export CHROMIUM="${CHROMIUM:-/usr/bin/chromium}"
if [ ! -x "$CHROMIUM" ]; then
  echo "test-portal: $CHROMIUM not found; install Debian's chromium (apt-get install -y chromium) or set CHROMIUM" >&2
  exit 1
fi
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "test-portal: node and npm are needed (Node.js 20 or later)" >&2
  exit 1
fi
major="$(node -p 'process.versions.node.split(".")[0]')"
if [ "$major" -lt 20 ]; then
  echo "test-portal: Node.js $(node --version) is too old; playwright-core needs 20 or later" >&2
  exit 1
fi

# npm ci only when the lock changed since the last install (a stamp holds its hash).
hash_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}
want="$(hash_of "$DIR/package-lock.json")"
stamp="$DIR/node_modules/.lock.sha256"
if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$want" ] || [ ! -d "$DIR/node_modules/playwright-core" ]; then
  (cd "$DIR" && npm ci --no-audit --no-fund --loglevel=error)
  echo "$want" > "$stamp"
fi

export WORKBENCH_BIN="${WORKBENCH_BIN:-$ROOT/target/debug/workbench}"
if [ ! -x "$WORKBENCH_BIN" ]; then
  (cd "$ROOT" && cargo build --locked)
fi
cd "$DIR"
node --test portal.test.mjs
