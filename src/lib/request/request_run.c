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

/* The workload's shape (the registry model's, when it has one) and why there is none. */
static const dpas_model_shape *shape_of(const dpas_request *rq, const char **why)
{
    const dpas_model *m = dpas__spec_model(rq->spec);
    *why = !m ? "a workload given by its parameters has no shape (layers, hidden size, heads, "
                "sequence): use a registry model that has one"
           : !m->shape.layers ? "the registry gives this model no transformer shape (not a "
                                "public transformer's layers, hidden size, heads and sequence)"
                              : NULL;
    return m && m->shape.layers ? &m->shape : NULL;
}

/* The keys that count activations need a shape: without one they are refused, not ignored
 * (step's recompute also sets the compute's FLOPs: it stays). */
static int shape_keys(const dpas_request *rq, const dpas_model_shape *shape, const char *why,
                      dpas_error *err)
{
    static const dpas_key k[] = {DPAS_KEY_MICRO_BATCH, DPAS_KEY_RECOMPUTE, DPAS_KEY_SEQUENCE};
    for (size_t i = 0; !shape && i < sizeof k / sizeof k[0]; i++) {
        /* step: sequence splits tokens into sequences, full recomputation adds a forward to
         * the compute and none keeps the compute's 6PT (the default, stated); selective
         * recomputation changes the activations only */
        if (!rq->v[k[i]].set ||
            (rq->analysis == DPAS_ANALYSIS_STEP &&
             (k[i] == DPAS_KEY_SEQUENCE ||
              (k[i] == DPAS_KEY_RECOMPUTE && rq->opts.recompute != DPAS_RECOMPUTE_SELECTIVE))))
            continue;
        return dpas__fail(err, DPAS_EINVAL, dpas_key_name(k[i]),
                          "%s counts the activations, and %s", dpas_key_name(k[i]), why);
    }
    /* memory counts activations only for a micro-batch: recompute and sequence without one
     * would be given and unused */
    for (size_t i = 1; shape && rq->analysis == DPAS_ANALYSIS_MEMORY && i < 3; i++)
        if (rq->v[k[i]].set && !rq->v[DPAS_KEY_MICRO_BATCH].set)
            return dpas__fail(err, DPAS_EINVAL, dpas_key_name(k[i]),
                              "%s counts the activations, which memory counts only for a "
                              "micro_batch (sequences per replica per forward pass): give "
                              "micro_batch, or drop %s",
                              dpas_key_name(k[i]), dpas_key_name(k[i]));
    return 0;
}

int dpas_request_memory(const dpas_request *rq, dpas_memory *out, dpas_error *err)
{
    int rc = unresolved(rq, DPAS_ANALYSIS_MEMORY, err);
    if (rc)
        return rc;
    dpas_memory_opts o = {.state = rq->opts.state,
                          .zero = rq->opts.zero,
                          .optimizer = rq->opts.optimizer,
                          .micro_batch = rq->opts.micro_batch,
                          .sequence = rq->opts.sequence,
                          .recompute = (dpas_recompute)rq->opts.recompute};
    o.shape = shape_of(rq, &o.no_shape_why);
    if ((rc = shape_keys(rq, o.shape, o.no_shape_why, err)))
        return rc;
    return dpas_memory_check_opts(&rq->scenario, &o, out, err);
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
    o.shape = shape_of(rq, &o.no_shape_why);
    if ((rc = shape_keys(rq, o.shape, o.no_shape_why, err)))
        return rc;
    return dpas_step_compute(&rq->scenario, &o, out, err);
}
