#!/usr/bin/env bash
# Run a directory of MPICH's tests vendored beside this script (tests/mpich-DIR: its
# test/mpi/DIR, skip.txt, counts.txt, openmpi-pass.txt) with an MPI C compiler wrapper
# and a launcher, and compare with the entries that pass under Open MPI 4.1.4.
# tests/mpich-io/run and tests/mpich-rma/run call it.
#
#   tests/mpich-extra.sh DIR CC RUN_PREFIX...
#   tests/mpich-extra.sh io mpicc mpirun --oversubscribe --mca btl self,tcp -np
#   tests/mpich-extra.sh rma target/release/volpexcc target/release/volpexrun -r 2 -n
#
# The harness is ../shared/mpich-tests's (mpichtests.sh, its MTest support code, its
# hand-written config headers), used as it is, never edited: this script puts a tree
# together in a scratch directory (that suite's files linked, the vendored tests,
# skip.txt and counts.txt beside them), runs mpichtests_run there with
# MPICHTESTS_DIRS=DIR, and compares the passes with openmpi-pass.txt. Prints
# PASS|FAIL|BUILD|TIMEOUT per entry, "N passed, M failed", then the baseline entries
# that did not pass. Exit 0 when none is missing. MPICHTESTS_HOME_DIR: where the shared
# suite is (default ../shared/mpich-tests from the repository's root).
set -u
[ $# -ge 3 ] || { sed -n '2,18p' "$0"; exit 2; }
dir=$1; shift
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
here=$root/tests/mpich-$dir
[ -d "$here/test/mpi/$dir" ] || { echo "mpich-extra: no vendored tests in $here" >&2; exit 2; }
suite=${MPICHTESTS_HOME_DIR:-$root/../shared/mpich-tests}
[ -f "$suite/mpichtests.sh" ] || { echo "mpich-extra: no MPICH test suite at $suite" >&2; exit 2; }
cc=$1; shift
case $cc in */*) cc=$(realpath "$cc") ;; esac
run=$1; shift
case $run in */*) run=$(realpath "$run") ;; esac
tree=$(mktemp -d); out=$(mktemp)
trap 'rm -rf "$tree" "$out"' EXIT
mkdir -p "$tree/test/mpi"
for f in mpichtests.sh standalone; do ln -s "$suite/$f" "$tree/$f"; done
for d in util include dtpools; do ln -s "$suite/test/mpi/$d" "$tree/test/mpi/$d"; done
ln -s "$here/test/mpi/$dir" "$tree/test/mpi/$dir"
cp "$here/skip.txt" "$here/counts.txt" "$tree/"
export MPICHTESTS_DIRS=$dir
export MPICHTESTS_OUT=${MPICHTESTS_OUT:-${XDG_CACHE_HOME:-$HOME/.cache}/mpich-$dir}
. "$tree/mpichtests.sh"
mpichtests_run "$cc" "$run" "$@" | tee "$out"
want=$(grep -v '^#' "$here/openmpi-pass.txt")
[ -z "${MPICHTESTS_MATCH:-}" ] || want=$(printf '%s\n' "$want" | grep -E -- "$MPICHTESTS_MATCH")
got=$(sed -n 's/^PASS //p' "$out")
lost=$(printf '%s\n' "$want" | grep -v '^$' | grep -vxF -f <(printf '%s\n' "$got"))
n=$(printf '%s' "$lost" | grep -c .)
total=$(printf '%s\n' "$want" | grep -c .)
echo "baseline: $((total - n)) of the $total entries that pass under Open MPI pass here"
[ "$n" -eq 0 ] || { printf 'missing: %s\n' "$lost"; exit 1; }
