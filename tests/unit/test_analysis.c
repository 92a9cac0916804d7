/* SPDX-License-Identifier: Apache-2.0 */
/* Beyond the seed: rule bounds, schedule bytes, alpha-beta times, inventory and memory.
 * Expected values are hand calculations written beside each check, mlsysim's known answers,
 * or the papers' bounds restated here independently of the catalogue. */
#include "check.h"

#include <math.h>

static const dpas_rule *rule(const char *name, const char *conv)
{
    const dpas_rule *r = NULL;
    dpas_error e = {0};
    if (dpas_rule_find(name, conv, &r, &e))
        fail_msg("rule %s: %s", name, e.message);
    return r;
}

static int64_t max_f(const char *name, const char *conv, int64_t n)
{
    int64_t v = -99;
    assert_int_equal(dpas_rule_max_f(rule(name, conv), n, &v, NULL), 0);
    return v;
}

static int64_t min_n(const char *name, const char *conv, int64_t f)
{
    int64_t v = -99;
    assert_int_equal(dpas_rule_min_n(rule(name, conv), f, &v, NULL), 0);
    return v;
}

static void test_issue_figures(void **state)
{
    (void)state;
    /* dpas rules --n 64: median 31, trimmed mean 31, Krum 30 (n >= 2f+3), Bulyan 15 */
    assert_int_equal(max_f("median", NULL, 64), 31);
    assert_int_equal(max_f("trimmed_mean", NULL, 64), 31);
    assert_int_equal(max_f("krum", NULL, 64), 30);
    assert_int_equal(max_f("bulyan", NULL, 64), 15);
    /* dpas rules --f 10: median 21, Krum 23, Bulyan 43 */
    assert_int_equal(min_n("median", NULL, 10), 21);
    assert_int_equal(min_n("krum", NULL, 10), 23);
    assert_int_equal(min_n("bulyan", NULL, 10), 43);
    /* ByzFL's Krum: 2f < n */
    assert_int_equal(max_f("krum", "byzfl", 64), 31);
    assert_int_equal(min_n("krum", "byzfl", 10), 21);
}

/* The papers' conditions, restated here by hand (not read from the catalogue). */
static int paper_ok(const char *name, const char *conv, int64_t n, int64_t f)
{
    if (!strcmp(name, "mean"))
        return f == 0;
    if (!strcmp(name, "krum") || !strcmp(name, "multi_krum"))
        return conv && !strcmp(conv, "byzfl") ? 2 * f < n : n >= 2 * f + 3;
    if (!strcmp(name, "bulyan"))
        return n >= 4 * f + 3;
    /* bucketing and static clipping use f only through the rule after them (Karimireddy et
     * al., ICLR 2022; ByzFL's Clipping): at least one honest gradient */
    if (!strcmp(name, "bucketing") || !strcmp(name, "clipping"))
        return f < n;
    /* median, trimmed mean, meamed, sign vote, brute, geomed, cc, nnm; MoNNA (Farhadkhani et
     * al., ICML 2023), CAF (Allouah et al., ICML 2025), SMEA (Allouah et al., ICML 2023), ARC
     * (Allouah et al., 2024) */
    return 2 * f < n;
}

static void test_every_rule_small_n(void **state)
{
    (void)state;
    for (size_t i = 0; i < dpas_rule_count(); i++) {
        const dpas_rule *r = dpas_rule_at(i);
        const char *conv = strcmp(r->convention, "byzfl") ? NULL : "byzfl";
        for (int64_t n = 1; n <= 40; n++) {
            int64_t want = -1; /* the largest f the paper allows, -1 if none */
            for (int64_t f = 0; f <= n; f++)
                if (paper_ok(r->name, conv, n, f))
                    want = f;
            int64_t got;
            assert_int_equal(dpas_rule_max_f(r, n, &got, NULL), 0);
            if (got != want)
                fail_msg("%s/%s n=%lld: max_f %lld, paper %lld", r->name, r->convention,
                         (long long)n, (long long)got, (long long)want);
            for (int64_t f = 0; f <= n; f++)
                assert_int_equal(dpas_rule_tolerates(r, n, f), paper_ok(r->name, conv, n, f));
        }
        for (int64_t f = 0; f <= 20; f++) {
            int64_t want = -1; /* the smallest n the paper allows */
            for (int64_t n = 1; n <= 100 && want < 0; n++)
                if (paper_ok(r->name, conv, n, f))
                    want = n;
            int64_t got;
            assert_int_equal(dpas_rule_min_n(r, f, &got, NULL), 0);
            if (got != want)
                fail_msg("%s/%s f=%lld: min_n %lld, paper %lld", r->name, r->convention,
                         (long long)f, (long long)got, (long long)want);
        }
    }
    /* where each rule first becomes feasible */
    assert_int_equal(max_f("krum", NULL, 2), -1);
    assert_int_equal(max_f("krum", NULL, 3), 0);
    assert_int_equal(max_f("krum", NULL, 5), 1);
    assert_int_equal(max_f("bulyan", NULL, 6), 0);
    assert_int_equal(max_f("bulyan", NULL, 7), 1);
    assert_int_equal(max_f("median", NULL, 3), 1);
    assert_int_equal(min_n("mean", NULL, 1), -1);
    assert_int_equal(min_n("mean", NULL, 0), 1);
}

static void test_rule_lookup(void **state)
{
    (void)state;
    dpas_error e = {0};
    const dpas_rule *r;
    assert_string_equal(rule("mda", NULL)->name, "brute");
    assert_string_equal(rule("geomed", NULL)->name, "geometric_median");
    assert_string_equal(rule("CC", NULL)->name, "centered_clipping");
    assert_string_equal(rule("Krum", NULL)->convention, "blanchard");
    assert_string_equal(rule("krum", NULL)->neighbours, "n - f - 2");
    assert_string_equal(rule("krum", "byzfl")->neighbours, "n - f - 1");
    assert_int_equal(dpas_rule_find("krumm", NULL, &r, &e), DPAS_ENOENT);
    assert_msg_contains(e, "unknown rule \"krumm\"; expected one of mean, median");
    assert_int_equal(dpas_rule_find("median", "byzfl", &r, &e), DPAS_ENOENT);
    assert_msg_contains(e, "rule median has no convention \"byzfl\"; it has: standard");
    /* as a command line names them: a convention where the rule has it, else the default */
    assert_int_equal(dpas_rule_select("krum", "byzfl", &r, &e), 0);
    assert_string_equal(r->condition, "2f < n");
    assert_int_equal(dpas_rule_select("median", "byzfl", &r, &e), 0);
    assert_string_equal(r->convention, "standard");
    assert_int_equal(dpas_rule_select("median", "nope", &r, &e), DPAS_ENOENT);
    assert_msg_contains(e, "unknown convention \"nope\"; expected standard, blanchard or byzfl");
    assert_int_equal(dpas_rule_select("krumm", NULL, &r, &e), DPAS_ENOENT);
    assert_int_equal(dpas_rule_max_f(rule("median", NULL), 0, &(int64_t){0}, &e), DPAS_EINVAL);
    assert_int_equal(dpas_rule_min_n(rule("median", NULL), -1, &(int64_t){0}, &e), DPAS_EINVAL);
    assert_int_equal(dpas_rule_min_n(rule("bulyan", NULL), INT64_MAX / 2, &(int64_t){0}, &e), DPAS_ERANGE);
}

REGISTRY_FIXTURE

static dpas_scenario reference(void)
{
    const void *e = NULL;
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_SCENARIO, "ReferenceJobAttackSurface", &e, NULL), 0);
    return ((const dpas_named_scenario *)e)->scenario;
}

static dpas_traffic traffic(dpas_schedule_id k, const dpas_scenario *s, const char *r, int64_t it)
{
    dpas_traffic t;
    dpas_error e = {0};
    if (dpas_schedule_traffic(k, s, rule(r, NULL), it, &t, &e))
        fail_msg("traffic: %s", e.message);
    return t;
}

static void test_schedule_bytes(void **state)
{
    (void)state;
    dpas_scenario s = reference(); /* s = 175e9 x 2 B = 350e9 B, N = 128 */
    dpas_traffic t = traffic(DPAS_SCHED_ALLREDUCE, &s, "mean", 0);
    assert_int_equal(t.sent.whole, 694531250000ull); /* 350e9 x 2 x 127 / 128 */
    assert_int_equal(t.received.whole, 694531250000ull);
    assert_int_equal(t.messages, 254);
    t = traffic(DPAS_SCHED_ALLGATHER, &s, "median", 0);
    assert_int_equal(t.sent.whole, 44450000000000ull); /* 127 x 350e9: 64 x the AllReduce */
    assert_int_equal(t.messages, 127);
    t = traffic(DPAS_SCHED_PS, &s, "krum", 0);
    assert_int_equal(t.sent.whole, 44450000000000ull); /* the server's link */
    t = traffic(DPAS_SCHED_PS_SEPARATE, &s, "krum", 0);
    assert_int_equal(t.sent.whole, 44800000000000ull); /* 128 x 350e9 */
    t = traffic(DPAS_SCHED_SHARDED, &s, "median", 0);
    assert_int_equal(t.sent.whole, 694531250000ull); /* the same bytes as AllReduce */
    t = traffic(DPAS_SCHED_SHARDED_DISTANCE, &s, "krum", 0);
    /* + AllReduce of 128 x 127 / 2 fp64 distances: 2 x 127 / 128 x 8 x 8128 = 8 x 127^2 = 129032 */
    assert_int_equal(t.scalars.whole, 129032);
    assert_int_equal(t.sent.whole, 694531379032ull);
    assert_int_equal(t.messages, 508);
    t = traffic(DPAS_SCHED_SHARDED_DISTANCE, &s, "geometric_median", 10);
    /* 10 iterations x AllReduce of 128 fp64 norms: 10 x 2 x 127 / 128 x 1024 = 20320 */
    assert_int_equal(t.scalars.whole, 20320);
    assert_int_equal(t.messages, 254 + 10 * 254);
    t = traffic(DPAS_SCHED_INNETWORK, &s, "mean", 0);
    assert_int_equal(t.sent.whole, 350000000000ull);
    /* one replica moves nothing */
    s.dp_degree = 1;
    t = traffic(DPAS_SCHED_ALLGATHER, &s, "median", 0);
    assert_int_equal(t.sent.whole, 0);
    assert_int_equal(t.messages, 0);
    /* exact fractions: 3504873 x 4.127 bit = 14464610871/8000 B; x 2 x 7 / 8 = 101252276097/32000 */
    s.parameters = 3504873;
    s.gradient_bytes_per_param = (dpas_rational){4127, 8000};
    s.dp_degree = 8;
    t = traffic(DPAS_SCHED_ALLREDUCE, &s, "mean", 0);
    assert_int_equal(t.sent.whole, 3164133);
    assert_int_equal(t.sent.frac_num, 20097); /* 101252276097 - 3164133 x 32000 = 20097 */
    assert_int_equal(t.sent.frac_den, 32000);
}

static void test_realises(void **state)
{
    (void)state;
    const char *why = NULL;
    assert_true(dpas_schedule_realises(DPAS_SCHED_ALLREDUCE, rule("mean", NULL), &why));
    assert_false(dpas_schedule_realises(DPAS_SCHED_ALLREDUCE, rule("median", NULL), &why));
    assert_non_null(strstr(why, "only the sum"));
    assert_true(dpas_schedule_realises(DPAS_SCHED_SHARDED, rule("median", NULL), NULL));
    assert_true(dpas_schedule_realises(DPAS_SCHED_SHARDED, rule("trimmed_mean", NULL), NULL));
    assert_false(dpas_schedule_realises(DPAS_SCHED_SHARDED, rule("krum", NULL), &why));
    assert_non_null(strstr(why, "sharded_distance"));
    assert_true(dpas_schedule_realises(DPAS_SCHED_SHARDED_DISTANCE, rule("bulyan", NULL), NULL));
    for (size_t i = 0; i < dpas_rule_count(); i++) { /* every gradient whole: any rule */
        assert_true(dpas_schedule_realises(DPAS_SCHED_ALLGATHER, dpas_rule_at(i), NULL));
        assert_true(dpas_schedule_realises(DPAS_SCHED_PS, dpas_rule_at(i), NULL));
    }
    assert_int_equal(dpas_schedule_from_name("sharded_distance"), DPAS_SCHED_SHARDED_DISTANCE);
    assert_int_equal(dpas_schedule_from_name("ring"), -1);
}

/* Times: a relative 1e-9, the rounding of a few operations in double. */
#define near(got, want) assert_double_near((got), (want), 1e-9)

static void test_times(void **state)
{
    (void)state;
    double t;
    dpas_error e = {0};
    /* mlsysim: ring AllReduce of 1e9 B over 8 at 50e9 B/s and 500 ns is 0.035007 s */
    assert_int_equal(dpas_ring_allreduce_time(1e9, 8, 50e9, 500e-9, &t, &e), 0);
    near(t, 0.035007);
    /* mlsysim: 14 latency steps for N = 8 */
    assert_int_equal(dpas_ring_allreduce_time(0, 8, 50e9, 1.0, &t, &e), 0);
    near(t, 14.0);
    assert_int_equal(dpas_ring_allreduce_time(1e9, 1, 50e9, 1.0, &t, &e), 0);
    assert_double_exact(t, 0.0);
    assert_int_equal(dpas_ring_allreduce_time(1e9, 0, 50e9, 1.0, &t, &e), DPAS_EINVAL);
    assert_string_equal(e.message, "n_gpus must be >= 1, got 0");
    /* hierarchical, mlsysim's formula with its default latencies (500 ns intra, 5 us inter):
     * M = 1e9, 4 nodes of 8 at 450e9 B/s intra and 50e9 B/s inter:
     * 2 x (7/8 x 1e9/450e9 + 7 x 500e-9) + (2 x 3/4 x 1.25e8/50e9 + 6 x 5e-6) */
    dpas_links L = {50e9, 5e-6, 450e9, 500e-9};
    assert_int_equal(dpas_hierarchical_allreduce_time(1e9, 4, 8, &L, &t, &e), 0);
    near(t, 2 * (7.0 / 8 * 1e9 / 450e9 + 7 * 500e-9) + (2 * 3.0 / 4 * 1.25e8 / 50e9 + 6 * 5e-6));

    /* The reference scenario on InfiniBand HDR (25e9 B/s, 7 us) and DGX H100 (450e9 B/s, 500 ns) */
    dpas_scenario s = reference();
    assert_int_equal(dpas_scenario_links(&s, &L, &e), 0);
    assert_double_exact(L.inter_bandwidth, 25e9);
    assert_double_exact(L.inter_latency, 7e-6);
    const dpas_rule *mean = rule("mean", NULL), *median = rule("median", NULL);
    assert_int_equal(dpas_schedule_time(DPAS_SCHED_ALLREDUCE, &s, mean, 0, DPAS_TOPO_FLAT, &L, &t, &e), 0);
    near(t, 694531250000.0 / 25e9 + 254 * 7e-6); /* 27.78125 + 0.001778 = 27.783028 */
    near(t, 27.783028);
    assert_int_equal(dpas_schedule_time(DPAS_SCHED_ALLREDUCE, &s, mean, 0, DPAS_TOPO_HIERARCHICAL, &L, &t, &e), 0);
    /* 2 x (7/8 x 350e9/450e9 + 7 x 500e-9) + (2 x 127/128 x 43.75e9/25e9 + 254 x 7e-6) */
    double hier = 2 * (7.0 / 8 * 350e9 / 450e9 + 7 * 500e-9) + (2 * 127.0 / 128 * 43.75e9 / 25e9 + 254 * 7e-6);
    near(t, hier);
    near(t, 4.8355523611111111);
    assert_int_equal(dpas_schedule_time(DPAS_SCHED_SHARDED, &s, median, 0, DPAS_TOPO_FLAT, &L, &t, &e), 0);
    near(t, 27.783028); /* same bytes and steps as the ring */
    assert_int_equal(dpas_schedule_time(DPAS_SCHED_ALLGATHER, &s, median, 0, DPAS_TOPO_FLAT, &L, &t, &e), 0);
    near(t, 127 * 350e9 / 25e9 + 127 * 7e-6); /* 1778.000889 */
    assert_int_equal(dpas_schedule_time(DPAS_SCHED_PS, &s, median, 0, DPAS_TOPO_FLAT, &L, &t, &e), 0);
    near(t, 2 * 127 * 350e9 / 25e9 + 2 * 7e-6);
    assert_int_equal(dpas_schedule_time(DPAS_SCHED_INNETWORK, &s, mean, 0, DPAS_TOPO_FLAT, &L, &t, &e), 0);
    near(t, 350e9 / 25e9 + 2 * 7e-6);
    /* one replica exchanges nothing: 0 s on both topologies, for every schedule (mlsysim's ring
     * AllReduce is 0 at n = 1; the intra-node phase once gave 2 x 7/8 x 350e9/450e9 = 1.36 s) */
    s.dp_degree = 1;
    for (int k = 0; k < DPAS_SCHED_COUNT; k++)
        for (int topo = DPAS_TOPO_FLAT; topo <= DPAS_TOPO_HIERARCHICAL; topo++) {
            t = -1;
            assert_int_equal(dpas_schedule_time((dpas_schedule_id)k, &s, median, 0,
                                                (dpas_topology)topo, &L, &t, &e), 0);
            assert_double_exact(t, 0.0);
        }
    s.dp_degree = 128;
    /* a custom fleet has no links */
    s.fabric_entry = NULL;
    assert_int_equal(dpas_scenario_links(&s, &L, &e), DPAS_EINVAL);
    assert_msg_contains(e, "fabric");
}

/* The rule's own compute as a roofline, max(flops / peak, bytes / bandwidth). Each expected value
 * by hand from the pass count the kernels' structure gives (the kernels' docs and bench): n = 8
 * rows of d = 1e6 float32 values are 8 x 1e6 x 4 = 32e6 bytes a pass. */
static void test_roofline(void **state)
{
    (void)state;
    const char *bound = "unset";
    const double pass = 8 * 1e6 * 4.0;
    /* median: a sorting network per column, one read of each column's 8 values: 1 pass, 32e6 B;
     * 2nd = 16e6 flops. At 1e9 B/s and 1e12 FLOP/s: 0.032 s of memory against 16 us of FLOPs */
    assert_double_exact(dpas_rule_passes(rule("median", NULL), 8, 0), 1.0);
    double fl = dpas_rule_flops(rule("median", NULL), 8, 1000000, 0);
    assert_double_exact(fl, 16e6);
    near(dpas_roofline_time(fl, 1 * pass, 1e12, 1e9, &bound), 0.032);
    assert_string_equal(bound, "memory");
    /* trimmed mean and the mean: 1 pass; meamed 2 (the median, then the values nearest it) */
    assert_double_exact(dpas_rule_passes(rule("trimmed_mean", NULL), 8, 0), 1.0);
    assert_double_exact(dpas_rule_passes(rule("mean", NULL), 8, 0), 1.0);
    assert_double_exact(dpas_rule_passes(rule("meamed", NULL), 8, 0), 2.0);
    /* Krum: the 28 distances in one pass (blocks of every row in cache), then the chosen row,
     * 1/8 pass: 1.125 passes = 36e6 B, 0.036 s at 1e9 B/s; 3 x 28 x 1e6 = 84e6 flops, 0.084 s at
     * 1e9 FLOP/s: compute-bound */
    assert_double_exact(dpas_rule_passes(rule("krum", NULL), 8, 0), 1.125);
    fl = dpas_rule_flops(rule("krum", NULL), 8, 1000000, 0);
    assert_double_exact(fl, 84e6);
    near(dpas_roofline_time(fl, 1.125 * pass, 1e9, 1e9, &bound), 0.084);
    assert_string_equal(bound, "compute");
    /* multi-Krum: distances, then the mean of the selection: 2 passes; geometric median: 2 per
     * iteration (distances to the iterate, a weighted sum), 3 iterations: 6; a pre-aggregation
     * (dpas_preaggregate): two reads and n rows written, 3 */
    assert_double_exact(dpas_rule_passes(rule("multi_krum", NULL), 8, 0), 2.0);
    assert_double_exact(dpas_rule_passes(rule("geometric_median", NULL), 8, 3), 6.0);
    assert_double_exact(dpas_rule_passes(rule("nnm", NULL), 8, 0), 3.0);
    assert_double_exact(dpas_rule_passes(rule("arc", NULL), 8, 0), 3.0);
    /* one bound alone; neither: NaN and no bound */
    near(dpas_roofline_time(16e6, pass, 0, 1e9, &bound), 0.032);
    assert_string_equal(bound, "memory");
    near(dpas_roofline_time(16e6, pass, 1e12, 0, &bound), 16e-6);
    assert_string_equal(bound, "compute");
    assert_true(isnan(dpas_roofline_time(16e6, pass, 0, 0, &bound)));
    assert_null(bound);

    /* Through the cost analysis: the reference job (GPT-3, 175e9 parameters in bf16: 350e9 B
     * per replica, 128 replicas) with a memory bandwidth of 1e12 B/s and the fleet's H100 for the
     * peak (989e12 FLOP/s). Sharded median: each worker holds 128 rows of 175e9/128 coordinates,
     * 350e9 B, read once: 0.35 s; its flops 2 x 175e9 = 3.5e11, 0.354 ms: memory-bound */
    dpas_scenario s = reference();
    const dpas_rule *rs[] = {rule("median", NULL), rule("krum", NULL)};
    dpas_cost_opts o = {.rules = rs, .nrules = 2, .f = -1, .memory_bandwidth = 1e12};
    o.schedules = (1u << DPAS_SCHED_SHARDED) | (1u << DPAS_SCHED_ALLGATHER);
    dpas_cost *c = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_cost_compute(&s, &o, &c, &e), 0);
    assert_double_exact(c->peak_flops, 989e12);
    assert_double_exact(c->memory_bandwidth, 1e12);
    for (size_t i = 0; i < c->nrows; i++) {
        const dpas_cost_row *r = &c->rows[i];
        if (!r->realisable)
            continue;
        if (r->rule->id == DPAS_RULE_MEDIAN && r->schedule == DPAS_SCHED_SHARDED) {
            near(r->compute_bytes, 350e9);
            near(r->compute_flops, 3.5e11);
            near(r->compute_s, 0.35);
            assert_string_equal(r->compute_bound, "memory");
        }
        /* Krum gathers whole gradients: 128 x 350e9 B x (1 + 1/128) = 129 x 350e9 = 45.15e12 B,
         * 45.15 s at 1e12 B/s; 3 x 128 x 127 / 2 x 175e9 = 4.2672e15 flops, 4.315 s */
        if (r->rule->id == DPAS_RULE_KRUM && r->schedule == DPAS_SCHED_ALLGATHER) {
            near(r->compute_bytes, 45.15e12);
            near(r->compute_flops, 4.2672e15);
            near(r->compute_s, 45.15);
            assert_string_equal(r->compute_bound, "memory");
        }
    }
    dpas_cost_free(c);
    /* a bandwidth that is not a finite number >= 0 is refused, naming the field */
    o.memory_bandwidth = -1;
    assert_int_equal(dpas_cost_compute(&s, &o, &c, &e), DPAS_EINVAL);
    assert_string_equal(e.field, "memory_bandwidth");
}

static void test_memory(void **state)
{
    (void)state;
    dpas_scenario s = reference();
    const dpas_convention *c;
    dpas_memory m;
    dpas_error e = {0};
    assert_int_equal(dpas_convention_find("zero16", &c, &e), 0);
    assert_int_equal(dpas_memory_check(&s, c, 0, &m, &e), 0);
    assert_int_equal(m.state.whole, 2800000000000ull);       /* 175e9 x 16 */
    assert_int_equal(m.capacity.whole, 687194767360ull);     /* 8 x 80 x 2^30 */
    assert_false(m.fits);
    assert_int_equal(dpas_memory_check(&s, c, 1, &m, &e), 0);
    assert_int_equal(m.state.whole, 716406250000ull);        /* (4 + 12/128) x 175e9 */
    assert_false(m.fits);
    assert_int_equal(dpas_memory_check(&s, c, 2, &m, &e), 0);
    assert_int_equal(m.state.whole, 369140625000ull);        /* (2 + 14/128) x 175e9 */
    assert_true(m.fits);
    assert_int_equal(dpas_memory_check(&s, c, 3, &m, &e), 0);
    assert_int_equal(m.state.whole, 21875000000ull);         /* 16/128 x 175e9 */
    assert_true(m.fits);
    /* exact: 8 x 80 GiB - 175e9 x 16/128 = 687194767360 - 21875000000 */
    assert_int_equal(m.headroom.whole, 665319767360ull);
    assert_int_equal(m.headroom.frac_num, 0);
    assert_int_equal(dpas_memory_check(&s, c, 0, &m, &e), 0);
    /* does not fit: the shortfall 2800000000000 - 687194767360, exact */
    assert_int_equal(m.headroom.whole, 2112805232640ull);
    /* where it would fit. The memory of all 1024 H100s: 1024 x 80 x 2^30 = 87960930222080 B.
     * Stage 0: 16P = 2.8e12 per replica fits when N <= 87960930222080 / 2.8e12 = 31.4, so 31;
     * at N = 128 stage 2 ((2 + 14/128) x 175e9 = 369.1e9 <= 687.2e9) is the first that fits. */
    assert_int_equal(m.largest_dp_degree, 31);
    assert_int_equal(m.smallest_zero_stage, 2);
    /* stage 1: (4 + 12/N) x 175e9 must fit the smallest replica, floor(1024/N) x 80 GiB. At
     * N = 113, floor(1024/113) = 9: 9 x 85899345920 = 773094113280 >= 700e9 + 2100e9/113 =
     * 718.58e9 (and every N < 113 has 9 or more and a larger need only by 12P/N, at N = 1
     * 2.8e12 of 87.96e12); at N = 114, 114 x 9 = 1026 > 1024: floor 8, 687194767360 <
     * 700e9 + 2100e9/114 = 718.42e9. (The mean, 1024/N x 80 GiB, would say N <= 122.66.) */
    assert_int_equal(dpas_memory_check(&s, c, 1, &m, &e), 0);
    assert_int_equal(m.largest_dp_degree, 113);
    /* Unequal replicas (issue 32): N = 120 on 1024 H100s, 1024 = 120 x 8 + 64: 64 replicas
     * have 9 accelerators and 56 have 8. Stage 1 needs (4 + 12/120) x 175e9 = 717.5e9 per
     * replica; the 56 of 8 hold 8 x 85899345920 = 687194767360 < 717.5e9: it does not fit
     * (the mean, 1024/120 = 8.53 H100s, 733.0e9, would have said it does). */
    dpas_scenario u = s;
    u.dp_degree = 120;
    assert_int_equal(dpas_memory_check(&u, c, 1, &m, &e), 0);
    assert_int_equal(m.state.whole, 717500000000ull);
    assert_int_equal(m.capacity.whole, 687194767360ull);
    assert_true(m.accelerators_per_replica == 8.0);
    assert_false(m.fits);
    assert_int_equal(m.headroom.whole, 717500000000ull - 687194767360ull);
    assert_int_equal(m.largest_dp_degree, 113); /* as above: 113 fits, 114 does not */
    /* replicas of 8: 4P = 700e9 alone exceeds 687.2e9, at any N */
    assert_int_equal(m.smallest_dp_degree, 0);
    assert_int_equal(m.smallest_zero_stage, 2);
    /* stage 2 at N = 120: (2 + 14/120) x 175e9 = 370416666666.67 <= 687194767360. Replicas of
     * 8 H100s (8 to a node) fit from 350e9 + 2450e9/D <= 687194767360, D >= 2450e9 /
     * 337194767360 = 7.27: 8 replicas on 8 nodes; 7 need 700e9 > 687.2e9 */
    assert_int_equal(dpas_memory_check(&u, c, 2, &m, &e), 0);
    assert_true(m.fits);
    assert_int_equal(m.smallest_dp_degree, 8);
    assert_int_equal(m.smallest_nodes, 8);
    /* stage 2, largest N: 350e9 + 2450e9/N <= floor(1024/N) x 85899345920. N = 204: floor 5,
     * 429496729600 >= 362.01e9; N = 205: 205 x 5 = 1025 > 1024, floor 4, 343597383680 <
     * 361.95e9 (the mean would have said 244: 4.197 x 80 GiB = 360.5e9 >= 360.04e9) */
    assert_int_equal(m.largest_dp_degree, 204);
    char um[512];
    assert_int_equal(dpas_memory_check(&u, c, 1, &m, &e), 0);
    dpas_memory_message(&u, c, 1, &m, um, sizeof um);
    assert_non_null(strstr(um, "exceeds the memory of its 8 H100 accelerators (687.195 GB)"));
    assert_non_null(strstr(um, "it fits with ZeRO stage 2, or at dp_degree <= 113"));
    /* stage 3: 16 x 175e9 <= 87960930222080 at any N, up to all 1024 accelerators */
    assert_int_equal(dpas_memory_check(&s, c, 3, &m, &e), 0);
    assert_int_equal(m.largest_dp_degree, 1024);
    assert_int_equal(m.smallest_zero_stage, 2);
    /* megatron18, no ZeRO stages: 18 x 175e9 = 3.15e12 fits when N <= 27.92 */
    const dpas_convention *mc;
    assert_int_equal(dpas_convention_find("megatron18", &mc, &e), 0);
    assert_int_equal(dpas_memory_check(&s, mc, 0, &m, &e), 0);
    assert_int_equal(m.largest_dp_degree, 27);
    assert_int_equal(m.smallest_zero_stage, -1);
    char msg[512];
    dpas_memory_message(&s, mc, 0, &m, msg, sizeof msg);
    assert_non_null(strstr(msg, "utilisation 4.58; it fits at dp_degree <= 27"));
    /* a model too large for the whole fleet at every stage: 1e15 parameters x 16 B/1024 */
    dpas_scenario big = s;
    big.parameters = 1000000000000000ull;
    assert_int_equal(dpas_memory_check(&big, c, 0, &m, &e), 0);
    assert_int_equal(m.largest_dp_degree, 0);
    assert_int_equal(m.smallest_zero_stage, -1);
    dpas_memory_message(&big, c, 0, &m, msg, sizeof msg);
    assert_non_null(strstr(msg, "; it fits at no dp_degree on this fleet and no ZeRO stage"));
    assert_int_equal(dpas_memory_check(&s, c, 0, &m, &e), 0);
    assert_int_equal(dpas_convention_find("adam_state", &c, &e), 0);
    assert_int_equal(dpas_memory_check(&s, c, 1, &m, &e), DPAS_EINVAL);
    assert_msg_contains(e, "ZeRO stages partition the zero16 state");
    assert_int_equal(dpas_convention_find("zero17", &c, &e), DPAS_ENOENT);
    assert_msg_contains(e, "unknown convention \"zero17\"");
    s.node_entry = NULL;
    assert_int_equal(dpas_convention_find("zero16", &c, &e), 0);
    assert_int_equal(dpas_memory_check(&s, c, 0, &m, &e), DPAS_EINVAL);
}

static void test_inventory(void **state)
{
    (void)state;
    dpas_scenario s = reference();
    dpas_inventory_row rows[32];
    size_t n = 0;
    assert_int_equal(dpas_inventory(&s, rows, 32, &n, NULL), 0);
    assert_int_equal(n, 18); /* 5 on the wire, checkpoint, weights, 7 conventions, 4 widths */
    static const struct { const char *item; uint64_t bytes; } want[] = {
        {"gradient_bytes", 350000000000ull},          {"allreduce_per_worker", 694531250000ull},
        {"allgather_per_worker", 44450000000000ull},  {"allreduce_job_total", 88900000000000ull},
        {"allgather_job_total", 5689600000000000ull}, {"checkpoint_bytes", 2450000000000ull},
        {"weight_bytes", 350000000000ull},            {"zero16", 2800000000000ull},
        {"megatron18", 3150000000000ull},             {"mlsysim_ckpt", 2450000000000ull},
        {"adam_state", 2100000000000ull},             {"sgd_momentum", 1400000000000ull},
        {"adam_8bit", 1050000000000ull},              {"sgd_ckpt", 700000000000ull},
        {"weights_fp32", 700000000000ull},            {"weights_bf16", 350000000000ull},
        {"weights_fp8", 175000000000ull},             {"weights_int4", 87500000000ull},
    };
    for (size_t i = 0; i < n; i++) {
        assert_string_equal(rows[i].item, want[i].item);
        assert_int_equal(rows[i].bytes.whole, want[i].bytes);
        assert_non_null(rows[i].source);
    }
    size_t count = 0;
    assert_int_equal(dpas_inventory(&s, NULL, 0, &count, NULL), 0);
    assert_int_equal(count, 18);
}

/* The catalogues' iterators and the XML escape a front end writes SVG with: the public API a
 * caller walks (docs/library.md). Expected: the optimizers' state bytes K of ZeRO (Rajbhandari et
 * al. 2019: Adam 12) and Transformer Math 101 (8-bit Adam 6, SGD with momentum 8), SGD's fp32
 * master weights 4; the ten attacks of the header's list; XML 1.0's five escapes. */
static int sink_text(void *ctx, const char *data, size_t len)
{
    char *out = ctx;
    size_t have = strlen(out);
    if (have + len >= 256)
        return DPAS_ENOMEM;
    memcpy(out + have, data, len);
    out[have + len] = '\0';
    return 0;
}

static void test_catalogues(void **state)
{
    (void)state;
    static const struct {
        const char *name;
        uint64_t k;
    } opt[] = {{"adam", 12}, {"adam_8bit", 6}, {"sgd_momentum", 8}, {"sgd", 4}};
    assert_int_equal(dpas_optimizer_count(), 4);
    for (size_t i = 0; i < 4; i++) {
        const dpas_optimizer *o = dpas_optimizer_at(i);
        assert_non_null(o);
        assert_string_equal(o->name, opt[i].name);
        assert_true(o->state_bytes == opt[i].k);
    }
    assert_null(dpas_optimizer_at(4));
    /* every convention by position, each found again by name; none past the count */
    size_t nconv = dpas_convention_count();
    assert_true(nconv >= 1);
    for (size_t i = 0; i < nconv; i++) {
        const dpas_convention *c = dpas_convention_at(i), *found = NULL;
        assert_non_null(c);
        assert_int_equal(dpas_convention_find(c->name, &found, NULL), 0);
        assert_ptr_equal(found, c);
    }
    assert_null(dpas_convention_at(nconv));
    static const char *const attacks[] = {"sign_flip",   "ipm",          "alie",  "large_value",
                                          "nan",         "inf",          "optimal_ipm",
                                          "optimal_alie", "mimic",       "gaussian"};
    assert_int_equal(dpas_attack_count(), 10);
    for (size_t i = 0; i < 10; i++) {
        assert_non_null(dpas_attack_at(i));
        assert_string_equal(dpas_attack_at(i)->name, attacks[i]);
        assert_int_equal(dpas_attack_at(i)->id, (int)i);
    }
    assert_null(dpas_attack_at(10));
    /* each schedule has its one line and its source; none out of range */
    for (int sc = 0; sc < DPAS_SCHED_COUNT; sc++) {
        assert_true(dpas_schedule_summary((dpas_schedule_id)sc) &&
                    *dpas_schedule_summary((dpas_schedule_id)sc));
        assert_true(dpas_schedule_source((dpas_schedule_id)sc) &&
                    *dpas_schedule_source((dpas_schedule_id)sc));
    }
    assert_non_null(strstr(dpas_schedule_source(DPAS_SCHED_ALLREDUCE), "Patarasuk"));
    assert_null(dpas_schedule_summary(DPAS_SCHED_COUNT));
    assert_null(dpas_schedule_source(DPAS_SCHED_NONE));
    char out[256] = "";
    assert_int_equal(dpas_write_xml_text("a<b & \"c\" 'd'>", sink_text, out), 0);
    assert_string_equal(out, "a&lt;b &amp; &quot;c&quot; &apos;d&apos;&gt;");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_issue_figures), cmocka_unit_test(test_every_rule_small_n),
        cmocka_unit_test(test_rule_lookup),   cmocka_unit_test(test_schedule_bytes),
        cmocka_unit_test(test_realises),      cmocka_unit_test(test_times), cmocka_unit_test(test_roofline),
        cmocka_unit_test(test_memory),        cmocka_unit_test(test_inventory),
        cmocka_unit_test(test_catalogues),
    };
    return cmocka_run_group_tests(tests, registry_setup, registry_teardown);
}
