/* SPDX-License-Identifier: Apache-2.0 */
/* Scenario evaluations per second over a large varied sweep, on one core.
 * Usage: bench_eval [EVALUATIONS]   (default 20,000,000)
 * Prints one line of figures; bench/run.sh puts it beside the Python/pint anchor. */
#define _POSIX_C_SOURCE 200809L
#include "dpas/dpas.h"

#include <stdio.h>
#include <stdlib.h>
#include "clock.h"

int main(int argc, char **argv)
{
    long long total = argc > 1 ? atoll(argv[1]) : 20000000LL;
    /* A sweep of inputs that varies every field: 64 parameter counts, 16 fleets, every
     * dp_degree that fits, 8 widths (whole, fractional, sub-byte). */
    static const dpas_rational widths[8] = {{2, 1}, {4, 1}, {1, 2}, {14, 1},
                                            {4127, 8000}, {1, 1}, {16, 1}, {3, 4}};
    uint64_t params[64];
    for (int i = 0; i < 64; i++)
        params[i] = 1000003ull * (uint64_t)(i + 1) * (uint64_t)(i + 7) * 977ull;
    dpas_scenario s = {0};
    dpas_report r;
    uint64_t sink = 0;
    double t0 = now();
    long long done = 0, errors = 0;
    while (done < total) {
        for (int f = 0; f < 16 && done < total; f++) {
            s.nodes = 1 + f * 37;
            s.accelerators_per_node = 4 + (f & 1) * 4;
            int64_t acc = s.nodes * s.accelerators_per_node;
            for (int p = 0; p < 64 && done < total; p++) {
                s.parameters = params[p];
                for (int64_t n = 1; n <= acc && done < total; n += 1 + n / 3) {
                    s.dp_degree = n;
                    s.gradient_bytes_per_param = widths[(p + n) & 7];
                    s.checkpoint_bytes_per_param = widths[(p + 3) & 7];
                    s.weight_bytes_per_param = (n & 1) ? widths[p & 7] : (dpas_rational){0, 0};
                    if (dpas_evaluate(&s, &r, NULL))
                        errors++;
                    sink += r.gradient_bytes.whole + r.checkpoint_bytes.frac_num +
                            (uint64_t)r.gather_factor + (uint64_t)(r.allreduce_factor * 8);
                    done++;
                }
            }
        }
    }
    double dt = now() - t0;
    printf("evaluations %lld  seconds %.3f  per_second %.4g  ns_per_eval %.1f  errors %lld  "
           "(checksum %llu)\n",
           done, dt, (double)done / dt, dt / (double)done * 1e9, errors, (unsigned long long)sink);
    return errors ? 1 : 0;
}
