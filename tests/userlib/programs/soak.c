/* Soak: supersteps of a total exchange (bsp_put), gets and BSMP, every byte checked, for a
 * given time (tests/vm/soak.sh runs it on 4 nodes x 2 rails with loss and a flapping rail).
 *
 *   soak SECONDS [WORDS]
 *
 * Superstep s: every process puts WORDS words to every process (its slot in the
 * destination's receive area), gets WORDS words of its right neighbour's source area, and
 * sends each process one BSMP message (tag: source and superstep; payload length varies
 * with s). After the sync it checks every word and message against the pattern of
 * (source, destination, superstep); a wrong or missing one aborts the job. Process 0
 * decides when to stop (bsp_time() >= SECONDS) and tells the others by a put, so every
 * process runs the same supersteps. Prints "soak: N supersteps verified, W words and M
 * messages checked per process, 0 wrong" on process 0 at the end and a progress line every
 * 100 supersteps. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned pattern(int src, int dst, long s, long i) {
    return (unsigned)(src * 2654435761u) ^ (unsigned)(dst * 40503u) ^ (unsigned)(s * 97u) ^
           (unsigned)(i * 2246822519u);
}

static double seconds;
static long words = 256;

static void spmd(void) {
    int p, me, right, q, stop = 0;
    long s, i, bad = 0, msgs_checked = 0, words_checked = 0;
    unsigned *src, *recv, *got;
    bsp_size_t tagsize = 2 * sizeof(long);

    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    me = bsp_pid();
    right = (me + 1) % p;
    src = malloc(sizeof(unsigned) * (size_t)words);
    recv = malloc(sizeof(unsigned) * (size_t)words * (size_t)p);
    got = malloc(sizeof(unsigned) * (size_t)words);
    if (!src || !recv || !got)
        bsp_abort("soak: out of memory\n");
    bsp_push_reg(src, (bsp_size_t)(sizeof(unsigned) * (size_t)words));
    bsp_push_reg(recv, (bsp_size_t)(sizeof(unsigned) * (size_t)words * (size_t)p));
    bsp_push_reg(&stop, sizeof stop);
    bsp_set_tagsize(&tagsize);
    for (i = 0; i < words; i++)
        src[i] = pattern(me, -1, 0, i);
    bsp_sync();

    for (s = 0; !stop; s++) {
        unsigned *out = malloc(sizeof(unsigned) * (size_t)words);
        if (!out)
            bsp_abort("soak: out of memory\n");
        for (q = 0; q < p; q++) {
            long tag[2] = {me, s};
            long len = 1 + (s * 37 + me * 11 + q) % 3000;
            unsigned char *m = malloc((size_t)len);
            if (!m)
                bsp_abort("soak: out of memory\n");
            for (i = 0; i < words; i++)
                out[i] = pattern(me, q, s, i);
            bsp_put(q, out, recv, (bsp_size_t)(sizeof(unsigned) * (size_t)words * (size_t)me),
                    (bsp_size_t)(sizeof(unsigned) * (size_t)words));
            for (i = 0; i < len; i++)
                m[i] = (unsigned char)pattern(me, q, s, i);
            bsp_send(q, tag, m, (bsp_size_t)len);
            free(m);
        }
        free(out);
        bsp_get(right, src, 0, got, (bsp_size_t)(sizeof(unsigned) * (size_t)words));
        if (me == 0 && bsp_time() >= seconds) {
            int one = 1;
            for (q = 0; q < p; q++)
                bsp_put(q, &one, &stop, 0, sizeof one);
        }
        bsp_sync();

        /* Puts: slot q holds q's words for me in superstep s. */
        for (q = 0; q < p; q++)
            for (i = 0; i < words; i++)
                if (recv[q * words + i] != pattern(q, me, s, i))
                    bad++;
        /* Get: the right neighbour's source area of superstep s. */
        for (i = 0; i < words; i++)
            if (got[i] != pattern(right, -1, s, i))
                bad++;
        words_checked += words * (p + 1);
        /* BSMP: one message from every process, tag (source, s). */
        {
            bsp_size_t n, bytes, status;
            bsp_qsize(&n, &bytes);
            if (n != p)
                bad++;
            for (q = 0; q < n; q++) {
                long tag[2];
                unsigned char *m;
                bsp_get_tag(&status, tag);
                if (status < 0 || tag[1] != s || tag[0] < 0 || tag[0] >= p) {
                    bad++;
                    bsp_move(NULL, 0);
                    continue;
                }
                m = malloc((size_t)status + 1);
                if (!m)
                    bsp_abort("soak: out of memory\n");
                bsp_move(m, status);
                if (status != 1 + (s * 37 + tag[0] * 11 + me) % 3000)
                    bad++;
                for (i = 0; i < status; i++)
                    if (m[i] != (unsigned char)pattern((int)tag[0], me, s, i))
                        bad++;
                free(m);
                msgs_checked++;
            }
        }
        if (bad)
            bsp_abort("soak: process %d: %ld wrong words or messages in superstep %ld\n", me, bad,
                      s);
        /* Next superstep's source area (read by the left neighbour's get at the next
         * sync, which this process has not reached yet). */
        for (i = 0; i < words; i++)
            src[i] = pattern(me, -1, s + 1, i);
        if (me == 0 && (s + 1) % 100 == 0) {
            printf("soak: %ld supersteps verified at %.0f s\n", s + 1, bsp_time());
            fflush(stdout);
        }
    }
    if (me == 0)
        printf(
            "soak: %ld supersteps verified, %ld words and %ld messages checked per process, "
            "0 wrong\n",
            s, words_checked, msgs_checked);
    bsp_pop_reg(&stop);
    bsp_pop_reg(recv);
    bsp_pop_reg(src);
    free(src);
    free(recv);
    free(got);
    bsp_end();
}

int main(int argc, char **argv) {
    bsp_init(spmd, argc, argv);
    if (argc < 2 || (seconds = atof(argv[1])) <= 0) {
        fprintf(stderr, "usage: soak SECONDS [WORDS]\n");
        return 2;
    }
    if (argc > 2)
        words = atol(argv[2]);
    if (words < 1 || words > 1 << 20) {
        fprintf(stderr, "soak: WORDS 1..1048576\n");
        return 2;
    }
    spmd();
    return 0;
}
