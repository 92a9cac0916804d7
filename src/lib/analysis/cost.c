/* SPDX-License-Identifier: Apache-2.0 */
/* The cost analysis: every rule under every schedule, as typed rows (exact bytes, ratio to the
 * ring AllReduce, alpha-beta times). Rendering lives in render/cost.c. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dpas_cost_free(dpas_cost *c)
{
    if (c)
        free(c->rows);
    free(c);
}

/* The links the times use: the fleet's, with the inter-node ones replaced by a calibration. */
int dpas__cost_ctx_init(const dpas_scenario *s, const dpas_links *cal, dpas__cost_ctx *c,
                        dpas_error *err)
{
    dpas_traffic ar;
    int rc = dpas__schedule_traffic(DPAS_SCHED_ALLREDUCE, s, NULL, 0, &ar, err);
    c->allreduce_bytes = dpas_bytes_to_double(ar.sent);
    c->dp_degree = s->dp_degree;

    c->have_links = dpas_scenario_links(s, &c->links, NULL) == 0;
    c->have_intra = c->have_links;
    if (!cal)
        return rc;
    c->links.inter_bandwidth = cal->inter_bandwidth;
    c->links.inter_latency = cal->inter_latency;
    if (!c->have_links && s->node_entry) {
        c->links.intra_bandwidth = s->node_entry->intra_bandwidth;
        c->links.intra_latency = s->node_entry->intra_latency;
        c->have_intra = 1;
    }
    c->have_links = 1;
    return rc;
}

static int cost_times(const dpas_scenario *s, const dpas__cost_ctx *c, dpas_cost_row *r,
                      dpas_error *err)
{
    const double steps = (double)c->steps;
    if (c->net) { /* the measured curves; hierarchical times stay on the links' line */
        dpas_net_step t;
        int trc = dpas__schedule_time_net(r->schedule, s, r->rule, c->iterations, c->net,
                                          c->net_kind, &c->links, &t, err);
        if (trc)
            return trc;
        r->time_flat_s = r->time_s = t.seconds * steps;
        r->time_model = t.model;
        r->time_extrapolated = t.extrapolated;
        r->time_rescaled = t.rescaled;
        r->time_basis = t.basis;
        r->time_band_lo_s = t.band_lo * steps;
        r->time_band_hi_s = t.band_hi * steps;
    } else if (c->have_links) {
        dpas__schedule_time(r->schedule, s, r->rule, c->iterations, DPAS_TOPO_FLAT, &c->links,
                            &r->time_flat_s, NULL);
        r->time_flat_s *= steps;
    }
    if (c->have_links && c->have_intra) {
        dpas__schedule_time(r->schedule, s, r->rule, c->iterations, DPAS_TOPO_HIERARCHICAL,
                            &c->links, &r->time_hierarchical_s, NULL);
        r->time_hierarchical_s *= steps;
    }
    if (!c->net) { /* the schedule the fleet runs: pre-reduce inside a node where that is sound */
        bool hier = c->have_intra &&
                    (c->dp_degree <= s->nodes || !r->rule || r->rule->id == DPAS_RULE_MEAN);
        r->time_s = hier ? r->time_hierarchical_s : r->time_flat_s;
        if (!isnan(r->time_s))
            r->time_model = hier ? "alpha_beta_hierarchical" : "alpha_beta_flat";
    }
    return 0;
}

int dpas__cost_row(const dpas_scenario *s, const dpas__cost_ctx *c, const dpas_rule *rule,
                   dpas_cost_row *r, dpas_error *err)
{
    const uint64_t steps = (uint64_t)c->steps;
    const double steps_d = (double)c->steps;
    int rc;
    r->rule = rule;
    r->realisable = !rule || dpas_schedule_realises(r->schedule, rule, &r->why);
    r->max_f = -1;
    if (rule)
        dpas_rule_max_f(rule, c->dp_degree, &r->max_f, NULL);
    r->tolerates = c->f >= 0 && r->max_f >= c->f;
    r->ratio_to_allreduce = r->time_flat_s = r->time_hierarchical_s = r->compute_s = NAN;
    r->time_s = r->total_s = NAN;
    r->time_band_lo_s = r->time_band_hi_s = NAN;
    if (!r->realisable)
        return 0;
    dpas_traffic tr;
    double zero_s = 0, zero_r;
    if ((rc = dpas__schedule_traffic(r->schedule, s, rule, c->iterations, &tr, err)) ||
        /* ZeRO's parameter all-gathers: a ring's worker receives what it sends */
        (rc = dpas__zero_extra(s, c, c->zero, r->schedule, NAN, 1, &tr.sent, &zero_s, err)) ||
        (rc = dpas__zero_extra(s, c, c->zero, r->schedule, NAN, 1, &tr.received, &zero_r, err)) ||
        (rc = dpas__bytes_field(dpas__bytes_times(tr.sent, steps, &r->bytes_per_worker, err),
                                "bytes_per_worker", err)) ||
        (rc = dpas__bytes_field(dpas__bytes_times(tr.received, steps, &r->bytes_received, err),
                                "bytes_received", err)) ||
        (rc = dpas__bytes_field(dpas__bytes_times(tr.scalars, steps, &r->scalar_bytes, err),
                                "scalar_bytes", err))) {
        if (err && rule) { /* which row: the message names the field, this the rule, schedule */
            char m[sizeof err->message];
            memcpy(m, err->message, sizeof m);
            snprintf(err->message, sizeof err->message, "%s under %s: %s", rule->name,
                     dpas_schedule_name(r->schedule), m);
        }
        return rc;
    }
    if (c->allreduce_bytes > 0) /* per step, so the ratio does not depend on steps */
        r->ratio_to_allreduce = dpas_bytes_to_double(tr.sent) / c->allreduce_bytes;
    if ((rc = cost_times(s, c, r, err)))
        return rc;
    if (zero_s != 0) { /* the gathers beyond the schedule's, timed over the links */
        r->time_s += zero_s * steps_d;
        r->time_flat_s += zero_s * steps_d;
        r->time_hierarchical_s += zero_s * steps_d;
        r->time_band_lo_s += zero_s * steps_d;
        r->time_band_hi_s += zero_s * steps_d;
    }
    r->compute_flops = r->compute_bytes = NAN;
    r->compute_bound = NULL;
    if ((c->compute_rate > 0 || c->memory_bandwidth > 0) && rule) {
        /* a schedule that gathers whole gradients runs the rule on every coordinate at once;
         * the others shard the coordinates: 1/N of the work, n rows of d/N each */
        bool whole = r->schedule == DPAS_SCHED_ALLGATHER || r->schedule == DPAS_SCHED_PS ||
                     r->schedule == DPAS_SCHED_PS_SEPARATE;
        double share = whole ? 1.0 : 1.0 / (double)c->dp_degree;
        r->compute_flops =
            dpas_rule_flops(rule, c->dp_degree, s->parameters, c->iterations) * share * steps_d;
        r->compute_bytes = dpas_rule_passes(rule, c->dp_degree, c->iterations) *
                           (double)c->dp_degree * c->gradient_bytes * share * steps_d;
        r->compute_s = dpas_roofline_time(r->compute_flops, r->compute_bytes, c->compute_rate,
                                          c->memory_bandwidth, &r->compute_bound);
    }
    r->total_s = r->time_s + r->compute_s; /* NaN unless both are known */
    return 0;
}

/* A sentence for the notes (their text is ours, but a cut would still say so). */
static void note(dpas_cost *c, const char *fmt, ...) DPAS__PRINTF(2, 3);
static void note(dpas_cost *c, const char *fmt, ...)
{
    /* cost_notes writes at most 8 notes (time, no times, iterations, compute, tolerates,
     * calibration, fabric, zero), the room: none is ever dropped */
    if (c->nnotes == DPAS_COST_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *n = c->notes[c->nnotes++];
    dpas__mark_cut(n, sizeof c->notes[0], vsnprintf(n, sizeof c->notes[0], fmt, ap));
    va_end(ap);
}

/* Did the calibration measure the network across nodes (a curve of several nodes)? */
static bool across_nodes(const dpas_netmodel *m)
{
    for (size_t i = 0; m && i < m->ncurves; i++)
        if (m->curves[i].per_node > 0 && m->curves[i].ranks > m->curves[i].per_node)
            return true;
    return false;
}

static void cost_notes(const dpas_scenario *s, const dpas_cost_opts *o, dpas_cost *c)
{
    const int64_t N = c->dp_degree;
    bool iterative = false;
    for (size_t i = 0; i < c->nrows; i++)
        iterative |= c->rows[i].realisable && c->rows[i].schedule == DPAS_SCHED_SHARDED_DISTANCE &&
                     (c->rows[i].rule->caps & DPAS_RULE_CAP_ITERATIVE);
    if (c->have_links && N > 1 && N > s->nodes && c->net_kind < 0)
        note(c,
             "time: flat for the robust rules, hierarchical for the mean; pre-reducing inside a "
             "node (%lld replicas per node on average) is sound for a robust rule only when a "
             "node is one trust domain (both are time_flat_s and time_hierarchical_s)",
             (long long)(N / s->nodes));
    if (!c->have_links)
        note(c, "no times: the fleet has no known %s (use a registry fleet, or give %s)",
             !s->fabric_entry && !s->node_entry ? "fabric and node"
             : !s->fabric_entry                 ? "fabric"
                                                : "node",
             !s->fabric_entry && !s->node_entry ? "fleet.node and fleet.fabric"
             : !s->fabric_entry                 ? "fleet.fabric"
                                                : "fleet.node");
    if (iterative)
        note(c,
             "iterative rules (geometric_median, centered_clipping) on sharded_distance: %lld "
             "iterations",
             (long long)c->iterations);
    if (c->peak_flops > 0 || c->memory_bandwidth > 0)
        note(c,
             "compute: the rule's own, max(flops / %.4g FLOP/s, bytes / %.4g B/s) per worker%s; "
             "bytes = passes over the n gradients it holds x their bytes",
             c->peak_flops, c->memory_bandwidth,
             !(c->memory_bandwidth > 0) ? " (no memory bandwidth known: give memory_bandwidth)"
             : !(c->peak_flops > 0)     ? " (no peak known: give compute_rate)"
                                        : "");
    if (o->zero)
        note(c,
             "zero %d: %s; the bytes and times add the parameter all-gathers beyond the "
             "schedule's own (ring all-gathers over the links; dpas step says what the compute "
             "hides)",
             o->zero,
             o->zero == 3 ? "reduce-scatter of gradients, all-gather of parameters in forward and "
                            "in backward (1.5x DP's bytes)"
                          : "reduce-scatter of gradients, all-gather of parameters after the step "
                            "(DP's bytes)");
    if (c->f >= 0)
        note(c, "tolerates: whether the rule's max_f at dp_degree %lld reaches f = %lld",
             (long long)N, (long long)c->f);
    if (c->net_kind >= 0)
        note(c,
             "time from the calibration's measured curves (network model %s: %s), with its "
             "basis and band, each schedule the sum of the collectives it runs, one the "
             "calibration lacks transferred from another's curve (time_hierarchical_s: the "
             "hierarchical alternative, from its alpha-beta line)",
             dpas_netmodel_kind_name(c->net_kind),
             c->net_kind == DPAS_NETMODEL_DEFAULT
                 ? "the measured curve at a measured scale, the nccl model elsewhere"
                 : "as asked");
    /* a fabric beside a calibration is used where the calibration has no curve across nodes
     * (network/schedule_time.c); where it has, the curves time the network: say so, never drop it silently */
    if (c->net_kind >= 0 && s->fabric_entry && across_nodes(o->net))
        note(c,
             "fabric %s not used for the times: the calibration measured the network across "
             "nodes, and its curves time every collective (a fabric times only what a "
             "calibration measured inside one node cannot)",
             s->fabric_entry->name ? s->fabric_entry->name : "(custom)");
}

static int check_opts(const dpas_cost_opts *o, dpas_error *err)
{
    if (o->steps < 0)
        return dpas__fail(err, DPAS_EINVAL, "steps", "steps must be >= 1, got %lld",
                          (long long)o->steps);
    if (o->iterations < 0)
        return dpas__fail(err, DPAS_EINVAL, "iterations", "iterations must be >= 1, got %lld",
                          (long long)o->iterations);
    if (o->f < -1)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)o->f);
    if (!(o->compute_rate >= 0) || isinf(o->compute_rate))
        return dpas__fail(err, DPAS_EINVAL, "compute_rate",
                          "compute_rate must be a finite number >= 0 FLOP/s, got %g",
                          o->compute_rate);
    if (!(o->memory_bandwidth >= 0) || isinf(o->memory_bandwidth))
        return dpas__fail(err, DPAS_EINVAL, "memory_bandwidth",
                          "memory_bandwidth must be a finite number >= 0 B/s, got %g",
                          o->memory_bandwidth);
    if (o->zero < 0 || o->zero > 3)
        return dpas__fail(err, DPAS_EINVAL, "zero", "zero must be 0, 1, 2 or 3, got %d", o->zero);
    if (o->net && (o->net_kind < DPAS_NETMODEL_DEFAULT || o->net_kind > DPAS_NETMODEL_KINDS))
        return dpas__fail(err, DPAS_EINVAL, "network_model", "unknown network model %d",
                          o->net_kind);
    return 0;
}

/* The roofline of the rule's own compute: asked for by compute_rate or memory_bandwidth, the
 * one not given from the fleet's accelerator (its peak and HBM bandwidth) when it has one. */
static void roofline(const dpas_scenario *s, const dpas_cost_opts *o, dpas__cost_ctx *x)
{
    if (!(o->compute_rate > 0) && !(o->memory_bandwidth > 0))
        return;
    const dpas_hardware *hw = s->node_entry ? s->node_entry->accelerator : NULL;
    x->compute_rate = o->compute_rate > 0 ? o->compute_rate : hw ? hw->peak_flops : 0;
    x->memory_bandwidth = o->memory_bandwidth > 0 ? o->memory_bandwidth
                          : hw                    ? hw->hbm_bandwidth
                                                  : 0;
}

/* The document's fields beside the rows. */
static void cost_head(const dpas_scenario *s, const dpas_cost_opts *o, const dpas_report *rep,
                      const dpas__cost_ctx *x, dpas_cost *c)
{
    c->dp_degree = s->dp_degree;
    c->steps = x->steps;
    c->iterations = x->iterations;
    c->f = o->f;
    c->compute_rate = o->compute_rate;
    c->peak_flops = x->compute_rate;
    c->memory_bandwidth = x->memory_bandwidth;
    c->net_kind = o->net ? o->net_kind : DPAS_NETMODEL_NONE;
    c->gradient_bytes = rep->gradient_bytes;
    c->accelerators_per_node = s->accelerators_per_node;
    c->links = x->links;
    c->have_links = x->have_links;
    c->have_intra = x->have_intra;
    if (s->fabric_entry)
        c->fabric = s->fabric_entry->path, c->fabric_name = s->fabric_entry->name;
    if (s->node_entry)
        c->node = s->node_entry->path, c->node_name = s->node_entry->name;
    if (o->links)
        c->calibrated = 1, c->links_source = o->links_source;
}

int dpas_cost_compute(const dpas_scenario *s, const dpas_cost_opts *o, dpas_cost **out,
                      dpas_error *err)
{
    int rc;
    dpas_report rep;
    *out = NULL;
    /* the scenario is validated here, once; every row below trusts it */
    if ((rc = dpas_evaluate(s, &rep, err)) || (rc = check_opts(o, err)))
        return rc;
    dpas__cost_ctx x = {.steps = o->steps > 0 ? o->steps : 1,
                        .iterations = o->iterations > 0 ? o->iterations : 10,
                        .f = o->f,
                        .net = o->net,
                        .net_kind = o->net_kind,
                        .zero = o->zero,
                        .gradient_bytes = dpas_bytes_to_double(rep.gradient_bytes)};
    dpas_cost *c = calloc(1, sizeof *c);
    if (!c)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    if ((rc = dpas__cost_ctx_init(s, o->links, &x, err))) {
        dpas_cost_free(c);
        return rc;
    }
    roofline(s, o, &x);
    cost_head(s, o, &rep, &x, c);
    size_t nrules = o->rules ? o->nrules : 0;
    if (!o->rules)
        for (size_t i = 0; i < dpas_rule_count(); i++)
            nrules += dpas_rule_at(i)->is_default != 0;
    c->rows = nrules < SIZE_MAX / DPAS_SCHED_COUNT / sizeof *c->rows
                  ? calloc(nrules * DPAS_SCHED_COUNT + 1, sizeof *c->rows)
                  : NULL;
    if (!c->rows) {
        dpas_cost_free(c);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < (o->rules ? nrules : dpas_rule_count()); i++) {
        const dpas_rule *rule = o->rules ? o->rules[i] : dpas_rule_at(i);
        if (!o->rules && !rule->is_default)
            continue;
        for (int sc = 0; sc < DPAS_SCHED_COUNT; sc++) {
            if (o->schedules && !(o->schedules & (1u << sc)))
                continue;
            dpas_cost_row *r = &c->rows[c->nrows++];
            r->schedule = (dpas_schedule_id)sc;
            if ((rc = dpas__cost_row(s, &x, rule, r, err))) {
                dpas_cost_free(c);
                return rc;
            }
            c->unrealisable += !r->realisable;
        }
    }
    cost_notes(s, o, c);
    *out = c;
    return 0;
}
