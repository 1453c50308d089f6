/* BSPlib programs that misuse the library, one per case (argv[1]); each must end the
 * whole program with one message naming the call, the process and the reason. */
#include <bsc.h>
#include <bsp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *which;

static int is(const char *name) { return strcmp(which, name) == 0; }

static void spmd(void)
{
    int x[4] = {0, 0, 0, 0}, y = 0;
    bsp_begin(3);
    bsp_push_reg(x, bsp_pid() == 1 ? 8 : 16);
    bsp_sync();
    if (is("bad_pid") && bsp_pid() == 1)
        bsp_put(3, &y, x, 0, 4);
    if (is("unregistered") && bsp_pid() == 2)
        bsp_get(0, &y, 0, x, 4);
    if (is("out_of_bounds") && bsp_pid() == 0)
        bsp_put(1, &y, x, 4, 8);
    if (is("negative_offset") && bsp_pid() == 2)
        bsp_hpget(0, x, -4, &y, 4);
    if (is("reg_mismatch") && bsp_pid() == 2)
        bsp_push_reg(&y, 4);
    if (is("pop_mismatch")) {
        bsp_push_reg(&y, 4);
        bsp_sync();
        bsp_pop_reg(bsp_pid() == 1 ? x : &y);
    }
    if (is("popped")) {
        bsp_pop_reg(x);
        bsp_sync();
        if (bsp_pid() == 2)
            bsp_put(0, &y, x, 0, 4);
    }
    if (is("tagsize_mismatch")) {
        int t = bsp_pid() == 2 ? 8 : 4;
        bsp_set_tagsize(&t);
    }
    if (is("tagsize_negative") && bsp_pid() == 1) {
        int t = -2;
        bsp_set_tag_size(&t);
    }
    if (is("move_empty") && bsp_pid() == 0)
        bsp_move(&y, 4);
    if (is("qsize_null_count") && bsp_pid() == 1)
        bsp_qsize(NULL, &y);
    if (is("qsize_null_bytes") && bsp_pid() == 2)
        bsp_qsize(&y, NULL);
    if (is("get_tag_null")) {
        int t = 4;
        bsp_set_tagsize(&t);
        bsp_sync();
        if (bsp_pid() == 0)
            bsp_get_tag(&y, NULL);
    }
    if (is("bsc_bad_root") && bsp_pid() == 0)
        bsc_bcast(bsc_start, 7, bsc_all, &y, x, 4);
    if (is("bsc_bad_algorithm") && bsp_pid() == 1) {
        setenv("BSC_ALGORITHM", "fastest", 1);
        bsc_bcast(bsc_start, 0, bsc_all, &y, x, 4);
    }
    if (is("bsc_bad_neighbour")) {
        bsc_group_t g = bsc_group_create_partition(bsp_pid() == 2);
        if (bsp_pid() == 2) {
            int n[2] = {2, 5};
            bsc_group_create_neighbourhood(n, 2);
        }
        bsc_group_destroy(g);
    }
    if (is("hpmove_null_tag") && bsp_pid() == 1) {
        void *payload = NULL;
        bsp_hpmove(NULL, &payload);
    }
    if (is("hpmove_null_payload") && bsp_pid() == 0) {
        void *tag = NULL;
        bsp_hpmove(&tag, NULL);
    }
    if (is("abort") && bsp_pid() == 1)
        bsp_abort("process %d gives up: %s\n", bsp_pid(), "no solution");
    if (is("sync_vs_end") && bsp_pid() == 1)
        bsp_end();
    if (is("missing_end") && bsp_pid() == 2)
        return; /* and exits without bsp_end */
    if (is("killed") && bsp_pid() == 1)
        raise(SIGKILL); /* dies in the middle of a superstep */
    if (is("begin_twice") && bsp_pid() == 0)
        bsp_begin(3);
    bsp_sync();
    bsp_end();
}

int main(int argc, char **argv)
{
    int y = 0;
    if (argc < 2)
        return 2;
    which = argv[1];
    if (is("before_begin"))
        bsp_put(0, &y, &y, 0, 4);
    if (is("pid_before_begin"))
        return bsp_pid();
    if (is("after_end")) {
        bsp_begin(2);
        bsp_end();
        bsp_sync();
        return 0;
    }
    bsp_init(spmd, argc, argv);
    spmd();
    printf("%s: no error detected\n", which);
    return 0;
}
