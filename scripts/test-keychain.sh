#!/usr/bin/env bash
# The one test that needs a real OS keychain: the Secret Service of gnome-keyring, inside a private
# D-Bus session with a throwaway unlocked keyring (never the developer's own). Needs dbus and
# gnome-keyring (scripts/setup-system-deps.sh installs them).
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$ROOT"
printf '\n=== %s\n' "Secret Service (gnome-keyring in a private D-Bus session)"
# A fresh keyring directory each run, so an old "login" keyring with another password is never met.
KEYRING_HOME="$(mktemp -d)"
trap 'rm -rf "$KEYRING_HOME"' EXIT
set -o pipefail
XDG_DATA_HOME="$KEYRING_HOME" dbus-run-session -- sh -c '
  echo -n throwaway | gnome-keyring-daemon --unlock --components=secrets >/dev/null 2>&1
  WORKBENCH_TEST_KEYCHAIN=1 cargo test --locked --test it keychain -- --nocapture
' 2>&1 | grep -v "Failed to set fd limit"
