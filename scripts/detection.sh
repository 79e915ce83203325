#!/usr/bin/env bash
# Failure detection on a loaded machine: false positives and detection time.
#
#   [VR=volpexrun RING=ring-example] scripts/detection.sh [RUNS] [-- extra volpexrun flags]
#
# 1. Oversubscribed: volpexrun and a 2 x 2 ring job pinned to CPU 0 with 3 busy loops
#    there too (4 replicas per core, each competing with 3 spinners). Counts replicas
#    declared "silent" although nothing stopped them (false positives).
# 2. Short SIGSTOPs on the same loaded core: replica 1.0 stopped 0.5, 1.0 and 1.5 s
#    (--fault stop/cont); a replica declared dead for a stop shorter than the timeout is a
#    false positive.
# 3. Detection time: replica 1.0 stopped for good; the report says how long it had been
#    silent when it was declared dead.
# Every process started here is ended by its pid; temporary files are removed.
set -u
cd "$(dirname "$0")/.."
RUNS=${1:-5}
shift || true
[ "${1:-}" = "--" ] && shift
EXTRA=("$@")
VR=${VR:-target/debug/volpexrun}
RING=${RING:-target/debug/examples/ring}
[ -x "$VR" ] || cargo build -p volpex-launch -p volpex --bins --examples >/dev/null 2>&1
TMP=$(mktemp -d)
HOGS=()
cleanup() {
    for p in "${HOGS[@]}"; do kill "$p" 2>/dev/null; done
    rm -rf "$TMP"
}
trap cleanup EXIT
for _ in 1 2 3; do
    taskset -c 0 sh -c 'while :; do :; done' &
    HOGS+=($!)
done

# state of every replica in a report, one "rank.replica state error" per line
states() {
    python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))
for p in r["processes"]:
    print("%d.%d %s %s" % (p["rank"], p["replica"], p["state"], p.get("detail") or ""))
' "$1" 2>/dev/null
}

job() { # faults...
    local args=()
    for f in "$@"; do args+=(--fault "$f"); done
    rm -f "$TMP/r.json"
    taskset -c 0 "$VR" -n 2 -r 2 "${EXTRA[@]}" "${args[@]}" --report "$TMP/r.json" \
        "$RING" --rounds 300 --work-ms 10 >/dev/null 2>"$TMP/err"
    echo $? >"$TMP/rc"
}

fp=0; jobs=0
for _ in $(seq "$RUNS"); do
    job
    jobs=$((jobs + 1))
    n=$(states "$TMP/r.json" | grep -c silent)
    fp=$((fp + n))
done
echo "oversubscribed, no fault: $fp replicas declared silent in $jobs jobs ($((jobs * 4)) replicas)"

for stop in 0.5 1.0 1.5; do
    dead=0
    for _ in $(seq "$RUNS"); do
        cont=$(python3 -c "print(1.0 + $stop)")
        job "1.0:stop@1.0" "1.0:cont@$cont"
        n=$(states "$TMP/r.json" | grep -c silent)
        dead=$((dead + n))
    done
    echo "stop ${stop} s: $dead of $RUNS stopped replicas declared dead"
done

for _ in $(seq "$RUNS"); do
    job "1.0:stop@1.0"
    states "$TMP/r.json" | grep '^1.0' | grep -o 'no heartbeat for [0-9.]* s' || echo "1.0 not declared silent: $(states "$TMP/r.json" | grep '^1.0')"
done | sort | uniq -c | sed 's/^/detection: /'
