/* SPDX-License-Identifier: Apache-2.0 */
/* Listings: one table per registry kind, the precisions and the request's keys, through the
 * writer. */
#include "../internal.h"

#include <stdio.h>
#include <stdlib.h>

static dpas_cell width_cell(dpas_rational w)
{
    if (!w.den)
        return dpas_cell_null();
    dpas_bytes x = {w.num / w.den, w.num % w.den, w.den};
    if (!x.frac_num)
        x.frac_den = 1;
    return dpas_cell_bytes(x);
}

static dpas_cell count_cell(uint64_t v) { return v ? dpas_cell_uint(v) : dpas_cell_null(); }

#define T DPAS_COL_TEXT
#define R DPAS_COL_REAL
static const dpas_column precision_cols[] = {
    {"name", T, 0}, {"bytes_per_param", DPAS_COL_BYTES, 0}, {"source", T, 0}};
static const dpas_column model_cols[] = {{"path", T, 0},
                                         {"name", T, 0},
                                         {"parameters", DPAS_COL_UINT, 0},
                                         {"active_parameters", DPAS_COL_UINT, 0},
                                         {"display", T, 0}};
static const dpas_column hardware_cols[] = {{"path", T, 0},
                                            {"name", T, 0},
                                            {"memory_bytes", DPAS_COL_BYTES, 0},
                                            {"peak_flops", R, 0},
                                            {"hbm_bytes_per_s", R, 0},
                                            {"nvlink_bytes_per_s", R, 0},
                                            {"tdp_watts", R, 0}};
static const dpas_column node_cols[] = {{"path", T, 0},
                                        {"name", T, 0},
                                        {"accelerator", T, 0},
                                        {"accelerators_per_node", DPAS_COL_INT, 0},
                                        {"intra_bytes_per_s", R, 0},
                                        {"intra_latency_s", R, 0}};
static const dpas_column fabric_cols[] = {
    {"path", T, 0}, {"name", T, 0}, {"bytes_per_s", R, 0}, {"latency_s", R, 0}, {"topology", T, 0}};
static const dpas_column fleet_cols[] = {{"path", T, 0},
                                         {"name", T, 0},
                                         {"node", T, 0},
                                         {"nodes", DPAS_COL_INT, 0},
                                         {"accelerators", DPAS_COL_INT, 0},
                                         {"fabric", T, 0}};
static const dpas_column scenario_cols[] = {{"path", T, 0},
                                            {"name", T, 0},
                                            {"workload", T, 0},
                                            {"fleet", T, 0},
                                            {"dp_degree", DPAS_COL_INT, 0},
                                            {"gradient_bytes_per_param", DPAS_COL_BYTES, 0},
                                            {"checkpoint_bytes_per_param", DPAS_COL_BYTES, 0},
                                            {"weight_bytes_per_param", DPAS_COL_BYTES, 0}};
static const dpas_column key_cols[] = {{"key", T, 0},
                                       {"alias", T, 0},
                                       {"cli_flag", T, 0},
                                       {"query_parameter", T, 0},
                                       {"python_keyword", T, 0},
                                       {"file_key", T, 0},
                                       {"analyses", T, 0},
                                       {"type", T, 0},
                                       {"bounds", T, 0},
                                       {"unit", T, 0},
                                       {"default", T, 0},
                                       {"see", T, 0},
                                       {"help", T, 0}};
#define KEY_NCOLS (sizeof key_cols / sizeof key_cols[0])
#undef T
#undef R

/* A key of the request's table as a row: how each front end spells it, which analyses take it. */
typedef struct key_text {
    char cli[64], analyses[96], type[32], bounds[48];
} key_text;

static void key_cells(dpas_key k, key_text *t, dpas_cell *c)
{
    const char *flag = dpas_key_flag(k), *mv = dpas_key_metavar(k);
    if (flag)
        snprintf(t->cli, sizeof t->cli, "%s%s%s", flag, mv ? " " : "", mv ? mv : "");
    size_t o = 0;
    t->analyses[0] = '\0';
    if (dpas_key_flags(k) & DPAS_KEY_INPUT)
        snprintf(t->analyses, sizeof t->analyses, "every one of a scenario (not rules)");
    else
        for (int a = 0; a < DPAS_ANALYSIS_COUNT; a++)
            if (dpas_analysis_takes((dpas_analysis)a, k) && o < sizeof t->analyses) {
                int w = snprintf(t->analyses + o, sizeof t->analyses - o, "%s%s", o ? ", " : "",
                                 dpas_analysis_name((dpas_analysis)a));
                o += w > 0 ? (size_t)w : 0;
            }
    c[0] = dpas_cell_text(dpas_key_name(k)), c[1] = dpas_cell_text(dpas_key_alias(k));
    c[2] = dpas_cell_text(flag ? t->cli : NULL), c[3] = dpas_cell_text(dpas_key_query(k));
    c[4] = dpas_cell_text(dpas_key_keyword(k)), c[5] = dpas_cell_text(dpas_key_file(k));
    /* its schema: "list of integer", ">= 1", "0..3" */
    snprintf(t->type, sizeof t->type, "%s%s", dpas_key_flags(k) & DPAS_KEY_LIST ? "list of " : "",
             dpas_key_type_name(dpas_key_type_of(k)));
    int64_t lo = 0, hi = 0;
    int b = dpas_key_bounds(k, &lo, &hi);
    t->bounds[0] = '\0';
    if (b == 3)
        snprintf(t->bounds, sizeof t->bounds, "%lld..%lld", (long long)lo, (long long)hi);
    else if (b)
        snprintf(t->bounds, sizeof t->bounds, "%s %lld",
                 b == 1 ? ">=" : "<=", (long long)(b == 1 ? lo : hi));
    c[6] = dpas_cell_text(t->analyses), c[7] = dpas_cell_text(t->type);
    c[8] = dpas_cell_text(b ? t->bounds : NULL), c[9] = dpas_cell_text(dpas_key_unit(k));
    c[10] = dpas_cell_text(dpas_key_default(k)), c[11] = dpas_cell_text(dpas_key_see(k));
    c[12] = dpas_cell_text(dpas_key_help(k));
}

/* The cells of entry i of kind (-1: precisions). */
static void cells_of(const dpas_registry *reg, int kind, size_t i, dpas_cell *c)
{
    switch (kind) {
    case DPAS_LIST_PRECISIONS: {
        const dpas_precision *p = dpas_precision_at(i);
        c[0] = dpas_cell_text(p->name), c[1] = width_cell(p->width),
        c[2] = dpas_cell_text(p->source);
        return;
    }
    case DPAS_KIND_MODEL: {
        const dpas_model *m = dpas_registry_at(reg, DPAS_KIND_MODEL, i);
        c[0] = dpas_cell_text(m->path), c[1] = dpas_cell_text(m->name);
        c[2] = count_cell(m->parameters), c[3] = count_cell(m->active_parameters);
        c[4] = dpas_cell_text(m->display);
        return;
    }
    case DPAS_KIND_HARDWARE: {
        const dpas_hardware *h = dpas_registry_at(reg, DPAS_KIND_HARDWARE, i);
        c[0] = dpas_cell_text(h->path), c[1] = dpas_cell_text(h->name);
        c[2] = dpas_cell_bytes(h->memory), c[3] = dpas_cell_real(h->peak_flops);
        c[4] = dpas_cell_real(h->hbm_bandwidth), c[5] = dpas_cell_real(h->nvlink_bandwidth);
        c[6] = dpas_cell_real(h->tdp_watts);
        return;
    }
    case DPAS_KIND_NODE: {
        const dpas_node *d = dpas_registry_at(reg, DPAS_KIND_NODE, i);
        c[0] = dpas_cell_text(d->path), c[1] = dpas_cell_text(d->name);
        c[2] = dpas_cell_text(d->accelerator->name), c[3] = dpas_cell_int(d->accelerators_per_node);
        c[4] = dpas_cell_real(d->intra_bandwidth), c[5] = dpas_cell_real(d->intra_latency);
        return;
    }
    case DPAS_KIND_FABRIC: {
        const dpas_fabric *f = dpas_registry_at(reg, DPAS_KIND_FABRIC, i);
        c[0] = dpas_cell_text(f->path), c[1] = dpas_cell_text(f->name);
        c[2] = dpas_cell_real(f->bandwidth), c[3] = dpas_cell_real(f->latency);
        c[4] = dpas_cell_text(f->topology);
        return;
    }
    case DPAS_KIND_FLEET: {
        const dpas_fleet *f = dpas_registry_at(reg, DPAS_KIND_FLEET, i);
        c[0] = dpas_cell_text(f->path), c[1] = dpas_cell_text(f->name);
        c[2] = dpas_cell_text(f->node->name), c[3] = dpas_cell_int(f->count);
        /* the registry's loader checked this product */
        c[4] = dpas_cell_int(f->count * f->node->accelerators_per_node);
        c[5] = dpas_cell_text(f->fabric->name);
        return;
    }
    default: {
        const dpas_named_scenario *s = dpas_registry_at(reg, DPAS_KIND_SCENARIO, i);
        c[0] = dpas_cell_text(s->path), c[1] = dpas_cell_text(s->name);
        c[2] = dpas_cell_text(s->workload_entry->name);
        c[3] = dpas_cell_text(s->scenario.fleet_entry->name);
        c[4] = dpas_cell_int(s->scenario.dp_degree);
        c[5] = width_cell(s->scenario.gradient_bytes_per_param);
        c[6] = width_cell(s->scenario.checkpoint_bytes_per_param);
        c[7] = width_cell(s->scenario.weight_bytes_per_param);
        return;
    }
    }
}

#define N(a) (sizeof a / sizeof a[0])
const dpas_column *dpas_list_columns(dpas_kind kind, size_t *ncols)
{
    static const struct {
        const dpas_column *cols;
        size_t n;
    } tables[] = {
        {model_cols, N(model_cols)}, {hardware_cols, N(hardware_cols)},
        {node_cols, N(node_cols)},   {fabric_cols, N(fabric_cols)},
        {fleet_cols, N(fleet_cols)}, {scenario_cols, N(scenario_cols)},
    };
    *ncols = 0;
    if (kind < DPAS_LIST_KEYS || kind >= DPAS_KIND_COUNT)
        return NULL;
    *ncols = kind == DPAS_LIST_KEYS         ? N(key_cols)
             : kind == DPAS_LIST_PRECISIONS ? N(precision_cols)
                                            : tables[kind].n;
    return kind == DPAS_LIST_KEYS         ? key_cols
           : kind == DPAS_LIST_PRECISIONS ? precision_cols
                                          : tables[kind].cols;
}
#undef N

char *dpas_render_list(const dpas_registry *reg, dpas_kind kind, dpas_format format,
                       dpas_error *err)
{
    size_t ncols;
    const dpas_column *cols = dpas_list_columns(kind, &ncols);
    if (!cols) {
        dpas__fail(err, DPAS_EINVAL, "kind", "unknown registry kind %d", kind);
        return NULL;
    }
    size_t n = kind == DPAS_LIST_KEYS         ? DPAS_KEY_COUNT
               : kind == DPAS_LIST_PRECISIONS ? dpas_precision_count()
                                              : dpas_registry_count(reg, (dpas_kind)kind);
    dpas_writer_opts wo = {.format = (dpas_format)format, .null_text = "", .document = 1};
    dpas__buf b = {0};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, ncols, &wo, dpas__sink_buf, &b, &w, err);
    for (size_t i = 0; !rc && i < n; i++) {
        dpas_cell c[KEY_NCOLS];
        key_text t;
        if (kind == DPAS_LIST_KEYS)
            key_cells((dpas_key)i, &t, c);
        else
            cells_of(reg, kind, i, c);
        rc = dpas_writer_row(w, c, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    if (format == DPAS_FORMAT_JSON)
        dpas__buf_puts(&b, "\n");
    if (rc) {
        free(b.data);
        return NULL;
    }
    return dpas__buf_finish(&b, err);
}
