/* Aggregation kernel throughput in GB/s of gradient data read (n x d x 4 bytes per call), for
 * n = 8, 16, 32 and d = 2^22 (or as given), one line per (rule, n, threads, isa); the best of
 * REPEATS rounds in which every configuration runs once. bench/kernels.sh prints it beside the NumPy and PyTorch anchors.
 * Usage: bench_kernels [LOG2_D] [REPEATS] [THREADS] [ISA...]
 *   THREADS: the thread counts to run, comma-separated (default 1,2)
 *   ISA: generic, avx2, avx512 (default: the best one here) */
#define _POSIX_C_SOURCE 200809L
#include "dpas/dpas.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "clock.h"

int main(int argc, char **argv)
{
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
                    printf("rule %-13s n %2zu threads %d isa %-7s seconds %.4f  GBps %.3f\n",
                           rules[r], n, threads[it] ? threads[it] : 1,
                           isas[ia] ? inames[isas[ia]] : dpas_kernel_isa(), b,
                           (double)(n * d * sizeof(float)) / b / 1e9);
                }
        fflush(stdout);
        free(data);
        free(rows);
    }
    free(out);
    return 0;
}
