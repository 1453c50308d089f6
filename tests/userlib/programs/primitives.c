/* Every BSPlib primitive through the C API, in bsp_init mode, with deterministic output
 * printed in pid order. Run with P = 3. */
#include <bsp.h>
#include <stdio.h>
#include <string.h>

static int nprocs_before_begin;

static void print_in_order(const char *line)
{
    int i;
    for (i = 0; i < bsp_nprocs(); i++) {
        if (bsp_pid() == i) {
            printf("[%d] %s\n", bsp_pid(), line);
            fflush(stdout);
        }
        bsp_sync();
    }
}

static void spmd(void)
{
    char line[512];
    int p, me, left, right, i, n, bytes, status, tagsize, prev;
    int a[3] = {0, 0, 0}, b = 0, got = -1, hp_got = -1, src;
    bsp_begin(3);
    p = bsp_nprocs();
    me = bsp_pid();
    left = (me + p - 1) % p;
    right = (me + 1) % p;

    /* DRMA: registration (both names), put, get, hpput, hpget. */
    bsp_push_reg(a, sizeof a);
    bsp_pushregister(&b, sizeof b);
    bsp_sync();
    src = 100 + me;
    bsp_put(right, &src, a, me * (int)sizeof(int), sizeof(int));
    src = -1; /* buffered at call time */
    b = 10 * me;
    bsp_get(left, &b, 0, &got, sizeof got);
    bsp_sync();
    src = 200 + me;
    bsp_hpput(left, &src, a, me * (int)sizeof(int), sizeof(int));
    bsp_hpget(right, &b, 0, &hp_got, sizeof hp_got);
    bsp_sync();
    snprintf(line, sizeof line, "a = %d %d %d, got %d, hpget %d", a[0], a[1], a[2], got, hp_got);
    print_in_order(line);
    bsp_pop_reg(a);
    bsp_popregister(&b);
    bsp_sync();

    /* BSMP: tag size (both names), send to everyone, qsize (both names), get_tag, move,
     * hpmove. Queue order: by source pid, then send order. */
    tagsize = sizeof(int);
    bsp_set_tagsize(&tagsize);
    prev = tagsize;
    bsp_sync();
    for (i = p - 1; i >= 0; i--) {
        int tag = 10 * me + i;
        char payload[32];
        snprintf(payload, sizeof payload, "m%d>%d", me, i);
        bsp_send(i, &tag, payload, (int)strlen(payload) + 1);
    }
    bsp_sync();
    bsp_qsize(&n, &bytes);
    snprintf(line, sizeof line, "previous tag size %d, queue %d messages %d bytes:", prev, n,
             bytes);
    for (;;) {
        int tag = -1;
        char payload[32];
        bsp_get_tag(&status, &tag);
        if (status < 0)
            break;
        bsp_move(payload, sizeof payload);
        snprintf(line + strlen(line), sizeof line - strlen(line), " %d:%s", tag, payload);
    }
    print_in_order(line);

    tagsize = 0;
    bsp_set_tag_size(&tagsize);
    bsp_sync();
    bsp_send(right, NULL, "hp", 3);
    bsp_sync();
    {
        void *tag_ptr, *payload_ptr;
        int len = bsp_hpmove(&tag_ptr, &payload_ptr);
        int len2 = bsp_hpmove(&tag_ptr, &payload_ptr);
        bsp_bsmp_info(&n, &bytes);
        snprintf(line, sizeof line, "hpmove %d then %d, bsmp_info %d %d, previous tag size %d",
                 len, len2, n, bytes, tagsize);
    }
    print_in_order(line);
    /* Only process 0 runs main's sequential part in bsp_init mode under a launcher. */
    snprintf(line, sizeof line, "nprocs before begin %d, time ok %d",
             me == 0 ? nprocs_before_begin : p, bsp_time() >= 0.0);
    print_in_order(line);
    bsp_end();
}

int main(int argc, char **argv)
{
    bsp_init(spmd, argc, argv);
    nprocs_before_begin = bsp_nprocs();
    spmd();
    printf("process 0 continues alone after bsp_end\n");
    return 0;
}
