#!/usr/bin/env bash
# The system packages the test command needs beyond Rust, Python and Node: python3-venv (a stock
# Debian/Ubuntu Python cannot make the test venv without it), dbus + gnome-keyring +
# libsecret-tools (the OS keychain test) and, on Debian, chromium (the portal's real-browser test).
#
# The browser by distribution: Debian's `chromium` is a real package. Ubuntu's `chromium` and
# `chromium-browser` only install the snap (which does not run in containers or without snapd),
# so on Ubuntu and other distributions nothing is installed for it: the portal test uses
# $CHROMIUM or a Chrome/Chromium already at one of $BROWSER_PATHS (not a snap launcher), and is
# skipped with a message when there is none (scripts/test-portal.sh).
#
# Privileges: as root, apt-get runs directly; as a normal user, through sudo when sudo is there
# (it may ask for your password); never "run this as root", so the checkout stays yours. With no
# apt-get or no way to become root, it names the packages to install and fails.
# Idempotent: with everything present it does nothing.
#
# For tests (tests/it/system_deps.rs): OS_RELEASE (default /etc/os-release) and BROWSER_PATHS
# (default below) stand in for the machine's.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=scripts/distro.sh
. "$HERE/distro.sh"

distro="$(wb_distro)"
python="${PYTHON:-python3}"
missing=()
notes=()

# python3-venv: `python3 -m venv` needs ensurepip, which Debian and Ubuntu ship separately.
if command -v "$python" >/dev/null 2>&1 && ! "$python" -c 'import ensurepip, venv' >/dev/null 2>&1; then
  case "$distro" in debian | ubuntu) missing+=(python3-venv) ;; *) notes+=("$python has no venv/ensurepip module: install your distribution's venv package for it") ;; esac
fi
command -v dbus-run-session >/dev/null 2>&1 || missing+=(dbus)
# tzdata: the time tool reads zone rules from the system's database on Linux, as a desktop has it.
[ -e /usr/share/zoneinfo/Europe/Berlin ] || missing+=(tzdata)
command -v gnome-keyring-daemon >/dev/null 2>&1 || missing+=(gnome-keyring)
command -v secret-tool >/dev/null 2>&1 || missing+=(libsecret-tools)
if [ -z "$(wb_browser)" ]; then
  case "$distro" in
    debian) missing+=(chromium) ;;
    ubuntu) notes+=("no browser for the portal test: Ubuntu's chromium and chromium-browser packages only install the snap, so none is installed; the portal test is skipped unless CHROMIUM names a Chrome or Chromium binary (for example Google Chrome's .deb: CHROMIUM=/usr/bin/google-chrome)") ;;
    *) notes+=("no browser for the portal test: set CHROMIUM to a Chrome or Chromium binary, or the portal test is skipped") ;;
  esac
fi
for n in ${notes[@]+"${notes[@]}"}; do echo "setup-system-deps: note: $n"; done
# ---- dist (issue 28): the Windows cross build and its Wine smoke test (scripts/test-windows.sh)
command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1 || missing+=(gcc-mingw-w64-x86-64)
command -v wine >/dev/null 2>&1 || missing+=(wine)
# ---- end dist

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup-system-deps: the system packages the tests need are present ($distro)"
  exit 0
fi

as_root=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1; then
    as_root=(sudo)
  else
    as_root=(none)
  fi
fi
if ! command -v apt-get >/dev/null 2>&1 || [ "${as_root[0]:-}" = none ]; then
  echo "setup-system-deps: missing ${missing[*]}." >&2
  if command -v apt-get >/dev/null 2>&1; then
    echo "  Install them as root (su -c 'apt-get install -y ${missing[*]}'), or install sudo; then run the tests again as yourself." >&2
  else
    echo "  Install them with your package manager (the Debian names: ${missing[*]}), then run the tests again." >&2
  fi
  exit 1
fi
echo "setup-system-deps: installing ${missing[*]} with ${as_root[*]:+${as_root[*]} }apt-get ($distro)"
${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get update -qq
${as_root[@]+"${as_root[@]}"} env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
