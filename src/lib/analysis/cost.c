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
static void cost_links(const dpas_scenario *s, const dpas_cost_opts *o, dpas_cost *c)
{
    c->have_links = dpas_scenario_links(s, &c->links, NULL) == 0;
    c->have_intra = c->have_links;
    if (s->fabric_entry)
        c->fabric = s->fabric_entry->path, c->fabric_name = s->fabric_entry->name;
    if (s->node_entry)
        c->node = s->node_entry->path, c->node_name = s->node_entry->name;
    if (!o->links)
        return;
    c->calibrated = 1;
    c->links_source = o->links_source;
    c->links.inter_bandwidth = o->links->inter_bandwidth;
    c->links.inter_latency = o->links->inter_latency;
    if (!c->have_links && s->node_entry) {
        c->links.intra_bandwidth = s->node_entry->intra_bandwidth;
        c->links.intra_latency = s->node_entry->intra_latency;
        c->have_intra = 1;
    }
    c->have_links = 1;
}

static int cost_row(const dpas_scenario *s, const dpas_cost *c, dpas_cost_row *r, double ar_bytes,
                    const dpas_netmodel *net, dpas_error *err)
{
    const uint64_t steps = (uint64_t)c->steps;
    int rc;
    r->realisable = dpas_schedule_realises(r->schedule, r->rule, &r->why);
    dpas_rule_max_f(r->rule, c->dp_degree, &r->max_f, NULL);
    r->tolerates = c->f >= 0 && r->max_f >= c->f;
    r->ratio_to_allreduce = r->time_flat_s = r->time_hierarchical_s = r->compute_s = NAN;
    r->time_band_lo_s = r->time_band_hi_s = NAN;
    if (!r->realisable)
        return 0;
    dpas_traffic tr;
    if ((rc = dpas_schedule_traffic(r->schedule, s, r->rule, c->iterations, &tr, err)) ||
        (rc = dpas__bytes_field(dpas__bytes_times(tr.sent, steps, &r->bytes_per_worker, err),
                                "bytes_per_worker", err)) ||
        (rc = dpas__bytes_field(dpas__bytes_times(tr.received, steps, &r->bytes_received, err),
                                "bytes_received", err)) ||
        (rc = dpas__bytes_field(dpas__bytes_times(tr.scalars, steps, &r->scalar_bytes, err),
                                "scalar_bytes", err))) {
        if (err) { /* which row: the message names the field, this names the rule and schedule */
            char m[sizeof err->message];
            memcpy(m, err->message, sizeof m);
            snprintf(err->message, sizeof err->message, "%s under %s: %s", r->rule->name,
                     dpas_schedule_name(r->schedule), m);
        }
        return rc;
    }
    if (ar_bytes > 0) /* per step, so the ratio does not depend on steps */
        r->ratio_to_allreduce = dpas_bytes_to_double(tr.sent) / ar_bytes;
    if (net) { /* the measured curves; hierarchical times stay on the links' line */
        dpas_net_step t;
        int trc = dpas_schedule_time_net(r->schedule, s, r->rule, c->iterations, net, c->net_kind,
                                         &c->links, &t, err);
        if (trc)
            return trc;
        r->time_flat_s = t.seconds * (double)steps;
        r->time_model = t.model;
        r->time_extrapolated = t.extrapolated;
        r->time_rescaled = t.rescaled;
        r->time_basis = t.basis;
        r->time_band_lo_s = t.band_lo * (double)steps;
        r->time_band_hi_s = t.band_hi * (double)steps;
        if (c->have_intra) {
            dpas_schedule_time(r->schedule, s, r->rule, c->iterations, DPAS_TOPO_HIERARCHICAL,
                               &c->links, &r->time_hierarchical_s, NULL);
            r->time_hierarchical_s *= (double)steps;
        }
    } else if (c->have_links) {
        dpas_schedule_time(r->schedule, s, r->rule, c->iterations, DPAS_TOPO_FLAT, &c->links,
                           &r->time_flat_s, NULL);
        r->time_flat_s *= (double)steps;
        if (c->have_intra) {
            dpas_schedule_time(r->schedule, s, r->rule, c->iterations, DPAS_TOPO_HIERARCHICAL,
                               &c->links, &r->time_hierarchical_s, NULL);
            r->time_hierarchical_s *= (double)steps;
        }
    }
    if (c->compute_rate > 0) {
        double fl = dpas_rule_flops(r->rule, c->dp_degree, s->parameters, c->iterations);
        /* a schedule that gathers whole gradients runs the rule on every coordinate at once */
        bool whole = r->schedule == DPAS_SCHED_ALLGATHER || r->schedule == DPAS_SCHED_PS ||
                     r->schedule == DPAS_SCHED_PS_SEPARATE;
        r->compute_s = (whole ? fl : fl / (double)c->dp_degree) / c->compute_rate * (double)steps;
    }
    return 0;
}

/* A sentence for the notes (their text is ours, but a cut would still say so). */
static void note(dpas_cost *c, const char *fmt, ...) DPAS__PRINTF(2, 3);
static void note(dpas_cost *c, const char *fmt, ...)
{
    if (c->nnotes == DPAS_COST_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *n = c->notes[c->nnotes++];
    dpas__mark_cut(n, sizeof c->notes[0], vsnprintf(n, sizeof c->notes[0], fmt, ap));
    va_end(ap);
}

static void cost_notes(const dpas_scenario *s, dpas_cost *c)
{
    const int64_t N = c->dp_degree;
    bool iterative = false;
    for (size_t i = 0; i < c->nrows; i++)
        iterative |= c->rows[i].realisable && c->rows[i].schedule == DPAS_SCHED_SHARDED_DISTANCE &&
                     (c->rows[i].rule->caps & DPAS_RULE_CAP_ITERATIVE);
    if (c->have_links && N > 1 && N > s->nodes)
        note(c,
             "hierarchical times pre-reduce inside a node (%lld replicas per node on average): "
             "sound for a robust rule only when a node is one trust domain",
             (long long)(N / s->nodes));
    if (!c->have_links)
        note(c, "no times: the fleet has no known fabric and node (use a registry fleet, or "
                "fleet.node and fleet.fabric)");
    if (iterative)
        note(c,
             "iterative rules (geometric_median, centered_clipping) on sharded_distance: %lld "
             "iterations",
             (long long)c->iterations);
    if (c->f >= 0)
        note(c, "tolerates: whether the rule's max_f at dp_degree %lld reaches f = %lld",
             (long long)N, (long long)c->f);
    if (c->net_kind >= 0)
        note(c,
             "flat times from the calibration's measured curves (network model %s: %s); "
             "hierarchical times from its alpha-beta line; parameter servers from the line",
             dpas_netmodel_kind_name(c->net_kind),
             c->net_kind == DPAS_NETMODEL_DEFAULT
                 ? "the measured curve at a measured scale, the nccl model elsewhere"
                 : "as asked");
}

int dpas_cost_compute(const dpas_scenario *s, const dpas_cost_opts *o, dpas_cost **out,
                      dpas_error *err)
{
    int rc;
    dpas_report rep;
    *out = NULL;
    if ((rc = dpas_evaluate(s, &rep, err)))
        return rc;
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
    dpas_cost *c = calloc(1, sizeof *c);
    if (!c)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    c->dp_degree = s->dp_degree;
    c->steps = o->steps > 0 ? o->steps : 1;
    c->iterations = o->iterations > 0 ? o->iterations : 10;
    c->f = o->f;
    c->compute_rate = o->compute_rate;
    c->net_kind = o->net ? o->net_kind : -1;
    if (o->net && (o->net_kind < DPAS_NETMODEL_DEFAULT || o->net_kind > DPAS_NETMODEL_KINDS)) {
        dpas_cost_free(c);
        return dpas__fail(err, DPAS_EINVAL, "network_model", "unknown network model %d",
                          o->net_kind);
    }
    c->gradient_bytes = rep.gradient_bytes;
    c->accelerators_per_node = s->accelerators_per_node;
    cost_links(s, o, c);

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
    dpas_traffic ar;
    if ((rc = dpas_schedule_traffic(DPAS_SCHED_ALLREDUCE, s, NULL, 0, &ar, err))) {
        dpas_cost_free(c);
        return rc;
    }
    const double ar_bytes = dpas_bytes_to_double(ar.sent);
    for (size_t i = 0; i < (o->rules ? nrules : dpas_rule_count()); i++) {
        const dpas_rule *rule = o->rules ? o->rules[i] : dpas_rule_at(i);
        if (!o->rules && !rule->is_default)
            continue;
        for (int sc = 0; sc < DPAS_SCHED_COUNT; sc++) {
            if (o->schedules && !(o->schedules & (1u << sc)))
                continue;
            dpas_cost_row *r = &c->rows[c->nrows++];
            r->rule = rule;
            r->schedule = (dpas_schedule_id)sc;
            if ((rc = cost_row(s, c, r, ar_bytes, o->net, err))) {
                dpas_cost_free(c);
                return rc;
            }
            c->unrealisable += !r->realisable;
        }
    }
    cost_notes(s, c);
    *out = c;
    return 0;
}
