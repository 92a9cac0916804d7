/* What dpas predicts for the run: the schedule's exact bytes per rank (dpas_schedule_traffic),
 * and, with --calibration, the step's time from alpha and beta fitted on nccl-tests output
 * (dpas_calibrate_file, dpas_schedule_time). The all_reduce fit serves the allreduce schedule,
 * whose collective reduces as it moves; the all_gather fit serves the others, whose collectives
 * (all-gather, all-to-all) only move data. Where ranks share hosts, the hierarchical model:
 * between hosts the calibration's link, which the host's ranks share (one link per host, as the
 * calibration measured it with one rank per host), inside a host --intra-calibration's link. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int predict_bytes(const opts *o, int nranks, double *bytes)
{
    dpas_scenario sc = {.parameters = o->params, .nodes = nranks, .accelerators_per_node = 1,
                        .dp_degree = nranks,
                        .gradient_bytes_per_param = {(uint64_t)o->width, 1},
                        .checkpoint_bytes_per_param = {(uint64_t)o->width, 1}};
    dpas_traffic tr;
    dpas_error e;
    int rc = dpas_schedule_traffic(o->schedule, &sc, o->rule, o->cc_iterations > 0 ? o->cc_iterations : 10,
                                   &tr, &e);
    if (rc)
        measure_say("%s", e.message);
    else
        *bytes = dpas_bytes_to_double(tr.sent);
    return rc ? 1 : 0;
}

/* The fit of `collective` for `ranks` ranks in the file, or the one of the nearest rank count
 * (alpha is per step and beta per link, so a fit carries over; the report says which was used). */
static int fit_for(const char *file, const char *collective, int64_t ranks, link_fit *out)
{
    dpas_calibration cal[8];
    size_t n = 0, best = 8;
    dpas_error e;
    int rc = dpas_calibrate_file(file, NULL, 0, cal, 8, &n, &e);
    if (rc)
        measure_say("calibration %s: %s", file, e.message);
    for (size_t i = 0; i < n && !rc; i++)
        if (!strcmp(cal[i].collective, collective) &&
            (best == 8 || llabs(cal[i].ranks - ranks) < llabs(cal[best].ranks - ranks)))
            best = i;
    if (!rc && best == 8) {
        measure_say("calibration %s has no %s rows (this schedule needs them): measure them with "
                    "dpas-measure --sweep or nccl-tests", file, collective);
        rc = 1;
    } else if (!rc) {
        *out = (link_fit){.file = file, .ranks = cal[best].ranks, .alpha = cal[best].alpha,
                          .beta = cal[best].beta};
        snprintf(out->collective, sizeof out->collective, "%s", cal[best].collective);
    }
    return rc ? 1 : 0;
}

/* The model's time of the step over the calibrated links. */
static int model_time(const opts *o, const layout *L, prediction *p)
{
    const int g = L->hierarchical ? L->per_host : 1;
    dpas_scenario sc = {.parameters = o->params, .nodes = L->nranks / g, .accelerators_per_node = g,
                        .dp_degree = L->nranks,
                        .gradient_bytes_per_param = {(uint64_t)o->width, 1},
                        .checkpoint_bytes_per_param = {(uint64_t)o->width, 1}};
    /* the host's one link is shared by its g ranks */
    dpas_links links = {.inter_bandwidth = p->inter.beta / g, .inter_latency = p->inter.alpha,
                        .intra_bandwidth = p->intra.beta, .intra_latency = p->intra.alpha};
    dpas_error e;
    int rc = dpas_schedule_time(o->schedule, &sc, o->rule, o->cc_iterations > 0 ? o->cc_iterations : 10,
                                p->topo, &links, &p->network_s, &e);
    if (rc)
        measure_say("%s", e.message);
    p->have = !rc;
    return rc ? 1 : 0;
}

static int predict_with(const opts *o, const layout *L, prediction *p)
{
    const char *coll = o->schedule == DPAS_SCHED_ALLREDUCE ? "all_reduce" : "all_gather";
    const int sharded = o->schedule == DPAS_SCHED_SHARDED || o->schedule == DPAS_SCHED_SHARDED_DISTANCE;
    int rc = 1;
    if (o->intra_calibration && !L->hierarchical)
        measure_say("--intra-calibration: no two hosts hold the same number (> 1) of ranks here, so "
                    "there is no hierarchical step to model (hosts %d, ranks per host %d)", L->hosts,
                    L->per_host);
    else if (L->hierarchical && !o->intra_calibration && !sharded)
        measure_say("ranks share hosts (%d hosts x %d ranks): the hierarchical model needs the links "
                    "inside a host too: give --intra-calibration FILE (a --sweep with all ranks on one "
                    "host)", L->hosts, L->per_host);
    else if (L->hierarchical && sharded) {
        p->why = "the library's hierarchical model pre-reduces inside a host, which a robust rule on a "
                 "sharded schedule cannot do: no time predicted";
        rc = fit_for(o->calibration, coll, L->hosts, &p->inter);
    } else {
        rc = fit_for(o->calibration, coll, L->hierarchical ? L->hosts : L->nranks, &p->inter) ||
             (L->hierarchical && fit_for(o->intra_calibration, coll, L->per_host, &p->intra)) ||
             model_time(o, L, p);
    }
    return rc;
}

int predict_time(const opts *o, const layout *L, prediction *p)
{
    *p = (prediction){.topo = L->hierarchical ? DPAS_TOPO_HIERARCHICAL : DPAS_TOPO_FLAT};
    return o->calibration ? predict_with(o, L, p) : 0;
}
