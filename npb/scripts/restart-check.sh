#!/usr/bin/env bash
# Exercises every NPB port's restore path on several ranks without regeneration: a job
# dumps each rank's checkpointed states (NPB_CHECKPOINT_DUMP), then a fresh job restarts
# from each checkpoint (NPB_RESTART_FROM: every rank resumes from its own state, as a
# restored replica would) and must compute the checked quantities bit for bit as the
# uninterrupted job (NPB_CHECKPOINT_STATS prints them) and print the same verification
# lines. Needs the release binaries (cargo build --release -p npb -p volpex-launch).
#
#   npb/scripts/restart-check.sh                 # all eight, class S, 4 ranks
#   BENCHES="cg mg" CLASS=W NP=4 ARGS="--checkpoint-every 1" npb/scripts/restart-check.sh
set -u
cd "$(dirname "$0")/../.."
BENCHES=${BENCHES:-"cg mg ft is ep bt sp lu"}
CLASS=${CLASS:-S}
NP=${NP:-4}
ARGS=${ARGS:-}
RUN="target/release/volpexrun"
NPB="target/release/npb"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failed=0

# The lines a restarted job must print like the uninterrupted one: the verification
# comparisons (BT, SP, LU) and the report block, without its timings.
verdict_lines() {
    sed -n '/Verification being performed\|Benchmark Completed/,$p' "$1" |
        grep -v 'Time in seconds\|Mop/s' | grep -v $'^\x01volpex:'
}

for b in $BENCHES; do
    dir="$work/$b"
    mkdir -p "$dir"
    NPB_CHECKPOINT_STATS=1 NPB_CHECKPOINT_DUMP="$dir" timeout 600 \
        "$RUN" -n "$NP" "$NPB" "$b" --class "$CLASS" $ARGS >"$dir/full.out" 2>"$dir/full.err"
    rc=$?
    want=$(grep '^npb checks:' "$dir/full.err")
    n=$(ls "$dir" | grep -c '^ckpt-.*\.rank-0$')
    if [ "$rc" != 0 ] || [ -z "$want" ] || [ "$n" = 0 ]; then
        echo "$b: uninterrupted job failed or took no checkpoint (exit $rc, $n checkpoints; ARGS=\"--checkpoint-every 1\" forces some)"
        failed=1
        continue
    fi
    verdict_lines "$dir/full.out" >"$dir/full.verdict"
    ok=0
    for k in $(seq "$n"); do
        NPB_CHECKPOINT_STATS=1 NPB_RESTART_FROM="$dir/ckpt-$k" timeout 600 \
            "$RUN" -n "$NP" "$NPB" "$b" --class "$CLASS" $ARGS >"$dir/r$k.out" 2>"$dir/r$k.err"
        rc=$?
        got=$(grep '^npb checks:' "$dir/r$k.err")
        verdict_lines "$dir/r$k.out" >"$dir/r$k.verdict"
        # A job that resumed takes only the checkpoints after the one it resumed from.
        taken=$(grep -o 'rank 0: [0-9]* checkpoints' "$dir/r$k.err" | grep -o '[0-9]* checkpoints' | grep -o '[0-9]*')
        if [ "$rc" = 0 ] && [ "$got" = "$want" ] && [ "$taken" = $((n - k)) ] &&
            cmp -s "$dir/full.verdict" "$dir/r$k.verdict"; then
            ok=$((ok + 1))
        else
            echo "$b: restart from checkpoint $k differs (exit $rc, $taken checkpoints after it, want $((n - k)))"
            echo "  want: $want"
            echo "  got:  $got"
            diff "$dir/full.verdict" "$dir/r$k.verdict" | head -10
            failed=1
        fi
    done
    echo "$b class $CLASS, $NP ranks: $ok of $n restarts identical"
done
exit $failed
