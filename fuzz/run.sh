#!/usr/bin/env bash
# Builds both fuzz targets on the stable compiler with libFuzzer's coverage
# instrumentation and runs each for SECONDS (default 20) from an empty corpus in a
# scratch directory. Exit 0 when neither found a crash; a crash's input and the panic
# are printed. .ci/run calls it, so the targets cannot rot.
#
#   fuzz/run.sh [SECONDS]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
secs=${1:-20}
case $secs in ''|*[!0-9]*|0) echo "fuzz/run.sh: SECONDS must be a positive number" >&2; exit 2 ;; esac
triple=$(rustc -vV | sed -n 's/^host: //p')
# The instrumentation cargo-fuzz adds, but AddressSanitizer (nightly only). `--target`
# keeps it away from build scripts.
export RUSTFLAGS="--cfg fuzzing -Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares -Cdebug-assertions -Coverflow-checks"
(cd "$here" && cargo build --release --locked --target "$triple" --target-dir target/stable)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in wire_decode engine_frames; do
  echo "fuzz: $t for ${secs} s"
  # -rss_limit_mb and -malloc_limit_mb stay at 2048 (README.md: wire_decode may reserve
  # a 1 GiB payload buffer).
  if ! (cd "$work" && "$here/target/stable/$triple/release/$t" -max_total_time="$secs" \
        -artifact_prefix="$work/" >"$work/$t.log" 2>&1); then
    tail -40 "$work/$t.log" >&2
    echo "fuzz: $t found a crash; its input:" >&2
    for f in "$work"/crash-* "$work"/oom-* "$work"/timeout-*; do
      [ -e "$f" ] && { echo "$f" >&2; od -An -tx1 "$f" | head -20 >&2; }
    done
    exit 1
  fi
  grep -E '^Done [0-9]+ runs' "$work/$t.log" || true
done
