/* SPDX-License-Identifier: Apache-2.0 */
/* The scenario: each attribute of the seed against a hand calculation, undefined attributes,
 * warnings, and every validation error with its message. */
#include "check.h"

#include <math.h>

static void test_reference(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    dpas_report r;
    dpas_error e = {0};
    assert_int_equal(dpas_evaluate(&s, &r, &e), 0);
    assert_int_equal(r.accelerators, 1024); /* the seed's example: 1024.0 */
    assert_int_equal(r.nodes, 128);
    assert_int_equal(r.accelerators_per_node, 8);
    assert_double_exact(r.accelerators_per_replica, 8.0);         /* 1024 / 128 */
    assert_int_equal(r.gradient_bytes.whole, 350000000000ull);    /* 175e9 x 2 */
    assert_int_equal(r.checkpoint_bytes.whole, 2450000000000ull); /* 175e9 x 14 */
    assert_int_equal(r.weight_bytes.whole, 350000000000ull);
    assert_int_equal(r.gradient_bytes.frac_num, 0);
    assert_double_exact(r.allreduce_factor, 1.984375); /* 2 x 127 / 128 */
    assert_int_equal(r.gather_factor, 127);
    assert_double_exact(r.gather_traffic_ratio, 64.0); /* 127 / 1.984375 = 128 / 2 */
    assert_int_equal(r.undefined, 0);
    assert_int_equal(r.warnings, 0);
}

static void test_issue_example(void **state)
{
    (void)state;
    /* --params 70.6e9 --nodes 12 --accelerators-per-node 8 --dp 96 --grad bf16 --ckpt 14B */
    dpas_scenario s = {0};
    s.parameters = 70600000000ull;
    s.nodes = 12;
    s.accelerators_per_node = 8;
    s.dp_degree = 96;
    s.gradient_bytes_per_param = (dpas_rational){2, 1};
    s.checkpoint_bytes_per_param = (dpas_rational){14, 1};
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    assert_int_equal(r.accelerators, 96);
    assert_double_exact(r.accelerators_per_replica, 1.0);
    assert_int_equal(r.gradient_bytes.whole, 141200000000ull);   /* 70.6e9 x 2 */
    assert_int_equal(r.checkpoint_bytes.whole, 988400000000ull); /* 70.6e9 x 14 */
    assert_double_exact(r.allreduce_factor, 190.0 / 96.0);       /* 2 x 95 / 96 */
    assert_int_equal(r.gather_factor, 95);
    assert_double_exact(r.gather_traffic_ratio, 48.0);
    assert_int_equal(r.undefined, 1u << DPAS_ATTR_WEIGHT_BYTES);
    dpas_value v;
    dpas_error e = {0};
    assert_int_equal(dpas_report_get(&r, DPAS_ATTR_WEIGHT_BYTES, &v, &e), DPAS_EUNDEF);
    assert_string_equal(e.message, "weight_bytes is undefined: requires weight_bytes_per_param");
    assert_string_equal(e.field, "weight_bytes");
}

static void test_single_replica(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    s.dp_degree = 1;
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    assert_double_exact(r.allreduce_factor, 0.0);
    assert_int_equal(r.gather_factor, 0);
    assert_double_exact(r.accelerators_per_replica, 1024.0);
    assert_int_equal(r.undefined, 1u << DPAS_ATTR_GATHER_TRAFFIC_RATIO);
    dpas_value v;
    dpas_error e = {0};
    assert_int_equal(dpas_report_get(&r, DPAS_ATTR_GATHER_TRAFFIC_RATIO, &v, &e), DPAS_EUNDEF);
    assert_msg_contains(e, "gather_traffic_ratio is undefined: requires more than one replica");
    assert_non_null(dpas_report_undefined_reason(&r, DPAS_ATTR_GATHER_TRAFFIC_RATIO));
    assert_null(dpas_report_undefined_reason(&r, DPAS_ATTR_GATHER_FACTOR));
}

static void test_ratio_is_half_n(void **state)
{
    (void)state;
    /* gather_traffic_ratio = (N-1) / (2(N-1)/N) = N/2 for every N > 1 */
    dpas_scenario s = reference_by_hand();
    for (int64_t n = 2; n <= 1024; n++) {
        s.dp_degree = n;
        dpas_report r;
        assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
        assert_double_exact(r.gather_traffic_ratio, (double)n / 2);
        assert_double_exact(r.allreduce_factor, 2.0 * (double)(n - 1) / (double)n);
        assert_int_equal(r.gather_factor, n - 1);
    }
}

static void test_unequal_replicas(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    s.dp_degree = 96; /* 1024 / 96 is not whole */
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    assert_int_equal(r.warnings, DPAS_WARN_UNEQUAL_REPLICAS);
    assert_double_exact(r.accelerators_per_replica, 1024.0 / 96.0);
    char w[300];
    dpas_warning_message(&r, DPAS_WARN_UNEQUAL_REPLICAS, w, sizeof w);
    assert_non_null(strstr(w, "dp_degree 96 does not divide accelerators 1024"));
}

static void test_fractional_bytes(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    s.parameters = 3504873;                                   /* odd */
    s.gradient_bytes_per_param = (dpas_rational){4127, 8000}; /* 4.127 bit */
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    /* 3504873 x 4127 = 14464610871; / 8000 = 1808076 rem 2871 */
    assert_int_equal(r.gradient_bytes.whole, 1808076);
    assert_int_equal(r.gradient_bytes.frac_num, 2871);
    assert_int_equal(r.gradient_bytes.frac_den, 8000);
    char t[64];
    dpas_format_bytes_exact(r.gradient_bytes, t, sizeof t);
    assert_string_equal(t, "1808076.358875");
}

static void invalid(dpas_scenario s, int code, const char *field, const char *message)
{
    dpas_report r;
    dpas_error e = {0};
    int rc = dpas_evaluate(&s, &r, &e);
    if (rc != code)
        fail_msg("expected %d, got %d (%s)", code, rc, e.message);
    assert_string_equal(e.field, field);
    assert_msg_contains(e, message);
}

static void test_validation(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    s.dp_degree = 0;
    invalid(s, DPAS_EINVAL, "dp_degree", "dp_degree must be >= 1, got 0");
    s.dp_degree = -4;
    invalid(s, DPAS_EINVAL, "dp_degree", "dp_degree must be >= 1, got -4");
    s.dp_degree = 1025;
    invalid(s, DPAS_EINVAL, "dp_degree", "dp_degree must be <= accelerators (1024), got 1025");
    s = reference_by_hand();
    s.nodes = 0;
    invalid(s, DPAS_EINVAL, "nodes", "nodes must be >= 1, got 0");
    s = reference_by_hand();
    s.accelerators_per_node = -1;
    invalid(s, DPAS_EINVAL, "accelerators_per_node", "accelerators_per_node must be >= 1, got -1");
    s = reference_by_hand();
    s.parameters = 0;
    invalid(s, DPAS_EINVAL, "parameters", "parameters must be >= 1, got 0");
    s = reference_by_hand();
    s.gradient_bytes_per_param = (dpas_rational){0, 1};
    invalid(s, DPAS_EINVAL, "gradient_bytes_per_param", "gradient_bytes_per_param must be > 0");
    s = reference_by_hand();
    s.checkpoint_bytes_per_param = (dpas_rational){0, 0};
    invalid(s, DPAS_EINVAL, "checkpoint_bytes_per_param", "checkpoint_bytes_per_param must be > 0");
    s = reference_by_hand();
    s.weight_bytes_per_param = (dpas_rational){0, 5};
    invalid(s, DPAS_EINVAL, "weight_bytes_per_param", "weight_bytes_per_param must be > 0");
    s = reference_by_hand();
    s.nodes = INT64_MAX / 2;
    s.accelerators_per_node = 3;
    invalid(s, DPAS_ERANGE, "accelerators", "overflows");
    s = reference_by_hand();
    s.parameters = 1ull << 62;
    s.checkpoint_bytes_per_param = (dpas_rational){16, 1}; /* 2^66 bytes */
    invalid(s, DPAS_ERANGE, "checkpoint_bytes", "checkpoint_bytes: ");
    invalid(reference_by_hand(), 0, "", "");
}

static void test_attr_metadata(void **state)
{
    (void)state;
    /* the seed's attribute names, in the seed's order of detail sections */
    static const char *names[] = {"accelerators",          "nodes",
                                  "accelerators_per_node", "accelerators_per_replica",
                                  "gradient_bytes",        "checkpoint_bytes",
                                  "weight_bytes",          "allreduce_factor",
                                  "gather_factor",         "gather_traffic_ratio"};
    assert_int_equal(DPAS_ATTR_COUNT, 10);
    for (int a = 0; a < DPAS_ATTR_COUNT; a++) {
        assert_string_equal(dpas_attr_name(a), names[a]);
        assert_int_equal(dpas_attr_from_name(names[a]), a);
        assert_non_null(dpas_attr_equation(a));
        assert_non_null(dpas_attr_description(a));
    }
    assert_int_equal(dpas_attr_from_name("nope"), -1);
    assert_null(dpas_attr_name(DPAS_ATTR_COUNT));
    assert_string_equal(dpas_attr_equation(DPAS_ATTR_GATHER_FACTOR), "dp_degree - 1");
    assert_string_equal(dpas_attr_equation(DPAS_ATTR_ALLREDUCE_FACTOR),
                        "calc_ring_allreduce_data_factor(dp_degree)");
    assert_string_equal(dpas_attr_equation(DPAS_ATTR_GATHER_TRAFFIC_RATIO),
                        "gather_factor / allreduce_factor");
    assert_string_equal(dpas_attr_equation(DPAS_ATTR_ACCELERATORS), "fleet.total_accelerators");
    assert_int_equal(dpas_attr_kind(DPAS_ATTR_GRADIENT_BYTES), DPAS_VALUE_BYTES);
    assert_int_equal(dpas_attr_kind(DPAS_ATTR_GATHER_FACTOR), DPAS_VALUE_INT);
    assert_int_equal(dpas_attr_kind(DPAS_ATTR_ALLREDUCE_FACTOR), DPAS_VALUE_REAL);
}

static void test_report_get(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    dpas_value v;
    assert_int_equal(dpas_report_get(&r, DPAS_ATTR_ACCELERATORS, &v, NULL), 0);
    assert_int_equal(v.kind, DPAS_VALUE_INT);
    assert_int_equal(v.i, 1024);
    assert_double_exact(v.r, 1024.0);
    assert_int_equal(dpas_report_get(&r, DPAS_ATTR_CHECKPOINT_BYTES, &v, NULL), 0);
    assert_int_equal(v.kind, DPAS_VALUE_BYTES);
    assert_int_equal(v.bytes.whole, 2450000000000ull);
    assert_double_exact(v.r, 2.45e12);
    assert_int_equal(dpas_report_get(&r, DPAS_ATTR_ALLREDUCE_FACTOR, &v, NULL), 0);
    assert_double_exact(v.r, 1.984375);
    assert_int_equal(dpas_report_get(&r, DPAS_ATTR_COUNT, &v, NULL), DPAS_EINVAL);
    assert_string_equal(dpas_strerror(DPAS_EUNDEF), "undefined attribute");
    assert_string_equal(dpas_strerror(12345), "unknown error");
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_reference),        cmocka_unit_test(test_issue_example),
        cmocka_unit_test(test_single_replica),   cmocka_unit_test(test_ratio_is_half_n),
        cmocka_unit_test(test_unequal_replicas), cmocka_unit_test(test_fractional_bytes),
        cmocka_unit_test(test_validation),       cmocka_unit_test(test_attr_metadata),
        cmocka_unit_test(test_report_get),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
