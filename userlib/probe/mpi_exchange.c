/* mpi_exchange: the same total exchange (MPI_Alltoallv) or cyclic shift (point-to-point
 * MPI_Sendrecv) as exchange.c, with the same data check and the same output line, for
 * the side-by-side comparison with BSPlib (issue 5, benchmarks). Timed as exchange.c: every
 * process times each repetition (from the barrier before it to the barrier after it) and a
 * repetition counts as its slowest process (on a host with fewer CPUs than processes, a
 * process may leave the closing barrier well after the others).
 * Usage: mpirun -n P mpi_exchange [-n bytes per pair] [-r reps] [-c] */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned char pattern(int src, int dst, int rep, int i)
{
    return (unsigned char)(src * 131 + dst * 31 + rep * 7 + i * 13 + (i >> 8));
}

int main(int argc, char **argv)
{
    int nbytes = 65536, reps = 10, cyclic = 0, p, s, r, t, i, bad = 0, total = 0;
    unsigned char *out, *in;
    int *counts, *displs;
    double t0, elapsed = 0.0, rank0 = 0.0, *mine, *slowest;
    MPI_Init(&argc, &argv);
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
            nbytes = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-c") == 0) {
            cyclic = 1;
        }
    }
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &s);
    out = malloc((size_t)nbytes * (size_t)p);
    in = malloc((size_t)nbytes * (size_t)p);
    counts = malloc((size_t)p * sizeof(int));
    displs = malloc((size_t)p * sizeof(int));
    mine = calloc((size_t)reps, sizeof(double));
    slowest = calloc((size_t)reps, sizeof(double));
    if (!out || !in || !counts || !displs || !mine || !slowest) {
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (t = 0; t < p; t++) {
        counts[t] = t == s ? 0 : nbytes;
        displs[t] = t * nbytes;
    }
    for (r = 0; r < reps; r++) {
        for (t = 0; t < p; t++) {
            for (i = 0; i < nbytes; i++) {
                out[(size_t)t * nbytes + i] = pattern(s, t, r, i);
            }
        }
        memset(in, 0, (size_t)nbytes * (size_t)p);
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        if (cyclic) {
            int right = (s + 1) % p, left = (s + p - 1) % p;
            MPI_Sendrecv(out + (size_t)right * nbytes, nbytes, MPI_BYTE, right, 0,
                         in + (size_t)left * nbytes, nbytes, MPI_BYTE, left, 0, MPI_COMM_WORLD,
                         MPI_STATUS_IGNORE);
        } else {
            MPI_Alltoallv(out, counts, displs, MPI_BYTE, in, counts, displs, MPI_BYTE,
                          MPI_COMM_WORLD);
        }
        MPI_Barrier(MPI_COMM_WORLD); /* a BSP superstep ends with a barrier too */
        mine[r] = MPI_Wtime() - t0;
        for (t = 0; t < p; t++) {
            if (t == s || (cyclic && t != (s + p - 1) % p)) {
                continue;
            }
            for (i = 0; i < nbytes; i++) {
                bad += in[(size_t)t * nbytes + i] != pattern(t, s, r, i);
            }
        }
    }
    MPI_Reduce(&bad, &total, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
    MPI_Reduce(mine, slowest, reps, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    for (r = 0; r < reps; r++) {
        elapsed += slowest[r];
        rank0 += mine[r];
    }
    if (s == 0) {
        printf("exchange %s p=%d bytes=%d reps=%d schedule=mpi: %.1f us/superstep, %s\n",
               cyclic ? "cyclic" : "total", p, nbytes, reps, elapsed / reps * 1e6,
               total == 0 ? "ok" : "CORRUPTED");
        /* what this program reported before it took the slowest process (rank 0's time) */
        printf("rank 0 alone: %.1f us per superstep\n", rank0 / reps * 1e6);
    }
    free(out);
    free(in);
    free(counts);
    free(displs);
    free(mine);
    free(slowest);
    MPI_Finalize();
    return 0;
}
