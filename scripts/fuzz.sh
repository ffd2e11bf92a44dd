#!/usr/bin/env bash
# Builds the libFuzzer targets in fuzz/ and runs each for a fixed time (CI: 15 s each).
#
#   bash scripts/fuzz.sh [--time SECS] [--build-only] [target ...]   (targets: jsonrpc line_guard template validate form search)
#
# The build needs no cargo-fuzz and no nightly: fuzz/rustc-wrapper.sh (as RUSTC_WRAPPER) adds the
# instrumentation `cargo fuzz build -s none` uses (sancov, --cfg fuzzing) to our crates, rmcp and the
# targets, which fuzz/Cargo.toml builds at opt-level 1 with debug assertions; every other dependency
# is the very artifact the main workspace's `cargo test` built in target/debug, so after test.sh the
# fuzz build compiles only those crates, libFuzzer, and the C of ring and SQLite (libfuzzer-sys asks
# the `cc` crate for another feature). Binaries: target/debug/<target>.
# Seeds are read from fuzz/corpus/<target>/ (kept in the repo, never written by a run); new inputs
# go to target/fuzz/corpus/<target>/ (kept between local runs), crashes to target/fuzz/artifacts/<target>/.
# Exit status: non-zero when a target crashed, leaked past the memory limit or hung.
# Longer runs and triage: fuzz/README.md.
set -euo pipefail
ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
SECS=15
BUILD_ONLY=0
TARGETS=()
while [ $# -gt 0 ]; do
  case "$1" in
    --time) SECS="$2"; shift 2 ;;
    --build-only) BUILD_ONLY=1; shift ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
    *) TARGETS+=("$1"); shift ;;
  esac
done
[ ${#TARGETS[@]} -gt 0 ] || TARGETS=(jsonrpc line_guard template validate form search)

export CARGO_TARGET_DIR="$ROOT/target"
export RUSTC_WRAPPER="$ROOT/fuzz/rustc-wrapper.sh"
unset RUSTFLAGS
t0=$(date +%s)
# The fuzz workspace resolves from the main lock (same versions, so the same artifacts); cargo adds
# only libfuzzer-sys (pinned exactly in fuzz/Cargo.toml) and its few dependencies.
cp "$ROOT/Cargo.lock" "$ROOT/fuzz/Cargo.lock"
(cd "$ROOT/fuzz" && cargo build --bins)
echo "fuzz.sh: build $(($(date +%s) - t0)) s"
[ "$BUILD_ONLY" = 0 ] || exit 0

max_len() {
  case "$1" in
    jsonrpc) echo 200000 ;; # past the target's 64 KiB line cap, so over-long lines are reached
    *) echo 16384 ;;
  esac
}

failed=()
for t in "${TARGETS[@]}"; do
  bin="$CARGO_TARGET_DIR/debug/$t"
  [ -x "$bin" ] || { echo "fuzz.sh: no target '$t'" >&2; exit 2; }
  work="$ROOT/target/fuzz/corpus/$t"
  art="$ROOT/target/fuzz/artifacts/$t"
  mkdir -p "$work" "$art"
  dict=()
  [ -f "$ROOT/fuzz/dict/$t.dict" ] && dict=("-dict=$ROOT/fuzz/dict/$t.dict")
  echo "=== fuzz $t for ${SECS} s"
  s0=$(date +%s)
  # -rss_limit_mb: memory is bounded (a leak or a runaway allocation is a crash);
  # -timeout: one input taking longer than 20 s is a hang.
  if "$bin" "$work" "$ROOT/fuzz/corpus/$t" "${dict[@]}" -max_total_time="$SECS" -max_len="$(max_len "$t")" \
    -rss_limit_mb=2048 -timeout=20 -artifact_prefix="$art/" -print_final_stats=1 >"$art/run.log" 2>&1; then
    stats="$(grep -E '^stat::number_of_executed_units|^stat::peak_rss_mb' "$art/run.log" | sed 's/stat:://' | tr '\n' ' ')"
    cov="$(grep -Eo 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' "$art/run.log" | tail -1)"
    echo "ok    $t: $stats| $cov ($(($(date +%s) - s0)) s)"
  else
    echo "FAIL  $t (log: $art/run.log)"
    grep -E 'panicked|ERROR: libFuzzer|SUMMARY|Test unit written|out-of-memory|timeout' "$art/run.log" | head -20 | sed 's/^/      /'
    failed+=("$t")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: ${#failed[@]} target(s) failed: ${failed[*]}; reproduce with: $CARGO_TARGET_DIR/debug/<target> <crash file>"
  exit 1
fi
echo "fuzz.sh: ${#TARGETS[@]} targets, no crash ($(($(date +%s) - t0)) s in all)"
