/* SPDX-License-Identifier: Apache-2.0 */
/* Bytes-per-parameter conventions with their sources, the byte inventory of a step, and whether
 * one replica's training state fits the memory of its accelerators. */
#include "../internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const dpas_convention conventions[] = {
    {"zero16",
     {16, 1},
     "mixed-precision Adam training state: fp16 weights and gradients, fp32 master weights, "
     "momentum and variance",
     "ZeRO, Rajbhandari et al. 2019: 2P + 2P + KP = 16P with K = 12",
     1},
    {"megatron18",
     {18, 1},
     "Megatron-LM's accounting of mixed-precision Adam training state",
     "NVIDIA/Megatron-LM issue #654",
     1},
    {"mlsysim_ckpt",
     {14, 1},
     "resumable Adam checkpoint",
     "mlsysim CHECKPOINT_BYTES_PER_PARAM_ADAM",
     0},
    {"adam_state",
     {12, 1},
     "Adam optimizer state only: fp32 master weights, momentum, variance",
     "ZeRO (K = 12); EleutherAI, Transformer Math 101",
     0},
    {"sgd_momentum",
     {8, 1},
     "SGD with momentum: fp32 weights and momentum",
     "EleutherAI, Transformer Math 101",
     0},
    {"adam_8bit",
     {6, 1},
     "8-bit Adam optimizer state (bitsandbytes)",
     "EleutherAI, Transformer Math 101",
     0},
    {"sgd_ckpt", {4, 1}, "SGD checkpoint", "mlsysim CHECKPOINT_BYTES_PER_PARAM_SGD", 0},
};
#define NCONV (sizeof conventions / sizeof conventions[0])

size_t dpas_convention_count(void) { return NCONV; }
const dpas_convention *dpas_convention_at(size_t i) { return i < NCONV ? &conventions[i] : NULL; }

int dpas_convention_find(const char *name, const dpas_convention **out, dpas_error *err)
{
    char q[96], list[200] = "";
    for (size_t i = 0; i < NCONV; i++) {
        if (name && !dpas__strcasecmp(name, conventions[i].name)) {
            *out = &conventions[i];
            return 0;
        }
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", i ? ", " : "", conventions[i].name);
    }
    return dpas__fail(err, DPAS_ENOENT, "state", "unknown convention %s; expected one of %s",
                      dpas__quote(name ? name : "", q, sizeof q), list);
}

/* The check itself, at the scenario's dp_degree and one stage; dpas_memory_check adds where the
 * state would fit. validate: 0 for the what-ifs of a validated scenario (another stage, or a
 * dp_degree within 1..its accelerators: still valid), so it is validated once. */
static int memory_check(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                        bool validate, dpas_memory *out, dpas_error *err)
{
    int rc;
    if (validate && (rc = dpas_scenario_validate(s, err)))
        return rc;
    if (zero_stage < 0 || zero_stage > 3)
        return dpas__fail(err, DPAS_EINVAL, "zero", "zero stage must be 0, 1, 2 or 3, got %d",
                          zero_stage);
    out->accelerators_per_replica = dpas__ratio(
        (uint64_t)s->nodes * (uint64_t)s->accelerators_per_node, (uint64_t)s->dp_degree);
    if (zero_stage && strcmp(c->name, "zero16"))
        return dpas__fail(err, DPAS_EINVAL, "zero",
                          "ZeRO stages partition the zero16 state; got convention %s", c->name);
    if (!s->node_entry)
        return dpas__fail(err, DPAS_EINVAL, "fleet.node",
                          "the memory check needs the node's accelerator: use a registry fleet or "
                          "give fleet.node");
    const uint64_t P = s->parameters, n = (uint64_t)s->dp_degree;
    /* ZeRO's per-replica bytes: stage 1 partitions the optimizer state (K = 12), stage 2 also
     * the fp16 gradients, stage 3 also the fp16 weights. */
    static const struct {
        uint64_t whole, part;
    } zero[4] = {{16, 0}, {4, 12}, {2, 14}, {0, 16}};
    dpas_bytes whole_part, shared;
    if (zero_stage == 0) {
        if ((rc = dpas__bytes_field(dpas_bytes_of(P, c->width, &out->state, err), "state_bytes",
                                    err)))
            return rc;
    } else if ((rc = dpas_bytes_of(P, (dpas_rational){zero[zero_stage].whole, 1}, &whole_part,
                                   err)) ||
               (rc = dpas__bytes_scaled(P, (dpas_rational){zero[zero_stage].part, 1}, 1, n, &shared,
                                        err)) ||
               (rc = dpas__bytes_add(whole_part, shared, &out->state, err))) {
        return dpas__bytes_field(rc, "state_bytes", err);
    }
    const dpas_hardware *hw = s->node_entry->accelerator;
    int64_t acc = s->nodes * s->accelerators_per_node; /* checked by dpas_scenario_validate */
    /* memory x acc / n in 128 bits (memory x acc alone can pass 2^64); a registry memory is a
     * whole number of bytes (its reader accepts no fraction) */
    if ((rc = dpas__bytes_scaled(hw->memory.whole, (dpas_rational){(uint64_t)acc, 1}, 1, n,
                                 &out->capacity, err)))
        return dpas__bytes_field(rc, "capacity_bytes", err);
    double st = dpas_bytes_to_double(out->state), cap = dpas_bytes_to_double(out->capacity);
    /* a zero capacity (a registry accelerator of 0 B) would make inf or NaN, which no JSON holds */
    if (!(cap > 0))
        return dpas__fail(err, DPAS_EINVAL, "capacity_bytes",
                          "capacity_bytes: the accelerator %s has no memory (0 B)", hw->name);
    out->utilisation = st / cap;
    out->fits = dpas__bytes_cmp(out->state, out->capacity) <= 0;
    return dpas__bytes_field(dpas__bytes_absdiff(out->capacity, out->state, &out->headroom, err),
                             "headroom_bytes", err);
}

/* Does the state fit at dp_degree n and this stage? A check that fails (a byte count out of
 * range) counts as not fitting. */
static bool fits_at(const dpas_scenario *s, const dpas_convention *c, int zero_stage, int64_t n)
{
    dpas_scenario t = *s;
    dpas_memory m;
    t.dp_degree = n;
    return !memory_check(&t, c, zero_stage, false, &m, NULL) && m.fits;
}

int dpas_memory_check(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                      dpas_memory *out, dpas_error *err)
{
    int rc = memory_check(s, c, zero_stage, true, out, err);
    if (rc)
        return rc;
    /* The smallest ZeRO stage that fits at this dp_degree (stages partition zero16 only). */
    out->smallest_zero_stage = -1;
    for (int z = 0; z <= (strcmp(c->name, "zero16") ? 0 : 3) && out->smallest_zero_stage < 0; z++)
        if (z == zero_stage ? out->fits : fits_at(s, c, z, s->dp_degree))
            out->smallest_zero_stage = z;
    /* The largest dp_degree that fits at this stage. Per replica the state is a + b/N bytes
     * (b = 0 at stage 0, a = 0 at stage 3) and the memory M x A/N, so it fits when
     * a N + b <= M A: a condition that holds for every N up to a bound, or for none, or for all
     * (a = 0). A bisection over 1..accelerators finds the bound. */
    int64_t lo = 0, hi = s->nodes * s->accelerators_per_node; /* checked by the validation */
    if (fits_at(s, c, zero_stage, hi))
        lo = hi;
    while (hi - lo > 1) { /* fits at lo (or lo = 0), not at hi */
        int64_t mid = lo + (hi - lo) / 2;
        if (fits_at(s, c, zero_stage, mid))
            lo = mid;
        else
            hi = mid;
    }
    out->largest_dp_degree = lo;
    return 0;
}

static void add_row(dpas_inventory_row *rows, size_t cap, size_t *n, const char *item,
                    const char *where, const char *basis, dpas_bytes b, const char *source)
{
    if (*n < cap) {
        dpas_inventory_row *r = &rows[*n];
        dpas__mark_cut(
            r->item, sizeof r->item,
            snprintf(r->item, sizeof r->item, "%s", item)); /* names of the catalogue: all fit */
        r->where = where;
        dpas__mark_cut(r->basis, sizeof r->basis, snprintf(r->basis, sizeof r->basis, "%s", basis));
        r->bytes = b;
        r->source = source;
    }
    (*n)++;
}

/* "P x 2 B"; when the width's exact text does not fit the row's basis (a width of 40 digits),
 * "P x " and the input's name instead: a basis is never cut. */
static void basis_of(char *basis, size_t cap, const char *input, dpas_rational w)
{
    char t[128];
    dpas_format_width(w, t, sizeof t);
    if ((size_t)snprintf(basis, cap, "P x %s", t) >= cap)
        snprintf(basis, cap, "P x %s", input);
}

/* A row's bytes failed: name the row. */
static int row_fail(int rc, const char *item, dpas_error *err)
{
    return dpas__bytes_field(rc, item, err);
}

int dpas_inventory(const dpas_scenario *s, dpas_inventory_row *rows, size_t cap, size_t *n,
                   dpas_error *err)
{
    dpas_report r;
    int rc = dpas_evaluate(s, &r, err);
    if (rc)
        return rc;
    *n = 0;
    const uint64_t P = s->parameters, N = (uint64_t)s->dp_degree;
    const dpas_rational gw = s->gradient_bytes_per_param;
    char basis[sizeof rows[0].basis];
    dpas_bytes b, gather;
    basis_of(basis, sizeof basis, "gradient_bytes_per_param", gw);
    add_row(rows, cap, n, "gradient_bytes", "wire", basis, r.gradient_bytes,
            "the seed: one replica's gradient");
    if ((rc = dpas__bytes_scaled(P, gw, 2 * (N - 1), N, &b, err)))
        return row_fail(rc, "allreduce_per_worker", err);
    add_row(rows, cap, n, "allreduce_per_worker", "wire", "2(N-1)/N x gradient_bytes", b,
            "ring AllReduce (the seed's allreduce_factor)");
    if ((rc = dpas__bytes_scaled(P, gw, N - 1, 1, &gather, err)))
        return row_fail(rc, "allgather_per_worker", err);
    add_row(rows, cap, n, "allgather_per_worker", "wire", "(N-1) x gradient_bytes", gather,
            "gather of every gradient (the seed's gather_factor)");
    if ((rc = dpas__bytes_scaled(P, gw, 2 * (N - 1), 1, &b, err)))
        return row_fail(rc, "allreduce_job_total", err);
    add_row(rows, cap, n, "allreduce_job_total", "wire", "N x 2(N-1)/N x gradient_bytes", b,
            "ring AllReduce, all workers");
    /* N (N-1) itself can pass 2^64: N x the per-worker gather, checked */
    if ((rc = dpas__bytes_times(gather, N, &b, err)))
        return row_fail(rc, "allgather_job_total", err);
    add_row(rows, cap, n, "allgather_job_total", "wire", "N x (N-1) x gradient_bytes", b,
            "gather of every gradient, all workers");
    basis_of(basis, sizeof basis, "checkpoint_bytes_per_param", s->checkpoint_bytes_per_param);
    add_row(rows, cap, n, "checkpoint_bytes", "rest", basis, r.checkpoint_bytes,
            "the seed: declared checkpoint width");
    if (s->weight_bytes_per_param.den) {
        basis_of(basis, sizeof basis, "weight_bytes_per_param", s->weight_bytes_per_param);
        add_row(rows, cap, n, "weight_bytes", "rest", basis, r.weight_bytes,
                "the seed: declared serving width");
    }
    for (size_t i = 0; i < NCONV; i++) {
        if ((rc = dpas_bytes_of(P, conventions[i].width, &b, err)))
            return row_fail(rc, conventions[i].name, err);
        basis_of(basis, sizeof basis, conventions[i].name, conventions[i].width);
        add_row(rows, cap, n, conventions[i].name, "rest", basis, b, conventions[i].source);
    }
    for (size_t i = 0; i < dpas_precision_count(); i++) {
        const dpas_precision *p = dpas_precision_at(i);
        if (i && !memcmp(&p->width, &dpas_precision_at(i - 1)->width, sizeof p->width))
            continue; /* tf32 = fp32, fp16 = bf16, int8 = fp8: one row per width */
        char item[sizeof rows[0].item];
        snprintf(item, sizeof item, "weights_%s", p->name);
        if ((rc = dpas_bytes_of(P, p->width, &b, err)))
            return row_fail(rc, item, err);
        basis_of(basis, sizeof basis, p->name, p->width);
        add_row(rows, cap, n, item, "rest", basis, b, p->source);
    }
    return 0;
}
