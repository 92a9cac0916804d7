/* Aggregation kernel throughput in GB/s of gradient data read (n x d x 4 bytes per call), for
 * n = 8, 16, 32 and d = 2^22 (or as given), one line per (rule, n). bench/kernels.sh prints it
 * beside the NumPy anchor.  Usage: bench_kernels [LOG2_D] [REPEATS] */
#define _POSIX_C_SOURCE 200809L
#include "dpas/dpas.h"

#include <stdio.h>
#include <stdlib.h>
#include "clock.h"

int main(int argc, char **argv)
{
    int lg = argc > 1 ? atoi(argv[1]) : 22, reps = argc > 2 ? atoi(argv[2]) : 5;
    size_t d = (size_t)1 << lg;
    static const size_t ns[] = {8, 16, 32};
    static const char *rules[] = {"mean", "median", "trimmed_mean", "krum"};
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
        for (size_t r = 0; r < 4; r++) {
            const dpas_rule *rule;
            dpas_rule_find(rules[r], NULL, &rule, NULL);
            dpas_agg_opts o = {.f = r == 2 ? (int64_t)n / 4 : r == 3 ? (int64_t)(n - 3) / 2 : 0};
            double best = 1e30;
            for (int k = 0; k < reps; k++) {
                double t0 = now();
                dpas_error e;
                if (dpas_aggregate(rule, rows, n, d, &o, out, NULL, NULL, &e)) {
                    fprintf(stderr, "%s\n", e.message);
                    return 1;
                }
                double t = now() - t0;
                if (t < best)
                    best = t;
            }
            printf("rule %-13s n %2zu  seconds %.4f  GBps %.3f\n", rules[r], n, best,
                   (double)(n * d * sizeof(float)) / best / 1e9);
        }
        free(data);
        free(rows);
    }
    free(out);
    return 0;
}
