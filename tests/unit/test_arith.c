/* SPDX-License-Identifier: Apache-2.0 */
/* Checked arithmetic on counts and bytes (issue 12): sums and differences of exact byte counts
 * whose fractions have denominators near 2^64, the two ways a result leaves what dpas_bytes
 * holds (said apart), rounded decimals that are marked, correctly rounded quotients past 2^53,
 * and the schedules' counts (N(N-1)/2 scalars, iterations x N, 2(N-1) latency steps).
 *
 * Every expected value was computed outside dpas, with Python's fractions (exact rationals) and
 * Python's int / int true division (correctly rounded), and is written here as a literal; the
 * Python expression is beside each. */
#include "check.h"

#include "../../src/lib/internal.h"

#include <math.h>
#include <stdlib.h>

/* d = 18446744073709551237 < 2^64 */
static void test_add_near_one(void **state)
{
    (void)state;
    dpas_bytes a = {612, 18446744073709550537ull, 18446744073709551237ull};
    dpas_bytes b = {0, 18446744073709550339ull, 18446744073709551237ull};
    dpas_bytes r;
    dpas_error e = {0};
    /* x + y, both fractions close to 1, passes 2^128 before it is reduced; the old sum wrapped and
     * refused the result as "beyond 2^64 bytes".
     * F(612) + F(18446744073709550537, d) + F(18446744073709550339, d)
     *   = 613 + 18446744073709549639/18446744073709551237 */
    assert_int_equal(dpas__bytes_add(a, b, &r, &e), 0);
    assert_int_equal(r.whole, 613);
    assert_int_equal(r.frac_num, 18446744073709549639ull);
    assert_int_equal(r.frac_den, 18446744073709551237ull);
    /* a whole part past 2^64 is said as such */
    dpas_bytes big = {UINT64_MAX, 1, 2};
    assert_int_equal(dpas__bytes_add(big, big, &r, &e), DPAS_ERANGE);
    assert_msg_contains(e, "reaches 2^64 bytes");
}

static void test_absdiff_wide(void **state)
{
    (void)state;
    const uint64_t d = 18446744073709551557ull; /* the largest prime below 2^64 */
    dpas_bytes a = {5, 1, d}, b = {2, d - 1, d}, r;
    dpas_error e = {0};
    /* den = d^2 > 2^127: x + den (the old borrow) wrapped. |5 + 1/d - (2 + (d-1)/d)| = 2 + 2/d */
    assert_int_equal(dpas__bytes_absdiff(a, b, &r, &e), 0);
    assert_int_equal(r.whole, 2);
    assert_int_equal(r.frac_num, 2);
    assert_int_equal(r.frac_den, d);
    assert_int_equal(dpas__bytes_absdiff(b, a, &r, &e), 0); /* symmetric */
    assert_int_equal(r.whole, 2);
    /* two primes: the exact difference's denominator is d1 d2 > 2^64, which dpas cannot hold:
     * F(5) + F(1, d1) - F(2) - F(d2 - 1, d2) has denominator
     * 340282366920938460843936948965011886881 */
    const uint64_t d2 = 18446744073709551533ull;
    dpas_bytes c = {5, 1, d}, f = {2, d2 - 1, d2};
    assert_int_equal(dpas__bytes_absdiff(c, f, &r, &e), DPAS_ERANGE);
    assert_msg_contains(e, "denominator needs more than 64 bits");
    assert_msg_contains(e, "about 2 B");
}

static void test_scaled_ranges(void **state)
{
    (void)state;
    dpas_bytes r;
    dpas_error e = {0};
    /* 4.8e18 x 1e-19 B x 4/3 = 0.64 B exactly: F(48 * 10**17, 10**19) * F(4, 3) = F(16, 25) */
    assert_int_equal(dpas__bytes_scaled(4800000000000000000ull,
                                        (dpas_rational){1, 10000000000000000000ull}, 4, 3, &r, &e),
                     0);
    assert_int_equal(r.whole, 0);
    assert_int_equal(r.frac_num, 16);
    assert_int_equal(r.frac_den, 25);
    /* 1 x 1e-19 B / 3: 1/(3 x 10^19), a tiny value whose denominator passes 2^64; the message
     * says so, not "beyond 2^64 bytes" */
    assert_int_equal(dpas__bytes_scaled(1, (dpas_rational){1, 10000000000000000000ull}, 1, 3, &r,
                                        &e),
                     DPAS_ERANGE);
    assert_string_equal(e.field, "bytes");
    assert_msg_contains(e, "denominator needs more than 64 bits");
    if (strstr(e.message, "reaches 2^64 bytes"))
        fail_msg("a tiny value called too large: %s", e.message);
    /* 2^63 x 3 B x 4/2 = 3 x 2^64: the whole part */
    assert_int_equal(dpas__bytes_scaled(1ull << 63, (dpas_rational){3, 1}, 4, 2, &r, &e),
                     DPAS_ERANGE);
    assert_msg_contains(e, "reaches 2^64 bytes");
    /* numerator past 2^128 but cancelling: (2^64-1) x (2^64-1)/(2^64-1) x 3/(2^64-1) = 3 */
    assert_int_equal(dpas__bytes_scaled(UINT64_MAX, (dpas_rational){UINT64_MAX, UINT64_MAX}, 3,
                                        UINT64_MAX, &r, &e),
                     0);
    assert_int_equal(r.whole, 3);
    assert_int_equal(r.frac_num, 0);
    /* times: (2^63 + 1/2) x 2 = 2^64 + 1: out */
    assert_int_equal(dpas__bytes_times((dpas_bytes){1ull << 63, 1, 2}, 2, &r, &e), DPAS_ERANGE);
    assert_msg_contains(e, "reaches 2^64 bytes");
    /* the field is renamed by the caller */
    assert_int_equal(dpas__bytes_field(DPAS_ERANGE, "scalar_bytes", &e), DPAS_ERANGE);
    assert_string_equal(e.field, "scalar_bytes");
    assert_msg_contains(e, "scalar_bytes: a byte count times 2");
}

static void test_rounded_decimals(void **state)
{
    (void)state;
    char t[128];
    /* 2/3 to 18 decimals: round(F(2, 3) * 10**18) = 666666666666666667 */
    dpas_format_bytes_exact((dpas_bytes){0, 2, 3}, t, sizeof t);
    assert_string_equal(t, "0.666666666666666667");
    assert_int_equal(dpas_bytes_is_decimal((dpas_bytes){0, 2, 3}), 0);
    /* (2^64 - 1) + (den - 1)/den, den = 3 x 2^60: within 1e-19 of 2^64, so it rounds to 2^64,
     * which no uint64 holds: the text still says it. float(F(den - 1, den)) = 1.0 */
    const uint64_t den = 3ull << 60;
    dpas_format_bytes_exact((dpas_bytes){UINT64_MAX, den - 1, den}, t, sizeof t);
    assert_string_equal(t, "18446744073709551616");
    /* a terminating decimal of 41 places is exact, however long:
     * str(Decimal(1) / Decimal(2**41)) = 4.5474735088646411895751953125E-13 */
    dpas_format_bytes_exact((dpas_bytes){0, 1, 1ull << 41}, t, sizeof t);
    assert_string_equal(t, "0.00000000000045474735088646411895751953125");
    assert_int_equal(dpas_bytes_is_decimal((dpas_bytes){0, 1, 1ull << 41}), 1);
    assert_int_equal(dpas_bytes_is_decimal((dpas_bytes){7, 3, 80}), 1); /* 80 = 2^4 x 5 */
    /* the exact fraction: (2^64 - 1) + 1/2 = (2^65 - 1)/2 = 36893488147419103231/2 */
    dpas_format_bytes_fraction((dpas_bytes){UINT64_MAX, 1, 2}, t, sizeof t);
    assert_string_equal(t, "36893488147419103231/2");
    dpas_format_bytes_fraction((dpas_bytes){1, 1, 3}, t, sizeof t);
    assert_string_equal(t, "4/3");
    dpas_format_bytes_fraction((dpas_bytes){350, 0, 1}, t, sizeof t);
    assert_string_equal(t, "350");
    /* a width given as a fraction (C API only) is marked too */
    dpas_format_width((dpas_rational){1, 3}, t, sizeof t);
    assert_string_equal(t, "0.333333333333333333 B (rounded; exactly 1/3)");
}

static void test_ratio(void **state)
{
    (void)state;
    /* (a, b, a / b correctly rounded), each a pair where float(a) / float(b) differs from a / b */
    static const struct { uint64_t a, b; const char *hex; } cases[] = {
        {4689275783357816212ull, 430, "0x1.35f27236578f7p+53"},
        {2228731587588131727ull, 848, "0x1.2acb4df703b32p+51"},
        {9013371251807347356ull, 429649390867108242ull, "0x1.4fa7aa12f660ep+4"},
        {2680181411433397933ull, 665259138523902532ull, "0x1.01d77fde63768p+2"},
        {5214385933097562167ull, 4578615535636952545ull, "0x1.238c1903c4a5dp+0"},
        {5625662781034744328ull, 430, "0x1.73d6e49504950p+53"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double want = strtod(cases[i].hex, NULL), got = dpas__ratio(cases[i].a, cases[i].b);
        if (got != want)
            fail_msg("%llu / %llu: got %a, want %s", (unsigned long long)cases[i].a,
                     (unsigned long long)cases[i].b, got, cases[i].hex);
    }
    /* the report's accelerators_per_replica, through the public API: nodes x 1 accelerators */
    dpas_scenario s = reference_by_hand();
    dpas_report r;
    dpas_error e = {0};
    s.nodes = 9013371251807347356ll;
    s.accelerators_per_node = 1;
    s.dp_degree = 429649390867108242ll;
    s.parameters = 1;
    assert_int_equal(dpas_evaluate(&s, &r, &e), 0);
    assert_true(r.accelerators_per_replica == strtod("0x1.4fa7aa12f660ep+4", NULL));
    /* allreduce_factor = 2(n-1)/n: 2 * (n - 1) / n in Python for n = 46764068986199228 is
     * 0x1.0000000000000p+1, where (2.0 * (n - 1)) / n in doubles is 0x1.ffffffffffffep+0 */
    double f;
    assert_int_equal(dpas_ring_allreduce_factor(46764068986199228ll, &f, &e), 0);
    assert_true(f == 2.0);
    assert_int_equal(dpas_ring_allreduce_factor(11158823690931360ll, &f, &e), 0);
    assert_true(f == strtod("0x1.fffffffffffffp+0", NULL));
}

static dpas_scenario big_scenario(int64_t n)
{
    dpas_scenario s = reference_by_hand();
    s.parameters = 1;
    s.nodes = n;
    s.accelerators_per_node = 1;
    s.dp_degree = n;
    s.gradient_bytes_per_param = (dpas_rational){1, 1};
    return s;
}

static void test_schedule_counts(void **state)
{
    (void)state;
    const dpas_rule *krum, *gm;
    dpas_traffic tr;
    dpas_error e = {0};
    assert_int_equal(dpas_rule_select("krum", NULL, &krum, &e), 0);
    assert_int_equal(dpas_rule_select("geometric_median", NULL, &gm, &e), 0);
    /* the example: N = 2^32 + 1, N(N-1)/2 = 2^63 + 2^31 distances (wrapped to 2^31 in
     * 64 bits before), x 8 B x 2(N-1)/N > 2^64 bytes */
    dpas_scenario s = big_scenario(4294967297ll);
    assert_int_equal(dpas_schedule_traffic(DPAS_SCHED_SHARDED_DISTANCE, &s, krum, 0, &tr, &e),
                     DPAS_ERANGE);
    assert_string_equal(e.field, "scalar_bytes");
    /* N = 2^33: N(N-1)/2 itself passes 2^64 */
    s = big_scenario(8589934592ll * 4); /* 2^35 */
    assert_int_equal(dpas_schedule_traffic(DPAS_SCHED_SHARDED_DISTANCE, &s, krum, 0, &tr, &e),
                     DPAS_ERANGE);
    assert_string_equal(e.field, "scalar_bytes");
    /* iterations x N past 2^64 */
    s = big_scenario(8);
    assert_int_equal(dpas_schedule_traffic(DPAS_SCHED_SHARDED_DISTANCE, &s, gm, INT64_MAX, &tr, &e),
                     DPAS_ERANGE);
    assert_string_equal(e.field, "scalar_bytes");
    /* N = 2^62 + 2: 2(N - 1) = 2^63 + 2 latency steps, past int64; the bytes (2(N-1)/N B, just
     * under 2 B) would fit */
    s = big_scenario(4611686018427387906ll);
    assert_int_equal(dpas_schedule_traffic(DPAS_SCHED_ALLREDUCE, &s, NULL, 0, &tr, &e), DPAS_ERANGE);
    assert_string_equal(e.field, "messages");
    /* N = 2^62: 2(N - 1) = 2^63 - 2 fits; bytes = 2(N-1)/N = 1 + (2^61 - 1)/2^61 B (F(2 * (2**62 -
     * 1), 2**62)) */
    s = big_scenario(4611686018427387904ll);
    assert_int_equal(dpas_schedule_traffic(DPAS_SCHED_ALLREDUCE, &s, NULL, 0, &tr, &e), 0);
    assert_int_equal(tr.messages, 9223372036854775806ll);
    assert_int_equal(tr.sent.whole, 1);
    assert_int_equal(tr.sent.frac_num, 2305843009213693951ull);
    assert_int_equal(tr.sent.frac_den, 2305843009213693952ull);
    /* sharded_distance for 8 replicas, krum: 28 distances x 8 B x 14/8 = 392 B of scalars;
     * s x 14/8 = 1.75 B; 14 + 14 latency steps */
    s = big_scenario(8);
    assert_int_equal(dpas_schedule_traffic(DPAS_SCHED_SHARDED_DISTANCE, &s, krum, 0, &tr, &e), 0);
    assert_int_equal(tr.scalars.whole, 392);
    assert_int_equal(tr.sent.whole, 393);
    assert_int_equal(tr.sent.frac_num, 3);
    assert_int_equal(tr.sent.frac_den, 4);
    assert_int_equal(tr.messages, 28);
}

static void test_cost_names_row(void **state)
{
    (void)state;
    /* steps x bytes past 2^64: the error names the field and the row */
    dpas_scenario s = reference_by_hand();
    dpas_cost_opts o = {0};
    dpas_cost *c;
    dpas_error e = {0};
    o.steps = INT64_MAX;
    assert_int_equal(dpas_cost_compute(&s, &o, &c, &e), DPAS_ERANGE);
    assert_string_equal(e.field, "bytes_per_worker");
    assert_msg_contains(e, "under allreduce: bytes_per_worker: ");
}

static void test_inventory_names_row(void **state)
{
    (void)state;
    /* P = 8e18: zero16's 16 B per parameter pass 2^64 bytes (gradient bytes at 2 B do not) */
    dpas_scenario s = reference_by_hand();
    s.parameters = 8000000000000000000ull;
    s.dp_degree = 1;
    s.gradient_bytes_per_param = (dpas_rational){1, 1};
    s.checkpoint_bytes_per_param = (dpas_rational){1, 1};
    s.weight_bytes_per_param = (dpas_rational){0, 0};
    size_t n;
    dpas_error e = {0};
    assert_int_equal(dpas_inventory(&s, NULL, 0, &n, &e), DPAS_ERANGE);
    assert_string_equal(e.field, "zero16");
    assert_msg_contains(e, "zero16: ");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_add_near_one),     cmocka_unit_test(test_absdiff_wide),
        cmocka_unit_test(test_scaled_ranges),    cmocka_unit_test(test_rounded_decimals),
        cmocka_unit_test(test_ratio),            cmocka_unit_test(test_schedule_counts),
        cmocka_unit_test(test_cost_names_row),   cmocka_unit_test(test_inventory_names_row),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
