#!/usr/bin/env bash
# Creates .deps/venv (git-ignored) with the pinned Python test dependencies from
# tests/python/requirements.txt (the official `mcp` SDK 2.3.0 and its lock) and
# tests/python/upstream-requirements.txt (mcp-server-time, mcp-server-git: real upstream servers for
# tests/it/upstream.rs). Idempotent: a stamp file
# holding the requirements hash makes a second run a no-op. Set PYTHON to pick the interpreter
# (default: python3; needs 3.10+ with the venv module). Needs the PyPI registry on the first run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
REQ="$ROOT/tests/python/requirements.txt"
UPSTREAM_REQ="$ROOT/tests/python/upstream-requirements.txt"
VENV="$ROOT/.deps/venv"
STAMP="$VENV/.requirements.sha256"
PYTHON="${PYTHON:-python3}"

hash_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}
want="$(hash_of "$REQ")-$(hash_of "$UPSTREAM_REQ")"

if [ -x "$VENV/bin/python" ] && [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$want" ] \
  && "$VENV/bin/python" -c 'import mcp, mcp_server_time, mcp_server_git' >/dev/null 2>&1; then
  echo "setup-test-deps: $VENV is up to date (mcp $("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("mcp"))'))"
  exit 0
fi

if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "setup-test-deps: '$PYTHON' not found; install Python 3.10+ (with venv) or set PYTHON=/path/to/python3" >&2
  exit 1
fi
if [ ! -x "$VENV/bin/python" ]; then
  echo "setup-test-deps: creating $VENV"
  mkdir -p "$ROOT/.deps"
  if ! "$PYTHON" -m venv "$VENV"; then
    echo "setup-test-deps: '$PYTHON -m venv' failed; on Debian/Ubuntu install python3-venv (bash scripts/setup-system-deps.sh does, through sudo)" >&2
    rm -rf "$VENV"
    exit 1
  fi
fi
echo "setup-test-deps: installing tests/python/requirements.txt into $VENV"
rm -f "$STAMP"
"$VENV/bin/python" -m pip install -q --disable-pip-version-check -r "$REQ" -r "$UPSTREAM_REQ"
"$VENV/bin/python" -c 'import mcp, importlib.metadata as m; print("setup-test-deps: mcp", m.version("mcp"))'
printf '%s\n' "$want" >"$STAMP"
