#!/usr/bin/env bash
# The collective-write benchmark of docs/conformance/io.md ("Speed"): volpex-bench/c/io_write.c
# built with mpicc (Open MPI) and volpexcc, run in alternating rounds: Open MPI with its
# default MPI-IO component (ompio) and with ROMIO (`--mca io romio321`), `mpirun
# --oversubscribe --mca btl self,tcp -np 4`, then `volpexrun -n 4 -r 1` and `-r 2`. Each
# line gives the round, the configuration, the time io_write printed and the machine's
# 1-minute load before the run; at the end the medians and their ratios.
#
# Usage: scripts/io-bench.sh ROUNDS DIR [strided|contiguous] [MIB]
#   DIR: where the file goes (removed after each run). It must be a directory the file
#   layer replicates, not under /dev (a file in /dev/shm is written by every replica
#   itself, as without the layer); for a RAM disk, mount a tmpfs elsewhere, e.g.
#   `mount -t tmpfs -o size=4g tmpfs /tmp/iofs`.
#   MIB: the file's size (1024).
# Environment: VOLPEX_BIN (target/release) holds volpexrun and volpexcc.
# Needs mpicc, mpirun and python3.
set -eu
if [ $# -lt 2 ]; then
    sed -n '2,/^$/s/^# \{0,1\}//p' "$0" >&2
    exit 2
fi
rounds=$1 dir=$2 pattern=${3:-strided} mib=${4:-1024}
case $(realpath -m "$dir") in
/dev/* | /proc/* | /sys/*)
    echo "io-bench: $dir is under /dev, /proc or /sys: the file layer leaves it to the system" >&2
    exit 2
    ;;
esac
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${VOLPEX_BIN:-$root/target/release}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
src=$root/volpex-bench/c/io_write.c
mpicc -O2 -o "$work/io_write_ompi" "$src"
"$bin/volpexcc" -O2 -o "$work/io_write_vx" "$src"
args=("$dir" "$mib" "$pattern")
ompi=(mpirun --oversubscribe --mca btl self,tcp -np 4)
[ "$(id -u)" = 0 ] && ompi+=(--allow-run-as-root)
for r in $(seq "$rounds"); do
    for c in ompio romio r1 r2; do
        load=$(cut -d' ' -f1 /proc/loadavg)
        case $c in
        ompio) out=$("${ompi[@]}" "$work/io_write_ompi" "${args[@]}" 2>&1 || true) ;;
        romio) out=$("${ompi[@]}" --mca io romio321 "$work/io_write_ompi" "${args[@]}" 2>&1 || true) ;;
        r1) out=$("$bin/volpexrun" -n 4 -r 1 "$work/io_write_vx" "${args[@]}" 2>&1 || true) ;;
        r2) out=$("$bin/volpexrun" -n 4 -r 2 "$work/io_write_vx" "${args[@]}" 2>&1 || true) ;;
        esac
        t=$(echo "$out" | sed -n 's/^io_write: .* in \([0-9.]*\) s .*/\1/p')
        echo "$r $c ${t:-FAILED} load=$load"
    done
done | tee "$work/lines"
python3 - "$work/lines" <<'EOF'
import statistics, sys
times, loads = {}, []
for line in open(sys.argv[1]):
    _, c, t, load = line.split()
    loads.append(float(load.split("=")[1]))
    if t != "FAILED":
        times.setdefault(c, []).append(float(t))
med = {c: statistics.median(v) for c, v in times.items()}
for c, v in times.items():
    print(f"{c}: median {med[c]:.3f} s (min {min(v):.3f}, max {max(v):.3f}, {len(v)} runs)")
print(f"load: median {statistics.median(loads):.1f} (min {min(loads):.1f}, max {max(loads):.1f})")
for a, b, what in [("ompio", "r1", "-r 1 speed / Open MPI (ompio)"),
                   ("romio", "r1", "-r 1 speed / Open MPI (ROMIO)"),
                   ("r2", "r1", "-r 2 time / -r 1 time")]:
    if a in med and b in med:
        print(f"{what}: {med[a] / med[b]:.2f}")
EOF
