#!/usr/bin/env bash
# CI check of an MCP Bundle (scripts/bundle.sh makes it): the official CLI (@anthropic-ai/mcpb,
# from its lock; bundle.sh installs it) validates it and unpacks it; the manifest lists the nine
# tools, keeps secrets out of plain settings and has icon, licence and an executable server for
# this OS; then the command the manifest declares, resolved the way Claude Desktop resolves it
# (the library's getMcpConfigForManifest: platform_overrides, ${__dirname}, ${user_config.*}),
# is run under a temporary HOME and must answer initialize, tools/list (the nine) and
# search_tools, once with the defaults plus the required files folder and once with the
# encrypted file store and its passphrase. Without the required files folder the client would
# not start it: checked too.
#
#   scripts/check-bundle.sh [BUNDLE]     (default: target/dist/workbench-<version>.mcpb)
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
START=$(date +%s)

VERSION="$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)"
BUNDLE="${1:-$ROOT/target/dist/workbench-$VERSION.mcpb}"
[ -f "$BUNDLE" ] || { echo "check-bundle: no bundle at $BUNDLE (run scripts/bundle.sh)" >&2; exit 1; }
PKG="$ROOT/.deps/clients/mcpb/node_modules/@anthropic-ai/mcpb"
[ -d "$PKG" ] || { echo "check-bundle: the mcpb CLI is not installed (scripts/bundle.sh installs it)" >&2; exit 1; }
MCPB=(node "$PKG/dist/cli/cli.js")

T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); printf 'ok   %s\n' "$*"; }
fail() { FAIL=$((FAIL + 1)); printf 'FAIL %s\n' "$*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }

case "$(uname -s)" in Linux) OS=linux ;; Darwin) OS=darwin ;; *) OS=win32 ;; esac

echo "=== mcpb unpack + validate ($(basename "$BUNDLE"), $(wc -c <"$BUNDLE" | tr -d ' ') bytes)"
check "the sha256 file beside it matches" sh -c "cd '$(dirname "$BUNDLE")' && { sha256sum -c '$(basename "$BUNDLE").sha256' 2>/dev/null || shasum -a 256 -c '$(basename "$BUNDLE").sha256'; } >/dev/null"
"${MCPB[@]}" unpack "$BUNDLE" "$T/unpacked" >"$T/unpack.log" 2>&1 || { cat "$T/unpack.log"; fail "mcpb unpack"; }
check "mcpb validate passes on the unpacked manifest" sh -c "'${MCPB[0]}' '${MCPB[1]}' validate '$T/unpacked/manifest.json' >'$T/validate.log' 2>&1"
grep -q 'ERROR' "$T/validate.log" && sed 's/^/    | /' "$T/validate.log"

python3 - "$T/unpacked" "$OS" >"$T/manifest-checks" <<'PY' || true
import json, os, stat, sys
d, host = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "manifest.json"), encoding="utf-8"))
bad = []
def need(ok, what):
    print(("ok   " if ok else "FAIL ") + what)
    if not ok:
        bad.append(what)
nine = {"search_tools", "get_tool_schema", "execute_tools", "whoami", "list_integrations", "connect",
        "wait_for_connection", "get_auth_url", "curl_session"}
need({t["name"] for t in m.get("tools", [])} == nine and len(m["tools"]) == 9, "manifest lists the nine tools")
need(all(t.get("description") for t in m["tools"]), "every listed tool has a description")
need(m["server"]["type"] == "binary", "server type binary")
need(m["version"] and m["name"] == "workbench", "name and version")
for f in ("icon.png", "LICENSE-MIT", "LICENSE-APACHE"):
    need(os.path.isfile(os.path.join(d, f)), f"{f} in the bundle")
need(open(os.path.join(d, "icon.png"), "rb").read(8) == b"\x89PNG\r\n\x1a\n", "icon is a PNG")
plats = m["compatibility"]["platforms"]
cfg = m["server"]["mcp_config"]
for p in plats:
    cmd = (cfg.get("platform_overrides", {}).get(p, {}) or {}).get("command", cfg["command"])
    rel = cmd.replace("${__dirname}/", "")
    path = os.path.join(d, rel)
    need(cmd.startswith("${__dirname}/") and os.path.isfile(path), f"{p}: the declared command {rel} is in the bundle")
    if p != "win32":
        need(bool(os.stat(path).st_mode & stat.S_IXUSR), f"{p}: {rel} is executable after unpacking")
need(os.path.isfile(os.path.join(d, m["server"]["entry_point"])), "entry_point is in the bundle")
need(host in plats, f"this OS ({host}) is one of the bundle's platforms {plats}")
uc = m.get("user_config", {})
need({"files_dir", "write_policy", "flow_guard", "secret_store", "vault_passphrase"} <= set(uc), "the install-time settings are there")
# Secrets: only the file store's passphrase is one, and it is sensitive with no value of its own.
for k, o in uc.items():
    secretish = any(w in (k + o["title"]).lower() for w in ("passphrase", "password", "token", "secret_value", "api key"))
    if secretish:
        need(o.get("sensitive") is True and not o.get("default"), f"user_config.{k} is sensitive and has no default value")
    else:
        need(not o.get("sensitive"), f"user_config.{k} is a plain setting")
# Every ${user_config.*} the command uses either has a default or is required: never left as is.
used = json.dumps(cfg)
for k, o in uc.items():
    if "${user_config.%s}" % k in used:
        need("default" in o or o.get("required"), f"user_config.{k} always has a value")
env = cfg.get("env", {})
need(not any(k.endswith(("_TOKEN", "_API_KEY", "_CLIENT_SECRET")) for k in env), "no service credential in the manifest's env")
sys.exit(1 if bad else 0)
PY
cat "$T/manifest-checks"
PASS=$((PASS + $(grep -c '^ok ' "$T/manifest-checks" || true)))
FAIL=$((FAIL + $(grep -c '^FAIL' "$T/manifest-checks" || true)))
grep -q '^ok ' "$T/manifest-checks" || fail "the manifest checks ran"

echo "=== the declared command, resolved the way Claude Desktop does"
export HOME="$T/home"
mkdir -p "$HOME"
unset WORKBENCH_HOME XDG_DATA_HOME XDG_CONFIG_HOME
for v in $(env | sed -n 's/^\(WORKBENCH_[A-Z0-9_]*\)=.*/\1/p'); do unset "$v"; done
resolve() { node tests/dist/mcpb_config.mjs "$PKG" "$T/unpacked" "$1"; }

set +e
resolve '{}' >"$T/none.json" 2>"$T/none.err"
rc=$?
set -e
check "without the required files folder the client would not start it (exit $rc)" [ "$rc" -eq 3 ]

FILES="$T/home/workbench files"
resolve "{\"files_dir\": \"$FILES\"}" >"$T/defaults.json"
check "resolved: no \${...} left" sh -c "! grep -q '\\\${' '$T/defaults.json'"
check "resolved: the command is the unpacked binary" python3 -c "import json,sys,os; c=json.load(open(sys.argv[1])); assert c['command'].startswith(sys.argv[2]) and os.path.isfile(c['command']), c" "$T/defaults.json" "$T/unpacked"
check "resolved: files folder, policy default (empty), guard, keychain (empty)" python3 -c "
import json,sys; e=json.load(open(sys.argv[1]))['env']
assert e['WORKBENCH_FILES_DIR']==sys.argv[2] and e['WORKBENCH_POLICY_DEFAULT']=='' and e['WORKBENCH_FLOW']=='guard' and e['WORKBENCH_SECRET_STORE']=='' and e['WORKBENCH_VAULT_PASSPHRASE']=='', e" "$T/defaults.json" "$FILES"
echo "--- session with the defaults"
if python3 tests/dist/mcp_stdio.py smoke --config "$T/defaults.json" | sed 's/^/    /'; then ok "defaults: initialize, tools/list, search_tools"; else fail "defaults: initialize, tools/list, search_tools"; fi
DATA="$(python3 -c 'import sys; print({"linux": sys.argv[1] + "/.local/share/workbench", "darwin": sys.argv[1] + "/Library/Application Support/dev.workbench.workbench"}.get(sys.argv[2], ""))' "$HOME" "$OS")"
[ -n "$DATA" ] && check "the data directory is the platform's ($DATA)" [ -f "$DATA/workbench.db" ]

PASSPHRASE="bundle check passphrase $$"
resolve "{\"files_dir\": \"$FILES\", \"secret_store\": \"file\", \"vault_passphrase\": \"$PASSPHRASE\", \"write_policy\": \"confirm\", \"flow_guard\": \"strict\"}" >"$T/file.json"
check "resolved: the file store and its passphrase reach the environment" python3 -c "
import json,sys; e=json.load(open(sys.argv[1]))['env']
assert e['WORKBENCH_SECRET_STORE']=='file' and e['WORKBENCH_VAULT_PASSPHRASE']==sys.argv[2] and e['WORKBENCH_POLICY_DEFAULT']=='confirm', e" "$T/file.json" "$PASSPHRASE"
echo "--- session with the encrypted file store"
if python3 tests/dist/mcp_stdio.py smoke --config "$T/file.json" | sed 's/^/    /'; then ok "file store: initialize, tools/list, search_tools"; else fail "file store: initialize, tools/list, search_tools"; fi

echo
echo "check-bundle: $PASS passed, $FAIL failed ($(($(date +%s) - START)) s)"
[ "$FAIL" -eq 0 ]
