/* SPDX-License-Identifier: Apache-2.0 */
/* dpas step: the compute, the bucketed exchange and what the backward hides, ZeRO's bytes, and
 * the request's refusals. Expected values are hand calculations written beside each check
 * (the links' numbers from the registry: InfiniBand HDR 200 Gb/s = 25e9 B/s and 7 us, 10 Gb
 * Ethernet 1.25e9 B/s and 50 us; H100 989 TFLOP/s dense BF16), or the ZeRO paper's volumes. */
#include "check.h"

#include <math.h>
#include <string.h>

static dpas_registry *reg;

static int setup(void **state)
{
    (void)state;
    return dpas_registry_builtin(&reg, NULL);
}

static int teardown(void **state)
{
    (void)state;
    dpas_registry_free(reg);
    return 0;
}

/* A step request from "key=value" pairs; *st NULL and the error in *e when it fails. */
static int step_of(const char *const *kv, size_t n, dpas_step **st, dpas_error *e)
{
    dpas_request *rq;
    int rc = dpas_request_new(DPAS_ANALYSIS_STEP, &rq, e);
    *st = NULL;
    for (size_t i = 0; !rc && i < n; i += 2)
        rc = dpas_request_set(rq, kv[i], kv[i + 1], e);
    if (!rc)
        rc = dpas_request_resolve(rq, reg, e);
    if (!rc)
        rc = dpas_request_step(rq, st, e);
    dpas_request_free(rq);
    return rc;
}

static const dpas_step_row *row(const dpas_step *st, const char *rule, dpas_schedule_id s)
{
    for (size_t i = 0; i < st->nrows; i++)
        if (!strcmp(st->rows[i].rule->name, rule) && st->rows[i].schedule == s)
            return &st->rows[i];
    fail_msg("no row %s x %d", rule, (int)s);
    return NULL;
}

static void near(double got, double want)
{
    if (!(fabs(got - want) <= 1e-9 * fabs(want) + 1e-15))
        fail_msg("got %.17g, want %.17g", got, want);
}

/* 4 DGX H100 nodes, one replica per node (8 accelerators each): every schedule here is timed
 * hierarchically (a node holds one replica, so pre-reducing inside it is sound for any rule),
 * as mlsysim's two-level AllReduce: 2 (7/8 M / 450e9 + 7 x 500e-9) inside the node (NVLink 4,
 * 450 GB/s and 500 ns from the registry) and a ring of the 4 nodes, each of a node's 8 links
 * carrying M / 8: 2 x 3/4 x (M / 8) / bw + 2 x 3 x latency. */
static double hier(double M, double bw, double lat)
{
    return 2 * (7.0 / 8 * M / 450e9 + 7 * 500e-9) + 1.5 * (M / 8) / bw + 6 * lat;
}

static void test_compute_and_hidden_exchange(void **state)
{
    (void)state;
    const char *kv[] = {"fleet",
                        "Lab_64_H100",
                        "nodes",
                        "4",
                        "dp_degree",
                        "4",
                        "parameters",
                        "1e9",
                        "gradient_bytes_per_param",
                        "2 B",
                        "checkpoint_bytes_per_param",
                        "14 B",
                        "tokens",
                        "1e6",
                        "mfu",
                        "0.5",
                        "rule",
                        "mean",
                        "schedule",
                        "allreduce"};
    dpas_step *st;
    dpas_error e = {0};
    assert_int_equal(step_of(kv, sizeof kv / sizeof *kv, &st, &e), 0);
    /* 6 x 1e9 x 1e6 = 6e15 FLOP over 32 x 989e12 x 0.5 FLOP/s */
    const double compute = 6e15 / (32 * 989e12 * 0.5), bw = compute * 2 / 3;
    near(st->flops, 6e15);
    near(st->compute_s, compute);
    near(st->backward_s, bw);
    assert_string_equal(st->mfu_basis, "given");
    /* 25 MiB = 26214400 B = 13107200 two-byte parameters; ceil(1e9 / 13107200) = 77 buckets,
     * the last of 1e9 - 76 x 13107200 = 3852800 parameters */
    assert_int_equal(st->bucket_parameters, 13107200);
    assert_int_equal(st->buckets, 77);
    /* InfiniBand HDR: 25e9 B/s, 7 us */
    const double tf = hier(26214400, 25e9, 7e-6), tl = hier(7705600, 25e9, 7e-6);
    const dpas_step_row *r = row(st, "mean", DPAS_SCHED_ALLREDUCE);
    near(r->exchange_s, 76 * tf + tl);
    /* a bucket takes 0.32 ms and the backward fills one every 3.3 ms: the backward hides all but
     * the last bucket */
    assert_true(tf < bw * 13107200 / 1e9);
    near(r->exposed_s, tl);
    near(r->step_s, compute + tl);
    near(r->added_s, 0);
    near(st->baseline_s, compute + tl);
    dpas_step_free(st);
}

/* The same on 10 Gb Ethernet: a bucket (4.3 ms) outlasts its share of the backward (3.3 ms),
 * the exchange falls behind and its queue ends after the backward. */
static void test_exchange_behind_backward(void **state)
{
    (void)state;
    const char *kv[] = {"fleet",
                        "Lab_64_H100",
                        "nodes",
                        "4",
                        "fabric",
                        "Ethernet_10G",
                        "dp_degree",
                        "4",
                        "parameters",
                        "1e9",
                        "gradient_bytes_per_param",
                        "2 B",
                        "checkpoint_bytes_per_param",
                        "14 B",
                        "global_batch",
                        "500",
                        "sequence",
                        "2000",
                        "mfu",
                        "50%",
                        "rule",
                        "mean,median",
                        "schedule",
                        "allreduce,sharded"};
    dpas_step *st;
    dpas_error e = {0};
    assert_int_equal(step_of(kv, sizeof kv / sizeof *kv, &st, &e), 0);
    const double compute = 6e15 / (32 * 989e12 * 0.5), bw = compute * 2 / 3;
    const double d = bw * 13107200 / 1e9;
    const double tf = hier(26214400, 1.25e9, 50e-6), tl = hier(7705600, 1.25e9, 50e-6);
    assert_true(tf > d);
    /* the first bucket ready at d, then 76 in a row (the 77th is ready when the backward ends,
     * which is before the 76th is done) */
    const double end = d + 76 * tf;
    assert_true(end > bw);
    const dpas_step_row *r = row(st, "mean", DPAS_SCHED_ALLREDUCE);
    near(r->exposed_s, end + tl - bw);
    near(r->step_s, compute + end + tl - bw);
    /* the median under sharded: the same collectives' time (a node holds one replica, so it is
     * hierarchical too), plus its own compute after the last bucket */
    const dpas_step_row *m = row(st, "median", DPAS_SCHED_SHARDED);
    near(m->exposed_s, end + tl - bw);
    assert_true(m->rule_s > 0);
    near(m->step_s, compute + end + tl - bw + m->rule_s);
    near(m->added_s, m->rule_s);
    near(m->share, m->rule_s / m->step_s);
    dpas_step_free(st);
}

static uint64_t whole(dpas_bytes b)
{
    assert_int_equal(b.frac_num, 0);
    return b.whole;
}

/* ZeRO (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion Parameter
 * Models", SC 2020, Sec. 7.2): standard data parallelism moves 2 Psi per step (reduce-scatter
 * and all-gather of the gradients), stage 1 and 2 (P_os, P_os+g) 2 Psi as well (reduce-scatter
 * of gradients, all-gather of parameters), stage 3 (P_os+g+p) 3 Psi: 1.5x. The paper's Psi =
 * 7.5e9 (its Figure 1 model) at N_d = 64, in 2-byte elements: 2 Psi = 30e9 B, of which a ring
 * worker sends (N-1)/N = 63/64. */
static void test_zero_volumes(void **state)
{
    (void)state;
    const uint64_t dp = 2 * 15000000000ull / 64 * 63; /* 2 Psi x 2 B x 63/64 = 29531250000 */
    const char *z[] = {"0", "1", "2", "3"};
    const uint64_t want[] = {dp, dp, dp, dp / 2 * 3};
    for (int k = 0; k < 4; k++) {
        const char *kv[] = {"fleet",
                            "Training_512_H100",
                            "dp_degree",
                            "64",
                            "parameters",
                            "7.5e9",
                            "gradient_bytes_per_param",
                            "2 B",
                            "checkpoint_bytes_per_param",
                            "16 B",
                            "tokens",
                            "4M",
                            "zero",
                            z[k],
                            "rule",
                            "mean,median",
                            "schedule",
                            "allreduce,sharded"};
        dpas_step *st;
        dpas_error e = {0};
        assert_int_equal(step_of(kv, sizeof kv / sizeof *kv, &st, &e), 0);
        assert_int_equal(whole(row(st, "mean", DPAS_SCHED_ALLREDUCE)->bytes_per_worker), want[k]);
        assert_int_equal(whole(st->baseline_bytes), want[k]);
        /* the median under sharded: all-to-all of shards and all-gather (of the aggregate, then
         * of the parameters): DP's bytes too, and stage 3's extra gather */
        assert_int_equal(whole(row(st, "median", DPAS_SCHED_SHARDED)->bytes_per_worker), want[k]);
        assert_int_equal(st->zero, k);
        if (k == 0)
            assert_true(row(st, "mean", DPAS_SCHED_ALLREDUCE)->zero_s == 0);
        if (k == 3) {
            /* the forward's ring all-gather of 15e9 B over 64 on HDR, 63 x 7e-6 + 63/64 x
             * 15e9/25e9 = 0.591 s, against a forward of 6 x 7.5e9 x 4e6 / (512 x 989e12 x 0.40)
             * / 3 = 0.296 s: exposed is what outlasts the forward (more than 1/573 of it, the
             * first of ceil(7.5e9 / 13107200) = 573 buckets) */
            const double ag = 63 * 7e-6 + 63.0 / 64 * 15e9 / 25e9,
                         fwd = 6 * 7.5e9 * 4e6 / (512 * 989e12 * 0.40) / 3;
            assert_int_equal(st->buckets, 573);
            assert_true(ag - fwd > ag / 573);
            near(row(st, "mean", DPAS_SCHED_ALLREDUCE)->zero_s, ag - fwd);
        }
        dpas_step_free(st);
    }
}

/* cost takes the same stage: its rows carry the same bytes, and their ratio to DP's AllReduce is
 * the paper's 1x and 1.5x. */
static void test_cost_zero(void **state)
{
    (void)state;
    const char *z[] = {"1", "3"};
    const double ratio[] = {1.0, 1.5};
    const uint64_t dp = 2 * 15000000000ull / 64 * 63;
    const uint64_t want[] = {dp, dp / 2 * 3};
    for (int k = 0; k < 2; k++) {
        dpas_request *rq;
        dpas_cost *c = NULL;
        dpas_error e = {0};
        const char *kv[] = {"fleet",
                            "Training_512_H100",
                            "dp_degree",
                            "64",
                            "parameters",
                            "7.5e9",
                            "gradient_bytes_per_param",
                            "2 B",
                            "checkpoint_bytes_per_param",
                            "16 B",
                            "zero",
                            z[k],
                            "rule",
                            "mean",
                            "schedule",
                            "allreduce"};
        assert_int_equal(dpas_request_new(DPAS_ANALYSIS_COST, &rq, &e), 0);
        for (size_t i = 0; i < sizeof kv / sizeof *kv; i += 2)
            assert_int_equal(dpas_request_set(rq, kv[i], kv[i + 1], &e), 0);
        if (dpas_request_resolve(rq, reg, &e) || dpas_request_cost(rq, &c, &e))
            fail_msg("%s", e.message);
        assert_int_equal(c->nrows, 1);
        assert_int_equal(whole(c->rows[0].bytes_per_worker), want[k]);
        near(c->rows[0].ratio_to_allreduce, ratio[k]);
        dpas_cost_free(c);
        dpas_request_free(rq);
    }
}

/* The default MFU is assumed, with its band and source; the band brackets the step. */
static void test_assumed_mfu(void **state)
{
    (void)state;
    const char *kv[] = {"fleet",
                        "Lab_64_H100",
                        "dp_degree",
                        "64",
                        "workload",
                        "Llama3_8B",
                        "gradient_bytes_per_param",
                        "bf16",
                        "checkpoint_bytes_per_param",
                        "14 B",
                        "tokens",
                        "4M",
                        "rule",
                        "krum",
                        "schedule",
                        "sharded_distance"};
    dpas_step *st;
    dpas_error e = {0};
    assert_int_equal(step_of(kv, sizeof kv / sizeof *kv, &st, &e), 0);
    assert_string_equal(st->mfu_basis, "assumed");
    assert_non_null(st->mfu_source);
    near(st->mfu, 0.40);
    /* (6 x 8.03e9 + 12 x 32 x 8192 x 4096) x 4e6 over 64 x 989e12 x 0.40, and at 0.43 and
     * 0.38: Llama 3 8B's 32 layers, hidden 4096, sequence 8192 (the registry's shape); the
     * attention term is PaLM's 12 L H Q T per token (Chowdhery et al. 2022, Appendix B) */
    const double per_token = 6 * 8.03e9 + 12.0 * 32 * 8192 * 4096;
    near(st->attention_flops, 12.0 * 32 * 8192 * 4096 * 4e6);
    near(st->compute_s, per_token * 4e6 / (64 * 989e12 * 0.40));
    near(st->compute_lo_s, per_token * 4e6 / (64 * 989e12 * 0.43));
    near(st->compute_hi_s, per_token * 4e6 / (64 * 989e12 * 0.38));
    const dpas_step_row *r = row(st, "krum", DPAS_SCHED_SHARDED_DISTANCE);
    assert_true(r->step_lo_s < r->step_s && r->step_s < r->step_hi_s);
    /* the notes' room (DPAS_STEP_MAX_NOTES of 400 bytes) holds every note whole, with a byte
     * to spare: the longest, the compute's, carries the assumed MFU's source (a note that did not
     * fit would fill the room and end in "...") */
    assert_true(st->nnotes > 0 && st->nnotes < DPAS_STEP_MAX_NOTES);
    for (size_t i = 0; i < st->nnotes; i++)
        if (!st->notes[i][0] || strlen(st->notes[i]) >= sizeof st->notes[i] - 1)
            fail_msg("note %zu empty or at the room's end: %s", i, st->notes[i]);
    dpas_step_free(st);
}

static void refused(const char *const *kv, size_t n, const char *field, const char *text)
{
    dpas_step *st;
    dpas_error e = {0};
    assert_int_not_equal(step_of(kv, n, &st, &e), 0);
    assert_null(st);
    assert_string_equal(e.field, field);
    if (!strstr(e.message, text))
        fail_msg("message \"%s\" lacks \"%s\"", e.message, text);
}

#define BASE                                                                                       \
    "fleet", "Lab_64_H100", "dp_degree", "8", "parameters", "1e9", "checkpoint_bytes_per_param",   \
        "14 B"
static void test_refusals(void **state)
{
    (void)state;
    const char *none[] = {BASE};
    refused(none, 8, "tokens", "tokens is required");
    const char *both[] = {BASE, "tokens", "1M", "global_batch", "8"};
    refused(both, 12, "tokens", "not both");
    const char *half[] = {BASE, "global_batch", "8"};
    refused(half, 10, "sequence", "global_batch needs sequence");
    const char *mfu0[] = {BASE, "tokens", "1M", "mfu", "0"};
    refused(mfu0, 12, "mfu", "(0, 1]");
    const char *mfu2[] = {BASE, "tokens", "1M", "mfu", "120%"};
    refused(mfu2, 12, "mfu", "(0, 1]");
    const char *mfux[] = {BASE, "tokens", "1M", "mfu", "half"};
    refused(mfux, 12, "mfu", "a fraction");
    const char *fp8[] = {BASE, "tokens", "1M", "precision", "fp8"};
    refused(fp8, 12, "precision", "give compute_rate");
    const char *zero[] = {BASE, "tokens", "1M", "zero", "4"};
    refused(zero, 12, "zero", "0, 1, 2 or 3");
    const char *tiny[] = {BASE, "tokens", "1M", "bucket_bytes", "1", "gradient_bytes_per_param",
                          "4 B"};
    refused(tiny, 14, "bucket_bytes", "one parameter");
    const char *pp[] = {BASE, "tokens", "1M", "parallelism", "data,pipeline"};
    refused(pp, 12, "parallelism", "pipeline parallelism is not modelled");
    const char *ep[] = {BASE, "tokens", "1M", "parallelism", "expert"};
    refused(ep, 12, "parallelism", "expert parallelism is not modelled");
    const char *off[] = {BASE, "tokens", "1M", "offload", "cpu"};
    refused(off, 12, "offload", "offload is not modelled");
    const char *steps[] = {BASE, "tokens", "1M", "steps", "2"};
    refused(steps, 12, "steps", "not used by step");
    const char *strag[] = {BASE, "tokens", "1M", "stragglers", "5%"};
    refused(strag, 12, "stragglers", "stragglers are not modelled");
    const char *opt[] = {BASE, "tokens", "1M", "optimizer", "lion"};
    refused(opt, 12, "optimizer", "expected adam");
    const char *rec[] = {BASE, "tokens", "1M", "recompute", "half"};
    refused(rec, 12, "recompute", "expected none, selective or full");
    /* a workload given by its parameters has no shape: a micro-batch would count nothing */
    const char *mb[] = {BASE, "tokens", "1M", "micro_batch", "2", "gradient_bytes_per_param",
                        "2 B"};
    refused(mb, 14, "micro_batch", "has no shape");
}

/* Activations per layer, Korthikanti et al. 2022 (Sec. 4.1 Eq. (1) and Table 2, t = 1):
 * sbh(34 + 5as/h) without recomputation, 34sbh selective, 2sbh full. The paper's own figures:
 * for GPT-3 (a = 96, s = 2048, h = 12288) 5as/h = 80, and selective recomputation keeps 34 of
 * the 34 + 80 bytes per sbh, saving 70%; for MT-NLG 530B (a = 128, h = 20480) 5as/h = 64,
 * saving 65%. */
static void test_activations_paper(void **state)
{
    (void)state;
    dpas_model_shape gpt3 = {96, 12288, 96, 96, 4 * 12288, 2048, "Brown et al."};
    dpas_bytes layer[3], total[3];
    dpas_error e = {0};
    for (int r = 0; r < 3; r++)
        assert_int_equal(
            dpas_activation_bytes(&gpt3, 1, 0, (dpas_recompute)r, &layer[r], &total[r], &e), 0);
    /* hand: sbh = 2048 x 12288 = 25,165,824; x (34 + 80) = 2,868,903,936 */
    assert_int_equal(layer[DPAS_RECOMPUTE_NONE].whole, 2868903936ull);
    assert_int_equal(layer[DPAS_RECOMPUTE_SELECTIVE].whole, 34ull * 25165824);
    assert_int_equal(layer[DPAS_RECOMPUTE_FULL].whole, 2ull * 25165824);
    /* x 96 layers */
    assert_int_equal(total[DPAS_RECOMPUTE_NONE].whole, 275414777856ull);
    assert_int_equal(total[DPAS_RECOMPUTE_FULL].whole, 96ull * 2 * 25165824);
    /* the paper's 70%: 1 - 34/114 */
    double saved = 1 - (double)layer[1].whole / (double)layer[0].whole;
    assert_true(saved > 0.695 && saved < 0.705);
    dpas_model_shape mtnlg = {105, 20480, 128, 128, 4 * 20480, 2048, "Korthikanti et al."};
    assert_int_equal(
        dpas_activation_bytes(&mtnlg, 1, 0, DPAS_RECOMPUTE_NONE, &layer[0], &total[0], &e), 0);
    assert_int_equal(
        dpas_activation_bytes(&mtnlg, 1, 0, DPAS_RECOMPUTE_SELECTIVE, &layer[1], &total[1], &e), 0);
    saved = 1 - (double)layer[1].whole / (double)layer[0].whole; /* 64 / 98 */
    assert_true(saved > 0.645 && saved < 0.655);
    /* b and s scale it: b = 4, s = 1024: sbh x (34 + 5 x 96 x 1024 / 12288) = 4 x 1024 x 12288
     * x 74 */
    assert_int_equal(
        dpas_activation_bytes(&gpt3, 4, 1024, DPAS_RECOMPUTE_NONE, &layer[0], &total[0], &e), 0);
    assert_int_equal(layer[0].whole, 4ull * 1024 * 12288 * 74);
    assert_true(dpas_activation_shape_covered(&gpt3));
    /* past 2^64 bytes: refused, not wrapped */
    assert_int_equal(dpas_activation_bytes(&gpt3, 1ull << 40, 1ull << 20, DPAS_RECOMPUTE_NONE,
                                           &layer[0], &total[0], &e),
                     DPAS_ERANGE);
    assert_string_equal(e.field, "micro_batch");
}

/* The registry carries GPT-3's shape as Brown et al. 2020 (Table 2.1, Sec. 2.1) give it, and
 * Llama 3 8B's as the Llama 3 paper's Table 3 (a layer the formula only estimates: SwiGLU MLP
 * of 14336, 8 key/value heads). */
static void test_registry_shapes(void **state)
{
    (void)state;
    const void *e;
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_MODEL, "GPT3", &e, NULL), 0);
    const dpas_model_shape *g = &((const dpas_model *)e)->shape;
    assert_int_equal(g->layers, 96);
    assert_int_equal(g->hidden, 12288);
    assert_int_equal(g->heads, 96);
    assert_int_equal(g->sequence, 2048);
    assert_non_null(g->source);
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_MODEL, "Llama3_8B", &e, NULL), 0);
    const dpas_model_shape *l = &((const dpas_model *)e)->shape;
    assert_int_equal(l->layers, 32);
    assert_int_equal(l->hidden, 4096);
    assert_int_equal(l->kv_heads, 8);
    assert_false(dpas_activation_shape_covered(l));
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_MODEL, "ResNet50", &e, NULL), 0);
    assert_int_equal(((const dpas_model *)e)->shape.layers, 0);
}

/* A memory request from "key=value" pairs. */
static int memory_of(const char *const *kv, size_t n, dpas_memory *m, dpas_error *e)
{
    dpas_request *rq;
    int rc = dpas_request_new(DPAS_ANALYSIS_MEMORY, &rq, e);
    for (size_t i = 0; !rc && i < n; i += 2)
        rc = dpas_request_set(rq, kv[i], kv[i + 1], e);
    if (!rc)
        rc = dpas_request_resolve(rq, reg, e);
    if (!rc)
        rc = dpas_request_memory(rq, m, e);
    dpas_request_free(rq);
    return rc;
}

/* GPT-3 on 1024 A100 80 GiB (128 DGX nodes), 128 replicas of 8 accelerators: capacity per
 * replica 8 x 80 x 2^30 = 687,194,767,360 B. ZeRO 3, full recomputation, one sequence per
 * replica: state 16 x 175e9 / 128 = 21,875,000,000 B; activations 96 x 2 x 2048 x 12288 =
 * 4,831,838,208 B. The fewest replicas of 8 accelerators that fit: 2.8e12 / N + 4,831,838,208
 * <= 687,194,767,360, N >= 4.1034: N = 5. */
static void test_memory_activations(void **state)
{
    (void)state;
    const char *kv[] = {"workload",
                        "GPT3",
                        "fleet",
                        "Training_1K_A100",
                        "dp_degree",
                        "128",
                        "gradient_bytes_per_param",
                        "2 B",
                        "checkpoint_bytes_per_param",
                        "14 B",
                        "zero",
                        "3",
                        "recompute",
                        "full",
                        "micro_batch",
                        "1"};
    dpas_memory m;
    dpas_error e = {0};
    if (memory_of(kv, sizeof kv / sizeof *kv, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m.state.whole, 21875000000ull);
    assert_int_equal(m.activations.whole, 4831838208ull);
    assert_int_equal(m.total.whole, 21875000000ull + 4831838208ull);
    assert_int_equal(m.capacity.whole, 687194767360ull);
    assert_true(m.fits);
    assert_int_equal(m.smallest_dp_degree, 5);
    assert_string_equal(m.optimizer, "adam");
    assert_int_equal(m.optimizer_bytes, 12);
    /* without recomputation, 8 sequences per replica: 8 x 275,414,777,856 B = 2.2 TB, more
     * than a replica holds at any N */
    const char *big[] = {"workload",
                         "GPT3",
                         "fleet",
                         "Training_1K_A100",
                         "dp_degree",
                         "128",
                         "gradient_bytes_per_param",
                         "2 B",
                         "checkpoint_bytes_per_param",
                         "14 B",
                         "zero",
                         "3",
                         "micro_batch",
                         "8"};
    if (memory_of(big, sizeof big / sizeof *big, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m.activations.whole, 8ull * 275414777856ull);
    assert_false(m.fits);
    assert_int_equal(m.smallest_dp_degree, 0);
    /* SGD's 4 bytes: the zero16 layout with K = 4, 2 + 2 + 4 = 8 B/param at stage 0; at stage 1
     * 4 + 4/N: 175e9 x (4 + 4/128) = 705,468,750,000 B */
    const char *sgd[] = {"workload",
                         "GPT3",
                         "fleet",
                         "Training_1K_A100",
                         "dp_degree",
                         "128",
                         "gradient_bytes_per_param",
                         "2 B",
                         "checkpoint_bytes_per_param",
                         "14 B",
                         "optimizer",
                         "sgd",
                         "zero",
                         "1"};
    if (memory_of(sgd, sizeof sgd / sizeof *sgd, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m.state.whole, 705468750000ull);
    assert_false(m.activations_counted);
    assert_non_null(strstr(m.activations_note, "micro_batch"));
    const char *sgd0[] = {"workload",
                          "GPT3",
                          "fleet",
                          "Training_1K_A100",
                          "dp_degree",
                          "128",
                          "gradient_bytes_per_param",
                          "2 B",
                          "checkpoint_bytes_per_param",
                          "14 B",
                          "optimizer",
                          "sgd-momentum"};
    if (memory_of(sgd0, sizeof sgd0 / sizeof *sgd0, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m.state.whole, 175000000000ull * 12); /* 2 + 2 + 8 */
    /* a workload without a shape says so */
    const char *cnn[] = {"workload",
                         "ResNet50",
                         "fleet",
                         "Lab_64_H100",
                         "dp_degree",
                         "64",
                         "gradient_bytes_per_param",
                         "4 B",
                         "checkpoint_bytes_per_param",
                         "14 B"};
    if (memory_of(cnn, sizeof cnn / sizeof *cnn, &m, &e))
        fail_msg("%s", e.message);
    assert_non_null(strstr(m.activations_note, "no transformer shape"));
    const char *cnnmb[] = {"workload",
                           "ResNet50",
                           "fleet",
                           "Lab_64_H100",
                           "dp_degree",
                           "64",
                           "gradient_bytes_per_param",
                           "4 B",
                           "checkpoint_bytes_per_param",
                           "14 B",
                           "micro_batch",
                           "32"};
    assert_int_not_equal(memory_of(cnnmb, sizeof cnnmb / sizeof *cnnmb, &m, &e), 0);
    assert_string_equal(e.field, "micro_batch");
    /* an optimizer with a fixed convention: refused, not ignored */
    const char *fixed[] = {"workload",
                           "GPT3",
                           "fleet",
                           "Training_1K_A100",
                           "dp_degree",
                           "128",
                           "gradient_bytes_per_param",
                           "2 B",
                           "checkpoint_bytes_per_param",
                           "14 B",
                           "optimizer",
                           "sgd",
                           "state",
                           "megatron18"};
    assert_int_not_equal(memory_of(fixed, sizeof fixed / sizeof *fixed, &m, &e), 0);
    assert_string_equal(e.field, "optimizer");
    const char *strag[] = {"workload",
                           "GPT3",
                           "fleet",
                           "Training_1K_A100",
                           "dp_degree",
                           "128",
                           "gradient_bytes_per_param",
                           "2 B",
                           "checkpoint_bytes_per_param",
                           "14 B",
                           "stragglers",
                           "1"};
    assert_int_not_equal(memory_of(strag, sizeof strag / sizeof *strag, &m, &e), 0);
    assert_string_equal(e.field, "stragglers");
}

/* The step's memory: the micro-batch is the replica's share of the batch (global_batch 512 over
 * 64 replicas: 8 sequences), and full recomputation runs the forward twice: 8 x P x tokens. */
static void test_step_memory_recompute(void **state)
{
    (void)state;
    const char *kv[] = {"fleet",
                        "Lab_64_H100",
                        "dp_degree",
                        "64",
                        "workload",
                        "Llama3_8B",
                        "gradient_bytes_per_param",
                        "bf16",
                        "checkpoint_bytes_per_param",
                        "14 B",
                        "global_batch",
                        "512",
                        "sequence",
                        "8192",
                        "mfu",
                        "0.4",
                        "recompute",
                        "full",
                        "rule",
                        "mean",
                        "schedule",
                        "allreduce"};
    dpas_step *st;
    dpas_error e = {0};
    if (step_of(kv, sizeof kv / sizeof *kv, &st, &e))
        fail_msg("%s", e.message);
    /* full recomputation runs attention's forward again too: 16 L s h per token */
    const double per_token = 8 * 8.03e9 + 16.0 * 32 * 8192 * 4096;
    near(st->flops, per_token * 512 * 8192);
    near(st->compute_s, per_token * 512 * 8192 / (64 * 989e12 * 0.4));
    near(st->forward_s, st->compute_s / 4);
    assert_true(st->have_memory);
    assert_int_equal(st->memory.micro_batch, 8);
    /* 32 layers x 2 x 8192 x 8 x 4096 = 17,179,869,184 B; state 16 x 8.03e9 */
    assert_int_equal(st->memory.activations.whole, 17179869184ull);
    assert_int_equal(st->memory.state.whole, 128480000000ull);
    dpas_step_free(st);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_compute_and_hidden_exchange),
        cmocka_unit_test(test_exchange_behind_backward),
        cmocka_unit_test(test_zero_volumes),
        cmocka_unit_test(test_cost_zero),
        cmocka_unit_test(test_assumed_mfu),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_activations_paper),
        cmocka_unit_test(test_registry_shapes),
        cmocka_unit_test(test_memory_activations),
        cmocka_unit_test(test_step_memory_recompute),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
