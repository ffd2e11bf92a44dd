# Sourced by scripts/setup-system-deps.sh and scripts/test-portal.sh: which distribution this is,
# and which browser the portal test can drive.
#
# wb_distro prints debian, ubuntu or other (from $OS_RELEASE, default /etc/os-release; a
# derivative counts as its parent through ID_LIKE, Ubuntu first since Ubuntu's ID_LIKE says debian).
# wb_browser prints $CHROMIUM when it is executable, else the first executable of $BROWSER_PATHS
# that is not a snap launcher (Ubuntu's chromium and chromium-browser packages install one), else
# nothing.

BROWSER_PATHS="${BROWSER_PATHS:-/usr/bin/chromium /usr/bin/google-chrome-stable /usr/bin/google-chrome /usr/bin/chromium-browser}"

wb_distro() {
  local file="${OS_RELEASE:-/etc/os-release}" id="" like=""
  if [ -r "$file" ]; then
    id="$(sed -n 's/^ID=//p' "$file" | tr -d '"' | head -n 1)"
    like="$(sed -n 's/^ID_LIKE=//p' "$file" | tr -d '"' | head -n 1)"
  fi
  case " $id $like " in
    *" ubuntu "*) echo ubuntu ;;
    *" debian "*) echo debian ;;
    *) echo other ;;
  esac
}

# A snap launcher: a link into /snap, or a small script that runs the snap.
wb_is_snap_launcher() {
  case "$(readlink -f "$1" 2>/dev/null || echo "$1")" in /snap/*) return 0 ;; esac
  [ "$(head -c 2 "$1" 2>/dev/null)" = "#!" ] && grep -q snap "$1" 2>/dev/null
}

wb_browser() {
  local p
  if [ -n "${CHROMIUM:-}" ]; then
    [ -x "$CHROMIUM" ] && echo "$CHROMIUM"
    return 0
  fi
  for p in $BROWSER_PATHS; do
    if [ -x "$p" ] && ! wb_is_snap_launcher "$p"; then
      echo "$p"
      return 0
    fi
  done
}
