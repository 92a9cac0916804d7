/* SPDX-License-Identifier: Apache-2.0 */
/* The kernels' thread helper: a loop over parts split into contiguous ranges, one per thread,
 * joined before it returns. In a file of its own so that the kernels (kernels_coord.c,
 * kernels_dist.c, kernels_iter.c) and their entry points (aggregate.c) all call down to it. */
#include "kernels_internal.h"

#include <pthread.h>
#include <stddef.h>

#define MAX_THREADS 256 /* aggregate.c refuses more threads (check_opts) */

typedef struct par_thread {
    void (*fn)(void *, size_t);
    void *ctx;
    size_t p0, p1;
    pthread_t tid;
    int started;
} par_thread;

static void *par_main(void *arg)
{
    par_thread *t = arg;
    for (size_t p = t->p0; p < t->p1; p++)
        t->fn(t->ctx, p);
    return NULL;
}

/* Thread t runs the contiguous parts [t P / T, (t + 1) P / T). */
void dpas__parallel(int threads, size_t parts, void (*fn)(void *ctx, size_t part), void *ctx)
{
    size_t nt = threads > 1 ? (size_t)threads : 1;
    if (nt > parts)
        nt = parts;
    if (nt <= 1) {
        for (size_t p = 0; p < parts; p++)
            fn(ctx, p);
        return;
    }
    par_thread t[MAX_THREADS];
    for (size_t i = 0; i < nt; i++)
        t[i] = (par_thread){fn, ctx, parts * i / nt, parts * (i + 1) / nt, (pthread_t){0}, 0};
    for (size_t i = 1; i < nt; i++)
        t[i].started = pthread_create(&t[i].tid, NULL, par_main, &t[i]) == 0;
    par_main(&t[0]);
    for (size_t i = 1; i < nt; i++) {
        if (t[i].started)
            pthread_join(t[i].tid, NULL);
        else
            par_main(&t[i]); /* could not start: its parts run here */
    }
}
