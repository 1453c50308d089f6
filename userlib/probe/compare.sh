#!/bin/sh
# Side-by-side benchmarks of issue 5 (one run each, ratios printed):
#   1. destination scheduling: total exchange, latin square against pid order;
#   2. BSPlib against Open MPI: the same total exchange and cyclic shift.
# Usage: compare.sh BENCH_DIR [P] [BYTES]
#   BENCH_DIR holds exchange and mpi_exchange (build/<tree>/bench); BSPRUN and MPIRUN
#   may prefix the commands, e.g. for the VM's namespaces:
#     BSPRUN="bsprun --hosts n0,n1,... --launch 'ip netns exec {host}'"
#     MPIRUN="mpirun --host ... --mca btl tcp,self"
set -eu
dir=${1:?usage: compare.sh BENCH_DIR [P] [BYTES]}
p=${2:-8}
bytes=${3:-262144}
reps=${REPS:-5}
bsprun=${BSPRUN:-}
mpirun=${MPIRUN:-mpirun --oversubscribe --allow-run-as-root --mca btl tcp,self}

time_of() { sed -n 's/.*: \([0-9.]*\) us\/superstep, ok$/\1/p'; }
run_bsp() {
    if [ -n "$bsprun" ]; then
        eval "$bsprun -n $p $dir/exchange $*"
    else
        BSP_NPROCS=$p "$dir/exchange" "$@"
    fi
}

echo "== destination scheduling: total exchange, p=$p, $bytes bytes per pair"
out=$(BSP_SCHEDULE=latin run_bsp -n "$bytes" -r "$reps"); echo "$out"; latin=$(echo "$out" | time_of)
out=$(BSP_SCHEDULE=pid run_bsp -n "$bytes" -r "$reps"); echo "$out"; pid=$(echo "$out" | time_of)
echo "latin square is $(echo "scale=2; $pid / $latin" | bc -l | sed 's/^\./0./')x faster than pid order (target >= 1.8 on the constrained switch)"

if [ -x "$dir/mpi_exchange" ]; then
    for mode in total cyclic; do
        flag=; [ "$mode" = cyclic ] && flag=-c
        echo "== BSPlib against Open MPI: $mode, p=$p, $bytes bytes per pair"
        out=$(run_bsp $flag -n "$bytes" -r "$reps"); echo "$out"; b=$(echo "$out" | time_of)
        out=$(eval "$mpirun -n $p $dir/mpi_exchange $flag -n $bytes -r $reps"); echo "$out"
        m=$(echo "$out" | time_of)
        echo "BSPlib is $(echo "scale=2; $m / $b" | bc -l | sed 's/^\./0./')x faster than Open MPI ($mode; target >= 2 for total on AF_BSP)"
    done
else
    echo "mpi_exchange not built (no MPI found): no Open MPI comparison"
fi
