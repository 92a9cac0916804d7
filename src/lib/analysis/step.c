/* SPDX-License-Identifier: Apache-2.0 */
/* The step analysis: the forward and backward compute, each rule x schedule's exchange from
 * cost's time model bucket by bucket, the part of it the backward does not hide, the rule's own
 * compute and ZeRO's parameter all-gathers; the step and the share of it robustness adds.
 * Rendering lives in render/step.c. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void dpas_step_free(dpas_step *st)
{
    if (st)
        free(st->rows);
    free(st);
}

const char *dpas_step_zero_composition(const dpas_rule *r)
{
    if (!r || (r->caps & DPAS_RULE_CAP_SUMS))
        return "a reduce-scatter realises it: a shard's sum is its share of the mean";
    bool sharded = dpas_schedule_realises(DPAS_SCHED_SHARDED, r, NULL);
    bool distance = dpas_schedule_realises(DPAS_SCHED_SHARDED_DISTANCE, r, NULL);
    if (sharded)
        return "coordinate-wise: a reduce-scattered shard holds the sum, not the N values the "
               "rule needs; an all-to-all gives each worker every replica's values of its shard "
               "(sharded), the rule runs on the shard, ZeRO's all-gather returns the parameters";
    if (distance)
        return "needs whole-gradient distances or norms: each worker adds its shard's partial "
               "ones, an all-reduce of those scalars completes them (sharded_distance), then "
               "the rule runs on the shard";
    return "needs every gradient whole (allgather, ps): ZeRO shards its optimizer state and "
           "parameters, not this exchange";
}

static void note(dpas_step *st, const char *fmt, ...) DPAS__PRINTF(2, 3);
static void note(dpas_step *st, const char *fmt, ...)
{
    /* step_notes writes at most 7 notes, fewer than the room: none is ever dropped */
    if (st->nnotes == DPAS_STEP_MAX_NOTES)
        return;
    va_list ap;
    va_start(ap, fmt);
    char *n = st->notes[st->nnotes++];
    dpas__mark_cut(n, sizeof st->notes[0], vsnprintf(n, sizeof st->notes[0], fmt, ap));
    va_end(ap);
}

static int check_opts(const dpas_step_opts *o, dpas_error *err)
{
    if (!(o->mfu >= 0 && o->mfu <= 1))
        return dpas__fail(err, DPAS_EINVAL, "mfu", "mfu must be in (0, 1], got %g", o->mfu);
    if (o->zero < 0 || o->zero > 3)
        return dpas__fail(err, DPAS_EINVAL, "zero", "zero must be 0, 1, 2 or 3, got %d", o->zero);
    if (o->recompute < 0 || o->recompute >= DPAS_RECOMPUTE_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "recompute",
                          "recompute must be none (0), selective (1) or full (2), got %d",
                          o->recompute);
    if (o->tokens && (o->global_batch || o->sequence))
        return dpas__fail(err, DPAS_EINVAL, "tokens",
                          "give tokens or global_batch and sequence, not both");
    if (!o->tokens && (!o->global_batch || !o->sequence))
        return dpas__fail(err, DPAS_EINVAL, "tokens",
                          o->global_batch ? "global_batch needs sequence (tokens per sequence)"
                          : o->sequence   ? "sequence needs global_batch (sequences per step)"
                                          : "tokens is required (tokens per step over every "
                                            "replica), or global_batch and sequence");
    if (!(o->cost.compute_rate >= 0) || isinf(o->cost.compute_rate))
        return dpas__fail(err, DPAS_EINVAL, "compute_rate",
                          "compute_rate must be a finite number > 0 FLOP/s, got %g",
                          o->cost.compute_rate);
    return 0;
}

/* The ring all-gather of `bytes` over N ranks: (N-1) latency steps and (N-1)/N of the bytes over
 * the link's bandwidth, the inter-node link when the replicas span nodes, the node's own when
 * one node holds them all; NAN without links. */
static double gather_time(const dpas_scenario *s, const dpas__cost_ctx *x, double bytes)
{
    const double n = (double)x->dp_degree;
    if (!x->have_links || x->dp_degree < 2)
        return x->have_links ? 0 : NAN;
    bool one_node = s->nodes == 1 && x->have_intra;
    double bw = one_node ? x->links.intra_bandwidth : x->links.inter_bandwidth,
           lat = one_node ? x->links.intra_latency : x->links.inter_latency;
    return (n - 1) * lat + (n - 1) / n * bytes / bw;
}

/* The schedule's own final all-gather is of the aggregate's shards (sharded) or it reduces
 * to one (allreduce = reduce-scatter + all-gather): under ZeRO 1 and 2 that gather becomes
 * the gather of the updated parameters. The others hand every worker the whole aggregate, and
 * the parameters (each updated by its shard's owner) are gathered after it. */
static bool gathers_shards(dpas_schedule_id s)
{
    return s == DPAS_SCHED_ALLREDUCE || s == DPAS_SCHED_SHARDED || s == DPAS_SCHED_SHARDED_DISTANCE;
}

/* What every row shares besides the dpas_step. */
typedef struct step_ctx {
    dpas__cost_ctx x;  /* cost's context, with the rule's roofline */
    dpas__cost_ctx bx; /* the same without it: the buckets' times */
} step_ctx;

int dpas__zero_extra(const dpas_scenario *s, const dpas__cost_ctx *x, int zero,
                     dpas_schedule_id sched, double forward_s, uint64_t buckets, dpas_bytes *bytes,
                     double *seconds, dpas_error *err)
{
    *seconds = 0;
    if (!zero || s->dp_degree < 2)
        return 0;
    const uint64_t N = (uint64_t)s->dp_degree;
    const dpas_rational gw = s->gradient_bytes_per_param,
                        ww = s->weight_bytes_per_param.den ? s->weight_bytes_per_param : gw;
    dpas_bytes wg, gg, sum = *bytes, d, W, G;
    int rc;
    if ((rc = dpas__bytes_scaled(s->parameters, ww, N - 1, N, &wg, err)) ||
        (rc = dpas__bytes_scaled(s->parameters, gw, N - 1, N, &gg, err)) ||
        (rc = dpas_bytes_of(s->parameters, ww, &W, err)) ||
        (rc = dpas_bytes_of(s->parameters, gw, &G, err)))
        return dpas__bytes_field(rc, "bytes_per_worker", err);
    const double Wd = dpas_bytes_to_double(W), Gd = dpas_bytes_to_double(G);
    double t;
    if (gathers_shards(sched)) { /* the schedule's bytes hold its (N-1)/N G gather */
        if ((rc = dpas__bytes_absdiff(wg, gg, &d, err)) ||
            (rc = dpas__bytes_cmp(wg, gg) >= 0 ? dpas__bytes_add(sum, d, &sum, err)
                                               : dpas__bytes_absdiff(sum, d, &sum, err)))
            return dpas__bytes_field(rc, "bytes_per_worker", err);
        /* wider weights: the gather's extra time; narrower: the schedule's own gather (timed by
         * its model, which may be hierarchical or a calibration's) stands in, an upper bound,
         * never a difference of two models that can fall below zero */
        t = fmax(0.0, gather_time(s, x, Wd) - gather_time(s, x, Gd));
    } else {
        if ((rc = dpas__bytes_add(sum, wg, &sum, err)))
            return dpas__bytes_field(rc, "bytes_per_worker", err);
        t = gather_time(s, x, Wd);
    }
    if (zero == 3) {
        /* the forward's gather, prefetched layer by layer as FSDP does: the forward hides it
         * but for its first part (one bucket's share) or what outlasts the forward (without a
         * forward, all of it) */
        if ((rc = dpas__bytes_add(sum, wg, &sum, err)))
            return dpas__bytes_field(rc, "bytes_per_worker", err);
        double ag = gather_time(s, x, Wd);
        t += isnan(forward_s) ? ag : fmax(ag / (double)buckets, ag - forward_s);
    }
    *bytes = sum;
    *seconds = t;
    return 0;
}

/* When the exchange ends, from the start of the backward: one stream, k buckets; bucket i
 * (1 <= i < k) is ready at i x d (d: a full bucket's share of the backward bw) and takes tf,
 * after the one before it; the last is ready when the backward ends and takes tl. The full
 * buckets' end is the later of the two extremes of that queue (first ready then k - 1 in a
 * row, or the (k-1)-th ready then its own). */
static double exchange_end(double bw, double d, uint64_t k, double tf, double tl)
{
    const double km = (double)(k - 1);
    double end_full = k > 1 ? fmax(d + km * tf, km * d + tf) : 0;
    return fmax(end_full, bw) + tl;
}

/* The exchange bucket by bucket: k - 1 full buckets and the last, each timed by cost's model
 * at its own size (so each bucket pays its collectives' latency), and the part of it the
 * backward does not hide; the step at the point and at its band's ends. */
static int bucket_step(const dpas_scenario *s, const dpas_step *st, const step_ctx *c,
                       dpas_step_row *r, dpas_error *err)
{
    dpas_scenario b = *s;
    dpas_cost_row full = {.schedule = r->schedule}, last = {.schedule = r->schedule};
    const uint64_t k = st->buckets;
    int rc;
    full.time_s = full.time_band_lo_s = full.time_band_hi_s = 0;
    if (k > 1) {
        b.parameters = st->bucket_parameters;
        if ((rc = dpas__cost_row(&b, &c->bx, r->rule, &full, err)))
            return rc;
    }
    b.parameters = s->parameters - (k - 1) * st->bucket_parameters;
    if ((rc = dpas__cost_row(&b, &c->bx, r->rule, &last, err)))
        return rc;
    const double km = (double)(k - 1);
    r->exchange_s = km * full.time_s + last.time_s;
    r->exchange_lo_s = km * full.time_band_lo_s + last.time_band_lo_s;
    r->exchange_hi_s = km * full.time_band_hi_s + last.time_band_hi_s;
    r->exchange_model = last.time_model;
    r->exchange_basis = last.time_basis > full.time_basis ? last.time_basis : full.time_basis;
    const double frac = (double)st->bucket_parameters / (double)s->parameters;
    const double fixed = r->zero_s + r->rule_s;
    double bw = st->backward_s;
    r->exposed_s = exchange_end(bw, bw * frac, k, full.time_s, last.time_s) - bw;
    r->step_s = st->compute_s + r->exposed_s + fixed;
    /* the step grows with the compute and with each bucket's time: its band's ends are the
     * step at the compute's and the exchange's own ends (an exchange without a band, as the
     * alpha-beta model's, at its one time) */
    bool band = isfinite(r->exchange_lo_s) && isfinite(r->exchange_hi_s);
    double flo = k > 1 ? full.time_band_lo_s : 0, fhi = k > 1 ? full.time_band_hi_s : 0;
    const double bfrac = (st->flops_factor - 2) / st->flops_factor;
    double bwl = st->compute_lo_s * bfrac, bwh = st->compute_hi_s * bfrac;
    r->step_lo_s = st->compute_lo_s - bwl +
                   exchange_end(bwl, bwl * frac, k, band ? flo : full.time_s,
                                band ? last.time_band_lo_s : last.time_s) +
                   fixed;
    r->step_hi_s = st->compute_hi_s - bwh +
                   exchange_end(bwh, bwh * frac, k, band ? fhi : full.time_s,
                                band ? last.time_band_hi_s : last.time_s) +
                   fixed;
    return 0;
}

static int step_row(const dpas_scenario *s, dpas_step *st, const step_ctx *c, dpas_step_row *r,
                    dpas_error *err)
{
    dpas_cost_row whole = {.schedule = r->schedule};
    int rc;
    if ((rc = dpas__cost_row(s, &c->x, r->rule, &whole, err)))
        return rc;
    r->realisable = whole.realisable;
    r->why = whole.why;
    r->exchange_s = r->exchange_lo_s = r->exchange_hi_s = r->zero_s = r->exposed_s = NAN;
    r->rule_s = r->step_s = r->step_lo_s = r->step_hi_s = r->added_s = r->share = NAN;
    if (!r->realisable)
        return 0;
    r->bytes_per_worker = whole.bytes_per_worker;
    /* the mean's own compute is the sum its collective already does */
    r->rule_s = r->rule && r->rule->id != DPAS_RULE_MEAN ? whole.compute_s : 0;
    r->rule_bound = r->rule_s > 0 ? whole.compute_bound : NULL;
    if ((rc = dpas__zero_extra(s, &c->x, st->zero, r->schedule, st->forward_s, st->buckets,
                               &r->bytes_per_worker, &r->zero_s, err)))
        return rc;
    if (!st->have_times || isnan(r->rule_s))
        return 0;
    return bucket_step(s, st, c, r, err);
}

/* Tokens, FLOPs, the peak and MFU, the compute time and the buckets. */
static int step_head(const dpas_scenario *s, const dpas_step_opts *o, const dpas_report *rep,
                     dpas_step *st, dpas_error *err)
{
    const dpas_hardware *hw = s->node_entry ? s->node_entry->accelerator : NULL;
    st->dp_degree = s->dp_degree;
    st->accelerators = rep->accelerators;
    st->parameters = s->parameters;
    st->zero = o->zero;
    st->gradient_bytes = rep->gradient_bytes;
    st->weight_bytes = s->weight_bytes_per_param.den ? rep->weight_bytes : rep->gradient_bytes;
    if (o->tokens)
        st->tokens = o->tokens;
    else if (__builtin_mul_overflow(o->global_batch, o->sequence, &st->tokens) ||
             st->tokens > (uint64_t)INT64_MAX) /* tokens' own limit, as the key takes it */
        return dpas__fail(err, DPAS_ERANGE, "tokens",
                          "global_batch x sequence (%llu x %llu) passes 2^63 - 1 tokens, the "
                          "limit of tokens",
                          (unsigned long long)o->global_batch, (unsigned long long)o->sequence);
    if (o->cost.compute_rate > 0) {
        st->peak_flops = o->cost.compute_rate;
        st->peak_source = "compute_rate";
    } else if (hw && hw->peak_flops > 0) {
        st->peak_flops = hw->peak_flops;
        st->peak_source = hw->path;
    } else {
        return dpas__fail(err, DPAS_EINVAL, "compute_rate",
                          "compute_rate is required: the fleet has no known accelerator (its "
                          "peak FLOP/s per accelerator)");
    }
    if (o->mfu > 0) {
        st->mfu = st->mfu_lo = st->mfu_hi = o->mfu;
        st->mfu_basis = "given";
    } else {
        st->mfu = DPAS_STEP_MFU, st->mfu_lo = DPAS_STEP_MFU_LO, st->mfu_hi = DPAS_STEP_MFU_HI;
        st->mfu_basis = "assumed";
        st->mfu_source = "Llama 3 paper (Llama Team 2024, Table 4): BF16 MFU 38-43% on 8K-16K "
                         "H100s";
    }
    /* every replica's share of the batch holds data: a token each, or a sequence each */
    if (o->tokens && st->tokens < (uint64_t)s->dp_degree)
        return dpas__fail(err, DPAS_EINVAL, "tokens",
                          "tokens must be >= dp_degree (%lld), one per replica at least, got %llu",
                          (long long)s->dp_degree, (unsigned long long)st->tokens);
    if (!o->tokens && o->global_batch < (uint64_t)s->dp_degree)
        return dpas__fail(err, DPAS_EINVAL, "global_batch",
                          "global_batch must be >= dp_degree (%lld), one sequence per replica at "
                          "least, got %llu",
                          (long long)s->dp_degree, (unsigned long long)o->global_batch);
    /* full recomputation runs each layer's forward again in the backward: 2PT more */
    st->recompute = o->recompute;
    st->flops_factor = o->recompute == DPAS_RECOMPUTE_FULL ? 8 : 6;
    st->flops = st->flops_factor * (double)s->parameters * (double)st->tokens;
    /* with the model's shape, attention's two products over the sequence (Q K^T and the
     * scores times V: 2 x 2 x s x h FLOP per token and layer in the forward) are counted as
     * PaLM's MFU counts them (Chowdhery et al. 2022, Appendix B: 6N + 12 L H Q T per token);
     * they run once more in the backward's recomputation like the rest of the forward */
    st->attention_flops = 0;
    if (o->shape && o->shape->layers > 0) {
        const uint64_t seq = o->tokens ? (uint64_t)o->shape->sequence : o->sequence;
        st->attention_sequence = seq;
        st->attention_flops = st->flops_factor * 2 * (double)o->shape->layers * (double)seq *
                              (double)o->shape->hidden * (double)st->tokens;
        st->flops += st->attention_flops;
    }
    const double rate = (double)st->accelerators * st->peak_flops;
    st->compute_s = st->flops / (rate * st->mfu);
    st->compute_lo_s = st->flops / (rate * st->mfu_hi);
    st->compute_hi_s = st->flops / (rate * st->mfu_lo);
    if (!isfinite(st->compute_hi_s) || !isfinite(st->flops))
        return dpas__fail(err, DPAS_ERANGE, o->mfu > 0 ? "mfu" : "tokens",
                          "the compute time of %llu tokens at %.4g FLOP/s x MFU %g is beyond a "
                          "double (%g s): no step to time",
                          (unsigned long long)st->tokens, rate, st->mfu_lo, st->compute_hi_s);
    st->forward_s = st->compute_s * 2 / st->flops_factor;
    st->backward_s = st->compute_s - st->forward_s;
    /* parameters per bucket: floor(bucket bytes / width), width = num / den bytes */
    const dpas_rational w = s->gradient_bytes_per_param;
    st->bucket_bytes = o->bucket_bytes ? o->bucket_bytes : DPAS_STEP_BUCKET_BYTES;
    dpas__u128 pb = (dpas__u128)st->bucket_bytes * w.den / w.num;
    if (!pb)
        return dpas__fail(err, DPAS_EINVAL, "bucket_bytes",
                          "bucket_bytes must hold one parameter's gradient, got %llu B",
                          (unsigned long long)st->bucket_bytes);
    st->bucket_parameters = pb < s->parameters ? (uint64_t)pb : s->parameters;
    st->buckets =
        s->parameters / st->bucket_parameters + (s->parameters % st->bucket_parameters != 0);
    return 0;
}

static void step_notes(const dpas_scenario *s, const dpas_step *st)
{
    dpas_step *n = (dpas_step *)st;
    char bb[64];
    dpas_format_bytes_human((dpas_bytes){st->bucket_bytes, 0, 1}, DPAS_UNITS_IEC, bb, sizeof bb);
    note(n,
         "compute: %g x %llu parameter%s x %llu token%s%s = %.4g FLOP over %lld accelerator%s "
         "at %.4g FLOP/s x MFU %g (%s%s%s); %s",
         st->flops_factor, (unsigned long long)st->parameters, st->parameters == 1 ? "" : "s",
         (unsigned long long)st->tokens, st->tokens == 1 ? "" : "s",
         st->attention_flops > 0 ? " + attention" : "", st->flops, (long long)st->accelerators,
         st->accelerators == 1 ? "" : "s", st->peak_flops, st->mfu, st->mfu_basis,
         st->mfu_source ? ": " : "", st->mfu_source ? st->mfu_source : "",
         st->recompute == DPAS_RECOMPUTE_FULL
             ? "full recomputation runs the forward again in the backward (2PT more): forward "
               "1/4, backward 3/4"
             : "forward 1/3, backward 2/3");
    if (!st->have_times)
        note(n, "no exchange times: the fleet has no known fabric and node (use a registry "
                "fleet, or fleet.node and fleet.fabric)");
    else
        note(n,
             "exchange: each schedule's collectives (the time model of dpas cost) over %llu "
             "bucket%s of %s (PyTorch DDP's bucket_cap_mb default is 25 MiB), each timed at its "
             "own size, on one stream as the backward fills them; exposed: what the backward "
             "does not hide, the last bucket's at least",
             (unsigned long long)st->buckets, st->buckets == 1 ? "" : "s", bb);
    note(n, "rule: the robust rule's own compute (cost's roofline at the accelerator's peak and "
            "HBM) runs after the last bucket: it needs the exchanged values, so it cannot "
            "overlap the backward; the mean's is the collective's own sum");
    note(n,
         "added and share: the step over the mean under allreduce (plain DDP%s) at the same "
         "inputs, and that excess over the row's step",
         st->zero ? " with the same ZeRO stage" : "");
    if (st->zero) {
        note(n, "zero %d: %s%s", st->zero,
             st->zero == 3 ? "all-gather of parameters in forward and in backward, reduce-scatter "
                             "of gradients (1.5x DP's bytes)"
                           : "reduce-scatter of gradients, all-gather of parameters after the "
                             "step (DP's bytes)",
             s->weight_bytes_per_param.den ? ""
                                           : "; parameters gathered at the gradient width "
                                             "(the scenario gives no weight width)");
        note(n, "zero times: the schedule's own all-gather stands for the parameters' (stage 1, 2: "
                "a lower bound, that gather runs after the step) or the backward's (stage 3); "
                "stage 3's forward gather is prefetched: exposed is its first bucket's share or "
                "what outlasts the forward; gathers are rings over the fabric (within one node, "
                "its link)");
    }
    if (st->have_memory)
        note(n,
             "memory: one replica's state (zero16 with %s's %llu B/param%s) and activations "
             "(%s)",
             st->memory.optimizer, (unsigned long long)st->memory.optimizer_bytes,
             st->zero ? ", ZeRO-partitioned" : "", st->memory.activations_note);
    note(n, "not modelled: tensor, pipeline and expert parallelism (a replica's accelerators "
            "only divide the compute), offload, stragglers, the optimizer step, data loading");
}

/* One replica's memory at the step's stage: its micro-batch the one given, or its share of the
 * batch rounded up (sequences: global_batch / N, or tokens / (N x the model's sequence)), at
 * this dp_degree and at each one where-it-fits tries. */
static int step_memory(const dpas_scenario *s, const dpas_step_opts *o, dpas_step *st,
                       dpas_error *err)
{
    dpas_memory_opts mo = {.zero = o->zero,
                           .optimizer = o->optimizer,
                           .shape = o->shape,
                           .no_shape_why = o->no_shape_why,
                           .micro_batch = o->micro_batch,
                           .sequence = o->tokens ? 0 : o->sequence,
                           .recompute = (dpas_recompute)o->recompute,
                           .step_tokens = o->micro_batch ? 0 : st->tokens};
    /* a memory that cannot be computed (activations past 2^64 B) is refused as memory refuses
     * it, not dropped from the answer */
    if (!s->node_entry)
        return 0;
    int rc = dpas_memory_check_opts(s, &mo, &st->memory, err);
    st->have_memory = !rc;
    return rc;
}

int dpas_step_compute(const dpas_scenario *s, const dpas_step_opts *o, dpas_step **out,
                      dpas_error *err)
{
    int rc;
    dpas_report rep;
    *out = NULL;
    if ((rc = dpas_evaluate(s, &rep, err)) || (rc = check_opts(o, err)))
        return rc;
    dpas_step *st = calloc(1, sizeof *st);
    if (!st)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    step_ctx c;
    dpas__cost_ctx *x = &c.x;
    *x = (dpas__cost_ctx){.steps = 1,
                          .iterations = o->cost.iterations > 0 ? o->cost.iterations : 10,
                          .f = -1,
                          .net = o->cost.net,
                          .net_kind = o->cost.net_kind,
                          .gradient_bytes = dpas_bytes_to_double(rep.gradient_bytes)};
    if ((rc = step_head(s, o, &rep, st, err)) ||
        (rc = dpas__cost_ctx_init(s, o->cost.links, x, err))) {
        dpas_step_free(st);
        return rc;
    }
    const dpas_hardware *hw = s->node_entry ? s->node_entry->accelerator : NULL;
    x->compute_rate = st->peak_flops;
    x->memory_bandwidth = o->cost.memory_bandwidth > 0 ? o->cost.memory_bandwidth
                          : hw                         ? hw->hbm_bandwidth
                                                       : 0;
    c.bx = *x;
    c.bx.compute_rate = c.bx.memory_bandwidth = 0;
    st->have_times = x->have_links || x->net;
    st->iterations = x->iterations;
    const dpas_rule *mean;
    dpas_rule_find("mean", NULL, &mean, NULL);
    dpas_step_row base = {.rule = mean, .schedule = DPAS_SCHED_ALLREDUCE};
    if ((rc = step_row(s, st, &c, &base, err))) {
        dpas_step_free(st);
        return rc;
    }
    st->baseline_s = base.step_s;
    st->baseline_bytes = base.bytes_per_worker;
    const dpas_cost_opts *co = &o->cost;
    size_t nrules = co->rules ? co->nrules : 0;
    if (!co->rules)
        for (size_t i = 0; i < dpas_rule_count(); i++)
            nrules += dpas_rule_at(i)->is_default != 0;
    st->rows = nrules < SIZE_MAX / DPAS_SCHED_COUNT / sizeof *st->rows
                   ? calloc(nrules * DPAS_SCHED_COUNT + 1, sizeof *st->rows)
                   : NULL;
    if (!st->rows) {
        dpas_step_free(st);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < (co->rules ? nrules : dpas_rule_count()); i++) {
        const dpas_rule *rule = co->rules ? co->rules[i] : dpas_rule_at(i);
        if (!co->rules && !rule->is_default)
            continue;
        for (int sc = 0; sc < DPAS_SCHED_COUNT; sc++) {
            if (co->schedules && !(co->schedules & (1u << sc)))
                continue;
            dpas_step_row *r = &st->rows[st->nrows++];
            r->rule = rule;
            r->schedule = (dpas_schedule_id)sc;
            if ((rc = step_row(s, st, &c, r, err))) {
                dpas_step_free(st);
                return rc;
            }
            st->unrealisable += !r->realisable;
            r->added_s = r->step_s - st->baseline_s;
            r->share = r->added_s / r->step_s;
        }
    }
    if ((rc = step_memory(s, o, st, err))) {
        dpas_step_free(st);
        return rc;
    }
    step_notes(s, st);
    *out = st;
    return 0;
}
