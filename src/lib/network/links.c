/* SPDX-License-Identifier: Apache-2.0 */
/* Which curve of a calibration answers for a link: the one place every front end (cost, sweep,
 * plot over the request; dpas-measure) picks the curve whose alpha-beta line gives the inter-node
 * and intra-node bandwidth and latency. The choice is an order over the curves' own facts
 * (collective, ranks, ranks per node), never their position, so that it depends on the set of
 * files and not on the order they were given in (issue 27: "the missing bandwidth is taken from
 * the first curve"). Curves of one collective at one (ranks, ranks per node) are merged into one
 * curve when the model is fitted, so within a collective the order is total. */
#include "../internal.h"

#include <stdlib.h>

static int64_t nodes_of(const dpas_curve *cv)
{
    return cv->per_node > 0 ? cv->ranks / cv->per_node : 1;
}

static bool in_scope(const dpas_curve *cv, dpas_link_scope scope)
{
    bool across = cv->per_node > 0 && cv->per_node < cv->ranks;
    return scope == DPAS_LINK_ANY || (scope == DPAS_LINK_INTER) == across;
}

static int64_t dist(int64_t a, int64_t b) { return a > b ? a - b : b - a; }

/* a before b: the nearer rank count (the most ranks when ranks <= 0), on a tie the more ranks,
 * then the more nodes (more of the ring across nodes), then an alpha-beta line that is defined,
 * then the collective's number (for `collective` < 0, all_reduce first). */
static bool before(const dpas_curve *a, const dpas_curve *b, int64_t ranks, bool any)
{
    if (any && (a->collective == DPAS_COLL_ALL_REDUCE) != (b->collective == DPAS_COLL_ALL_REDUCE))
        return a->collective == DPAS_COLL_ALL_REDUCE;
    if (ranks > 0 && dist(a->ranks, ranks) != dist(b->ranks, ranks))
        return dist(a->ranks, ranks) < dist(b->ranks, ranks);
    if (a->ranks != b->ranks)
        return a->ranks > b->ranks;
    if (nodes_of(a) != nodes_of(b))
        return nodes_of(a) > nodes_of(b);
    int da = a->fits[DPAS_NETMODEL_ALPHA_BETA - 1].defined != 0,
        db = b->fits[DPAS_NETMODEL_ALPHA_BETA - 1].defined != 0;
    if (da != db)
        return da;
    return a->collective < b->collective;
}

const dpas_curve *dpas_netmodel_link_curve(const dpas_netmodel *m, dpas_collective collective,
                                           dpas_link_scope scope, int64_t ranks)
{
    const dpas_curve *best = NULL;
    for (size_t i = 0; m && i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        if ((collective >= 0 && cv->collective != collective) || !in_scope(cv, scope))
            continue;
        if (!best || before(cv, best, ranks, collective < 0))
            best = cv;
    }
    return best;
}

int dpas_netmodel_links(const dpas_netmodel *m, dpas_link_choice *out, dpas_error *err)
{
    *out = (dpas_link_choice){0};
    if (!m || !m->ncurves)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "calibration: no test to fit");
    /* inter-node: an AllReduce (the ring schedules' collective) across nodes, of the most ranks;
     * a calibration without one answers with its AllReduce of the most ranks, else with its
     * curve of the most ranks of any collective */
    const dpas_curve *inter = dpas_netmodel_link_curve(m, DPAS_COLL_ALL_REDUCE, DPAS_LINK_INTER, 0);
    if (!inter)
        inter = dpas_netmodel_link_curve(m, -1, DPAS_LINK_ANY, 0);
    out->inter = inter;
    out->intra = dpas_netmodel_link_curve(m, DPAS_COLL_ALL_REDUCE, DPAS_LINK_INTRA, 0);
    const dpas_fit *f = &inter->fits[DPAS_NETMODEL_ALPHA_BETA - 1];
    if (!f->defined)
        return dpas__fail(err, DPAS_EINVAL, "calibration", "%s: %s",
                          m->nlogs ? m->logs[inter->log]->origin : "calibration", f->reason);
    out->links.inter_bandwidth = f->beta;
    out->links.inter_latency = f->alpha;
    const dpas_fit *g = out->intra ? &out->intra->fits[DPAS_NETMODEL_ALPHA_BETA - 1] : NULL;
    if (g && g->defined) {
        out->links.intra_bandwidth = g->beta;
        out->links.intra_latency = g->alpha;
    }
    return 0;
}
