/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-tests output: never a crash; what the reader keeps holds together (every point within
 * the documented bounds, nodes and ranks per node consistent with the Rank lines, every skipped
 * table with its reason and line); every defined fit has finite alpha >= 0 and beta > 0, the
 * piecewise regimes tile the sizes in order, every rendering is produced. */
#include "fuzz.h"

#include <math.h>

static void check_log(const dpas_nccl_log *g)
{
    for (size_t i = 0; i < g->ntests; i++) {
        const dpas_nccl_test *t = &g->tests[i];
        PROPERTY(t->npoints >= 1 && t->collective >= 0 && t->collective < DPAS_COLL_COUNT &&
                     t->ranks >= 1,
                 "test %zu: %zu points, collective %d, %lld ranks", i, t->npoints, t->collective,
                 (long long)t->ranks);
        for (size_t j = 0; j < t->npoints; j++) {
            const dpas_nccl_point *p = &t->points[j];
            PROPERTY(p->bytes >= 1 && p->bytes <= DPAS_NCCL_MAX_BYTES &&
                         p->seconds >= DPAS_NCCL_MIN_SECONDS &&
                         p->seconds <= DPAS_NCCL_MAX_SECONDS && p->line >= 1 && p->line <= g->lines,
                     "test %zu point %zu: %llu B in %g s at line %d", i, j,
                     (unsigned long long)p->bytes, p->seconds, p->line);
        }
        if (t->nodes_from) {
            PROPERTY(t->nodes >= 1 && t->nodes <= t->rank_lines &&
                         t->ranks_per_node_min >= 1 &&
                         t->ranks_per_node_min <= t->ranks_per_node_max &&
                         (t->ranks_per_node ? t->ranks_per_node * t->nodes == t->rank_lines &&
                                                  t->ranks_per_node_min == t->ranks_per_node_max
                                            : t->ranks_per_node_min < t->ranks_per_node_max),
                     "test %zu: %lld Rank lines, %lld nodes x %lld (%lld to %lld)", i,
                     (long long)t->rank_lines, (long long)t->nodes,
                     (long long)t->ranks_per_node, (long long)t->ranks_per_node_min,
                     (long long)t->ranks_per_node_max);
        } else {
            PROPERTY(t->nodes == 0 && t->ranks_per_node == 0, "test %zu: nodes without a source",
                     i);
        }
        PROPERTY(!t->zero_rows || (t->zero_row_line >= 1 && t->zero_row_line <= g->lines),
                 "test %zu: rows of size 0 at line %d", i, t->zero_row_line);
    }
    for (size_t i = 0; i < g->nskipped; i++) {
        const dpas_nccl_skipped *s = &g->skipped[i];
        /* an unreadable test (in a file with readable ones) may have no name; its reason is
         * its whole error, never empty */
        PROPERTY(s->reason >= DPAS_NCCL_SKIP_UNMODELLED && s->reason <= DPAS_NCCL_SKIP_UNREADABLE &&
                     s->line >= 1 && s->line <= g->lines &&
                     (s->reason == DPAS_NCCL_SKIP_ZERO_ONLY ||
                      s->reason == DPAS_NCCL_SKIP_UNREADABLE || s->name) &&
                     (s->reason != DPAS_NCCL_SKIP_UNREADABLE || (s->why && s->why[0])),
                 "skipped table %zu: reason %d, line %d", i, s->reason, s->line);
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpas_netmodel *m = NULL;
    dpas_error e;
    if (dpas_netmodel_from_text((const char *)data, size, "fuzz", NULL, 0, &m, &e) != 0) {
        PROPERTY(e.message[0], "an error without a message");
        return 0;
    }
    PROPERTY(m->ncurves >= 1, "no curve and no error");
    for (size_t i = 0; i < m->nlogs; i++)
        check_log(m->logs[i]);
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        PROPERTY(cv->n >= 1 && cv->ranks >= 1, "curve %zu: %zu sizes, %lld ranks", i, cv->n,
                 (long long)cv->ranks);
        for (size_t j = 1; j < cv->n; j++)
            PROPERTY(cv->bytes[j] > cv->bytes[j - 1], "curve %zu: sizes out of order", i);
        for (int k = 0; k < 2; k++) {
            const dpas_fit *f = &cv->fits[k];
            if (!f->defined)
                continue;
            size_t next = 0;
            for (size_t r = 0; r < f->nregimes; r++) {
                const dpas_regime *g = &f->regimes[r];
                PROPERTY(isfinite(g->alpha) && g->alpha >= 0 && g->beta > 0,
                         "fit %zu/%d regime %zu: alpha %g beta %g", i, k, r, g->alpha, g->beta);
                PROPERTY(g->first == next && g->count >= 1, "regimes do not tile the sizes");
                next = g->first + g->count;
            }
            PROPERTY(next == cv->n, "regimes cover %zu of %zu sizes", next, cv->n);
        }
        dpas_net_time t;
        if (dpas_curve_time(m, cv, DPAS_NETMODEL_DEFAULT, (double)cv->bytes[0], 0, &t, &e) == 0)
            PROPERTY(isfinite(t.seconds) && t.seconds >= 0, "time %g", t.seconds);
    }
    uint64_t sizes[3] = {1, 16u << 20, (uint64_t)1 << 40};
    dpas_net_prediction *p = NULL;
    size_t np = 0;
    if (dpas_netmodel_predict(m, sizes, 3, &p, &np, &e) == 0) {
        for (int f = 0; f < 4; f++)
            dpas_free(dpas_render_netmodel(m, p, np, f, &e));
        dpas_free(dpas_netmodel_notes(m, p, np, 1, &e));
    }
    dpas_free(p);
    dpas_netmodel_free(m);
    return 0;
}
