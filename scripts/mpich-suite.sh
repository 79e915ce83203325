#!/usr/bin/env bash
# MPICH's own test suite (../shared/mpich-tests: pt2pt coll comm datatype group init topo)
# built with volpexcc and run under volpexrun, compared with the entries that pass under
# Open MPI 4.1.4. Exit 0 when every baseline entry of the selection passes.
#
#   scripts/mpich-suite.sh [-r R] [--half] [--kill] [--mpi3] [--io|--rma] [--bin DIR] [--match REGEX]
#
#   -r R         replicas per rank (2)
#   --half       the fixed half that CI runs: every other program of each directory, in
#                name order (the same programs every time)
#   --kill       only pt2pt and coll, with replica 0 of rank 0 ending abruptly after its
#                third send (volpexrun --fault 0.0:exit@sends=3), so that its siblings and
#                every receiver fail over mid-run
#   --mpi3       also the entries of the suite's mpi3 category (openmpi-pass-mpi3.txt)
#   --io         MPICH's io directory instead (tests/mpich-io, vendored here, with its own
#                Open MPI baseline; not with --half, --kill or --mpi3)
#   --rma        MPICH's rma directory instead (tests/mpich-rma, the same way)
#   --bin DIR    where volpexcc and volpexrun are (default: build them, target/release)
#   --match RE   only the entries whose "dir/test NP ARGS" line matches RE (not with --half)
#
# Logs: ${MPICHTESTS_OUT:-target/mpich-tests}/volpexcc/out/*.log. The per-entry timeout is
# MPICHTESTS_TIMEOUT seconds (120 here; the suite's own default is 60).
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
suite=${MPICHTESTS_HOME_DIR:-$root/../shared/mpich-tests}
replicas=2 half=0 kill=0 extra="" bin="" match=""
while [ $# -gt 0 ]; do
  case $1 in
    -r) replicas=${2:?-r needs a number}; shift 2 ;;
    --half) half=1; shift ;;
    --kill) kill=1; shift ;;
    --mpi3) export MPICHTESTS_ALSO="${MPICHTESTS_ALSO:-} mpi3"; shift ;;
    --io) extra=io; shift ;;
    --rma) extra=rma; shift ;;
    --bin) bin=${2:?--bin needs a directory}; shift 2 ;;
    --match) match=${2:?--match needs a regex}; shift 2 ;;
    -h|--help) sed -n '2,22p' "$0"; exit 0 ;;
    *) echo "mpich-suite: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
case $replicas in ''|*[!0-9]*|0) echo "mpich-suite: -r takes a positive number" >&2; exit 2 ;; esac
[ -x "$suite/run" ] || { echo "mpich-suite: no test suite at $suite" >&2; exit 2; }

if [ -z "$bin" ]; then
  (cd "$root" && cargo build --release -p volpex-mpi -p volpex-launch)
  bin=$root/target/release
fi
for b in volpexcc volpexrun; do
  [ -x "$bin/$b" ] || { echo "mpich-suite: no $b in $bin" >&2; exit 2; }
done

if [ -n "$extra" ]; then
  [ $half = 0 ] && [ $kill = 0 ] && [ -z "${MPICHTESTS_ALSO:-}" ] \
    || { echo "mpich-suite: --$extra cannot be combined with --half, --kill or --mpi3" >&2; exit 2; }
  export MPICHTESTS_HOME_DIR=$suite MPICHTESTS_OUT=${MPICHTESTS_OUT:-$root/target/mpich-$extra}
  export MPICHTESTS_TIMEOUT=${MPICHTESTS_TIMEOUT:-120}
  [ -z "$match" ] || export MPICHTESTS_MATCH=$match
  exec "$root/tests/mpich-$extra/run" "$bin/volpexcc" "$bin/volpexrun" -r "$replicas" -n
fi

export MPICHTESTS_OUT=${MPICHTESTS_OUT:-$root/target/mpich-tests}
export MPICHTESTS_TIMEOUT=${MPICHTESTS_TIMEOUT:-120}
prefix=("$bin/volpexrun" -r "$replicas")
if [ $kill = 1 ]; then
  export MPICHTESTS_DIRS="pt2pt coll"
  prefix+=(--fault 0.0:exit@sends=3)
fi

dirs='pt2pt|coll|comm|datatype|group|init|topo'
[ $kill = 0 ] || dirs='pt2pt|coll'
if [ $half = 1 ]; then
  [ -z "$match" ] || { echo "mpich-suite: --match and --half cannot be combined" >&2; exit 2; }
  # The fixed half: the baseline's programs, every other one of each directory by name.
  progs=$(awk '{ print $1 }' "$suite/openmpi-pass.txt" | grep -E "^($dirs)/" | sort -u \
    | awk -F/ '{ if ($1 != d) { d = $1; i = 0 } if (i++ % 2 == 0) print }' \
    | sed 's/[.+]/\\&/g' | paste -sd'|')
  match="^($progs) "
elif [ $kill = 1 ] && [ -z "$match" ]; then
  match="^($dirs)/"
fi
# The run script filters both the entries it runs and the baseline it compares with.
[ -z "$match" ] || export MPICHTESTS_MATCH=$match
exec "$suite/run" "$bin/volpexcc" "${prefix[@]}" -n
