#!/usr/bin/env bash
# Installs the providers' machine-readable API descriptions the contract test (tests/it/contract.rs)
# checks workbench's requests against, pinned by version, into .deps/contracts/ (git-ignored), and
# turns them into one compact operation index, .deps/contracts/index.json
# (tests/contract/build-index.mjs):
#   npm  (tests/contract/package-lock.json): @octokit/openapi 23.0.2 (GitHub's OpenAPI),
#        @linear/sdk 98.0.0 (Linear's schema types), trello.js 2.2.0 (Trello's operations),
#        @notionhq/client 5.26.0 (Notion's endpoint table), @slack/web-api 8.2.0 (Slack's method
#        list), asana 3.2.0, @hubspot/api-client 14.0.1 and @sentry/api 0.1.0 (clients generated
#        from Asana's, HubSpot's and Sentry's OpenAPI), jira.js 6.2.0 and confluence.js 3.2.0
#        (clients generated from Atlassian's OpenAPI), discord-api-types 0.38.57 (Discord's v10
#        routes), @doist/todoist-sdk 17.0.0 (Todoist's requests), stripe 23.1.0 (resources
#        generated from Stripe's OpenAPI), graphql 16.11.0 (parses GraphQL documents)
#   PyPI (wheel, no install): google-api-python-client 2.202.0, whose discovery documents describe
#        Gmail v1, Drive v3, Sheets v4 and Calendar v3
# Idempotent: a stamp holding the hash of the lock, the wheel version and the index builder makes a
# second run a no-op. Needs node + npm and python3 (with pip) on PATH, and the registries on the
# first run.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SRC="$ROOT/tests/contract"
DEPS="$ROOT/.deps/contracts"
GOOGLE_CLIENT="google-api-python-client==2.202.0"
export npm_config_fund=false npm_config_audit=false npm_config_update_notifier=false

hash_all() {
  cat "$SRC/package-lock.json" "$SRC/build-index.mjs" <(echo "$GOOGLE_CLIENT") |
    if command -v sha256sum >/dev/null 2>&1; then sha256sum; else shasum -a 256; fi | cut -d' ' -f1
}
want="$(hash_all)"
if [ -f "$DEPS/.stamp" ] && [ "$(cat "$DEPS/.stamp")" = "$want" ] && [ -f "$DEPS/index.json" ]; then
  echo "setup-contract-deps: $DEPS is up to date"
  exit 0
fi
for tool in node npm python3; do
  if ! command -v "$tool" >/dev/null 2>&1; then
    echo "setup-contract-deps: $tool not found; install it (Node.js with npm, Python 3 with pip)" >&2
    exit 1
  fi
done
mkdir -p "$DEPS"
rm -f "$DEPS/.stamp"

echo "setup-contract-deps: npm ci (tests/contract/package-lock.json)"
cp "$SRC/package.json" "$SRC/package-lock.json" "$DEPS/"
(cd "$DEPS" && npm ci --ignore-scripts --no-audit --loglevel=error >/dev/null)

echo "setup-contract-deps: $GOOGLE_CLIENT (discovery documents)"
rm -rf "$DEPS/google" "$DEPS/wheel"
mkdir -p "$DEPS/google" "$DEPS/wheel"
PIP=(python3 -m pip)
if [ -x "$ROOT/.deps/venv/bin/python" ]; then PIP=("$ROOT/.deps/venv/bin/python" -m pip); fi
"${PIP[@]}" download -q --disable-pip-version-check --no-deps --only-binary=:all: -d "$DEPS/wheel" "$GOOGLE_CLIENT"
python3 - "$DEPS/wheel" "$DEPS/google" <<'PY'
import glob, os, sys, zipfile
wheel = glob.glob(os.path.join(sys.argv[1], "google_api_python_client-*.whl"))[0]
with zipfile.ZipFile(wheel) as z:
    for doc in ["gmail.v1", "drive.v3", "sheets.v4", "calendar.v3"]:
        name = f"googleapiclient/discovery_cache/documents/{doc}.json"
        with open(os.path.join(sys.argv[2], f"{doc}.json"), "wb") as out:
            out.write(z.read(name))
PY
rm -rf "$DEPS/wheel"

echo "setup-contract-deps: building $DEPS/index.json"
node "$SRC/build-index.mjs" "$DEPS" >"$DEPS/index.json.tmp"
mv "$DEPS/index.json.tmp" "$DEPS/index.json"
printf '%s\n' "$want" >"$DEPS/.stamp"
echo "setup-contract-deps: done ($(wc -c <"$DEPS/index.json") bytes of index)"
