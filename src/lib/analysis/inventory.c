/* SPDX-License-Identifier: Apache-2.0 */
/* Bytes-per-parameter conventions with their sources, the byte inventory of a step, and whether
 * one replica's training state fits the memory of its accelerators. */
#include "../internal.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdarg.h>
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

/* ---- optimizers and activations ---- */

static const dpas_optimizer optimizers[] = {
    {"adam", 12, "Adam (AdamW): fp32 master weights, momentum and variance",
     "ZeRO, Rajbhandari et al. 2019, Sec. 3.1: K = 12 for mixed-precision Adam"},
    {"adam_8bit", 6, "8-bit Adam: fp32 master weights, 8-bit momentum and variance",
     "EleutherAI, Transformer Math 101 (2023): 8-bit optimizers, 6 bytes per parameter"},
    {"sgd_momentum", 8, "SGD with momentum: fp32 master weights and momentum",
     "EleutherAI, Transformer Math 101 (2023): SGD with momentum, 8 bytes per parameter"},
    {"sgd", 4, "SGD: fp32 master weights only",
     "ZeRO's accounting (fp32 master weights, 4 bytes) with no optimizer moments"},
};
#define NOPT (sizeof optimizers / sizeof optimizers[0])

size_t dpas_optimizer_count(void) { return NOPT; }
const dpas_optimizer *dpas_optimizer_at(size_t i) { return i < NOPT ? &optimizers[i] : NULL; }

int dpas_optimizer_find(const char *name, const dpas_optimizer **out, dpas_error *err)
{
    char q[96], norm[32];
    size_t n = name ? strlen(name) : 0;
    if (name && n < sizeof norm) {
        for (size_t i = 0; i <= n; i++)
            norm[i] = name[i] == '-' ? '_' : name[i];
        for (size_t i = 0; i < NOPT; i++)
            if (!dpas__strcasecmp(norm, optimizers[i].name)) {
                *out = &optimizers[i];
                return 0;
            }
    }
    return dpas__fail(err, DPAS_ENOENT, "optimizer",
                      "optimizer %s: unknown; expected adam (the default), adam_8bit, "
                      "sgd_momentum or sgd",
                      dpas__quote(name ? name : "", q, sizeof q));
}

static const char *const recompute_names[DPAS_RECOMPUTE_COUNT] = {"none", "selective", "full"};

const char *dpas_recompute_name(dpas_recompute r)
{
    return (unsigned)r < DPAS_RECOMPUTE_COUNT ? recompute_names[r] : NULL;
}

int dpas_recompute_from_name(const char *name)
{
    for (int r = 0; name && r < DPAS_RECOMPUTE_COUNT; r++)
        if (!dpas__strcasecmp(name, recompute_names[r]))
            return r;
    return -1;
}

int dpas_activation_shape_covered(const dpas_model_shape *sh)
{
    return sh && sh->layers > 0 && sh->ffn == 4 * sh->hidden && sh->kv_heads == sh->heads;
}

int dpas_activation_bytes(const dpas_model_shape *sh, uint64_t b, uint64_t seq, dpas_recompute r,
                          dpas_bytes *per_layer, dpas_bytes *total, dpas_error *err)
{
    if (!sh || sh->layers < 1 || sh->hidden < 1 || sh->heads < 1)
        return dpas__fail(err, DPAS_EINVAL, "shape", "the workload has no transformer shape");
    if ((unsigned)r >= DPAS_RECOMPUTE_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "recompute",
                          "recompute must be none, selective or "
                          "full, got %d",
                          (int)r);
    const uint64_t s = seq ? seq : (uint64_t)sh->sequence, h = (uint64_t)sh->hidden,
                   a = (uint64_t)sh->heads, L = (uint64_t)sh->layers;
    /* sbh, then each case's bytes per layer; 128 bits hold every product of four 64-bit
     * numbers' worth only when small: check each step against 2^64 */
    dpas__u128 sbh = (dpas__u128)s * b, layer;
    bool over = sbh >> 64 || (sbh *= h) >> 64;
    static const unsigned k[DPAS_RECOMPUTE_COUNT] = {34, 34, 2};
    layer = sbh * k[r];
    if (!over && r == DPAS_RECOMPUTE_NONE) { /* + 5as^2b: the attention's scores, softmax and
                                                its dropout mask (5 bytes per score) */
        dpas__u128 as2b = (dpas__u128)5 * a * s;
        over = as2b >> 64 || (as2b *= s) >> 64 || (as2b *= b) >> 64;
        layer += as2b;
    }
    dpas__u128 all = layer * L;
    if (over || layer >> 64 || all >> 64 || (L && all / L != layer))
        return dpas__fail(err, DPAS_ERANGE, "micro_batch",
                          "micro_batch: the activations of %llu sequences of %llu tokens pass "
                          "2^64 bytes",
                          (unsigned long long)b, (unsigned long long)s);
    *per_layer = (dpas_bytes){(uint64_t)layer, 0, 1};
    *total = (dpas_bytes){(uint64_t)all, 0, 1};
    return 0;
}

/* ---- the memory check ---- */

/* The state per replica at dp_degree n: the whole part plus the part ZeRO shares over n
 * (stage 1 the optimizer's K, stage 2 also the 16-bit gradients, stage 3 also the weights). */
static int state_at(const dpas_convention *c, uint64_t K, int zero_stage, uint64_t P, uint64_t n,
                    dpas_bytes *out, dpas_error *err)
{
    const uint64_t whole[4] = {4 + K, 4, 2, 0}, part[4] = {0, K, K + 2, K + 4};
    dpas_bytes w, sh;
    int rc;
    if (zero_stage == 0 && strcmp(c->name, "zero16"))
        return dpas_bytes_of(P, c->width, out, err);
    if ((rc = dpas_bytes_of(P, (dpas_rational){whole[zero_stage], 1}, &w, err)) ||
        (rc = dpas__bytes_scaled(P, (dpas_rational){part[zero_stage], 1}, 1, n, &sh, err)))
        return rc;
    return dpas__bytes_add(w, sh, out, err);
}

/* The check itself, at the scenario's dp_degree and one stage; dpas_memory_check adds where the
 * state would fit. validate: 0 for the what-ifs of a validated scenario (another stage, or a
 * dp_degree within 1..its accelerators: still valid), so it is validated once. */
static int memory_check(const dpas_scenario *s, const dpas_memory_opts *o, int zero_stage,
                        bool validate, dpas_memory *out, dpas_error *err)
{
    int rc;
    const dpas_convention *c = o->state;
    if (validate && (rc = dpas_scenario_validate(s, err)))
        return rc;
    if (zero_stage < 0 || zero_stage > 3)
        return dpas__fail(err, DPAS_EINVAL, "zero", "zero stage must be 0, 1, 2 or 3, got %d",
                          zero_stage);
    /* the smallest replica: A mod N replicas have floor(A/N) + 1 accelerators, the rest
     * floor(A/N) (>= 1: the validation holds N <= A); a state must fit every replica */
    const uint64_t per =
        (uint64_t)s->nodes * (uint64_t)s->accelerators_per_node / (uint64_t)s->dp_degree;
    out->accelerators_per_replica = (double)per;
    const bool zero16 = !strcmp(c->name, "zero16");
    if (zero_stage && !zero16)
        return dpas__fail(err, DPAS_EINVAL, "zero",
                          "ZeRO stages partition the zero16 state; got convention %s", c->name);
    if (o->optimizer && strcmp(o->optimizer->name, "adam") && !zero16)
        return dpas__fail(err, DPAS_EINVAL, "optimizer",
                          "optimizer %s sets the optimizer state of the zero16 state; state %s is "
                          "a fixed convention (drop one)",
                          o->optimizer->name, c->name);
    if (!s->node_entry)
        return dpas__fail(err, DPAS_EINVAL, "fleet.node",
                          "the memory check needs the node's accelerator: use a registry fleet or "
                          "give fleet.node");
    const uint64_t K = o->optimizer ? o->optimizer->state_bytes : 12;
    out->optimizer = zero16 ? (o->optimizer ? o->optimizer->name : "adam") : NULL;
    out->optimizer_bytes = zero16 ? K : 0;
    if ((rc = dpas__bytes_field(
             state_at(c, K, zero_stage, s->parameters, (uint64_t)s->dp_degree, &out->state, err),
             "state_bytes", err)))
        return rc;
    if ((rc = dpas__bytes_field(dpas__bytes_add(out->state, out->activations, &out->total, err),
                                "total_bytes", err)))
        return rc;
    const dpas_hardware *hw = s->node_entry->accelerator;
    /* memory x floor(A/N) in 128 bits; a registry memory is a whole number of bytes (its reader
     * accepts no fraction) */
    if ((rc = dpas__bytes_scaled(hw->memory.whole, (dpas_rational){per, 1}, 1, 1, &out->capacity,
                                 err)))
        return dpas__bytes_field(rc, "capacity_bytes", err);
    double st = dpas_bytes_to_double(out->total), cap = dpas_bytes_to_double(out->capacity);
    /* a zero capacity (a registry accelerator of 0 B) would make inf or NaN, which no JSON holds */
    if (!(cap > 0))
        return dpas__fail(err, DPAS_EINVAL, "capacity_bytes",
                          "capacity_bytes: the accelerator %s has no memory (0 B)", hw->name);
    out->utilisation = st / cap;
    out->fits = dpas__bytes_cmp(out->total, out->capacity) <= 0;
    return dpas__bytes_field(dpas__bytes_absdiff(out->capacity, out->total, &out->headroom, err),
                             "headroom_bytes", err);
}

/* The micro-batch at dp_degree n: the one given, or (step_tokens) the replica's share of the
 * step's tokens, ceil(step_tokens / (n x sequence)), as `dpas step` defaults it. */
static uint64_t micro_at(const dpas_memory_opts *o, uint64_t n)
{
    if (o->micro_batch || !o->step_tokens || !o->shape || o->shape->layers < 1)
        return o->micro_batch;
    uint64_t seq = o->sequence ? o->sequence : (uint64_t)o->shape->sequence;
    if (!seq)
        return 0;
    dpas__u128 d = (dpas__u128)n * seq;
    dpas__u128 q = o->step_tokens / d + (o->step_tokens % d != 0);
    return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* The activations at dp_degree n: those of the check when the micro-batch does not move with
 * n, else counted again; nonzero when they cannot be counted (past 2^64 B). */
static int act_at(const dpas_memory_opts *o, const dpas_memory *m, uint64_t n, dpas_bytes *act)
{
    dpas_bytes pl;
    if (!m->activations_counted || o->micro_batch || !o->step_tokens) {
        *act = m->activations;
        return 0;
    }
    return dpas_activation_bytes(o->shape, micro_at(o, n), o->sequence, o->recompute, &pl, act,
                                 NULL);
}

/* Does it fit at dp_degree n on this fleet and this stage (its smallest replica)? A check that
 * fails (a byte count out of range) counts as not fitting. */
static bool fits_at(const dpas_scenario *s, const dpas_memory_opts *o, const dpas_memory *m,
                    int zero_stage, int64_t n)
{
    dpas_scenario t = *s;
    dpas_memory x = {0};
    t.dp_degree = n;
    return !act_at(o, m, (uint64_t)n, &x.activations) &&
           !memory_check(&t, o, zero_stage, false, &x, NULL) && x.fits;
}

/* Does it fit on n replicas of the smallest replica's capacity each (the fleet scaled to n
 * replicas)? */
static bool fits_scaled(const dpas_memory_opts *o, const dpas_scenario *s, const dpas_memory *m,
                        int zero_stage, uint64_t n)
{
    dpas_bytes st, tot, act;
    const uint64_t K = o->optimizer ? o->optimizer->state_bytes : 12;
    return !act_at(o, m, n, &act) &&
           !state_at(o->state, K, zero_stage, s->parameters, n, &st, NULL) &&
           !dpas__bytes_add(st, act, &tot, NULL) && dpas__bytes_cmp(tot, m->capacity) <= 0;
}

/* The activations' note; over its room an error, never a cut. */
static int act_note(dpas_memory *out, dpas_error *err, const char *fmt, ...) DPAS__PRINTF(3, 4);
static int act_note(dpas_memory *out, dpas_error *err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int w = vsnprintf(out->activations_note, sizeof out->activations_note, fmt, ap);
    va_end(ap);
    if (w < 0 || (size_t)w >= sizeof out->activations_note)
        return dpas__fail(err, DPAS_ERANGE, "memory",
                          "the activations' note is over %zu bytes (the model's shape has numbers "
                          "too long to state)",
                          sizeof out->activations_note - 1);
    return 0;
}

/* The activations of the options, or why there are none. */
static int activations(const dpas_memory_opts *o, dpas_memory *out, dpas_error *err)
{
    const dpas_model_shape *sh = o->shape;
    out->activations = out->activations_per_layer = (dpas_bytes){0, 0, 1};
    out->recompute = dpas_recompute_name(o->recompute);
    if (!out->recompute)
        return dpas__fail(err, DPAS_EINVAL, "recompute",
                          "recompute must be none, selective or full, got %d", (int)o->recompute);
    if (!sh || sh->layers < 1) {
        return act_note(out, err, "not counted: %s",
                        o->no_shape_why ? o->no_shape_why
                                        : "the workload has no transformer shape");
    }
    if (!o->micro_batch) {
        return act_note(out, err,
                        "not counted: give micro_batch (sequences per replica per forward pass)");
    }
    int rc = dpas_activation_bytes(sh, o->micro_batch, o->sequence, o->recompute,
                                   &out->activations_per_layer, &out->activations, err);
    if (rc)
        return rc;
    out->activations_counted = 1;
    out->layers = sh->layers;
    out->micro_batch = o->micro_batch;
    out->sequence = o->sequence ? o->sequence : (uint64_t)sh->sequence;
    static const char *const per[DPAS_RECOMPUTE_COUNT] = {"sbh(34 + 5as/h)", "34sbh", "2sbh"};
    return act_note(
        out, err,
        "%s per layer x %lld layers (s %llu, b %llu, h %lld, a %lld; recompute %s): "
        "Korthikanti et al. 2022, Eq. (1) and Table 2%s",
        per[o->recompute], (long long)sh->layers, (unsigned long long)out->sequence,
        (unsigned long long)o->micro_batch, (long long)sh->hidden, (long long)sh->heads,
        out->recompute,
        dpas_activation_shape_covered(sh)
            ? ""
            : ", GPT's layer: an estimate for this one (its MLP or key/value heads differ)");
}

int dpas_memory_check_opts(const dpas_scenario *s, const dpas_memory_opts *o, dpas_memory *out,
                           dpas_error *err)
{
    dpas_memory_opts oo = *o;
    int rc;
    memset(out, 0, sizeof *out);
    if (!oo.state && (rc = dpas_convention_find("zero16", &oo.state, err)))
        return rc;
    /* the micro-batch at this dp_degree (the step's share when it moves with N) */
    dpas_memory_opts here = oo;
    here.micro_batch = micro_at(&oo, (uint64_t)(s->dp_degree > 0 ? s->dp_degree : 1));
    if ((rc = activations(&here, out, err)) || (rc = memory_check(s, &oo, oo.zero, true, out, err)))
        return rc;
    const int zero_stage = oo.zero;
    /* The smallest ZeRO stage that fits at this dp_degree (stages partition zero16 only). */
    out->smallest_zero_stage = -1;
    for (int z = 0; z <= (strcmp(oo.state->name, "zero16") ? 0 : 3) && out->smallest_zero_stage < 0;
         z++)
        if (z == zero_stage ? out->fits : fits_at(s, &oo, out, z, s->dp_degree))
            out->smallest_zero_stage = z;
    /* The largest X such that every dp_degree 1..X fits on this fleet at this stage. At N the
     * smallest replica has k = floor(A/N) accelerators and needs a + b/N bytes of state (b = 0
     * at stage 0, a = 0 at stage 3) plus its activations (constant, or falling with N when the
     * micro-batch is the replica's share): within a run of N with the same k the need falls as
     * N grows, so the first N that does not fit starts a run. Runs start at N = 1 and at
     * floor(A/k) + 1: at most 2 sqrt(A) checks. */
    const int64_t A = s->nodes * s->accelerators_per_node; /* checked by the validation */
    int64_t first_miss = A + 1;
    for (int64_t n = 1; n <= A;) {
        if (!fits_at(s, &oo, out, zero_stage, n)) {
            first_miss = n;
            break;
        }
        n = A / (A / n) + 1;
    }
    out->largest_dp_degree = first_miss - 1;
    /* The fewest replicas of the smallest replica's accelerators each that fit: the need falls
     * with N and the capacity is fixed, so a bisection over 1..2^40 finds the first N that fits,
     * when one does. Rounded up to a multiple of q = node / gcd(k, node), so that N x k
     * accelerators are whole nodes (the fleet one can ask for with --nodes). */
    uint64_t flo = 0, fhi = 1ull << 40; /* fits at fhi (when at all), not at flo */
    if (fits_scaled(&oo, s, out, zero_stage, fhi)) {
        while (fhi - flo > 1) {
            uint64_t mid = flo + (fhi - flo) / 2;
            if (fits_scaled(&oo, s, out, zero_stage, mid))
                fhi = mid;
            else
                flo = mid;
        }
        const uint64_t k = (uint64_t)out->accelerators_per_replica,
                       node = (uint64_t)s->accelerators_per_node, q = node / dpas__gcd(k, node);
        const dpas__u128 d = ((dpas__u128)fhi + q - 1) / q * q,
                         nodes = d * k / node; /* exact: q x k is a multiple of node */
        if (d <= INT64_MAX && nodes <= INT64_MAX) {
            out->smallest_dp_degree = (int64_t)d;
            out->smallest_nodes = (int64_t)nodes;
        }
    }
    /* The least recomputation that fits here (activations fall from none to full). */
    out->smallest_recompute = DPAS_RECOMPUTE_UNKNOWN;
    for (int r = 0; out->activations_counted && r < DPAS_RECOMPUTE_COUNT; r++) {
        dpas_bytes pl, act, tot;
        if (r == (int)oo.recompute ? out->fits
                                   : !dpas_activation_bytes(oo.shape, here.micro_batch, oo.sequence,
                                                            (dpas_recompute)r, &pl, &act, NULL) &&
                                         !dpas__bytes_add(out->state, act, &tot, NULL) &&
                                         dpas__bytes_cmp(tot, out->capacity) <= 0) {
            out->smallest_recompute = (dpas_recompute)r;
            break;
        }
    }
    return 0;
}

int dpas_memory_check(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                      dpas_memory *out, dpas_error *err)
{
    dpas_memory_opts o = {.state = c, .zero = zero_stage};
    return dpas_memory_check_opts(s, &o, out, err);
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
