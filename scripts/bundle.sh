#!/usr/bin/env bash
# Builds workbench-<version>.mcpb, the MCP Bundle Claude Desktop installs with one click, from a
# release build, validated and packed with the official CLI (@anthropic-ai/mcpb, pinned in
# tests/clients/npm/mcpb/package-lock.json, installed into .deps/clients/mcpb).
#
# USAGE
#   scripts/bundle.sh [--out DIR] [--binary OS=PATH]... [--tools-from PATH]
#
#   --binary OS=PATH  put PATH in the bundle as the server for OS (darwin, win32 or linux); may be
#                     repeated (the release workflow gives a universal macOS binary, the Windows
#                     .exe and the Linux x86_64 one). Default: this machine's release build,
#                     target/release/workbench (built with `cargo build --release --locked` when
#                     missing), for this machine's OS.
#   --tools-from PATH a binary this machine can run, asked for its tools/list (the manifest's tool
#                     list). Default: the --binary for this OS.
#   --out DIR         where the .mcpb goes (default: target/dist)
#
# Contents: manifest.json (scripts/mcpb_manifest.py), server/<os>/workbench[.exe], icon.png
# (dist/icon.png), LICENSE-MIT, LICENSE-APACHE. Prints the bundle's path and size; writes
# <bundle>.sha256 beside it. Needs python3, node + npm (Node >= 18).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

OUT="$ROOT/target/dist"
BINARIES=()
TOOLS_FROM=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift ;;
    --binary) BINARIES+=("$2"); shift ;;
    --tools-from) TOOLS_FROM="$2"; shift ;;
    -h | --help) sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "bundle.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
  shift
done

case "$(uname -s)" in
  Linux) HOST_OS=linux ;;
  Darwin) HOST_OS=darwin ;;
  MINGW* | MSYS* | CYGWIN*) HOST_OS=win32 ;;
  *) echo "bundle.sh: unsupported build system $(uname -s)" >&2; exit 1 ;;
esac

if [ ${#BINARIES[@]} -eq 0 ]; then
  TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
  exe=""
  [ "$HOST_OS" = win32 ] && exe=".exe"
  if [ ! -x "$TARGET_DIR/release/workbench$exe" ]; then
    echo "bundle.sh: building the release binary (cargo build --release --locked)"
    cargo build --release --locked
  fi
  BINARIES=("$HOST_OS=$TARGET_DIR/release/workbench$exe")
fi

hash_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

# ------------------------------------------------------------------ the official CLI, from its lock
MCPB_LOCK="$ROOT/tests/clients/npm/mcpb"
MCPB_DIR="$ROOT/.deps/clients/mcpb"
want="$(hash_of "$MCPB_LOCK/package-lock.json")"
if [ ! -f "$MCPB_DIR/.lock.sha256" ] || [ "$(cat "$MCPB_DIR/.lock.sha256")" != "$want" ] || [ ! -d "$MCPB_DIR/node_modules" ]; then
  echo "bundle.sh: installing @anthropic-ai/mcpb from its lock into .deps/clients/mcpb"
  rm -rf "$MCPB_DIR"
  mkdir -p "$MCPB_DIR"
  cp "$MCPB_LOCK/package.json" "$MCPB_LOCK/package-lock.json" "$MCPB_DIR/"
  (cd "$MCPB_DIR" && npm ci --loglevel=error --no-progress --no-audit --no-fund)
  echo "$want" >"$MCPB_DIR/.lock.sha256"
fi
MCPB=("node" "$MCPB_DIR/node_modules/@anthropic-ai/mcpb/dist/cli/cli.js")

# ------------------------------------------------------------------------------- the staging tree
VERSION="$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)"
[ -n "$VERSION" ] || { echo "bundle.sh: no version in Cargo.toml" >&2; exit 1; }
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/server"
PLATFORM_ARGS=()
for item in "${BINARIES[@]}"; do
  os="${item%%=*}"
  path="${item#*=}"
  case "$os" in darwin | linux) name=workbench ;; win32) name=workbench.exe ;; *)
    echo "bundle.sh: --binary $item: the OS is darwin, win32 or linux" >&2; exit 2 ;;
  esac
  [ -f "$path" ] || { echo "bundle.sh: --binary $item: no such file" >&2; exit 1; }
  mkdir -p "$STAGE/server/$os"
  cp "$path" "$STAGE/server/$os/$name"
  chmod 755 "$STAGE/server/$os/$name"
  PLATFORM_ARGS+=(--platform "$os=server/$os/$name")
  if [ -z "$TOOLS_FROM" ] && [ "$os" = "$HOST_OS" ]; then TOOLS_FROM="$path"; fi
done
[ -n "$TOOLS_FROM" ] || { echo "bundle.sh: no binary for this OS to list the tools: give --tools-from PATH" >&2; exit 2; }
cp dist/icon.png LICENSE-MIT LICENSE-APACHE "$STAGE/"

# The tool list, from the server itself (a throwaway data dir; nothing of the user's is read).
TOOLS_HOME="$(mktemp -d)"
WORKBENCH_HOME="$TOOLS_HOME" WORKBENCH_SECRET_STORE=memory python3 - "$TOOLS_FROM" >"$STAGE/.tools.json" <<'PY'
import json, os, sys
sys.path.insert(0, os.path.join(os.getcwd(), "tests", "dist"))
from mcp_stdio import Session
s = Session([sys.argv[1]], env=dict(os.environ))
s.initialize()
tools = s.request("tools/list", {})
s.close()
json.dump(tools, sys.stdout)
PY
rm -rf "$TOOLS_HOME"
python3 scripts/mcpb_manifest.py --version "$VERSION" --tools "$STAGE/.tools.json" "${PLATFORM_ARGS[@]}" >"$STAGE/manifest.json"
rm -f "$STAGE/.tools.json"

# ----------------------------------------------------------------------------- validate and pack
echo "bundle.sh: mcpb validate"
"${MCPB[@]}" validate "$STAGE/manifest.json"
mkdir -p "$OUT"
BUNDLE="$OUT/workbench-$VERSION.mcpb"
rm -f "$BUNDLE" "$BUNDLE.sha256"
echo "bundle.sh: mcpb pack"
"${MCPB[@]}" pack "$STAGE" "$BUNDLE" >"$STAGE.pack.log" 2>&1 || { cat "$STAGE.pack.log" >&2; rm -f "$STAGE.pack.log"; exit 1; }
grep -E 'package size|unpacked size|total files' "$STAGE.pack.log" || true
rm -f "$STAGE.pack.log"
(cd "$OUT" && printf '%s  %s\n' "$(hash_of "workbench-$VERSION.mcpb")" "workbench-$VERSION.mcpb" >"workbench-$VERSION.mcpb.sha256")
SIZE=$(wc -c <"$BUNDLE" | tr -d ' ')
echo "bundle.sh: $BUNDLE ($SIZE bytes; sha256 in $(basename "$BUNDLE").sha256)"
