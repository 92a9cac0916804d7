/* SPDX-License-Identifier: Apache-2.0 */
/* The analyses over a resolved request: each is the analysis' own function called with the
 * request's scenario and options, so that every front end gets the same rows. */
#include "request_inputs.h"

#include <stdio.h>
#include <stdlib.h>

static int unresolved(const dpas_request *rq, dpas_analysis a, dpas_error *err)
{
    if (!rq->resolved)
        return dpas__fail(err, DPAS_EINVAL, "request", "the request is not resolved");
    if (rq->analysis != a)
        return dpas__fail(err, DPAS_EINVAL, "request", "the request is for %s, not %s",
                          dpas_analysis_name(rq->analysis), dpas_analysis_name(a));
    return 0;
}

int dpas_request_cost(const dpas_request *rq, dpas_cost **out, dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_COST, err);
    *out = NULL;
    return rc ? rc : dpas_cost_compute(&rq->scenario, &rq->opts.cost, out, err);
}

int dpas_request_rules(const dpas_request *rq, dpas_rule_row *rows, size_t *nrows, dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_RULES, err);
    *nrows = 0;
    return rc ? rc : dpas_rules_list(rq->opts.n, rq->opts.f, rq->opts.convention, rows, nrows, err);
}

int dpas_request_inventory(const dpas_request *rq, dpas_inventory_row **rows, size_t *n,
                           dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_INVENTORY, err);
    *rows = NULL;
    *n = 0;
    if (rc || (rc = dpas_inventory(&rq->scenario, NULL, 0, n, err)))
        return rc;
    if (!(*rows = calloc(*n ? *n : 1, sizeof **rows)))
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    if ((rc = dpas_inventory(&rq->scenario, *rows, *n, n, err))) {
        free(*rows);
        *rows = NULL;
    }
    return rc;
}

int dpas_request_memory(const dpas_request *rq, dpas_memory *out, dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_MEMORY, err);
    return rc ? rc : dpas_memory_check(&rq->scenario, rq->opts.state, rq->opts.zero, out, err);
}

const dpas_netmodel *dpas_request_netmodel(const dpas_request *rq)
{
    return rq && rq->resolved && rq->analysis == DPAS_ANALYSIS_CALIBRATE ? rq->net : NULL;
}

size_t dpas_request_predictions_asked(const dpas_request *rq)
{
    return rq ? rq->nsizes * (rq->nat ? rq->nat : 1) : 0;
}

int dpas_request_calibrate(const dpas_request *rq, dpas_net_prediction **rows, size_t *nrows,
                           dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_CALIBRATE, err);
    *rows = NULL;
    *nrows = 0;
    if (rc || (rc = dpas_netmodel_predict_at(rq->net, rq->sizes, rq->nsizes, rq->at, rq->nat, rows,
                                             nrows, err)))
        return rc;
    /* A prediction asked for (--predict, --at) that no model can answer is refused, naming it and
     * why, in every front end: an empty row with exit 0 answered nothing (issue 29). The
     * measured sizes' own rows (neither given) are the file's report, kept as they are. */
    for (size_t i = 0; (rq->nsizes || rq->nat) && i < *nrows; i++) {
        const dpas_net_prediction *p = &(*rows)[i];
        if (p->basis != DPAS_BASIS_NONE || p->at.ranks <= 1)
            continue;
        dpas_net_time t;
        dpas_error why = {0};
        if (!dpas_netmodel_time_at(rq->net, p->collective, DPAS_NETMODEL_DEFAULT, (double)p->bytes,
                                   p->at, &t, &why))
            snprintf(why.message, sizeof why.message, "no model is defined there");
        rc = dpas__fail(err, DPAS_EINVAL, rq->nat ? "at" : "predict",
                        "cannot predict %s on %lld ranks at %llu B: no model can answer (%s)",
                        dpas_collective_name(p->collective), (long long)p->at.ranks,
                        (unsigned long long)p->bytes, why.message);
        dpas_free(*rows);
        *rows = NULL;
        *nrows = 0;
        return rc;
    }
    return 0;
}

int dpas_request_step(const dpas_request *rq, dpas_step **out, dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_STEP, err);
    *out = NULL;
    if (rc)
        return rc;
    dpas_step_opts o = rq->step;
    o.cost = rq->opts.cost;
    return dpas_step_compute(&rq->scenario, &o, out, err);
}
