#!/usr/bin/env bash
# Compares two builds of volpex-bench in alternating runs on this machine and prints, for
# every row, both medians and the median of the runs' ratios (new / old). Alternating
# runs and paired ratios are the only comparison that survives a noisy machine: on the
# 2-core development VM single runs vary by 20% for small messages and up to 3x for
# large ones.
#
# Usage: scripts/ab-bench.sh OLD_DIR NEW_DIR ROUNDS [VOLPEXRUN_ARGS...] -- BENCH_ARGS...
#   OLD_DIR, NEW_DIR: directories holding volpexrun and volpex-bench of each build
#   (e.g. a copy of target/release made before a change, and target/release).
#   The bench is run with --csv; COL (default 2) is the CSV column compared, and the
#   columns before it name the row: COL=2 for pingpong (latency), COL=3 for
#   collectives (time).
# Example:
#   scripts/ab-bench.sh /tmp/old target/release 8 -n 2 -r 2 -- \
#       pingpong --min-bytes 8 --max-bytes 8 --iters 20000
# PREFIX (default empty) goes before each volpexrun, e.g. PREFIX="chrt -r 10" to see
# through other jobs' load (report plain figures as well).
# Needs python3 for the summary.
set -eu
if [ $# -lt 4 ]; then
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
old=$1 new=$2 rounds=$3
shift 3
run_args=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    run_args+=("$1")
    shift
done
[ "${1:-}" = "--" ] && shift
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for i in $(seq "$rounds"); do
    for side in old new; do
        dir=$old
        [ "$side" = new ] && dir=$new
        ${PREFIX:-} "$dir/volpexrun" "${run_args[@]}" "$dir/volpex-bench" "$@" --csv 2>/dev/null |
            grep -E '^[^,]+,[0-9]' | sed "s/^/$i,/" >>"$out/$side" || true
    done
done
COL=${COL:-2} python3 - "$out/old" "$out/new" <<'PY'
import collections, os, statistics, sys
col = int(os.environ["COL"])
def load(path):
    rows = collections.defaultdict(dict)
    for line in open(path):
        f = line.strip().split(",")
        rows[",".join(f[1:col])][f[0]] = float(f[col])
    return rows
old, new = load(sys.argv[1]), load(sys.argv[2])
for key in old:
    o, n = old[key], new.get(key, {})
    paired = [n[i] / o[i] for i in o if i in n and o[i] > 0]
    if not paired:
        continue
    print(f"{key:>24}  old {statistics.median(o.values()):10.3f}  "
          f"new {statistics.median(n.values()):10.3f}  paired {statistics.median(paired):.3f}"
          f"  ({len(paired)} rounds)")
PY
