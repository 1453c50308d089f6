#!/bin/sh
# The host benchmark (Documentation/messaging.rst, "Shared memory between the processes of
# a host"): a BSPlib total exchange of p = 4 processes on one host through shared memory
# (the default there), over UDP with the packet MAC and over UDP without it
# (BSP_UDP_AUTH=0, insecure, for this comparison only), against the same exchange with
# Open MPI's MPI_Alltoall (mpirun, shared memory: the vader BTL), at 16, 1024 and 65536
# words of 8 bytes per pair. Every program checks every byte it receives; times are
# microseconds per superstep, each repetition counted as its slowest process, the median
# of ROUNDS runs of the four programs taken in turn (so that a busy moment of the host
# does not fall on one side only). Prints one table; asserts nothing about speed.
# "MPI rank0" is Open MPI's time as rank 0 alone sees it (what mpi_exchange reported before
# it counted the slowest process as exchange does), for comparison with older tables.
# Usage: host_compare.sh BENCH_DIR   (build/<tree>/bench: exchange, mpi_exchange)
#   P, WORDS ("16 1024 65536"), REPS_SMALL (200), REPS_LARGE (20), ROUNDS (5) may be set.
set -eu
dir=${1:?usage: host_compare.sh BENCH_DIR}
p=${P:-4}
words=${WORDS:-16 1024 65536}
mpirun=${MPIRUN:-mpirun --oversubscribe --allow-run-as-root --mca btl vader,self}

time_of() {
    line=$(grep ' us/superstep, ' || true)
    case "$line" in
    *", ok") echo "$line" | sed 's/.*: \([0-9.]*\) us\/superstep, ok$/\1/' ;;
    *) echo "host_compare: no verified result: $line" >&2; exit 1 ;;
    esac
}
rank0_of() { sed -n 's/^rank 0 alone: \([0-9.]*\) us per superstep$/\1/p'; }
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $1 / $2" | bc -l | sed 's/^\./0./'; }
bsp() { BSP_NPROCS=$p "$@" "$dir/exchange" -n "$bytes" -r "$reps" | time_of; }

[ -x "$dir/exchange" ] || { echo "host_compare: $dir/exchange is not built" >&2; exit 1; }
have_mpi=0
[ -x "$dir/mpi_exchange" ] && command -v mpirun >/dev/null && have_mpi=1

echo "BSPlib total exchange p=$p on one host vs Open MPI MPI_Alltoall (shared memory); us/superstep,"
echo "median of ${ROUNDS:-5} rounds; MPI/x = Open MPI's time / BSPlib's (above 1: BSPlib faster)"
printf '%6s %7s %9s %9s %9s %9s %9s %8s %8s %8s\n' words bytes shm UDP+MAC "UDP noMAC" "Open MPI" \
    "MPI rank0" MPI/shm MPI/UDP "MAC cost"
for w in $words; do
    bytes=$((w * 8))
    reps=${REPS_SMALL:-200}
    [ "$w" -ge 65536 ] && reps=${REPS_LARGE:-20}
    s='' a='' n='' m='' z=''
    for _ in $(seq "${ROUNDS:-5}"); do
        s="$s $(bsp env BSP_TRANSPORT=auto BSP_SHM=1)"
        a="$a $(bsp env BSP_TRANSPORT=udp BSP_SHM=0)"
        n="$n $(bsp env BSP_TRANSPORT=udp BSP_SHM=0 BSP_UDP_AUTH=0)"
        if [ $have_mpi = 1 ]; then
            out=$($mpirun -n "$p" "$dir/mpi_exchange" -n "$bytes" -r "$reps")
            m="$m $(echo "$out" | time_of)"
            z="$z $(echo "$out" | rank0_of)"
        fi
    done
    shm=$(echo "$s" | median)
    auth=$(echo "$a" | median)
    plain=$(echo "$n" | median)
    mpi=- rank0=- vs_shm=- vs_udp=-
    if [ $have_mpi = 1 ]; then
        mpi=$(echo "$m" | median)
        rank0=$(echo "$z" | median)
        vs_shm=$(ratio "$mpi" "$shm")x
        vs_udp=$(ratio "$mpi" "$auth")x
    fi
    printf '%6s %7s %9s %9s %9s %9s %9s %8s %8s %7sx\n' "$w" "$bytes" "$shm" "$auth" "$plain" \
        "$mpi" "$rank0" "$vs_shm" "$vs_udp" "$(ratio "$auth" "$plain")"
done
echo "MAC cost: UDP time with the MAC / without it"
