#!/usr/bin/env bash
# The Windows build, built and run here: cross-builds workbench.exe (scripts/build-windows.sh,
# with the test-only ProcessPrng shim) and runs the Wine smoke test (tests/windows/wine_smoke.py:
# MCP session, time tool, encrypted file store, Windows data and files folders, `clients
# register` into %APPDATA%\Claude, upstream servers ending with workbench). Needs Debian's
# gcc-mingw-w64-x86-64 and wine (scripts/setup-system-deps.sh installs them as root), rustup.
# The Wine prefix lives in .deps/wine (made on the first run, about half a minute).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
t0=$(date +%s)
echo "=== Windows cross build (x86_64-pc-windows-gnu)"
bash scripts/build-windows.sh
t1=$(date +%s)
echo "(windows build step: $((t1 - t0)) s)"
command -v wine >/dev/null 2>&1 || { echo "test-windows: wine not found (Debian: apt-get install wine)" >&2; exit 1; }
echo "=== Wine smoke test ($(wine --version 2>/dev/null))"
python3 tests/windows/wine_smoke.py \
  --exe "$TARGET_DIR/x86_64-pc-windows-gnu/release/workbench.exe" \
  --shim "$TARGET_DIR/x86_64-pc-windows-gnu/wine-shim/bcryptprimitives.dll" \
  --prefix "$ROOT/.deps/wine"
echo "(wine smoke step: $(($(date +%s) - t1)) s)"
