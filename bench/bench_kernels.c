/* SPDX-License-Identifier: Apache-2.0 */
/* Aggregation kernel throughput in GB/s of gradient data read (n x d x 4 bytes per call), for
 * n = 8, 16, 32 and d = 2^22 (or as given), one line per (rule, n, threads, isa); the best of
 * REPEATS rounds in which every configuration runs once. bench/kernels.sh prints it beside the NumPy and PyTorch anchors.
 * Then the goals of issue 24 at n = 16, one thread, the best isa, a workspace kept across calls
 * (one "goal" line each, the best of REPEATS rounds): the mean, three geometric-median
 * iterations, and the new rules and pre-aggregations (monna, caf, smea, arc, clipping,
 * bucketing) with the f that bench/anchor_byzfl.py uses.
 * Usage: bench_kernels [LOG2_D] [REPEATS] [THREADS] [ISA...]
 *        bench_kernels goals [LOG2_D] [REPEATS]   the goals of issue 24 only
 *   THREADS: the thread counts to run, comma-separated (default 1,2)
 *   ISA: generic, avx2, avx512 (default: the best one here) */
#define _POSIX_C_SOURCE 200809L
#include "dpas/dpas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"

/* One goal configuration: a rule, or a pre-aggregation into n output rows. */
typedef struct goal {
    const char *label, *rule, *pre;
    int64_t f, iterations;
    double c;
    int64_t s;
} goal;

static int goals(size_t d, int reps)
{
    enum { N = 16 };
    static const goal gs[] = {
        {"mean", "mean", NULL, 0, 0, 0, 0},
        {"geometric_median_3", "geometric_median", NULL, 4, 3, 0, 0},
        {"monna", "monna", NULL, 4, 0, 0, 0},
        {"caf", "caf", NULL, 4, 0, 0, 0},
        {"smea", "smea", NULL, 1, 0, 0, 0},
        {"arc", NULL, "arc", 4, 0, 0, 0},
        {"clipping", NULL, "clipping", 0, 0, 2.0, 0},
        {"bucketing", NULL, "bucketing", 0, 0, 0, 2},
    };
    const size_t ng = sizeof gs / sizeof gs[0];
    float *data = malloc(N * d * sizeof *data), *pre_out = malloc(N * d * sizeof *pre_out);
    float *out = malloc(d * sizeof *out);
    const float *rows[N];
    void *orows[N];
    if (!data || !pre_out || !out)
        return 1;
    uint64_t s = 777;
    for (size_t i = 0; i < N * d; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = (float)((double)(s >> 40) / 16777216.0);
    }
    for (size_t i = 0; i < N; i++) {
        rows[i] = data + i * d;
        orows[i] = pre_out + i * d;
    }
    memset(pre_out, 0, N * d * sizeof *pre_out);
    dpas_workspace *ws = dpas_workspace_new();
    double best[16];
    for (size_t g = 0; g < ng; g++)
        best[g] = 1e30;
    for (int k = 0; k < reps + 1; k++) /* round 0 warms the workspace up */
        for (size_t g = 0; g < ng; g++) {
            const dpas_rule *rule;
            dpas_error e;
            if (dpas_rule_find(gs[g].rule ? gs[g].rule : gs[g].pre, NULL, &rule, &e)) {
                fprintf(stderr, "%s: %s\n", gs[g].label, e.message);
                return 1;
            }
            dpas_preagg pre = {rule, gs[g].c, gs[g].s, gs[g].s ? 1 : 0, 0, 0};
            dpas_agg_opts o = {.f = gs[g].f, .iterations = gs[g].iterations, .workspace = ws};
            if (gs[g].iterations)
                o.tolerance = 1e-300; /* exactly that many iterations */
            double t0 = now();
            int rc;
            if (gs[g].rule) {
                rc = dpas_aggregate(rule, rows, N, d, &o, out, NULL, NULL, &e);
            } else {
                size_t nout = 0;
                o.pre = &pre, o.npre = 1;
                rc = dpas_preaggregate_typed((const void *const *)rows, DPAS_FLOAT32, N, d, &o,
                                             orows, &nout, &e);
            }
            double t = now() - t0;
            if (rc) {
                fprintf(stderr, "%s: %s\n", gs[g].label, e.message);
                return 1;
            }
            if (k > 0 && t < best[g])
                best[g] = t;
        }
    for (size_t g = 0; g < ng; g++)
        printf("goal %-18s n %2d f %2lld seconds %.6f  GBps %.3f\n", gs[g].label, N,
               (long long)gs[g].f, best[g], (double)(N * d * sizeof(float)) / best[g] / 1e9);
    dpas_workspace_free(ws);
    free(data), free(pre_out), free(out);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && !strcmp(argv[1], "goals"))
        return goals((size_t)1 << (argc > 2 ? atoi(argv[2]) : 22), argc > 3 ? atoi(argv[3]) : 5);
    int lg = argc > 1 ? atoi(argv[1]) : 22, reps = argc > 2 ? atoi(argv[2]) : 5;
    const char *threads_arg = argc > 3 ? argv[3] : "1,2";
    int isas[4], nisa = 0;
    for (int a = 4; a < argc && nisa < 4; a++) {
        static const char *names[] = {"auto", "generic", "avx2", "avx512"};
        for (int k = 1; k < 4; k++)
            if (!strcmp(argv[a], names[k]))
                isas[nisa++] = k;
    }
    if (!nisa)
        isas[nisa++] = 0;
    int threads[8], nthreads = 0;
    for (const char *p = threads_arg; *p && nthreads < 8;) {
        threads[nthreads++] = atoi(p);
        while (*p && *p != ',')
            p++;
        if (*p == ',')
            p++;
    }
    size_t d = (size_t)1 << lg;
    static const size_t ns[] = {8, 16, 32};
    static const char *rules[] = {"mean", "median", "trimmed_mean", "meamed", "krum", "multi_krum"};
    const size_t nrules = sizeof rules / sizeof rules[0];
    printf("isa %s  d %zu\n", dpas_kernel_isa(), d);
    float *out = malloc(d * sizeof *out);
    uint64_t s = 12345;
    for (size_t a = 0; a < 3; a++) {
        size_t n = ns[a];
        float *data = malloc(n * d * sizeof *data);
        const float **rows = malloc(n * sizeof *rows);
        if (!data || !rows || !out)
            return 1;
        for (size_t i = 0; i < n * d; i++) {
            s = s * 6364136223846793005ull + 1442695040888963407ull;
            data[i] = (float)((double)(s >> 40) / 16777216.0);
        }
        for (size_t i = 0; i < n; i++)
            rows[i] = data + i * d;
        /* every configuration once per round, REPEATS rounds, the best of each: on a shared
         * machine the configurations then see the same load, and their ratios hold */
        enum { MAXC = 4 * 8 * 16 };
        double best[MAXC];
        for (int c = 0; c < MAXC; c++)
            best[c] = 1e30;
        for (int k = 0; k < reps; k++)
            for (int ia = 0; ia < nisa; ia++)
                for (int it = 0; it < nthreads; it++)
                    for (size_t r = 0; r < nrules; r++) {
                        const dpas_rule *rule;
                        dpas_rule_find(rules[r], NULL, &rule, NULL);
                        int64_t f = 0;
                        if (!strcmp(rules[r], "trimmed_mean") || !strcmp(rules[r], "meamed"))
                            f = (int64_t)n / 4;
                        else if (strstr(rules[r], "krum"))
                            f = (int64_t)(n - 3) / 2;
                        dpas_agg_opts o = {.f = f, .threads = threads[it], .isa = isas[ia]};
                        dpas_error e;
                        double t0 = now();
                        if (dpas_aggregate(rule, rows, n, d, &o, out, NULL, NULL, &e)) {
                            fprintf(stderr, "%s\n", e.message);
                            return 1;
                        }
                        double t = now() - t0;
                        int c = (ia * 8 + it) * 16 + (int)r;
                        if (t < best[c])
                            best[c] = t;
                    }
        for (int ia = 0; ia < nisa; ia++)
            for (int it = 0; it < nthreads; it++)
                for (size_t r = 0; r < nrules; r++) {
                    static const char *inames[] = {"auto", "generic", "avx2", "avx512"};
                    double b = best[(ia * 8 + it) * 16 + (int)r];
                    printf("rule %-13s n %2zu threads %d isa %-7s seconds %.6f  GBps %.3f\n",
                           rules[r], n, threads[it] ? threads[it] : 1,
                           isas[ia] ? inames[isas[ia]] : dpas_kernel_isa(), b,
                           (double)(n * d * sizeof(float)) / b / 1e9);
                }
        fflush(stdout);
        free(data);
        free(rows);
    }
    free(out);
    return goals(d, reps);
}
