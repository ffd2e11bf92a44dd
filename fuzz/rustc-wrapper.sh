#!/bin/sh
# RUSTC_WRAPPER for scripts/fuzz.sh: adds libFuzzer's coverage instrumentation (the flags
# `cargo fuzz build -s none` passes) to our own crates, rmcp and the fuzz targets only; every other
# crate compiles unchanged, so cargo reuses the artifacts of the main workspace's `cargo test`.
# Those crates have their own profile (opt-level 1) in fuzz/Cargo.toml, hence artifacts of their own.
rustc="$1"
shift
case " $* " in
  *" --crate-name workbench "* | *" --crate-name plugins "* | *" --crate-name rmcp "* | \
  *" --crate-name jsonrpc "* | *" --crate-name template "* | *" --crate-name validate "* | *" --crate-name form "* | *" --crate-name line_guard "*)
    exec "$rustc" "$@" --cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
      -Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
      -Cllvm-args=-sanitizer-coverage-trace-compares
    ;;
esac
exec "$rustc" "$@"
