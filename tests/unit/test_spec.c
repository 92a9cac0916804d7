/* SPDX-License-Identifier: Apache-2.0 */
/* Scenario inputs from YAML, JSON and flags: exact reading, overrides, and the errors of each. */
#include "check.h"

REGISTRY_FIXTURE

/* Load text (is_json -1: guess) and resolve; returns the code, fills s and e. */
static int load(const char *text, int is_json, dpas_scenario *s, dpas_error *e, dpas_spec **keep)
{
    dpas_spec *spec = dpas_spec_new();
    memset(e, 0, sizeof *e);
    int rc = dpas_spec_load_text(spec, text, strlen(text), is_json, "t.yaml", e);
    if (!rc)
        rc = dpas_spec_resolve(spec, reg, s, e);
    if (keep)
        *keep = spec;
    else
        dpas_spec_free(spec);
    return rc;
}

static void test_yaml_inline(void **state)
{
    (void)state;
    dpas_scenario s;
    dpas_error e;
    dpas_spec *spec;
    const char *y = "name: my job\n"
                    "workload: {name: mine, parameters: 70.6e9}\n"
                    "fleet:\n"
                    "  nodes: 12\n"
                    "  accelerators_per_node: 8\n"
                    "dp_degree: 96\n"
                    "gradient_bytes_per_param: bf16\n"
                    "checkpoint_bytes_per_param: 14 B\n"
                    "weight_bytes_per_param: 4.127 bit\n";
    assert_int_equal(load(y, -1, &s, &e, &spec), 0);
    assert_int_equal(s.parameters, 70600000000ull);
    assert_string_equal(s.workload, "mine");
    assert_int_equal(s.nodes, 12);
    assert_int_equal(s.accelerators_per_node, 8);
    assert_int_equal(s.dp_degree, 96);
    assert_rational(s.gradient_bytes_per_param, 2, 1);
    assert_rational(s.checkpoint_bytes_per_param, 14, 1);
    assert_rational(s.weight_bytes_per_param, 4127, 8000);
    assert_null(s.fleet_entry);
    assert_string_equal(dpas_spec_label(spec), "my job");
    dpas_spec_free(spec);
}

static void test_yaml_registry_names(void **state)
{
    (void)state;
    dpas_scenario s;
    dpas_error e;
    const char *y = "workload: Llama3_70B\nfleet: Systems.Clusters.Lab_64_H100\ndp_degree: 8\n"
                    "gradient_bytes_per_param: 2 bytes\ncheckpoint_bytes_per_param: \"14B\"\n"
                    "weight_bytes_per_param: null\n";
    assert_int_equal(load(y, -1, &s, &e, NULL), 0);
    assert_int_equal(s.parameters, 70600000000ull);
    assert_string_equal(s.workload, "Models.Language.Llama3_70B");
    assert_int_equal(s.nodes, 8);
    assert_int_equal(s.accelerators_per_node, 8);
    assert_string_equal(s.fabric_entry->name, "InfiniBand_HDR");
    assert_int_equal(s.weight_bytes_per_param.den, 0);
}

static void test_json(void **state)
{
    (void)state;
    dpas_scenario s;
    dpas_error e;
    /* 70.6e9 arrives as a double; 4.127 too: both are read back exactly */
    const char *j = "{\"workload\": {\"parameters\": 70.6e9}, \"fleet\": {\"node\": \"DGX_B200\", "
                    "\"count\": 4, \"fabric\": \"InfiniBand_XDR\"}, \"dp_degree\": 32, "
                    "\"gradient_bytes_per_param\": \"4.127 bit\", \"checkpoint_bytes_per_param\": "
                    "\"12 B\"}";
    assert_int_equal(load(j, 1, &s, &e, NULL), 0);
    assert_int_equal(s.parameters, 70600000000ull);
    assert_int_equal(s.nodes, 4);
    assert_int_equal(s.accelerators_per_node, 8);
    assert_string_equal(s.node_entry->name, "DGX_B200");
    assert_string_equal(s.fabric_entry->name, "InfiniBand_XDR");
    assert_rational(s.gradient_bytes_per_param, 4127, 8000);
    assert_rational(s.checkpoint_bytes_per_param, 12, 1);
    assert_int_equal(s.weight_bytes_per_param.den, 0);
}

static void test_base_scenario_and_flags(void **state)
{
    (void)state;
    dpas_spec *spec = dpas_spec_new();
    dpas_error e = {0};
    dpas_scenario s;
    assert_int_equal(dpas_spec_set(spec, "scenario", "ReferenceJobAttackSurface", NULL, &e), 0);
    assert_int_equal(dpas_spec_set(spec, "dp_degree", "64", "--dp", &e), 0);
    assert_int_equal(dpas_spec_set(spec, "weight_bytes_per_param", NULL, "--weights", &e), 0);
    assert_int_equal(dpas_spec_resolve(spec, reg, &s, &e), 0);
    assert_int_equal(s.parameters, 175000000000ull);
    assert_int_equal(s.dp_degree, 64);
    assert_int_equal(s.weight_bytes_per_param.den, 0);
    assert_string_equal(s.fleet, "Systems.Clusters.Training_1K");
    /* a --nodes override keeps the node and fabric but is no longer the registry fleet */
    assert_int_equal(dpas_spec_set(spec, "nodes", "64", "--nodes", &e), 0);
    assert_int_equal(dpas_spec_resolve(spec, reg, &s, &e), 0);
    assert_int_equal(s.nodes, 64);
    assert_null(s.fleet_entry);
    assert_string_equal(s.fabric_entry->name, "InfiniBand_HDR");
    assert_non_null(strstr(s.fleet, "Training_1K (modified: 64 x 8)"));
    assert_int_equal(dpas_spec_set(spec, "bogus", "1", NULL, &e), DPAS_EINVAL);
    dpas_spec_free(spec);
}

static void test_file_then_flag(void **state)
{
    (void)state;
    dpas_spec *spec = dpas_spec_new();
    dpas_error e = {0};
    dpas_scenario s;
    const char *y = "workload: GPT3\nfleet: {nodes: 2, accelerators_per_node: 4}\ndp_degree: 8\n"
                    "gradient_bytes_per_param: fp32\ncheckpoint_bytes_per_param: 16 B\n";
    assert_int_equal(dpas_spec_load_text(spec, y, strlen(y), 0, "f.yaml", &e), 0);
    assert_int_equal(dpas_spec_set(spec, "parameters", "7B", "--params", &e), 0);
    assert_int_equal(dpas_spec_set(spec, "fleet", "Lab_64_H100", "--fleet", &e), 0);
    assert_int_equal(dpas_spec_resolve(spec, reg, &s, &e), 0);
    assert_int_equal(s.parameters, 7000000000ull);
    assert_int_equal(s.nodes, 8); /* the flag's fleet replaced the file's inline one */
    assert_ptr_not_equal(s.fleet_entry, NULL);
    dpas_spec_free(spec);
}

static void error_case(const char *text, int is_json, int code, const char *needle)
{
    dpas_scenario s;
    dpas_error e;
    int rc = load(text, is_json, &s, &e, NULL);
    if (rc != code)
        fail_msg("expected %d, got %d (%s) for:\n%s", code, rc, e.message, text);
    assert_msg_contains(e, needle);
}

#define GOOD_TAIL "gradient_bytes_per_param: bf16\ncheckpoint_bytes_per_param: 14 B\n"

static void test_errors(void **state)
{
    (void)state;
    error_case("workload: GPT3\nfleet: Training_1K\ndp_degree: 0\n" GOOD_TAIL, 0, DPAS_EINVAL,
               "t.yaml:3:12: dp_degree must be >= 1, got 0");
    error_case("workload: GPT3\nfleet: Training_1K\ndp: 8\n" GOOD_TAIL, 0, DPAS_EPARSE,
               "t.yaml:3:1: unknown key \"dp\"");
    error_case("workload: GPT3\nworkload: GPT2\n", 0, DPAS_EPARSE,
               "t.yaml:2:1: duplicate key \"workload\"");
    error_case("workload: {parameters: 1e9, layers: 3}\n", 0, DPAS_EPARSE,
               "unknown key \"layers\" in workload");
    error_case("fleet: {nodes: 1, gpus: 3}\n", 0, DPAS_EPARSE, "unknown key \"gpus\" in fleet");
    error_case("workload: [1, 2]\n", 0, DPAS_EPARSE, "workload must be a scalar, got a list");
    error_case("dp_degree: true\n", 0, DPAS_EPARSE, "dp_degree must be a scalar, got a boolean");
    error_case("dp_degree:\n", 0, DPAS_EPARSE, "dp_degree must have a value, got null");
    error_case("workload: {name: x}\nfleet: Training_1K\ndp_degree: 8\n" GOOD_TAIL, 0, DPAS_EINVAL,
               "parameters is required");
    error_case("workload: GPT3\nfleet: {nodes: 4}\ndp_degree: 8\n" GOOD_TAIL, 0, DPAS_EINVAL,
               "accelerators_per_node is required");
    error_case("workload: GPT3\nfleet: Training_1K\n" GOOD_TAIL, 0, DPAS_EINVAL,
               "dp_degree is required");
    error_case("workload: GPT3\nfleet: Training_1K\ndp_degree: 8\ngradient_bytes_per_param: bf16\n",
               0, DPAS_EINVAL, "checkpoint_bytes_per_param is required");
    error_case("fleet: Training_1K\ndp_degree: 8\n" GOOD_TAIL, 0, DPAS_EINVAL,
               "workload is required");
    error_case("workload: GPT3\ndp_degree: 8\n" GOOD_TAIL, 0, DPAS_EINVAL, "fleet is required");
    error_case("workload: DLRM\nfleet: Training_1K\ndp_degree: 8\n" GOOD_TAIL, 0, DPAS_EINVAL,
               "t.yaml:1:11: workload Models.Recommendation.DLRM has no parameter count");
    error_case("workload: GPT-3\n", 0, DPAS_ENOENT, "");
    error_case("workload: GPT3\nfleet: Training_1K\ndp_degree: 8\ngradient_bytes_per_param: 2\n"
               "checkpoint_bytes_per_param: 14 B\n",
               0, DPAS_EPARSE, "t.yaml:4:27: gradient_bytes_per_param: \"2\" has no unit");
    error_case("workload: {parameters: -7}\nfleet: Training_1K\ndp_degree: 8\n" GOOD_TAIL, 0,
               DPAS_EINVAL, "workload.parameters must be >= 1, got -7");
    error_case("workload: {parameters: 0}\nfleet: Training_1K\ndp_degree: 8\n" GOOD_TAIL, 0,
               DPAS_EINVAL, "workload.parameters must be >= 1, got 0");
    error_case(
        "workload: GPT3\nfleet: {nodes: 0, accelerators_per_node: 8}\ndp_degree: 8\n" GOOD_TAIL, 0,
        DPAS_EINVAL, "t.yaml:2:16: nodes must be >= 1, got 0");
    error_case("workload: {parameters: 1e9\n", 0, DPAS_EPARSE, "malformed YAML");
    error_case("- 1\n- 2\n", 0, DPAS_EPARSE, "top level must be a mapping");
    error_case("   \n\n", 0, DPAS_EPARSE, "the file is empty");
    error_case("# only a comment\n", 0, DPAS_EPARSE, "the file is empty");
    error_case("workload: \"\xff\xfe\"\n", 0, DPAS_EPARSE, "malformed YAML");
    /* JSON */
    error_case("{\"workload\": \"GPT3\", \"workload\": \"GPT2\"}", 1, DPAS_EPARSE, "duplicate");
    error_case("{\"workload\": ", 1, DPAS_EPARSE, "malformed JSON");
    error_case("[1]", 1, DPAS_EPARSE, "top level must be an object");
    error_case("{\"workload\": {\"parameters\": 1.2345678901234567e9}}", 1, DPAS_EPARSE,
               "more than 15 significant digits");
    error_case("{\"dp_degree\": null}", 1, DPAS_EPARSE, "dp_degree must have a value");
    error_case("{\"fleet\": {\"nodes\": {\"x\": 1}}}", 1, DPAS_EPARSE,
               "fleet.nodes must be a scalar");
}

static void test_files(void **state)
{
    (void)state;
    dpas_spec *spec = dpas_spec_new();
    dpas_error e = {0};
    assert_int_equal(dpas_spec_load_file(spec, "/nonexistent/x.yaml", &e), DPAS_EIO);
    assert_msg_contains(e, "cannot read scenario file /nonexistent/x.yaml");
    assert_int_equal(dpas_spec_load_file(spec, "/", &e), DPAS_EIO);
    assert_msg_contains(e, "it is a directory");
    dpas_spec_free(spec);
    dpas_spec_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_yaml_inline),    cmocka_unit_test(test_yaml_registry_names),
        cmocka_unit_test(test_json),           cmocka_unit_test(test_base_scenario_and_flags),
        cmocka_unit_test(test_file_then_flag), cmocka_unit_test(test_errors),
        cmocka_unit_test(test_files),
    };
    return cmocka_run_group_tests(tests, registry_setup, registry_teardown);
}
