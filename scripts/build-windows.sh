#!/usr/bin/env bash
# Cross-builds workbench.exe for Windows x86_64 on Linux (rustup's x86_64-pc-windows-gnu target,
# Debian's mingw-w64 as linker and C compiler for ring and the bundled SQLite), and the TEST-ONLY
# ProcessPrng shim DLL that Wine 8 needs to run it (tests/windows/processprng_shim.c; never
# shipped). Outputs:
#   target/x86_64-pc-windows-gnu/release/workbench.exe
#   target/x86_64-pc-windows-gnu/wine-shim/bcryptprimitives.dll
# Needs: rustup (adds the target when missing), x86_64-w64-mingw32-gcc (Debian:
# gcc-mingw-w64-x86-64; scripts/setup-system-deps.sh installs it as root). Reuses the build when
# nothing changed (cargo decides).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
TARGET=x86_64-pc-windows-gnu
CC_WIN=x86_64-w64-mingw32-gcc

command -v "$CC_WIN" >/dev/null 2>&1 || {
  echo "build-windows: $CC_WIN not found: install Debian's gcc-mingw-w64-x86-64 (scripts/setup-system-deps.sh does, as root)" >&2
  exit 1
}
if command -v rustup >/dev/null 2>&1; then
  if ! rustup target list --installed | grep -qx "$TARGET"; then
    echo "build-windows: rustup target add $TARGET"
    rustup target add "$TARGET"
  fi
fi

TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
start=$(date +%s)
echo "build-windows: cargo build --release --locked --target $TARGET"
CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER="$CC_WIN" cargo build --release --locked --target "$TARGET"
EXE="$TARGET_DIR/$TARGET/release/workbench.exe"
[ -f "$EXE" ] || { echo "build-windows: the build finished but $EXE is missing" >&2; exit 1; }

SHIM_DIR="$TARGET_DIR/$TARGET/wine-shim"
mkdir -p "$SHIM_DIR"
"$CC_WIN" -O2 -Wall -Werror -s -shared -o "$SHIM_DIR/bcryptprimitives.dll" tests/windows/processprng_shim.c -ladvapi32
echo "build-windows: $EXE ($(wc -c <"$EXE" | tr -d ' ') bytes), test shim $SHIM_DIR/bcryptprimitives.dll ($(($(date +%s) - start)) s)"
