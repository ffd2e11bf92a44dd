#!/usr/bin/env bash
# `install.sh --from FILE` (no Rust toolchain): a release archive built here from the release
# binary (scripts/package-archive.sh), and a bundle (.mcpb), installed into a temporary HOME with
# `cargo` made unavailable (a `cargo` on PATH that records being called). Checks the checksum
# paths (the .sha256 beside it, --sha256, missing, wrong, malformed) and what a hostile or wrong
# file gets: entries outside the folder, a symlinked binary, a binary for another system, a
# bundle without this system's server. Nothing is installed unless everything checks out.
#
# Needs the release binary (target/release/workbench; built when missing), bash, tar, python3.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$ROOT"
START=$(date +%s)
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
REL="$CARGO_TARGET_DIR/release/workbench"
[ -x "$REL" ] || cargo build --release --locked

T="$(mktemp -d)"
trap 'rm -rf "$T"' EXIT
case "$(uname -s)-$(uname -m)" in
  Linux-x86_64) TARGET=x86_64-unknown-linux-gnu; OS=linux ;;
  Linux-aarch64) TARGET=aarch64-unknown-linux-gnu; OS=linux ;;
  Darwin-arm64) TARGET=aarch64-apple-darwin; OS=darwin ;;
  Darwin-x86_64) TARGET=x86_64-apple-darwin; OS=darwin ;;
  *) echo "test_install_from: unsupported system $(uname -s)-$(uname -m)" >&2; exit 1 ;;
esac
bash scripts/package-archive.sh "$REL" "$TARGET" --out "$T/dl" >/dev/null
VERSION="$(sed -n 's/^version *= *"\([^"]*\)".*/\1/p' Cargo.toml | head -n 1)"
ARCHIVE="$T/dl/workbench-$VERSION-$TARGET.tar.gz"

# A HOME of its own with a Claude Desktop config, no cargo anywhere on PATH.
export HOME="$T/home"
mkdir -p "$HOME"
unset XDG_CONFIG_HOME WORKBENCH_BIN_DIR CARGO_HOME RUSTUP_HOME
# No keychain here: like a user on such a machine, the store is chosen with --secret-store file
# (recorded in workbench's config.json), not exported in this shell, so the servers the clients
# launch see it too (doctor checks what they see).
unset WORKBENCH_HOME WORKBENCH_SECRET_STORE WORKBENCH_VAULT_PASSPHRASE DBUS_SESSION_BUS_ADDRESS
export XDG_DATA_HOME="$T/data" WORKBENCH_NO_BROWSER=1
if [ "$OS" = darwin ]; then DESKTOP_DIR="$HOME/Library/Application Support/Claude"; else DESKTOP_DIR="$HOME/.config/Claude"; fi
mkdir -p "$DESKTOP_DIR" "$T/fakebin"
printf '{\n  "mcpServers": {"other": {"command": "npx"}},\n  "theme": "dark"\n}\n' >"$DESKTOP_DIR/claude_desktop_config.json"
printf '#!/bin/sh\necho called >>"%s"\nexit 99\n' "$T/cargo-called" >"$T/fakebin/cargo"
cp "$T/fakebin/cargo" "$T/fakebin/rustc"
chmod +x "$T/fakebin/cargo" "$T/fakebin/rustc"
export PATH="$T/fakebin:/usr/local/bin:/usr/bin:/bin"
BIN="$HOME/.local/bin/workbench"
# install.sh's temporary folders go here, so the test sees that they are removed.
export TMPDIR="$T/tmp"
mkdir -p "$TMPDIR"

PASS=0
FAIL=0
ok() { PASS=$((PASS + 1)); printf 'ok   %s\n' "$*"; }
fail() { FAIL=$((FAIL + 1)); printf 'FAIL %s\n' "$*"; }
check() { local what="$1"; shift; if "$@"; then ok "$what"; else fail "$what"; fi; }
run() { set +e; "$@" >"$T/out" 2>&1; rc=$?; set -e; }
sha() { if command -v sha256sum >/dev/null 2>&1; then sha256sum "$1" | cut -d' ' -f1; else shasum -a 256 "$1" | cut -d' ' -f1; fi; }
# seal FILE: write FILE.sha256 as a release would
seal() { (cd "$(dirname "$1")" && printf '%s  %s\n' "$(sha "$(basename "$1")")" "$(basename "$1")" >"$(basename "$1").sha256"); }
nothing_installed() { [ ! -e "$BIN" ]; }

echo "=== refusals (nothing may be installed by any of these)"
run ./install.sh --sha256 "$(sha "$ARCHIVE")"
check "--sha256 without --from: bad options (exit $rc)" [ "$rc" -eq 2 ]
cp "$ARCHIVE" "$T/nosum.tar.gz"
run ./install.sh --from "$T/nosum.tar.gz"
check "no checksum anywhere: refused (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'no checksum' '$T/out'"
run ./install.sh --from "$T/nosum.tar.gz" --sha256 "not-hex"
check "a malformed --sha256: refused (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q '64 hex digits' '$T/out'"
cp "$ARCHIVE" "$T/tampered.tar.gz"
cp "$ARCHIVE.sha256" "$T/tampered.tar.gz.sha256"
sed -i.bak 's/workbench-[^ ]*\.tar\.gz/tampered.tar.gz/' "$T/tampered.tar.gz.sha256"
# One byte flipped (not overwritten with a fixed one: the byte may already be that one).
python3 - "$T/tampered.tar.gz" <<'PY'
import sys
with open(sys.argv[1], "r+b") as f:
    f.seek(200)
    b = f.read(1)[0]
    f.seek(200)
    f.write(bytes([b ^ 0x01]))
PY
run ./install.sh --from "$T/tampered.tar.gz"
check "a changed byte: SHA-256 mismatch (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'SHA-256 MISMATCH' '$T/out'"
run ./install.sh --from "$ARCHIVE" --sha256 "$(printf '0%.0s' $(seq 64))"
check "--sha256 wins over the file beside it, and a wrong one is refused (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'MISMATCH' '$T/out'"

# Hostile archives, correctly summed (the sum proves only what the user downloaded).
mkdir -p "$T/evil/w"
printf '#!/bin/sh\necho pwned >"%s"\n' "$T/pwned" >"$T/evil/w/workbench"
chmod +x "$T/evil/w/workbench"
python3 - "$T/evil/dotdot.tar.gz" "$T/evil/w/workbench" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    t.add(sys.argv[2], arcname="w/workbench")
    t.add(sys.argv[2], arcname="w/../../escaped")
PY
seal "$T/evil/dotdot.tar.gz"
run ./install.sh --from "$T/evil/dotdot.tar.gz"
check "an archive with '..' entries is refused (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'outside its folder' '$T/out' && [ ! -e '$T/escaped' ]"
python3 - "$T/evil/link.tar.gz" <<'PY'
import sys, tarfile
with tarfile.open(sys.argv[1], "w:gz") as t:
    i = tarfile.TarInfo("w/workbench")
    i.type = tarfile.SYMTYPE
    i.linkname = "/bin/sh"
    t.addfile(i)
PY
seal "$T/evil/link.tar.gz"
run ./install.sh --from "$T/evil/link.tar.gz"
check "a symlinked binary is refused (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'not a regular file' '$T/out'"
python3 - "$T/evil/other.tar.gz" <<'PY'
import io, sys, tarfile
data = b"\x7fELF\x02\x01\x01" + b"\0" * 200  # not a program this machine can run
with tarfile.open(sys.argv[1], "w:gz") as t:
    i = tarfile.TarInfo("workbench-0-other/workbench")
    i.size, i.mode = len(data), 0o755
    t.addfile(i, io.BytesIO(data))
PY
seal "$T/evil/other.tar.gz"
run ./install.sh --from "$T/evil/other.tar.gz"
check "a binary for another system is refused before installing (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'does not run here' '$T/out'"
python3 - "$T/evil/nowb.mcpb" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w") as z:
    z.writestr("manifest.json", "{}")
    z.writestr("server/win32/workbench.exe", "MZ")
PY
seal "$T/evil/nowb.mcpb"
run ./install.sh --from "$T/evil/nowb.mcpb"
check "a bundle without this system's server names what it has (exit $rc)" sh -c "[ $rc -eq 1 ] && grep -q 'server/win32/workbench.exe' '$T/out'"
run ./install.sh --from "$T/evil/w/workbench" --sha256 "$(sha "$T/evil/w/workbench")"
check "a file that is neither archive nor bundle is refused (exit $rc)" [ "$rc" -eq 1 ]
check "no refused file ran its binary" [ ! -e "$T/pwned" ]
check "nothing was installed by any refused file" nothing_installed
check "nothing left half-written in the bin directory" sh -c "[ ! -d '$HOME/.local/bin' ] || [ -z \"\$(ls -A '$HOME/.local/bin')\" ]"

echo "=== --from ARCHIVE --dry-run"
run ./install.sh --from "$ARCHIVE" --dry-run
check "dry run exits 0 (got $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/out"
check "dry run verified the sum" grep -q 'SHA-256 ok' "$T/out"
check "dry run installs nothing" nothing_installed

echo "=== --from ARCHIVE (the .sha256 beside it)"
t1=$(date +%s)
run ./install.sh --from "$ARCHIVE" --secret-store file
echo "(install.sh --from took $(($(date +%s) - t1)) s)"
check "install --from exits 0 (got $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/out"
check "the sum was read from the .sha256 file" grep -q "expected SHA-256 from workbench-$VERSION-$TARGET.tar.gz.sha256" "$T/out"
check "binary installed and runs" sh -c "'$BIN' --version | grep -q '^workbench '"
check "the installed binary is the released one" [ "$(sha "$BIN")" = "$(sha "$REL")" ]
check "cargo and rustc were never called" [ ! -e "$T/cargo-called" ]
check "Claude Desktop registered, other server kept" python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); assert d['mcpServers']['workbench']['command']==sys.argv[2] and d['mcpServers']['other']=={'command':'npx'} and d['theme']=='dark', d" "$DESKTOP_DIR/claude_desktop_config.json" "$BIN"
check "install ran workbench doctor" grep -q '^==> workbench doctor' "$T/out"
check "the unpacked copy is cleaned up" sh -c "[ -z \"\$(ls -A '$TMPDIR')\" ]"

echo "=== --from BUNDLE with --sha256 (no file beside it)"
rm -f "$BIN"
python3 - "$T/dl/workbench-$VERSION.mcpb" "$REL" "$OS" <<'PY'
import sys, zipfile
out, binary, os_ = sys.argv[1:]
with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
    z.writestr("manifest.json", '{"name": "workbench"}')
    i = zipfile.ZipInfo(f"server/{os_}/workbench")
    i.external_attr = (0o100755 << 16)
    z.writestr(i, open(binary, "rb").read(), zipfile.ZIP_DEFLATED)
PY
run ./install.sh --from "$T/dl/workbench-$VERSION.mcpb" --sha256 "$(sha "$T/dl/workbench-$VERSION.mcpb" | tr a-f A-F)" --no-register --secret-store file
check "install --from bundle exits 0 (got $rc)" [ "$rc" -eq 0 ]
[ "$rc" -eq 0 ] || sed 's/^/    | /' "$T/out"
check "the bundle's server/$OS/workbench is installed" [ "$(sha "$BIN")" = "$(sha "$REL")" ]
BUNDLE="$CARGO_TARGET_DIR/dist/workbench-$VERSION.mcpb"
if [ -f "$BUNDLE" ] && [ -f "$BUNDLE.sha256" ] && unzip -l "$BUNDLE" 2>/dev/null | grep -q "server/$OS/workbench"; then
  rm -f "$BIN"
  run ./install.sh --from "$BUNDLE" --no-register --secret-store file
  check "the real bundle (scripts/bundle.sh) installs with its .sha256 (exit $rc)" sh -c "[ $rc -eq 0 ] && '$BIN' --version >/dev/null"
fi

echo
echo "install --from: $PASS passed, $FAIL failed ($(($(date +%s) - START)) s)"
[ "$FAIL" -eq 0 ]
