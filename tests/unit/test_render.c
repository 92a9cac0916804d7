/* SPDX-License-Identifier: Apache-2.0 */
/* Renderers: the JSON of a report parses and carries the seed's keys with exact values; CSV and
 * Markdown have one row per attribute; the error object has mlsysim's three keys. */
#include "check.h"

#include <jansson.h>
#include <stdlib.h>

static json_t *render_json(const dpas_scenario *s, unsigned attrs, int explain)
{
    dpas_report r;
    assert_int_equal(dpas_evaluate(s, &r, NULL), 0);
    dpas_render_opts o = {.format = DPAS_FORMAT_JSON, .attrs = attrs, .explain = explain};
    char *out = dpas_render_report(s, &r, &o, NULL);
    assert_non_null(out);
    json_error_t je;
    json_t *j = json_loads(out, 0, &je);
    if (!j)
        fail_msg("invalid JSON (%s):\n%s", je.text, out);
    dpas_free(out);
    return j;
}

static void test_json_reference(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    json_t *j = render_json(&s, 0, 0);
    json_t *a = json_object_get(j, "attributes");
    assert_int_equal(json_object_size(a), 10);
    assert_int_equal(json_integer_value(json_object_get(a, "accelerators")), 1024);
    assert_int_equal(json_integer_value(json_object_get(a, "nodes")), 128);
    assert_int_equal(json_integer_value(json_object_get(a, "accelerators_per_node")), 8);
    assert_double_exact(json_real_value(json_object_get(a, "accelerators_per_replica")), 8.0);
    assert_int_equal(json_integer_value(json_object_get(a, "gradient_bytes")), 350000000000ll);
    assert_int_equal(json_integer_value(json_object_get(a, "checkpoint_bytes")), 2450000000000ll);
    assert_int_equal(json_integer_value(json_object_get(a, "weight_bytes")), 350000000000ll);
    assert_double_exact(json_real_value(json_object_get(a, "allreduce_factor")), 1.984375);
    assert_int_equal(json_integer_value(json_object_get(a, "gather_factor")), 127);
    assert_double_exact(json_real_value(json_object_get(a, "gather_traffic_ratio")), 64.0);
    json_t *in = json_object_get(j, "inputs");
    assert_int_equal(json_integer_value(json_object_get(json_object_get(in, "workload"), "parameters")),
                     175000000000ll);
    assert_int_equal(json_integer_value(json_object_get(in, "dp_degree")), 128);
    assert_int_equal(json_array_size(json_object_get(j, "warnings")), 0);
    assert_int_equal(json_object_size(json_object_get(j, "undefined")), 0);
    json_decref(j);
}

static void test_json_undefined_and_fraction(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    s.dp_degree = 1;
    s.weight_bytes_per_param = (dpas_rational){0, 0};
    s.parameters = 3504873;
    s.gradient_bytes_per_param = (dpas_rational){4127, 8000};
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    dpas_render_opts o = {.format = DPAS_FORMAT_JSON};
    char *out = dpas_render_report(&s, &r, &o, NULL);
    /* the exact decimal, as a JSON number, not a rounded double */
    assert_non_null(strstr(out, "\"gradient_bytes\": 1808076.358875,"));
    assert_non_null(strstr(out, "\"gradient_bytes_per_param\": 0.515875,"));
    assert_non_null(strstr(out, "\"weight_bytes\": null,"));
    assert_non_null(strstr(out, "\"gather_traffic_ratio\": null\n"));
    assert_non_null(strstr(out, "\"weight_bytes_per_param\": null\n"));
    dpas_free(out);
    json_t *j = render_json(&s, 0, 0);
    json_t *u = json_object_get(j, "undefined");
    assert_string_equal(json_string_value(json_object_get(u, "weight_bytes")),
                        "requires weight_bytes_per_param");
    assert_non_null(json_object_get(u, "gather_traffic_ratio"));
    json_decref(j);
}

static void test_attr_subset(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    json_t *j = render_json(&s, 1u << DPAS_ATTR_GATHER_FACTOR, 1);
    json_t *a = json_object_get(j, "attributes");
    assert_int_equal(json_object_size(a), 1);
    assert_string_equal(json_string_value(json_object_get(json_object_get(j, "equations"), "gather_factor")),
                        "dp_degree - 1 = 128 - 1 = 127");
    json_decref(j);
    /* an undefined attribute asked for by name is an error */
    s.weight_bytes_per_param = (dpas_rational){0, 0};
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    dpas_render_opts o = {.format = DPAS_FORMAT_TEXT, .attrs = 1u << DPAS_ATTR_WEIGHT_BYTES};
    dpas_error e = {0};
    assert_null(dpas_render_report(&s, &r, &o, &e));
    assert_int_equal(e.code, DPAS_EUNDEF);
    assert_string_equal(e.message, "weight_bytes is undefined: requires weight_bytes_per_param");
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_csv_markdown(void **state)
{
    (void)state;
    dpas_scenario s = reference_by_hand();
    dpas_report r;
    assert_int_equal(dpas_evaluate(&s, &r, NULL), 0);
    dpas_render_opts o = {.format = DPAS_FORMAT_CSV};
    char *csv = dpas_render_report(&s, &r, &o, NULL);
    assert_int_equal(count_lines(csv), 11); /* header + 10 attributes */
    assert_non_null(strstr(csv, "attribute,value,unit,note\n"));
    assert_non_null(strstr(csv, "\ngradient_bytes,350000000000,B,\n"));
    assert_non_null(strstr(csv, "\nallreduce_factor,1.984375,1,\n"));
    dpas_free(csv);
    o.format = DPAS_FORMAT_MARKDOWN;
    char *md = dpas_render_report(&s, &r, &o, NULL);
    assert_non_null(strstr(md, "| checkpoint_bytes | 2450000000000 (2.45 TB) | B |  |\n"));
    dpas_free(md);
}

static void test_error_json(void **state)
{
    (void)state;
    dpas_error e = {.code = DPAS_EINVAL};
    snprintf(e.field, sizeof e.field, "dp_degree");
    snprintf(e.message, sizeof e.message, "dp_degree must be >= 1, got \"0\"");
    /* RFC 9457's members (type, title, status, detail), then the extensions code and field */
    char *out = dpas_render_error_json(&e, 0, NULL, NULL);
    assert_string_equal(out, "{\"type\": \"urn:dpas:error:EINVAL\", \"title\": \"invalid input\", "
                             "\"status\": 400, \"detail\": \"dp_degree must be >= 1, got \\\"0\\\"\", "
                             "\"code\": \"EINVAL\", \"field\": \"dp_degree\"}\n");
    dpas_free(out);
    out = dpas_render_error_json(&e, 0, NULL, "give --dp N");
    assert_non_null(strstr(out, "\"field\": \"dp_degree\", \"hint\": \"give --dp N\"}\n"));
    dpas_free(out);
    /* a status of the front end's (a 404 for a path) and the instance asked for */
    out = dpas_render_error_json(&e, 404, "/api/v1/x", NULL);
    assert_non_null(strstr(out, "\"status\": 404, \"detail\": "));
    assert_non_null(strstr(out, "\", \"instance\": \"/api/v1/x\", \"code\": \"EINVAL\""));
    dpas_free(out);
    e.code = DPAS_EPHYSICS; /* the CLI's exit 2: HTTP 422 */
    out = dpas_render_error_json(&e, 0, NULL, NULL);
    assert_non_null(strstr(out, "\"type\": \"urn:dpas:error:EPHYSICS\", \"title\": \"physics "
                                "violation\", \"status\": 422, "));
    dpas_free(out);
}

static void test_list(void **state)
{
    (void)state;
    dpas_registry *reg;
    assert_int_equal(dpas_registry_builtin(&reg, NULL), 0);
    char *out = dpas_render_list(reg, DPAS_KIND_FLEET, DPAS_FORMAT_JSON, NULL);
    json_t *j = json_loads(out, 0, NULL);
    assert_non_null(j);
    /* a list is a document: its version and schema, then the rows */
    assert_string_equal(json_string_value(json_object_get(j, "dpas_version")), DPAS_VERSION);
    assert_int_equal(json_integer_value(json_object_get(j, "schema_version")), 2);
    json_t *rows = json_object_get(j, "rows");
    assert_int_equal(json_array_size(rows), 11);
    json_t *t1k = json_array_get(rows, 4);
    assert_string_equal(json_string_value(json_object_get(t1k, "name")), "Training_1K");
    assert_int_equal(json_integer_value(json_object_get(t1k, "accelerators")), 1024);
    json_decref(j);
    dpas_free(out);
    out = dpas_render_list(reg, -1, DPAS_FORMAT_CSV, NULL);
    assert_non_null(strstr(out, "\nint4,0.5,mlsysim PRECISION_MAP\n"));
    dpas_free(out);
    dpas_registry_free(reg);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_json_reference), cmocka_unit_test(test_json_undefined_and_fraction),
        cmocka_unit_test(test_attr_subset),    cmocka_unit_test(test_csv_markdown),
        cmocka_unit_test(test_error_json),     cmocka_unit_test(test_list),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
