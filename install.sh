#!/usr/bin/env bash
# Build workbench from this checkout and install the binary (Linux and macOS).
# Run ./install.sh --help for the options. It never edits any MCP client's config file: it prints
# the snippet to paste and where it goes.
set -euo pipefail

usage() {
  cat <<'EOF'
install.sh - build workbench from this checkout and install the binary

USAGE:
    ./install.sh [--dry-run] [--help]

OPTIONS:
    --dry-run   print what would be done; build, copy and create nothing
    -h, --help  show this help

ENVIRONMENT:
    WORKBENCH_BIN_DIR   where to install the binary (default: $HOME/.local/bin)
    CARGO_TARGET_DIR    honoured if set (the build output is read from there)

It runs `cargo build --release --locked`, copies target/release/workbench into the bin directory,
and prints the JSON to add to Claude Desktop or Cursor. It does not edit any client config file.
Needs a Rust toolchain (https://rustup.rs).
EOF
}

DRY_RUN=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    -h | --help)
      usage
      exit 0
      ;;
    *)
      echo "install.sh: unknown option '$arg'" >&2
      echo "Run ./install.sh --help for usage." >&2
      exit 2
      ;;
  esac
done

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$ROOT"

case "$(uname -s)" in
  Darwin) OS=macos ;;
  Linux) OS=linux ;;
  *)
    echo "install.sh: $(uname -s) is not supported by this script (Linux and macOS only)." >&2
    echo "Build with 'cargo build --release --locked' and copy target/release/workbench yourself." >&2
    exit 1
    ;;
esac

# run CMD...: print it; execute it unless --dry-run.
run() {
  if [ "$DRY_RUN" -eq 1 ]; then
    printf '[dry-run] would run:'
    printf ' %q' "$@"
    printf '\n'
  else
    "$@"
  fi
}

say() { printf '%s\n' "$*"; }

# --- 1. toolchain
if command -v cargo >/dev/null 2>&1; then
  say "Using $(cargo --version 2>/dev/null || echo cargo)"
elif [ "$DRY_RUN" -eq 1 ]; then
  say "[dry-run] note: 'cargo' is not on PATH; a real run would stop here (install Rust from https://rustup.rs)"
else
  cat >&2 <<'EOF'
install.sh: 'cargo' was not found on PATH.

workbench is built from source with the Rust toolchain. Install it from https://rustup.rs:
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh
then open a new terminal (or run: . "$HOME/.cargo/env") and run ./install.sh again.
EOF
  exit 1
fi

# --- 2. build
TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
case "$TARGET_DIR" in /*) ;; *) TARGET_DIR="$ROOT/$TARGET_DIR" ;; esac
BUILT="$TARGET_DIR/release/workbench"

say ""
say "==> Building workbench (release)"
run cargo build --release --locked
if [ "$DRY_RUN" -eq 0 ] && [ ! -x "$BUILT" ]; then
  echo "install.sh: the build finished but $BUILT is missing" >&2
  exit 1
fi

# --- 3. install
BIN_DIR="${WORKBENCH_BIN_DIR:-${HOME:?HOME is not set}/.local/bin}"
case "$BIN_DIR" in /*) ;; *) BIN_DIR="$PWD/$BIN_DIR" ;; esac
BIN_DIR="${BIN_DIR%/}"
[ -n "$BIN_DIR" ] || BIN_DIR=/
DEST="$BIN_DIR/workbench"

say ""
say "==> Installing to $DEST"
if [ ! -d "$BIN_DIR" ]; then
  run mkdir -p "$BIN_DIR"
fi
# Copy beside the destination, then rename over it: replacing a running binary this way is safe.
TMP_DEST="$BIN_DIR/.workbench.install.$$"
if [ "$DRY_RUN" -eq 1 ]; then
  say "[dry-run] would copy $BUILT to $DEST (mode 755, via a temporary file and a rename)"
else
  trap 'rm -f "$TMP_DEST"' EXIT
  cp "$BUILT" "$TMP_DEST"
  chmod 755 "$TMP_DEST"
  mv -f "$TMP_DEST" "$DEST"
  trap - EXIT
  say "Installed: $("$DEST" --version 2>/dev/null || echo workbench) -> $DEST"
fi

case ":${PATH:-}:" in
  *":$BIN_DIR:"*)
    FOUND="$(command -v workbench 2>/dev/null || true)"
    if [ "$DRY_RUN" -eq 0 ] && [ -n "$FOUND" ] && [ "$FOUND" != "$DEST" ]; then
      say "warning: another workbench comes first on your PATH: $FOUND"
    fi
    ;;
  *)
    say ""
    say "warning: $BIN_DIR is not on your PATH. The config below uses the full path, so MCP clients"
    say "         work anyway; to run 'workbench' from a shell, add this to your shell profile:"
    say "             export PATH=\"$BIN_DIR:\$PATH\""
    ;;
esac

# --- 4. client configuration (printed, never written)
if [ "$OS" = macos ]; then
  CLAUDE_CONFIG="$HOME/Library/Application Support/Claude/claude_desktop_config.json"
else
  CLAUDE_CONFIG="${XDG_CONFIG_HOME:-$HOME/.config}/Claude/claude_desktop_config.json"
fi
CURSOR_CONFIG="$HOME/.cursor/mcp.json"

# JSON string escaping for the path (backslash and double quote; control characters are not valid in paths we print).
json_escape() {
  local s="$1"
  s="${s//\\/\\\\}"
  s="${s//\"/\\\"}"
  printf '%s' "$s"
}
CMD_JSON="$(json_escape "$DEST")"

cat <<EOF

==> Connect an MCP client

Add this to the client's config file (merge the "workbench" entry into an existing "mcpServers"):

{
  "mcpServers": {
    "workbench": {
      "command": "$CMD_JSON"
    }
  }
}

  Claude Desktop: $CLAUDE_CONFIG
                  (or Settings > Developer > Edit Config), then quit and reopen Claude Desktop.
  Cursor:         $CURSOR_CONFIG
                  (global; or .cursor/mcp.json in a project), then reload Cursor.

This script did not change either file.
EOF
if [ "$DRY_RUN" -eq 1 ]; then
  say ""
  say "(dry run: nothing was built, copied or created)"
fi
