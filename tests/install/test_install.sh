#!/usr/bin/env bash
# Runs the REAL ./install.sh of this clone against a temporary HOME holding Claude Desktop, Cursor
# and Claude Code configs with other servers and keys, and checks what a user would: the binary is
# installed and runs; our entry is added; every other byte is kept; backups are written; a second
# run changes nothing; --dry-run touches nothing; an unparsable config is refused and left intact
# while the other clients are still done; --no-register registers nothing; --uninstall restores.
# The machine has no D-Bus session (no keychain), as over SSH or in a container: the install is
# `./install.sh --secret-store file`, and README.md's transcript of it is checked against what it
# printed (paths and times aside). A doctor FAIL makes install.sh exit 4 unless --keep-going.
#
# The release build is reused from CARGO_TARGET_DIR (default: ./target), so only the first run on a
# machine pays for it. Needs bash, python3 (for the JSON checks) and the Rust toolchain.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"

# The toolchain stays where it is even though HOME moves.
export CARGO_HOME="${CARGO_HOME:-$HOME/.cargo}"
export RUSTUP_HOME="${RUSTUP_HOME:-$HOME/.rustup}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"

T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
export HOME="$T/home"
mkdir -p "$HOME"
unset XDG_CONFIG_HOME WORKBENCH_BIN_DIR WORKBENCH_HOME WORKBENCH_SECRET_STORE WORKBENCH_VAULT_PASSPHRASE
unset WORKBENCH_VAULT_PASSPHRASE_COMMAND DBUS_SESSION_BUS_ADDRESS
# No bus in the runtime directory: the OS keychain cannot answer, whatever the host has. The data
# directory lives outside HOME so the "nothing under HOME changed" checks see only client configs.
export XDG_RUNTIME_DIR="$T/run"
export XDG_DATA_HOME="$T/xdg-data"
mkdir -p "$XDG_RUNTIME_DIR"
DATA="$XDG_DATA_HOME/workbench"
export WORKBENCH_NO_BROWSER=1
PATH="$HOME/.local/bin:$PATH"

PASS=0
FAIL=0
ok() {
  PASS=$((PASS + 1))
  printf 'ok   %s\n' "$*"
}
fail() {
  FAIL=$((FAIL + 1))
  printf 'FAIL %s\n' "$*"
}
check() { # check DESCRIPTION COMMAND...
  local what="$1"
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

if [ "$(uname -s)" = Darwin ]; then
  DESKTOP_DIR="$HOME/Library/Application Support/Claude"
else
  DESKTOP_DIR="$HOME/.config/Claude"
fi
DESKTOP="$DESKTOP_DIR/claude_desktop_config.json"
CURSOR="$HOME/.cursor/mcp.json"
CODE="$HOME/.claude.json"
BIN="$HOME/.local/bin/workbench"
ORIG="$T/originals"
mkdir -p "$DESKTOP_DIR" "$HOME/.cursor" "$ORIG"

# Pretty, two spaces, unicode, another server and other keys.
cat >"$DESKTOP" <<'EOF'
{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "npx",
      "args": ["-y", "@modelcontextprotocol/server-filesystem", "/home/zoë/Documents"]
    }
  },
  "preferences": {"theme": "dark", "note": "naïve café ✓ \"quoted\" {braces}"}
}
EOF
# CRLF line ends, four spaces, two servers.
printf '{\r\n    "mcpServers": {\r\n        "git": {\r\n            "command": "uvx",\r\n            "args": ["mcp-server-git"]\r\n        },\r\n        "memory": {\r\n            "command": "npx",\r\n            "args": ["-y", "@modelcontextprotocol/server-memory"],\r\n            "env": {"MEMORY_FILE": "/tmp/m.json"}\r\n        }\r\n    }\r\n}\r\n' >"$CURSOR"
# Compact, no final newline, per-project servers and an empty user-scope mcpServers (as Claude Code writes).
printf '{"numStartups":12,"projects":{"/src/app":{"mcpServers":{"local-db":{"command":"db-mcp"}},"allowedTools":[]}},"mcpServers":{},"userID":"abc123"}' >"$CODE"
cp "$DESKTOP" "$ORIG/desktop"
cp "$CURSOR" "$ORIG/cursor"
cp "$CODE" "$ORIG/code"

snapshot() { (cd "$HOME" && find . -type f | LC_ALL=C sort | while IFS= read -r f; do cksum "$f"; done); }
backups() { find "$HOME" -name '*.workbench-backup-*' | wc -l | tr -d ' '; }
same() { cmp -s "$1" "$2"; }

# verify FILE ORIGINAL EXPECTED_ENTRY_JSON: FILE is ORIGINAL with exactly one insertion (every
# other byte kept, in place), parses, and its mcpServers.workbench is the expected entry.
verify() {
  python3 - "$1" "$2" "$3" <<'EOF'
import json, sys
new = open(sys.argv[1], "rb").read()
old = open(sys.argv[2], "rb").read()
want = json.loads(sys.argv[3])
p = 0
while p < min(len(old), len(new)) and old[p] == new[p]:
    p += 1
s = 0
while s < min(len(old), len(new)) - p and old[-1 - s] == new[-1 - s]:
    s += 1
assert p + s >= len(old), f"{sys.argv[1]}: bytes outside one insertion changed (prefix {p}, suffix {s}, original {len(old)})"
doc = json.loads(new.decode("utf-8"))
got = doc["mcpServers"]["workbench"]
assert got == want, f"{sys.argv[1]}: entry {got!r} != {want!r}"
before = json.loads(old.decode("utf-8"))
after = dict(doc)
after["mcpServers"] = {k: v for k, v in doc["mcpServers"].items() if k != "workbench"}
if "mcpServers" not in before and after["mcpServers"] == {}:
    del after["mcpServers"]
assert before == after, f"{sys.argv[1]}: content besides our entry differs"
EOF
}

entry_plain() { python3 -c 'import json,sys; print(json.dumps({"command": sys.argv[1]}))' "$BIN"; }
entry_code() { python3 -c 'import json,sys; print(json.dumps({"type": "stdio", "command": sys.argv[1], "args": []}))' "$BIN"; }

echo "=== install.sh --dry-run (nothing installed yet)"
before="$(snapshot)"
set +e
./install.sh --dry-run >"$T/out" 2>&1
rc=$?
set -e
check "dry run exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "dry run says what it would do" grep -q '\[dry-run\] would copy' "$T/out"
check "dry run installs nothing" [ ! -e "$BIN" ]
check "dry run changes no file under HOME" [ "$before" = "$(snapshot)" ]

echo "=== install.sh --secret-store file (no keychain here)"
START=$(date +%s)
set +e
./install.sh --secret-store file >"$T/out" 2>&1
rc=$?
set -e
echo "(install.sh took $(($(date +%s) - START))s, release build included)"
check "install exits 0 (got $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/out"
check "binary installed and executable" [ -x "$BIN" ]
check "binary runs (--version)" sh -c "'$BIN' --version | grep -q '^workbench '"
check "binary runs a tool" sh -c "'$BIN' tools call time_get_current '{\"timezone\": \"UTC\"}' | grep -q '\"timezone\": \"UTC\"'"
check "Claude Desktop: entry added, all else byte for byte" verify "$DESKTOP" "$ORIG/desktop" "$(entry_plain)"
check "Cursor (CRLF): entry added, all else byte for byte" verify "$CURSOR" "$ORIG/cursor" "$(entry_plain)"
check "Claude Code: user-scope entry added, all else byte for byte" verify "$CODE" "$ORIG/code" "$(entry_code)"
check "Cursor keeps CRLF line ends only" python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); assert d.count(b"\n") == d.count(b"\r\n") > 10' "$CURSOR"
check "three backups written" [ "$(backups)" -eq 3 ]
for f in "$DESKTOP" "$CURSOR" "$CODE"; do
  b="$(ls "$f".workbench-backup-* | head -n 1)"
  case "$f" in "$DESKTOP") o=desktop ;; "$CURSOR") o=cursor ;; *) o=code ;; esac
  check "backup of $(basename "$f") holds the original" same "$b" "$ORIG/$o"
done
check "install ran workbench doctor" grep -q '^==> workbench doctor' "$T/out"
check "doctor sees the registrations" sh -c "grep -q '^OK    Claude Desktop' '$T/out' && grep -q '^OK    Cursor ' '$T/out' && grep -q '^OK    Claude Code' '$T/out'"
check "the servers the clients launch open the file store" sh -c "[ \"\$(grep -c '^OK    .* launches  *a server with no env in its entry uses the encrypted file' '$T/out')\" -eq 3 ]"
check "setup recorded the store in config.json" grep -q '"secret_store": "file"' "$DATA/config.json"
check "the key file is private" sh -c "[ \"\$(stat -c %a '$DATA/secrets.key' 2>/dev/null || stat -f %Lp '$DATA/secrets.key')\" = 600 ]"
check "doctor WARNs what the key file protects and what not" grep -q '^WARN  secret store .*not against anything running as you' "$T/out"
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/out"

cp "$DESKTOP" "$T/desktop.registered"
cp "$CURSOR" "$T/cursor.registered"
cp "$CODE" "$T/code.registered"

echo "=== install.sh again (idempotent)"
before="$(snapshot)"
set +e
./install.sh >"$T/out" 2>&1
rc=$?
set -e
check "second install exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "second install: already registered everywhere" [ "$(grep -c 'already registered' "$T/out")" -eq 3 ]
check "second install changes no file under HOME (no config, no backup)" [ "$before" = "$(snapshot)" ]

echo "=== install.sh --dry-run (installed)"
before="$(snapshot)"
set +e
./install.sh --dry-run >"$T/out" 2>&1
rc=$?
set -e
check "dry run exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "dry run changes no file under HOME" [ "$before" = "$(snapshot)" ]

echo "=== install.sh --uninstall --dry-run, then --uninstall"
before="$(snapshot)"
./install.sh --uninstall --dry-run >"$T/out" 2>&1
check "uninstall dry run shows the removal" grep -q 'would edit' "$T/out"
check "uninstall dry run changes nothing" [ "$before" = "$(snapshot)" ]
set +e
./install.sh --uninstall >"$T/out" 2>&1
rc=$?
set -e
check "uninstall exits 0 (got $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/out"
check "uninstall removes the binary" [ ! -e "$BIN" ]
check "uninstall restores Claude Desktop byte for byte" same "$DESKTOP" "$ORIG/desktop"
check "uninstall restores Cursor byte for byte" same "$CURSOR" "$ORIG/cursor"
check "uninstall restores Claude Code byte for byte" same "$CODE" "$ORIG/code"
check "uninstall keeps the data directory" [ -f "$DATA/workbench.db" ]

echo "=== install.sh --no-register"
set +e
./install.sh --no-register >"$T/out" 2>&1
rc=$?
set -e
check "--no-register exits 0 (got $rc)" [ "$rc" -eq 0 ]
check "--no-register installs the binary" [ -x "$BIN" ]
check "--no-register leaves every config alone" sh -c "cmp -s '$DESKTOP' '$ORIG/desktop' && cmp -s '$CURSOR' '$ORIG/cursor' && cmp -s '$CODE' '$ORIG/code'"

echo "=== a doctor FAIL: exit 4 and what to do, unless --keep-going"
set +e
WORKBENCH_CONCURRENCY=0 ./install.sh --no-register >"$T/out" 2>&1
rc=$?
set -e
check "install exits 4 when doctor FAILs (got $rc)" [ "$rc" -eq 4 ]
check "it says what to do" grep -q 'each FAIL line ends with its fix' "$T/out"
check "and never says Done" sh -c "! grep -q '^Done' '$T/out'"
set +e
WORKBENCH_CONCURRENCY=0 ./install.sh --no-register --keep-going >"$T/out" 2>&1
rc=$?
set -e
check "--keep-going exits 0 after a doctor FAIL (got $rc)" [ "$rc" -eq 0 ]
set +e
./install.sh --secret-store vault >"$T/out" 2>&1
rc=$?
set -e
check "a bad --secret-store is a usage error (got $rc)" [ "$rc" -eq 2 ]

echo "=== an unparsable Cursor config"
printf '{\n  // my servers\n  "mcpServers": {\n    "git": {"command": "uvx",},\n  },\n}\n' >"$CURSOR"
cp "$CURSOR" "$ORIG/cursor-broken"
cursor_backups() { find "$HOME/.cursor" -name 'mcp.json.workbench-backup-*' | wc -l | tr -d ' '; }
nb="$(cursor_backups)"
set +e
./install.sh >"$T/out" 2>&1
rc=$?
set -e
check "install exits 3 when a config is refused (got $rc)" [ "$rc" -eq 3 ]
check "the refusal is explained" grep -q 'Cursor: REFUSED to edit' "$T/out"
check "the refused file is left intact" same "$CURSOR" "$ORIG/cursor-broken"
check "no new backup of the refused file" [ "$(cursor_backups)" = "$nb" ]
check "Claude Desktop still registered" verify "$DESKTOP" "$ORIG/desktop" "$(entry_plain)"
check "Claude Code still registered" verify "$CODE" "$ORIG/code" "$(entry_code)"
check "doctor flags the broken config" grep -q '^FAIL  Cursor' "$T/out"
set +e
./install.sh --uninstall >"$T/out" 2>&1
rc=$?
set -e
check "uninstall exits 3 with the refused config (got $rc)" [ "$rc" -eq 3 ]
check "uninstall restores the others" sh -c "cmp -s '$DESKTOP' '$ORIG/desktop' && cmp -s '$CODE' '$ORIG/code'"
check "uninstall leaves the refused file intact" same "$CURSOR" "$ORIG/cursor-broken"
check "uninstall removes the binary anyway" [ ! -e "$BIN" ]

echo "=== README.md's first-five-minutes transcript (Linux: Cursor and Claude Code, no keychain)"
if [ "$(uname -s)" = Linux ]; then
  # A fresh user: Cursor and Claude Code installed, nothing else; the same machine otherwise.
  export HOME="$T/readme-home"
  export XDG_DATA_HOME="$T/readme-data"
  mkdir -p "$HOME/.cursor" "$HOME/.local/bin"
  printf '{"numStartups": 1}\n' >"$HOME/.claude.json"
  set +e
  ./install.sh --secret-store file >"$T/out" 2>&1
  rc=$?
  set -e
  check "the README's install exits 0 (got $rc)" [ "$rc" -eq 0 ]
  # README.md's install transcript (from "==> Registering" on) is what install.sh printed, with this
  # machine's paths as a user's (/home/you) and backup times as <time>.
  normalize() {
    sed -e "s|$XDG_DATA_HOME|/home/you/.local/share|g" -e "s|$HOME|/home/you|g" \
      -e 's/workbench-backup-[0-9]\{8\}T[0-9]\{6\}Z/workbench-backup-<time>/g' -e 's/[[:space:]]*$//'
  }
  awk '/^<!-- install transcript/{on=1; next} on && /^```text/{grab=1; next} grab && /^```/{exit} grab' README.md |
    sed -n '/^==> Registering/,$p' | normalize >"$T/readme-transcript"
  sed -n '/^==> Registering/,$p' "$T/out" | normalize >"$T/actual-transcript"
  check "README.md's install transcript is present" [ -s "$T/readme-transcript" ]
  check "README.md's install transcript matches install.sh's output" cmp -s "$T/readme-transcript" "$T/actual-transcript"
  [ -z "${KEEP_TRANSCRIPT:-}" ] || cp "$T/actual-transcript" "$KEEP_TRANSCRIPT"
  cmp -s "$T/readme-transcript" "$T/actual-transcript" || diff -u "$T/readme-transcript" "$T/actual-transcript" | sed 's/^/    | /'
fi

echo
echo "install: $PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
