#!/bin/sh
# The host benchmark of authenticated packets (Documentation/messaging.rst, "Cost of
# authentication"): a BSPlib total exchange of p = 4 processes over UDP on one host, with
# the packet MAC (the default) and without it (BSP_UDP_AUTH=0, insecure, for this
# comparison only), against the same exchange with Open MPI (mpirun, shared memory: the
# vader BTL), at 16, 1024 and 65536 words of 8 bytes per pair. Every program checks every
# byte it receives; times are microseconds per superstep, each repetition counted as its
# slowest process, the median of ROUNDS runs of the three programs taken in turn (so that
# a busy moment of the host does not fall on one side only). Prints one table; asserts
# nothing about speed.
# Usage: udp_auth_compare.sh BENCH_DIR   (build/<tree>/bench: exchange, mpi_exchange)
#   P, WORDS ("16 1024 65536"), REPS_SMALL (200), REPS_LARGE (20), ROUNDS (3) may be set.
set -eu
dir=${1:?usage: udp_auth_compare.sh BENCH_DIR}
p=${P:-4}
words=${WORDS:-16 1024 65536}
mpirun=${MPIRUN:-mpirun --oversubscribe --allow-run-as-root --mca btl vader,self}

time_of() {
    line=$(grep ' us/superstep, ' || true)
    case "$line" in
    *", ok") echo "$line" | sed 's/.*: \([0-9.]*\) us\/superstep, ok$/\1/' ;;
    *) echo "udp_auth_compare: no verified result: $line" >&2; exit 1 ;;
    esac
}
median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ratio() { echo "scale=2; $1 / $2" | bc -l | sed 's/^\./0./'; }

[ -x "$dir/exchange" ] || { echo "udp_auth_compare: $dir/exchange is not built" >&2; exit 1; }
have_mpi=0
[ -x "$dir/mpi_exchange" ] && command -v mpirun >/dev/null && have_mpi=1

echo "BSPlib total exchange over UDP (p=$p, one host) vs Open MPI (shared memory); us/superstep"
printf '%8s %9s %12s %12s %8s %12s %10s\n' words bytes "UDP+MAC" "UDP no MAC" "MAC cost" "Open MPI" "MPI/MAC"
for w in $words; do
    bytes=$((w * 8))
    reps=${REPS_SMALL:-200}
    [ "$w" -ge 65536 ] && reps=${REPS_LARGE:-20}
    a='' n='' m=''
    for _ in $(seq "${ROUNDS:-3}"); do
        a="$a $(BSP_NPROCS=$p BSP_TRANSPORT=udp "$dir/exchange" -n "$bytes" -r "$reps" | time_of)"
        n="$n $(BSP_NPROCS=$p BSP_TRANSPORT=udp BSP_UDP_AUTH=0 "$dir/exchange" -n "$bytes" \
            -r "$reps" | time_of)"
        [ $have_mpi = 0 ] ||
            m="$m $($mpirun -n "$p" "$dir/mpi_exchange" -n "$bytes" -r "$reps" | time_of)"
    done
    auth=$(echo "$a" | median)
    plain=$(echo "$n" | median)
    mpi=-
    vs=-
    if [ $have_mpi = 1 ]; then
        mpi=$(echo "$m" | median)
        vs=$(ratio "$mpi" "$auth")x
    fi
    printf '%8s %9s %12s %12s %7sx %12s %10s\n' "$w" "$bytes" "$auth" "$plain" \
        "$(ratio "$auth" "$plain")" "$mpi" "$vs"
done
echo "MAC cost: time with the MAC / time without; MPI/MAC: Open MPI's time / BSPlib's with the MAC"
echo "(above 1: BSPlib faster). The MAC alone, per packet: BENCH_DIR/wire_mac (tests/bench/wire_mac.cpp)"
