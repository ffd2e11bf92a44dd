#!/usr/bin/env bash
# Packs a release binary into the archive `install.sh --from` installs, with its SHA-256 beside it:
#   workbench-<version>-<target>.tar.gz   (Linux, macOS)   workbench-<version>-<target>/workbench
#   workbench-<version>-<target>.zip      (Windows)        workbench-<version>-<target>/workbench.exe
# each with LICENSE-MIT, LICENSE-APACHE and docs/install.md, and <archive>.sha256 ("<hex>  <name>",
# what `sha256sum -c` and `shasum -a 256 -c` read).
#
#   scripts/package-archive.sh BINARY TARGET [--out DIR]     (default DIR: target/dist)
#
# TARGET is the Rust target triple the binary was built for (x86_64-unknown-linux-gnu,
# aarch64-apple-darwin, x86_64-pc-windows-gnu, ...). Refuses to pack the test-only Wine shim.
# The zip is written with Python (PYTHON, default python3: `python` on Windows runners).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"

[ $# -ge 2 ] || { echo "usage: scripts/package-archive.sh BINARY TARGET [--out DIR]" >&2; exit 2; }
BIN="$1"
TARGET="$2"
shift 2
OUT="$ROOT/target/dist"
while [ $# -gt 0 ]; do
  case "$1" in
    --out) OUT="$2"; shift ;;
    *) echo "package-archive: unknown option '$1'" >&2; exit 2 ;;
  esac
  shift
done
case "$TARGET" in
  *-linux-* | *-apple-darwin) KIND=tar.gz; EXE=workbench ;;
  *-windows-*) KIND=zip; EXE=workbench.exe ;;
  *) echo "package-archive: unknown target '$TARGET'" >&2; exit 2 ;;
esac
[ -f "$BIN" ] || { echo "package-archive: no binary at $BIN" >&2; exit 1; }
case "$(basename "$BIN")" in
  bcryptprimitives.dll) echo "package-archive: the Wine shim is test-only and never shipped" >&2; exit 1 ;;
esac

hash_of() {
  if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi
}

VERSION="$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)"
NAME="workbench-$VERSION-$TARGET"
STAGE="$(mktemp -d)"
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/$NAME/docs" "$OUT"
OUT="$(cd "$OUT" && pwd)"
cp "$BIN" "$STAGE/$NAME/$EXE"
chmod 755 "$STAGE/$NAME/$EXE"
cp LICENSE-MIT LICENSE-APACHE "$STAGE/$NAME/"
cp docs/install.md "$STAGE/$NAME/docs/install.md"

ARCHIVE="$NAME.$KIND"
rm -f "$OUT/$ARCHIVE" "$OUT/$ARCHIVE.sha256"
if [ "$KIND" = tar.gz ]; then
  # Owner and group 0, sorted names: the archive says nothing about the build machine's users.
  if tar --version 2>/dev/null | grep -q GNU; then
    tar -C "$STAGE" --owner=0 --group=0 --numeric-owner --sort=name -czf "$OUT/$ARCHIVE" "$NAME"
  else
    tar -C "$STAGE" -czf "$OUT/$ARCHIVE" "$NAME"
  fi
else
  "${PYTHON:-python3}" - "$STAGE" "$NAME" "$OUT/$ARCHIVE" <<'PY'
import os, sys, zipfile
stage, name, out = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    for dirpath, _, files in sorted(os.walk(os.path.join(stage, name))):
        for f in sorted(files):
            full = os.path.join(dirpath, f)
            z.write(full, os.path.relpath(full, stage))
PY
fi
(cd "$OUT" && printf '%s  %s\n' "$(hash_of "$ARCHIVE")" "$ARCHIVE" >"$ARCHIVE.sha256")
echo "package-archive: $OUT/$ARCHIVE ($(wc -c <"$OUT/$ARCHIVE" | tr -d ' ') bytes), sha256 $(cut -d' ' -f1 "$OUT/$ARCHIVE.sha256")"
