#!/usr/bin/env bash
# Class W verification of all eight NAS Parallel Benchmarks on Volpex.
#
# The test suite runs all eight at class W on 4 ranks (tests/tests/npb_class_w.rs);
# this script runs them with any rank and replica count. Every benchmark runs under
# volpexrun on 4 ranks, one replica each by default
# (all eight accept 4 ranks: BT and SP need a square count, the kernels a power of two;
# set NP=1 to run them as single ranks instead). The script prints each benchmark's
# verdict and time and exits non-zero if any run fails or does not verify.
#
# Usage: scripts/npb-class-w.sh            (builds the release binaries first)
#   NP=1 scripts/npb-class-w.sh            (one rank each)
#   REPLICAS=2 scripts/npb-class-w.sh      (two replicas of every rank)
#   BENCHES="cg mg" scripts/npb-class-w.sh (a subset)
set -u
cd "$(dirname "$0")/.."

NP=${NP:-4}
REPLICAS=${REPLICAS:-1}
BENCHES=${BENCHES:-"bt sp lu ep is cg mg ft"}
TIMEOUT=${TIMEOUT:-3600}

cargo build --release -q -p npb -p volpex-launch || exit 1
target=${CARGO_TARGET_DIR:-target}/release
vrun=$target/volpexrun
npb=$target/npb

failed=0
printf '%-4s %-6s %4s %3s %10s  %s\n' bench class np r seconds verdict
for b in $BENCHES; do
    out=$("$vrun" -n "$NP" -r "$REPLICAS" --timeout "$TIMEOUT" "$npb" "$b" --class W 2>&1)
    status=$?
    secs=$(printf '%s\n' "$out" | sed -n 's/^ *Time in seconds *= *//p' | head -n 1)
    verdict=$(printf '%s\n' "$out" | sed -n 's/^ *Verification *= *//p' | head -n 1)
    if [ "$status" -ne 0 ] || [ "$verdict" != "SUCCESSFUL" ]; then
        failed=$((failed + 1))
        printf '%-4s %-6s %4s %3s %10s  %s (exit %s)\n' "$b" W "$NP" "$REPLICAS" \
            "${secs:--}" "${verdict:-NO REPORT}" "$status"
        printf '%s\n' "$out" | tail -n 15 | sed 's/^/    /'
    else
        printf '%-4s %-6s %4s %3s %10s  %s\n' "$b" W "$NP" "$REPLICAS" "$secs" "$verdict"
    fi
done
if [ "$failed" -ne 0 ]; then
    echo "$failed of $(echo $BENCHES | wc -w) benchmarks failed or did not verify at class W"
    exit 1
fi
echo "all $(echo $BENCHES | wc -w) benchmarks verified at class W"
