/* SPDX-License-Identifier: Apache-2.0 */
/* A monotonic clock in seconds, for the benchmarks. */
#ifndef DPAS_BENCH_CLOCK_H
#define DPAS_BENCH_CLOCK_H

#include <time.h>

static inline double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
