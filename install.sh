#!/usr/bin/env bash
# Build workbench from this checkout (or take it from a downloaded release archive or bundle with
# --from, checksum verified, no Rust needed), install the binary, register it with the MCP clients
# found (Claude Desktop, Cursor, Claude Code), then run `workbench doctor`. Linux and macOS.
# Run ./install.sh --help for the options and exit statuses.
set -euo pipefail

usage() {
  cat <<'EOF'
install.sh - build, install and register workbench (Linux and macOS)

USAGE:
    ./install.sh [--dry-run] [--no-register] [--bin-dir DIR] [--secret-store STORE] [--keep-going]
    ./install.sh --from FILE [--sha256 HEX] [--dry-run] [--no-register] [--bin-dir DIR] [--secret-store STORE] [--keep-going]
    ./install.sh --uninstall [--dry-run] [--bin-dir DIR]

OPTIONS:
    --from FILE     install the binary from a downloaded release archive
                    (workbench-<version>-<target>.tar.gz) or bundle (workbench-<version>.mcpb)
                    instead of building: no Rust toolchain needed. Its SHA-256 must match
                    --sha256, or else the FILE.sha256 beside it; without either it is refused.
    --sha256 HEX    the expected SHA-256 of the --from file (from the release page)
    --dry-run       print what would be done; build, copy and change nothing
    --no-register   install the binary only; leave every client config alone
    --uninstall     remove workbench's entry from each client config, then the binary
                    (other servers and settings, and workbench's data directory, are kept)
    --bin-dir DIR   where to install the binary (default: $WORKBENCH_BIN_DIR, else ~/.local/bin)
    --secret-store STORE
                    keychain or file: where secrets live, given to `workbench setup` (default:
                    the OS keychain when it answers, else you are asked on the terminal)
    --keep-going    exit 0 even when `workbench doctor` reports a FAIL
    -h, --help      show this help

ENVIRONMENT:
    WORKBENCH_BIN_DIR   the default for --bin-dir
    CARGO_TARGET_DIR    honoured: the release binary is built and read there

Steps: check the Rust toolchain; `cargo build --release --locked` (with --from instead: verify the
file's SHA-256, unpack it to a temporary folder, check the binary runs here); copy the binary into the bin
directory; `workbench clients register` (adds a "workbench" entry to the mcpServers of Claude
Desktop, Cursor and Claude Code where installed, after a backup, keeping everything else byte for
byte, and refusing files that are not plain JSON); `workbench setup` (where no OS keychain answers,
offers the encrypted file store with a key file, recorded in workbench's config.json so the servers
the clients launch need no env); `workbench doctor`.

EXIT STATUS:
    0  done
    1  no toolchain, or the build or the copy failed; with --from: no checksum, a checksum
       mismatch, an archive that is not one of workbench's, or a binary for another system
    2  bad options
    3  installed (or uninstalled), but at least one client config was refused or could not be
       written; the other clients were done
    4  installed, but `workbench doctor` reported a FAIL (each FAIL line says how to fix it);
       --keep-going makes this 0 (3 wins when a client config was also refused)
EOF
}

DRY_RUN=0
REGISTER=1
UNINSTALL=0
BIN_DIR="${WORKBENCH_BIN_DIR:-}"
SECRET_STORE=""
KEEP_GOING=0
FROM=""
SHA256=""
while [ $# -gt 0 ]; do
  case "$1" in
    --from)
      [ $# -ge 2 ] || { echo "install.sh: --from needs a file" >&2; exit 2; }
      FROM="$2"
      shift
      ;;
    --from=*) FROM="${1#--from=}" ;;
    --sha256)
      [ $# -ge 2 ] || { echo "install.sh: --sha256 needs a value" >&2; exit 2; }
      SHA256="$2"
      shift
      ;;
    --sha256=*) SHA256="${1#--sha256=}" ;;
    --dry-run) DRY_RUN=1 ;;
    --no-register) REGISTER=0 ;;
    --uninstall) UNINSTALL=1 ;;
    --bin-dir)
      [ $# -ge 2 ] || { echo "install.sh: --bin-dir needs a directory" >&2; exit 2; }
      BIN_DIR="$2"
      shift
      ;;
    --bin-dir=*) BIN_DIR="${1#--bin-dir=}" ;;
    --keep-going) KEEP_GOING=1 ;;
    --secret-store | --secret-store=*)
      if [ "$1" = --secret-store ]; then
        [ $# -ge 2 ] || { echo "install.sh: --secret-store needs keychain or file" >&2; exit 2; }
        SECRET_STORE="$2"
        shift
      else
        SECRET_STORE="${1#--secret-store=}"
      fi
      case "$SECRET_STORE" in keychain | file) ;; *)
        echo "install.sh: --secret-store must be keychain or file, not '$SECRET_STORE'" >&2
        exit 2
        ;;
      esac
      ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      echo "install.sh: unknown option '$1'" >&2
      echo "Run ./install.sh --help for usage." >&2
      exit 2
      ;;
  esac
  shift
done

if [ -n "$SHA256" ] && [ -z "$FROM" ]; then
  echo "install.sh: --sha256 goes with --from FILE" >&2
  exit 2
fi
if [ -n "$FROM" ] && [ "$UNINSTALL" -eq 1 ]; then
  echo "install.sh: --from and --uninstall do not go together" >&2
  exit 2
fi
# Relative to where the user typed it, before the cd below.
if [ -n "$FROM" ]; then
  case "$FROM" in /*) ;; *) FROM="$PWD/$FROM" ;; esac
fi

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

case "$(uname -s)" in
  Darwin | Linux) ;;
  *)
    echo "install.sh: $(uname -s) is not supported by this script (Linux and macOS only)." >&2
    echo "Build with 'cargo build --release --locked', then run 'target/release/workbench clients register'." >&2
    exit 1
    ;;
esac

say() { printf '%s\n' "$*"; }
dry() { printf '[dry-run] %s\n' "$*"; }

BIN_DIR="${BIN_DIR:-${HOME:?HOME is not set}/.local/bin}"
case "$BIN_DIR" in /*) ;; *) BIN_DIR="$PWD/$BIN_DIR" ;; esac
BIN_DIR="${BIN_DIR%/}"
[ -n "$BIN_DIR" ] || BIN_DIR=/
DEST="$BIN_DIR/workbench"
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BUILT="$TARGET_DIR/release/workbench"
DRY_FLAG=()
[ "$DRY_RUN" -eq 1 ] && DRY_FLAG=(--dry-run)
STATUS=0

# ------------------------------------------------------------------------------------ uninstall
if [ "$UNINSTALL" -eq 1 ]; then
  say "==> Removing workbench from the MCP clients"
  # The JSON editing is the binary's (`workbench clients unregister`): the installed one, else a build.
  TOOL=""
  for candidate in "$DEST" "$BUILT"; do
    if [ -x "$candidate" ]; then
      TOOL="$candidate"
      break
    fi
  done
  if [ -z "$TOOL" ]; then
    say "No workbench binary at $DEST (or $BUILT), so client configs cannot be edited from here."
    say "Remove the \"workbench\" entry under \"mcpServers\" by hand, if there is one."
  elif ! "$TOOL" clients unregister ${DRY_FLAG[@]+"${DRY_FLAG[@]}"}; then
    STATUS=3
  fi
  say ""
  say "==> Removing the binary"
  if [ ! -e "$DEST" ]; then
    say "Nothing at $DEST."
  elif [ "$DRY_RUN" -eq 1 ]; then
    dry "would remove $DEST"
  else
    rm -f "$DEST"
    say "Removed $DEST"
  fi
  say ""
  say "workbench's data (database, audit log, encrypted secrets) was kept; see 'workbench status'"
  say "before uninstalling, or remove the data directory by hand. Keychain entries are under the"
  say "service name 'workbench'."
  [ "$DRY_RUN" -eq 1 ] && say "(dry run: nothing was changed)"
  exit "$STATUS"
fi

# ------------------------------------------------------------------------- from a release file
if [ -n "$FROM" ]; then
  say "==> Verifying $FROM"
  [ -f "$FROM" ] || { echo "install.sh: --from: no such file: $FROM" >&2; exit 1; }
  if [ -z "$SHA256" ]; then
    if [ -f "$FROM.sha256" ]; then
      SHA256="$(sed -n '1s/^\([0-9a-fA-F]\{64\}\).*/\1/p' "$FROM.sha256")"
      [ -n "$SHA256" ] || { echo "install.sh: $FROM.sha256 holds no SHA-256 (expected '<64 hex digits>  <name>')" >&2; exit 1; }
      say "expected SHA-256 from $(basename "$FROM").sha256"
    else
      echo "install.sh: no checksum for $FROM: give --sha256 HEX (from the release page) or put $(basename "$FROM").sha256 beside it" >&2
      exit 1
    fi
  fi
  SHA256="$(printf '%s' "$SHA256" | tr 'A-F' 'a-f')"
  case "$SHA256" in
    *[!0-9a-f]*) echo "install.sh: --sha256 must be 64 hex digits" >&2; exit 1 ;;
  esac
  [ ${#SHA256} -eq 64 ] || { echo "install.sh: --sha256 must be 64 hex digits" >&2; exit 1; }
  if command -v sha256sum >/dev/null 2>&1; then
    GOT="$(sha256sum "$FROM" | cut -d' ' -f1)"
  else
    GOT="$(shasum -a 256 "$FROM" | cut -d' ' -f1)"
  fi
  if [ "$GOT" != "$SHA256" ]; then
    echo "install.sh: SHA-256 MISMATCH for $FROM" >&2
    echo "  expected $SHA256" >&2
    echo "  got      $GOT" >&2
    echo "The file is damaged or not the one released: download it again. Nothing was installed." >&2
    exit 1
  fi
  say "SHA-256 ok ($GOT)"
  UNPACK="$(mktemp -d)"
  trap 'rm -rf "$UNPACK"' EXIT
  case "$(uname -s)" in Darwin) MCPB_OS=darwin ;; *) MCPB_OS=linux ;; esac
  case "$FROM" in
    *.tar.gz | *.tgz)
      # Only names under one top folder, no absolute paths, no '..': then the one binary.
      if tar -tzf "$FROM" | grep -Eq '^/|(^|/)\.\.(/|$)'; then
        echo "install.sh: $FROM has entries outside its folder; refused" >&2
        exit 1
      fi
      MEMBER="$(tar -tzf "$FROM" | grep -E '^[^/]+/workbench$' | head -n 1 || true)"
      [ -n "$MEMBER" ] || { echo "install.sh: $FROM is not a workbench archive (no <folder>/workbench in it)" >&2; exit 1; }
      tar -xzf "$FROM" -C "$UNPACK" "$MEMBER"
      BUILT="$UNPACK/$MEMBER"
      ;;
    *.mcpb | *.zip)
      MEMBER="server/$MCPB_OS/workbench"
      case "$FROM" in *.zip) MEMBER="" ;; esac
      command -v python3 >/dev/null 2>&1 || { echo "install.sh: unpacking $FROM needs python3" >&2; exit 1; }
      BUILT="$(python3 - "$FROM" "$UNPACK" "$MEMBER" <<'PY'
import sys, zipfile
src, dest, want = sys.argv[1:]
try:
    z = zipfile.ZipFile(src)
except zipfile.BadZipFile as e:
    sys.exit(f"install.sh: {src} is not a zip archive ({e})")
names = z.namelist()
if not want:
    want = next((n for n in names if n.count("/") == 1 and n.endswith("/workbench")), "")
if not want or want not in names:
    have = sorted(n for n in names if n.startswith("server/"))
    sys.exit(f"install.sh: {src} has no {want or '<folder>/workbench'} (a bundle for another system? it has: {', '.join(have) or 'no server binaries'})")
info = z.getinfo(want)
if (info.external_attr >> 16) & 0o170000 == 0o120000:
    sys.exit(f"install.sh: {want} in {src} is a symbolic link; refused")
out = f"{dest}/workbench"
with z.open(info) as r, open(out, "wb") as w:
    while True:
        chunk = r.read(1 << 20)
        if not chunk:
            break
        w.write(chunk)
print(out)
PY
)" || exit 1
      ;;
    *)
      echo "install.sh: --from takes a .tar.gz release archive or a .mcpb bundle, not $(basename "$FROM")" >&2
      exit 1
      ;;
  esac
  if [ ! -f "$BUILT" ] || [ -L "$BUILT" ]; then
    echo "install.sh: the binary in $FROM is not a regular file; refused" >&2
    exit 1
  fi
  chmod 755 "$BUILT"
  if ! VERSION_LINE="$("$BUILT" --version 2>/dev/null)" || [ "${VERSION_LINE#workbench }" = "$VERSION_LINE" ]; then
    echo "install.sh: the binary in $FROM does not run here ($(uname -s) $(uname -m)): download the one for this system" >&2
    exit 1
  fi
  say "unpacked $VERSION_LINE"
fi

# ------------------------------------------------------------------------------------ toolchain
if [ -z "$FROM" ]; then
say "==> Checking the Rust toolchain"
NEED_RUST="$(sed -n 's/^rust-version *= *"\([0-9.]*\)".*/\1/p' Cargo.toml | head -n 1)"
if ! command -v cargo >/dev/null 2>&1; then
  cat >&2 <<'EOF'
install.sh: 'cargo' was not found on PATH.

workbench is built from source with the Rust toolchain. Install it from https://rustup.rs:
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh
then open a new terminal (or run: . "$HOME/.cargo/env") and run ./install.sh again.
EOF
  exit 1
fi
HAVE_RUST="$(rustc --version 2>/dev/null | sed -n 's/^rustc \([0-9][0-9.]*\).*/\1/p')"
if [ -n "$NEED_RUST" ] && [ -n "$HAVE_RUST" ]; then
  if [ "$(printf '%s\n%s\n' "$NEED_RUST" "$HAVE_RUST" | sort -t. -k1,1n -k2,2n -k3,3n | head -n 1)" != "$NEED_RUST" ]; then
    echo "install.sh: rustc $HAVE_RUST is older than the $NEED_RUST workbench needs; run 'rustup update' and try again." >&2
    exit 1
  fi
fi
say "$(cargo --version) (rustc ${HAVE_RUST:-unknown}; workbench needs ${NEED_RUST:-a recent one})"

# ---------------------------------------------------------------------------------------- build
say ""
say "==> Building workbench (cargo build --release --locked)"
if [ "$DRY_RUN" -eq 1 ]; then
  dry "would run: cargo build --release --locked (output: $BUILT)"
else
  cargo build --release --locked
  if [ ! -x "$BUILT" ]; then
    echo "install.sh: the build finished but $BUILT is missing" >&2
    exit 1
  fi
fi
fi

# -------------------------------------------------------------------------------------- install
say ""
say "==> Installing to $DEST"
if [ "$DRY_RUN" -eq 1 ]; then
  [ -d "$BIN_DIR" ] || dry "would create $BIN_DIR"
  dry "would copy $BUILT to $DEST (mode 755, via a temporary file and a rename)"
else
  mkdir -p "$BIN_DIR"
  # Copy beside the destination, then rename over it: replacing a running binary this way is safe.
  TMP_DEST="$BIN_DIR/.workbench.install.$$"
  trap 'rm -f "$TMP_DEST"; [ -z "${UNPACK:-}" ] || rm -rf "$UNPACK"' EXIT
  cp "$BUILT" "$TMP_DEST"
  chmod 755 "$TMP_DEST"
  mv -f "$TMP_DEST" "$DEST"
  trap '[ -z "${UNPACK:-}" ] || rm -rf "$UNPACK"' EXIT
  say "Installed $("$DEST" --version)"
fi

case ":${PATH:-}:" in
  *":$BIN_DIR:"*)
    FOUND="$(command -v workbench 2>/dev/null || true)"
    if [ "$DRY_RUN" -eq 0 ] && [ -n "$FOUND" ] && [ "$FOUND" != "$DEST" ]; then
      say "warning: another workbench comes first on your PATH: $FOUND"
    fi
    ;;
  *)
    say "note: $BIN_DIR is not on your PATH. Client configs use the full path, so they work anyway;"
    say "      to type 'workbench' in a shell, add to your shell profile: export PATH=\"$BIN_DIR:\$PATH\""
    ;;
esac

# ------------------------------------------------------------------------------------- register
say ""
if [ "$REGISTER" -eq 0 ]; then
  say "==> Not registering with MCP clients (--no-register). To do it later: workbench clients register"
  say "    The entry to add under \"mcpServers\" by hand: \"workbench\": { \"command\": \"$DEST\" }"
else
  say "==> Registering with MCP clients"
  if [ "$DRY_RUN" -eq 0 ]; then
    "$DEST" clients register --command "$DEST" || STATUS=3
  elif [ -x "$BUILT" ]; then
    "$BUILT" clients register --dry-run --command "$DEST" || STATUS=3
  else
    dry "would run: $DEST clients register --command $DEST (nothing is built yet to show the exact changes)"
  fi
fi

# ---------------------------------------------------------------------------------- secret store
say ""
SETUP_ARGS=()
[ -n "$SECRET_STORE" ] && SETUP_ARGS=(--secret-store "$SECRET_STORE")
if [ "$DRY_RUN" -eq 1 ]; then
  dry "would run: $DEST setup ${SETUP_ARGS[*]+"${SETUP_ARGS[*]}"}"
  dry "would run: $DEST doctor"
  say ""
  if [ -n "$FROM" ]; then
    say "(dry run: the file was verified and unpacked to a temporary folder; nothing was copied or changed)"
  else
    say "(dry run: nothing was built, copied or changed)"
  fi
  exit "$STATUS"
fi
say "==> Choosing the secret store (workbench setup)"
# It asks (on the terminal) only when the OS keychain does not answer and no --secret-store was
# given; with stdin piped (curl | bash) but a person at the terminal, the question goes to /dev/tty.
if [ ! -t 0 ] && [ -t 1 ] && (: </dev/tty) 2>/dev/null; then
  "$DEST" setup ${SETUP_ARGS[@]+"${SETUP_ARGS[@]}"} </dev/tty || true
else
  "$DEST" setup ${SETUP_ARGS[@]+"${SETUP_ARGS[@]}"} || true
fi

# --------------------------------------------------------------------------------------- doctor
say ""
say "==> workbench doctor"
if ! "$DEST" doctor; then
  say ""
  say "workbench is installed, but doctor reported a FAIL above: each FAIL line ends with its fix."
  say "Fix those, then run 'workbench doctor' again. Where no OS keychain answers (SSH, containers, WSL):"
  say "    ./install.sh --secret-store file     (or: workbench setup --secret-store file)"
  if [ "$KEEP_GOING" -eq 0 ]; then
    [ "$STATUS" -ne 0 ] || STATUS=4
    say "(install.sh exits with status $STATUS; --keep-going goes on)"
    exit "$STATUS"
  fi
fi
say ""
if [ "$STATUS" -ne 0 ]; then
  say "Done, except for the client config(s) refused above (left untouched)."
else
  say "Done. Restart your MCP client, then ask it to use workbench (try: \"what time is it in Tokyo?\")."
fi
exit "$STATUS"
