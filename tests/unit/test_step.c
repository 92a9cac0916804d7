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
    const char *kv[] = {"fleet", "Lab_64_H100", "nodes", "4", "dp_degree", "4", "parameters", "1e9", "gradient_bytes_per_param", "2 B",
                        "checkpoint_bytes_per_param", "14 B", "tokens", "1e6", "mfu", "0.5",
                        "rule", "mean", "schedule", "allreduce"};
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
    const char *kv[] = {"fleet", "Lab_64_H100", "nodes", "4", "fabric", "Ethernet_10G",
                        "dp_degree", "4", "parameters", "1e9",
                        "gradient_bytes_per_param", "2 B", "checkpoint_bytes_per_param", "14 B",
                        "global_batch", "500", "sequence", "2000", "mfu", "50%", "rule",
                        "mean,median", "schedule", "allreduce,sharded"};
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
        const char *kv[] = {"fleet", "Training_512_H100", "dp_degree", "64", "parameters",
                            "7.5e9", "gradient_bytes_per_param", "2 B",
                            "checkpoint_bytes_per_param", "16 B", "tokens", "4M", "zero", z[k],
                            "rule", "mean,median", "schedule", "allreduce,sharded"};
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
        const char *kv[] = {"fleet", "Training_512_H100", "dp_degree", "64", "parameters",
                            "7.5e9", "gradient_bytes_per_param", "2 B",
                            "checkpoint_bytes_per_param", "16 B", "zero", z[k], "rule", "mean",
                            "schedule", "allreduce"};
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
    const char *kv[] = {"fleet", "Lab_64_H100", "dp_degree", "64", "workload", "Llama3_8B",
                        "gradient_bytes_per_param", "bf16", "checkpoint_bytes_per_param", "14 B",
                        "tokens", "4M", "rule", "krum", "schedule", "sharded_distance"};
    dpas_step *st;
    dpas_error e = {0};
    assert_int_equal(step_of(kv, sizeof kv / sizeof *kv, &st, &e), 0);
    assert_string_equal(st->mfu_basis, "assumed");
    assert_non_null(st->mfu_source);
    near(st->mfu, 0.40);
    /* 6 x 8.03e9 x 4e6 over 64 x 989e12 x 0.40, and at 0.43 and 0.38 */
    near(st->compute_s, 6 * 8.03e9 * 4e6 / (64 * 989e12 * 0.40));
    near(st->compute_lo_s, 6 * 8.03e9 * 4e6 / (64 * 989e12 * 0.43));
    near(st->compute_hi_s, 6 * 8.03e9 * 4e6 / (64 * 989e12 * 0.38));
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
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
