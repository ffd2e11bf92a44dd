#!/usr/bin/env bash
# The system packages the test command needs beyond Rust, Python and Node: Debian's chromium (the
# portal's real-browser test) and gnome-keyring + dbus (the OS keychain test). As root on Debian or
# Ubuntu they are installed with apt when missing; otherwise the script says exactly what to
# install and fails. Idempotent: with everything present it does nothing.
set -euo pipefail

missing=()
[ -x "${CHROMIUM:-/usr/bin/chromium}" ] || missing+=(chromium)
command -v dbus-run-session >/dev/null 2>&1 || missing+=(dbus)
command -v gnome-keyring-daemon >/dev/null 2>&1 || missing+=(gnome-keyring)
command -v secret-tool >/dev/null 2>&1 || missing+=(libsecret-tools)
# ---- dist (issue 28): the Windows cross build and its Wine smoke test (scripts/test-windows.sh)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || missing+=(wine)
# ---- end dist

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system-deps: chromium, dbus and gnome-keyring are present"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "setup-system-deps: installing ${missing[*]} with apt-get"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq "${missing[@]}" >/dev/null
  exit 0
fi
echo "setup-system-deps: missing ${missing[*]}." >&2
echo "  Install them (Debian/Ubuntu: sudo apt-get install -y ${missing[*]}; the packages are Debian's" >&2
echo "  chromium, dbus, gnome-keyring and libsecret-tools), or run this command as root to have it do so." >&2
exit 1
