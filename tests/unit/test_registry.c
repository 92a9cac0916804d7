/* SPDX-License-Identifier: Apache-2.0 */
/* The registry: every entry of shared/reference/registry.md, resolution by path and short name,
 * "did you mean" on a typo, and load errors. Expected values are that table's, by hand. */
#include "check.h"

#include <stdlib.h>

REGISTRY_FIXTURE

static const void *find(dpas_kind kind, const char *name)
{
    const void *p = NULL;
    dpas_error e = {0};
    if (dpas_registry_find(reg, kind, name, &p, &e))
        fail_msg("find %s: %s", name, e.message);
    return p;
}

static void test_counts(void **state)
{
    (void)state;
    assert_int_equal(dpas_registry_count(reg, DPAS_KIND_MODEL), 29);
    assert_int_equal(dpas_registry_count(reg, DPAS_KIND_HARDWARE), 4);
    assert_int_equal(dpas_registry_count(reg, DPAS_KIND_NODE), 5);
    assert_int_equal(dpas_registry_count(reg, DPAS_KIND_FABRIC), 10);
    assert_int_equal(dpas_registry_count(reg, DPAS_KIND_FLEET), 11);
    assert_int_equal(dpas_registry_count(reg, DPAS_KIND_SCENARIO), 1);
    assert_null(dpas_registry_at(reg, DPAS_KIND_MODEL, 29));
    assert_null(dpas_registry_at(reg, DPAS_KIND_COUNT, 0));
}

static void test_models(void **state)
{
    (void)state;
    static const struct { const char *path; uint64_t params; } table[] = {
        {"Models.Language.BERT_Base", 110000000ull},
        {"Models.Language.BERT_Large", 340000000ull},
        {"Models.Language.GPT2_Small", 124000000ull},
        {"Models.Language.GPT2", 1500000000ull},
        {"Models.Language.GPT3", 175000000000ull},
        {"Models.Language.GPT4", 1760000000000ull},
        {"Models.Language.Llama2_7B", 7000000000ull},
        {"Models.Language.Llama2_70B", 70000000000ull},
        {"Models.Language.Llama3_8B", 8030000000ull},
        {"Models.Language.Llama3_70B", 70600000000ull},
        {"Models.Language.Llama3_405B", 405000000000ull},
        {"Models.Language.Mixtral_8x7B", 46700000000ull},
        {"Models.Language.DeepSeek_V3", 671000000000ull},
        {"Models.Vision.LeNet1", 10000ull},
        {"Models.Vision.AlexNet", 60000000ull},
        {"Models.Vision.ResNet18", 11700000ull},
        {"Models.Vision.ResNet50", 25600000ull},
        {"Models.Vision.MobileNetV2", 3504872ull},
        {"Models.Vision.MobileNetV2_Alpha0_5", 1968680ull},        /* mlsysim's vision.yaml */
        {"Models.Vision.MobileNetV2_Alpha0_5FeatureExtractor", 687680ull},
        {"Models.Vision.EfficientNetB0", 5300000ull},
        {"Models.Vision.YOLOv8_Nano", 3200000ull},
        {"Models.Tiny.DS_CNN", 200000ull},
        {"Models.Tiny.WakeVision", 250000ull},
        {"Models.Tiny.AnomalyDetector", 270000ull},
        {"Models.StateSpace.Mamba_130M", 130000000ull},
        {"Models.StateSpace.Mamba_2_8B", 2800000000ull},
        {"Models.GenerativeVision.StableDiffusion_v1_5", 860000000ull},
        {"Models.Recommendation.DLRM", 0},
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++) {
        const dpas_model *m = find(DPAS_KIND_MODEL, table[i].path);
        assert_string_equal(m->path, table[i].path);
        assert_int_equal(m->parameters, table[i].params);
        assert_non_null(m->source);
        /* the short name resolves to the same entry */
        const char *dot = strrchr(table[i].path, '.');
        assert_ptr_equal(find(DPAS_KIND_MODEL, dot + 1), m);
        assert_string_equal(m->name, dot + 1);
    }
    const dpas_model *gpt4 = find(DPAS_KIND_MODEL, "GPT4");
    assert_int_equal(gpt4->active_parameters, 280000000000ull);
    const dpas_model *dlrm = find(DPAS_KIND_MODEL, "DLRM");
    assert_non_null(dlrm->missing);
    assert_non_null(strstr(dlrm->missing, "100 GB"));
    /* case slips resolve when unambiguous */
    assert_ptr_equal(find(DPAS_KIND_MODEL, "gpt3"), find(DPAS_KIND_MODEL, "GPT3"));
    assert_ptr_equal(find(DPAS_KIND_MODEL, "models.language.llama3_70b"),
                     find(DPAS_KIND_MODEL, "Llama3_70B"));
}

static void test_hardware_nodes_fabrics(void **state)
{
    (void)state;
    const dpas_hardware *h = find(DPAS_KIND_HARDWARE, "H100");
    assert_int_equal(h->memory.whole, 85899345920ull); /* 80 GiB = 80 x 2^30 */
    assert_double_exact(h->peak_flops, 989e12);
    assert_double_exact(h->hbm_bandwidth, 3350e9);
    assert_double_exact(h->nvlink_bandwidth, 900e9);
    assert_double_exact(h->tdp_watts, 700);
    const dpas_hardware *b = find(DPAS_KIND_HARDWARE, "Hardware.Cloud.B200");
    assert_int_equal(b->memory.whole, 206158430208ull); /* 192 x 2^30 */
    assert_double_exact(b->peak_flops, 2250e12);
    const dpas_hardware *a = find(DPAS_KIND_HARDWARE, "A100");
    assert_double_exact(a->hbm_bandwidth, 2039e9);
    assert_double_exact(a->tdp_watts, 400);

    const dpas_node *n = find(DPAS_KIND_NODE, "DGX_H100");
    assert_ptr_equal(n->accelerator, h);
    assert_int_equal(n->accelerators_per_node, 8);
    assert_double_exact(n->intra_bandwidth, 450e9);
    assert_double_exact(n->intra_latency, 500e-9);
    const dpas_node *k = find(DPAS_KIND_NODE, "Kempner_H100_4GPU");
    assert_int_equal(k->accelerators_per_node, 4);
    assert_true(find(DPAS_KIND_NODE, "DGX_A100") != NULL);
    /* Polaris (ALCF's machine overview): 4 A100 40GB per node, 40 x 2^30 B at 1,555 GB/s (NVIDIA's
     * datasheet), each GPU with 4 NVLink 3 links of 25 GB/s to each of the 3 others: 300 GB/s */
    const dpas_node *p = find(DPAS_KIND_NODE, "Polaris_A100_4GPU");
    assert_int_equal(p->accelerators_per_node, 4);
    assert_double_exact(p->intra_bandwidth, 3 * 4 * 25e9);
    assert_int_equal(p->accelerator->memory.whole, 40ull << 30);
    assert_double_exact(p->accelerator->hbm_bandwidth, 1555e9);
    assert_double_exact(p->accelerator->peak_flops, 312e12);
    assert_true(((const dpas_node *)find(DPAS_KIND_NODE, "DGX_B200"))->intra_bandwidth == 900e9);

    /* Gbps = 10^9 bit/s: 200 Gbps = 25e9 B/s */
    const dpas_fabric *hdr = find(DPAS_KIND_FABRIC, "InfiniBand_HDR");
    assert_double_exact(hdr->bandwidth, 25e9);
    assert_double_exact(hdr->latency, 7e-6);
    const dpas_fabric *e10 = find(DPAS_KIND_FABRIC, "Ethernet_10G");
    assert_double_exact(e10->bandwidth, 1.25e9);
    assert_true(e10->latency == 50e-6);
    const dpas_fabric *roce = find(DPAS_KIND_FABRIC, "RoCE_100G");
    assert_double_exact(roce->latency, 10e-6);
    const dpas_fabric *gx = find(DPAS_KIND_FABRIC, "InfiniBand_GXDR");
    assert_double_exact(gx->bandwidth, 200e9);
    assert_string_equal(gx->topology, "fat-tree");
}

static void test_fleets(void **state)
{
    (void)state;
    static const struct { const char *name, *node; int64_t count, acc; const char *fabric; } t[] = {
        {"Lab_64_H100", "DGX_H100", 8, 64, "InfiniBand_HDR"},
        {"Research_256", "DGX_H100", 32, 256, "Ethernet_100G"},
        {"Kempner_H100_384", "Kempner_H100_4GPU", 96, 384, "InfiniBand_NDR"},
        {"Training_512_H100", "DGX_H100", 64, 512, "InfiniBand_HDR"},
        {"Training_1K", "DGX_H100", 128, 1024, "InfiniBand_HDR"},
        {"Training_1K_A100", "DGX_A100", 128, 1024, "InfiniBand_HDR"},
        {"Production_2K", "DGX_H100", 256, 2048, "InfiniBand_HDR"},
        {"Frontier_8K", "DGX_H100", 1024, 8192, "InfiniBand_NDR"},
        {"Training_10K", "DGX_H100", 1250, 10000, "InfiniBand_NDR"},
        {"Reference_25K_H100", "DGX_H100", 3125, 25000, "InfiniBand_NDR"},
        {"Mega_100K", "DGX_H100", 12500, 100000, "InfiniBand_NDR"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        const dpas_fleet *f = find(DPAS_KIND_FLEET, t[i].name);
        assert_string_equal(f->node->name, t[i].node);
        assert_int_equal(f->count, t[i].count);
        assert_int_equal(f->count * f->node->accelerators_per_node, t[i].acc);
        assert_string_equal(f->fabric->name, t[i].fabric);
    }
    assert_ptr_equal(find(DPAS_KIND_FLEET, "Systems.Clusters.Training_1K"),
                     find(DPAS_KIND_FLEET, "Training_1K"));
}

static void test_reference_scenario(void **state)
{
    (void)state;
    const dpas_named_scenario *n = find(DPAS_KIND_SCENARIO, "Scenarios.ReferenceJobAttackSurface");
    assert_ptr_equal(n, find(DPAS_KIND_SCENARIO, "ReferenceJobAttackSurface"));
    const dpas_scenario *s = &n->scenario;
    assert_string_equal(s->workload, "Models.Language.GPT3");
    assert_int_equal(s->parameters, 175000000000ull);
    assert_string_equal(s->fleet, "Systems.Clusters.Training_1K");
    assert_int_equal(s->nodes, 128);
    assert_int_equal(s->accelerators_per_node, 8);
    assert_int_equal(s->dp_degree, 128);
    assert_rational(s->gradient_bytes_per_param, 2, 1);
    assert_rational(s->checkpoint_bytes_per_param, 14, 1);
    assert_rational(s->weight_bytes_per_param, 2, 1);
    assert_string_equal(s->fabric_entry->name, "InfiniBand_HDR");
    assert_string_equal(s->node_entry->name, "DGX_H100");
}

static void test_unknown_names(void **state)
{
    (void)state;
    const void *p;
    dpas_error e = {0};
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_MODEL, "GTP3", &p, &e), DPAS_ENOENT);
    assert_string_equal(e.field, "model");
    assert_msg_contains(e, "unknown model \"GTP3\"; closest: GPT3");
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_FLEET, "Training1K", &p, &e), DPAS_ENOENT);
    assert_msg_contains(e, "closest: Training_1K");
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_FLEET, "", &p, &e), DPAS_EINVAL);
    /* a path of another kind is not a fleet */
    assert_int_equal(dpas_registry_find(reg, DPAS_KIND_FLEET, "GPT3", &p, &e), DPAS_ENOENT);
}

static void load_error(const char *json, int code, const char *needle)
{
    dpas_registry *r = NULL;
    dpas_error e = {0};
    int rc = dpas_registry_load_json(json, strlen(json), &r, &e);
    if (rc != code)
        fail_msg("expected %d, got %d (%s)", code, rc, e.message);
    assert_null(r);
    assert_msg_contains(e, needle);
}

static void test_load_errors(void **state)
{
    (void)state;
    load_error("{", DPAS_EPARSE, "registry:");
    load_error("{\"models\": 3}", DPAS_EPARSE, "models must be an array");
    load_error("{\"models\": [{\"source\": \"x\"}]}", DPAS_EPARSE, "models[0].path: is required");
    load_error("{\"models\": [{\"path\": \"A.B\", \"source\": \"x\", \"parameters\": \"1.5\"}]}",
               DPAS_EPARSE, "whole number");
    load_error("{\"models\": [{\"path\": \"A.B\", \"source\": \"x\"}]}", DPAS_EPARSE,
               "parameters: is required");
    load_error("{\"models\": [{\"path\": \"A.B\", \"source\": \"x\", \"parameters\": \"1\"},"
               "{\"path\": \"C.b\", \"source\": \"x\", \"parameters\": \"2\"}]}",
               DPAS_EPARSE, "short name b is also A.B");
    load_error("{\"fleets\": [{\"path\": \"F\", \"source\": \"x\", \"node\": \"N\", \"fabric\": "
               "\"X\", \"count\": 1}]}",
               DPAS_EPARSE, "fleets[0].node: unknown node");
    load_error("{\"a\": 1, \"a\": 2}", DPAS_EPARSE, "duplicate");
    /* an empty registry is valid */
    dpas_registry *r = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_registry_load_json("{}", 2, &r, &e), 0);
    assert_int_equal(dpas_registry_count(r, DPAS_KIND_MODEL), 0);
    dpas_registry_free(r);
    dpas_registry_free(NULL);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_counts),          cmocka_unit_test(test_models),
        cmocka_unit_test(test_hardware_nodes_fabrics), cmocka_unit_test(test_fleets),
        cmocka_unit_test(test_reference_scenario), cmocka_unit_test(test_unknown_names),
        cmocka_unit_test(test_load_errors),
    };
    return cmocka_run_group_tests(tests, registry_setup, registry_teardown);
}
