#!/bin/bash
# The time from a preemption notice to every replica handed over when the whole machine
# goes: NPB class B at -n 4 -r 2, every replica on this machine, a file notice for it
# written NOTICE_AT seconds in (default 10). One line per code: exit status, wall time,
# volpexrun's "X s after the notice", the verification. Usage:
#   cargo build --release -p volpex-launch -p npb
#   NOTICE_AT=15 scripts/handover-time.sh bt sp ft
# (tests/tests/handover_time.rs measures one host of five noticed.)
set -u
cd "$(dirname "$0")/.."
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
for b in "$@"; do
  (sleep "${NOTICE_AT:-10}"; echo 30 > "$dir/notice-localhost") &
  writer=$!
  s=$(date +%s)
  timeout 900 target/release/volpexrun -n 4 -r 2 --preemption-notice "file=$dir/notice-{host}" \
    target/release/npb "$b" --class B > "$dir/out" 2> "$dir/err"
  rc=$?
  e=$(date +%s)
  kill "$writer" 2>/dev/null
  wait "$writer" 2>/dev/null
  echo "$b rc=$rc wall=$((e - s))s $(grep -o '[0-9.]* s after the notice' "$dir/err" | head -1) $(grep -o 'Verification *= *[A-Z]*' "$dir/out")"
  rm -f "$dir/notice-localhost"
done
