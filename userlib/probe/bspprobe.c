/* bspprobe: the BSP machine parameters of [SHM97], Appendix B, measured through libbsp.
 *
 *   bspprobe [-p 1,2,4,8] [-h words]     driver: runs the measurement for every p, with
 *                                         and without combining, and prints a table laid
 *                                         out like [SHM97] Table 2
 *   bspprobe --measure [-h words]         one measurement (SPMD; P from BSP_NPROCS or
 *                                         the launcher); prints one RESULT line
 *
 * s: local rate in Mflop/s, average of an inner product (memory bound) and a dense
 *    matrix product (cache bound), as Table 2's two [s] columns;
 * l: time of an empty superstep (over-sampled barriers);
 * g: (T(h-relation) - l) / h for a cyclic shift (local) and a total exchange (global),
 *    h in 32-bit words, one message per destination;
 * n1/2: the same total exchange sent as messages of x words, g(x) fitted to
 *    g(x) = (n1/2 / x + 1) g_inf (equation 1) by least squares.
 * The words are 32-bit; flop/word values are us/word times s. */
#include <bsp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int h_words = 16384;

static double measure_s(void)
{
    enum { N = 1 << 20, M = 96 };
    static double x[N], y[N], a[M][M], b[M][M], c[M][M];
    double t0, t1, t2, sum = 0.0;
    int i, j, k, r;
    for (i = 0; i < N; i++) {
        x[i] = 1.0 + i % 3;
        y[i] = 2.0 - i % 5;
    }
    for (i = 0; i < M; i++) {
        for (j = 0; j < M; j++) {
            a[i][j] = (i + j) % 7;
            b[i][j] = (i * j) % 5;
            c[i][j] = 0.0;
        }
    }
    t0 = bsp_time();
    for (r = 0; r < 10; r++) {
        for (i = 0; i < N; i++) {
            sum += x[i] * y[i];
        }
    }
    t1 = bsp_time();
    for (r = 0; r < 3; r++) {
        for (i = 0; i < M; i++) {
            for (k = 0; k < M; k++) {
                for (j = 0; j < M; j++) {
                    c[i][j] += a[i][k] * b[k][j];
                }
            }
        }
    }
    t2 = bsp_time();
    if (sum == -1.0 || c[1][1] == -1.0) { /* keep the work */
        printf("impossible\n");
    }
    return 0.5 * (2.0 * N * 10 / (t1 - t0) + 2.0 * M * M * M * 3 / (t2 - t1)) / 1e6;
}

static double measure_l(void)
{
    int i, reps = 200;
    double t0;
    bsp_sync();
    t0 = bsp_time();
    for (i = 0; i < reps; i++) {
        bsp_sync();
    }
    return (bsp_time() - t0) / reps;
}

/* Time of one superstep routing an h-relation: every process sends h words, as
 * messages of msg words, to its right neighbour (cyclic) or to all others. */
static double superstep_time(int *src, int *dst, int h, int msg, int cyclic, int reps)
{
    int p = bsp_nprocs(), s = bsp_pid(), r, k, sent;
    double t0;
    bsp_sync();
    t0 = bsp_time();
    for (r = 0; r < reps; r++) {
        for (sent = 0, k = 0; sent < h; k++) {
            int n = h - sent < msg ? h - sent : msg;
            int to = cyclic || p == 1 ? (s + 1) % p : (s + 1 + k % (p - 1)) % p;
            bsp_put(to, src + sent, dst, (s * h + sent) * (int)sizeof(int),
                    n * (int)sizeof(int));
            sent += n;
        }
        bsp_sync();
    }
    return (bsp_time() - t0) / reps;
}

static void measure(void)
{
    int p, s, i, *src, *dst;
    double rate, l, g_local, g_global, t;
    static const int sizes[] = {1, 2, 4, 8, 16, 32, 64, 256, 1024};
    const int nh = 4096;
    double num = 0.0, den = 0.0, g_inf;

    /* The n1/2 exchanges send nh words per process whatever -h says. */
    const int words = h_words > nh ? h_words : nh;

    bsp_begin(bsp_nprocs());
    p = bsp_nprocs();
    s = bsp_pid();
    src = malloc((size_t)words * sizeof(int));
    dst = malloc((size_t)words * (size_t)p * sizeof(int));
    if (!src || !dst) {
        bsp_abort("bspprobe: process %d out of memory", s);
    }
    for (i = 0; i < words; i++) {
        src[i] = i ^ s;
    }
    bsp_push_reg(dst, words * p * (int)sizeof(int));
    bsp_sync();

    rate = measure_s();
    l = measure_l();
    t = superstep_time(src, dst, h_words, h_words, 1, 10);
    g_local = (t - l) / h_words;
    t = superstep_time(src, dst, h_words, (h_words + p - 2) / (p > 1 ? p - 1 : 1), 0, 10);
    g_global = (t - l) / h_words;

    /* n1/2: g(x) for message sizes x of a total exchange of nh words per process. */
    g_inf = 0.0;
    {
        double gx[sizeof sizes / sizeof sizes[0]];
        int n = 0, largest = -1;
        for (i = 0; i < (int)(sizeof sizes / sizeof sizes[0]); i++) {
            int reps = sizes[i] < 16 ? 3 : 10;
            if (sizes[i] * (p > 1 ? p - 1 : 1) > nh) {
                break;
            }
            t = superstep_time(src, dst, nh, sizes[i], 0, reps);
            gx[i] = (t - l) / nh;
            largest = i;
            n++;
        }
        g_inf = gx[largest];
        for (i = 0; i < n; i++) {
            double y = gx[i] / g_inf - 1.0, invx = 1.0 / sizes[i];
            num += y * invx;
            den += invx * invx;
        }
    }
    if (s == 0) {
        printf("RESULT %d %.3f %.3f %.6f %.6f %.2f\n", p, rate, l * 1e6, g_local * 1e6,
               g_global * 1e6, den > 0 ? (num / den > 0 ? num / den : 0.0) : 0.0);
    }
    bsp_pop_reg(dst);
    bsp_sync();
    free(src);
    free(dst);
    bsp_end();
}

struct row {
    int p;
    double s, l_us, gl_us, gg_us, n_half;
};

static int run_measure(const char *self, int p, int combine, struct row *out)
{
    int fd[2], status;
    char buf[512], hs[32], ps[16];
    ssize_t n, got = 0;
    pid_t child;
    if (pipe(fd) != 0) {
        return -1;
    }
    child = fork();
    if (child == 0) {
        close(fd[0]);
        dup2(fd[1], 1);
        snprintf(ps, sizeof ps, "%d", p);
        snprintf(hs, sizeof hs, "%d", h_words);
        setenv("BSP_NPROCS", ps, 1);
        setenv("BSP_COMBINE", combine ? "1" : "0", 1);
        /* /proc/self/exe, not argv[0]: started through PATH (an installed bspprobe),
         * argv[0] is a bare name that execl would not find. */
        execl("/proc/self/exe", self, "--measure", "-h", hs, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    while ((n = read(fd[0], buf + got, sizeof buf - 1 - (size_t)got)) > 0) {
        got += n;
    }
    buf[got] = '\0';
    close(fd[0]);
    waitpid(child, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        return -1;
    }
    return sscanf(buf, "RESULT %d %lf %lf %lf %lf %lf", &out->p, &out->s, &out->l_us, &out->gl_us,
                  &out->gg_us, &out->n_half) == 6
               ? 0
               : -1;
}

int main(int argc, char **argv)
{
    int i, np = 0, procs[32];
    const char *plist = "1,2,4,8";
    int measure_mode = 0;
    for (i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--measure") == 0) {
            measure_mode = 1;
        } else if (strcmp(argv[i], "-h") == 0 && i + 1 < argc) {
            h_words = atoi(argv[++i]);
        } else if (strcmp(argv[i], "-p") == 0 && i + 1 < argc) {
            plist = argv[++i];
        } else {
            fprintf(stderr, "usage: bspprobe [-p 1,2,4,8] [-h words] | --measure [-h words]\n");
            return 2;
        }
    }
    if (h_words < 64 || h_words > (1 << 22)) {
        fprintf(stderr, "bspprobe: -h must be from 64 to 4194304 words\n");
        return 2;
    }
    if (measure_mode) {
        bsp_init(measure, argc, argv);
        measure();
        return 0;
    }
    for (const char *c = plist; *c && np < 32;) {
        procs[np] = atoi(c);
        if (procs[np] < 1 || procs[np] > 64) {
            fprintf(stderr, "bspprobe: bad process count in -p %s\n", plist);
            return 2;
        }
        np++;
        c = strchr(c, ',');
        if (!c) {
            break;
        }
        c++;
    }
    printf("BSP machine parameters measured by bspprobe ([SHM97], Table 2 layout)\n");
    printf("transport %s, schedule %s, h = %d 32-bit words\n",
           getenv("BSP_TRANSPORT") ? getenv("BSP_TRANSPORT") : "auto",
           getenv("BSP_SCHEDULE") ? getenv("BSP_SCHEDULE") : "latin", h_words);
    printf("%3s %8s | %10s %9s | %9s %9s | %9s %9s | %8s %8s %7s\n", "p", "s", "l", "l",
           "local g", "local g", "global g", "global g", "n1/2", "n1/2", "ratio");
    printf("%3s %8s | %10s %9s | %9s %9s | %9s %9s | %8s %8s %7s\n", "", "Mflop/s", "flops",
           "us", "flop/word", "us/word", "flop/word", "us/word", "combined", "single", "");
    double last_g = 0, last_l = 0;
    int last_p = 0;
    for (i = 0; i < np; i++) {
        struct row c, n;
        if (run_measure(argv[0], procs[i], 1, &c) != 0 || run_measure(argv[0], procs[i], 0, &n)) {
            fprintf(stderr, "bspprobe: the measurement with p = %d failed\n", procs[i]);
            return 1;
        }
        printf("%3d %8.1f | %10.0f %9.1f | %9.2f %9.4f | %9.2f %9.4f | %8.1f %8.1f %7.3f\n", c.p,
               c.s, c.l_us * c.s, c.l_us, c.gl_us * c.s, c.gl_us, c.gg_us * c.s, c.gg_us,
               c.n_half, n.n_half, n.n_half > 0 ? c.n_half / n.n_half : 0.0);
        fflush(stdout);
        last_g = c.gg_us;
        last_l = c.l_us;
        last_p = c.p;
    }
    printf("ratio = n1/2 with combining / n1/2 with every put sent alone (target <= 0.1)\n");
    /* The collectives of bsc.h choose their algorithms by these (Documentation/bsplib.rst). */
    printf("for the collectives (p = %d): export BSP_G=%.4f BSP_L=%.1f\n", last_p, last_g, last_l);
    return 0;
}
