/* SPDX-License-Identifier: Apache-2.0 */
/* What dpas predicts for the run: the schedule's exact bytes per rank (dpas_schedule_traffic),
 * and, with --calibration, the step's time from nccl-tests output (dpas_netmodel_load). Flat, the
 * library's schedule time over the file's curves (dpas_schedule_time_net, as `dpas cost
 * --calibration` answers: the all_reduce curve for allreduce and the sharded schedules, the
 * all_gather curve at the gathered size for allgather) under --network-model. Where ranks share
 * hosts, the hierarchical model (dpas_schedule_time, alpha-beta): between hosts the alpha-beta
 * line of the calibration, whose one link per host the host's g ranks share (beta / g each: the
 * calibration measured it with one rank per host), inside a host --intra-calibration's line.
 * Flat times carry the library's basis and band (how the time was obtained, where it can be);
 * the hierarchical alpha-beta time has neither. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int predict_bytes(const opts *o, int nranks, double *bytes)
{
    dpas_scenario sc = {.parameters = o->params,
                        .nodes = nranks,
                        .accelerators_per_node = 1,
                        .dp_degree = nranks,
                        .gradient_bytes_per_param = {(uint64_t)o->width, 1},
                        .checkpoint_bytes_per_param = {(uint64_t)o->width, 1}};
    dpas_traffic tr;
    dpas_error e;
    int rc = dpas_schedule_traffic(o->schedule, &sc, o->rule,
                                   o->cc_iterations > 0 ? o->cc_iterations : 10, &tr, &e);
    if (rc)
        measure_say("%s", e.message);
    else
        *bytes = dpas_bytes_to_double(tr.sent);
    return rc ? 1 : 0;
}

/* A calibration as every front end reads one: a calibrate request of the library with the file
 * (or files: A,B, the one list syntax) as its calibration key; the model is the request's. */
static int load(const char *file, dpas_request **rq, const dpas_netmodel **m)
{
    dpas_error e;
    int rc = dpas_request_new(DPAS_ANALYSIS_CALIBRATE, rq, &e);
    if (!rc)
        rc = dpas_request_set(*rq, "calibration", file, &e);
    if (!rc)
        rc = dpas_request_resolve(*rq, NULL, &e);
    if (!rc)
        *m = dpas_request_netmodel(*rq);
    if (rc)
        measure_say("calibration %s: %s", file, e.message);
    return rc ? 1 : 0;
}

/* The alpha-beta line of the file's curve of this collective nearest `ranks` ranks (alpha is
 * per ring step and beta per link, so a line carries over; the report says which was used). */
static int line_for(const char *file, const dpas_netmodel *m, int coll, int64_t ranks,
                    link_fit *out)
{
    /* the library's choice (dpas_netmodel_link_curve): by the curves' facts, never their order */
    const dpas_curve *best = dpas_netmodel_link_curve(m, coll, DPAS_LINK_ANY, ranks);
    int rc = 1;
    const dpas_fit *fit = best ? &best->fits[DPAS_NETMODEL_ALPHA_BETA - 1] : NULL;
    if (!best)
        measure_say("calibration %s has no %s rows (this schedule needs them): measure them with "
                    "dpas-measure --sweep or nccl-tests",
                    file, dpas_collective_name(coll));
    else if (!fit->defined)
        rc = 2; /* a line the file cannot give (no growth with size, one size): the caller says
                   why no time is predicted; the run itself goes on */
    else {
        *out =
            (link_fit){.file = file, .ranks = best->ranks, .alpha = fit->alpha, .beta = fit->beta};
        snprintf(out->collective, sizeof out->collective, "%s", dpas_collective_name(coll));
        rc = 0;
    }
    return rc;
}

static dpas_scenario scenario_of(const opts *o, const layout *L, int g)
{
    return (dpas_scenario){.parameters = o->params,
                           .nodes = L->nranks / g,
                           .accelerators_per_node = g,
                           .dp_degree = L->nranks,
                           .gradient_bytes_per_param = {(uint64_t)o->width, 1},
                           .checkpoint_bytes_per_param = {(uint64_t)o->width, 1}};
}

/* Flat: the library's schedule time over the file's curves, under the chosen model. */
static int flat_time(const opts *o, const layout *L, const dpas_netmodel *m, prediction *p)
{
    /* the ranks as they are laid out (hosts x ranks per host): the scale the calibration's
     * curves are matched against; one rank per host when hosts hold different numbers */
    dpas_scenario sc = scenario_of(o, L, L->per_host > 0 ? L->per_host : 1);
    dpas_links links = {.inter_bandwidth = p->inter.beta, .inter_latency = p->inter.alpha};
    dpas_net_step step;
    dpas_error e;
    int rc = dpas_schedule_time_net(o->schedule, &sc, o->rule,
                                    o->cc_iterations > 0 ? o->cc_iterations : 10, m,
                                    o->network_model, &links, &step, &e);
    if (rc) {
        measure_say("%s", e.message);
    } else {
        p->network_s = step.seconds;
        p->extrapolated = step.extrapolated, p->rescaled = step.rescaled;
        p->basis = step.basis, p->band_lo = step.band_lo, p->band_hi = step.band_hi;
        snprintf(p->model, sizeof p->model, "%s", step.model ? step.model : "?");
        p->have = 1;
    }
    return rc ? 1 : 0;
}

/* Hierarchical: mlsysim's two-level model over the two alpha-beta lines. */
static int hierarchical_time(const opts *o, const layout *L, prediction *p)
{
    const int g = L->per_host;
    dpas_scenario sc = scenario_of(o, L, g);
    dpas_links links = {.inter_bandwidth = p->inter.beta / g,
                        .inter_latency = p->inter.alpha,
                        .intra_bandwidth = p->intra.beta,
                        .intra_latency = p->intra.alpha};
    dpas_error e;
    int rc =
        dpas_schedule_time(o->schedule, &sc, o->rule, o->cc_iterations > 0 ? o->cc_iterations : 10,
                           DPAS_TOPO_HIERARCHICAL, &links, &p->network_s, &e);
    if (rc)
        measure_say("%s", e.message);
    snprintf(p->model, sizeof p->model, "alpha_beta");
    p->have = !rc;
    return rc ? 1 : 0;
}

/* The alpha-beta line of a file is undefined (its times do not grow with the size, it has one
 * size): the hierarchical model cannot be used, and the report says why, while the run goes on
 * (the bytes are what it measures; a time is a prediction beside them). */
static int undefined_line(const char *file, const dpas_netmodel *m, int coll, prediction *p)
{
    for (size_t i = 0; i < m->ncurves; i++)
        if (m->curves[i].collective == coll &&
            !m->curves[i].fits[DPAS_NETMODEL_ALPHA_BETA - 1].defined) {
            const dpas_fit *f = &m->curves[i].fits[DPAS_NETMODEL_ALPHA_BETA - 1];
            int n =
                snprintf(p->why_buf, sizeof p->why_buf, "calibration %s: %s: %s: no time predicted",
                         file, dpas_collective_name(coll), f->reason);
            if (n < 0 || (size_t)n >= sizeof p->why_buf) /* cut: say so */
                memcpy(p->why_buf + sizeof p->why_buf - 8, "...[cut]", 9);
            p->why = p->why_buf;
            return 0;
        }
    return 1;
}

static int predict_with(const opts *o, const layout *L, const dpas_netmodel *inter,
                        const dpas_netmodel *intra, prediction *p)
{
    const int coll =
        o->schedule == DPAS_SCHED_ALLGATHER ? DPAS_COLL_ALL_GATHER : DPAS_COLL_ALL_REDUCE;
    const int sharded =
        o->schedule == DPAS_SCHED_SHARDED || o->schedule == DPAS_SCHED_SHARDED_DISTANCE;
    int rc =
        line_for(o->calibration, inter, coll, L->hierarchical ? L->hosts : L->nranks, &p->inter);
    if (rc == 2 && L->hierarchical && !sharded)
        return undefined_line(o->calibration, inter, coll, p);
    if (rc == 2) /* the flat model does not need the line: the calibration's curves answer */
        rc = 0;
    if (rc || !L->hierarchical)
        rc = rc || flat_time(o, L, inter, p);
    else if (sharded)
        p->why =
            "the library's hierarchical model pre-reduces inside a host, which a robust rule on a "
            "sharded schedule cannot do: no time predicted";
    else if ((rc = line_for(o->intra_calibration, intra, coll, L->per_host, &p->intra)) == 2)
        return undefined_line(o->intra_calibration, intra, coll, p);
    else
        rc = rc || hierarchical_time(o, L, p);
    return rc;
}

/* The options against the layout, then the files. */
static int predict_checked(const opts *o, const layout *L, prediction *p)
{
    const int sharded =
        o->schedule == DPAS_SCHED_SHARDED || o->schedule == DPAS_SCHED_SHARDED_DISTANCE;
    const dpas_netmodel *inter = NULL, *intra = NULL;
    dpas_request *inter_rq = NULL, *intra_rq = NULL;
    int rc = 1;
    if (o->intra_calibration && !L->hierarchical)
        measure_say(
            "--intra-calibration: no two hosts hold the same number (> 1) of ranks here, so "
            "there is no hierarchical step to model (hosts %d, ranks per host %d)",
            L->hosts, L->per_host);
    else if (L->hierarchical && !sharded && !o->intra_calibration)
        measure_say(
            "ranks share hosts (%d hosts x %d ranks): the hierarchical model needs the links "
            "inside a host too: give --intra-calibration FILE (a --sweep with all ranks on one "
            "host)",
            L->hosts, L->per_host);
    else if (L->hierarchical && !sharded && o->network_model != DPAS_NETMODEL_DEFAULT &&
             o->network_model != DPAS_NETMODEL_ALPHA_BETA)
        measure_say(
            "--network-model %s: ranks share hosts, and the hierarchical model is alpha-beta "
            "only: use alpha_beta (or default)",
            dpas_netmodel_kind_name(o->network_model));
    else
        rc = load(o->calibration, &inter_rq, &inter) ||
             (o->intra_calibration && load(o->intra_calibration, &intra_rq, &intra)) ||
             predict_with(o, L, inter, intra, p);
    dpas_request_free(inter_rq);
    dpas_request_free(intra_rq);
    return rc;
}

int predict_time(const opts *o, const layout *L, prediction *p)
{
    *p = (prediction){.topo = L->hierarchical ? DPAS_TOPO_HIERARCHICAL : DPAS_TOPO_FLAT,
                      .band_lo = NAN,
                      .band_hi = NAN};
    return o->calibration ? predict_checked(o, L, p) : 0;
}
