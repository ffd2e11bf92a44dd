#!/usr/bin/env bash
# The portal's real-browser test: Chromium (or Chrome), headless, driven by playwright-core (pinned in
# tests/portal/package-lock.json, installed with `npm ci`; it never downloads a browser of its own)
# against the built target/debug/workbench. Needs Node.js 20+ with npm and a browser: $CHROMIUM, or
# Debian's /usr/bin/chromium (scripts/setup-system-deps.sh installs it on Debian), or Chrome at a
# usual path (scripts/distro.sh). On Debian a missing browser is a failure; elsewhere (Ubuntu's
# chromium packages are snap launchers) the test is skipped with a message saying how to enable it.
# The only network it uses is the npm registry, on the first run. PORTAL_SCREENSHOTS=DIR keeps the
# screenshots there.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DIR="$ROOT/tests/portal"
printf '\n=== %s\n' "portal in headless chromium (scripts/test-portal.sh)"

# shellcheck source=scripts/distro.sh
. "$ROOT/scripts/distro.sh"
found="$(wb_browser)"
if [ -z "$found" ]; then
  if [ "$(wb_distro)" = debian ] || [ -n "${CHROMIUM:-}" ]; then
    echo "test-portal: no browser: ${CHROMIUM:-/usr/bin/chromium} not found; install Debian's chromium (scripts/setup-system-deps.sh does) or set CHROMIUM" >&2
    exit 1
  fi
  echo "test-portal: SKIPPED: no Chrome or Chromium here that is not a snap launcher (on Ubuntu the chromium packages are)."
  echo "  To run it, install Google Chrome's .deb (or another Chromium build) and set CHROMIUM=/path/to/it."
  exit 0
fi
export CHROMIUM="$found"
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
