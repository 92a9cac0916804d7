/* SPDX-License-Identifier: Apache-2.0 */
/* The cost rows rendered: a text report (the realisable rows, human bytes), or every row and
 * column as JSON (inside a document with the step and the links), CSV or markdown. */
#include "../internal.h"

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dpas_cell real_or_null(double v) { return isnan(v) ? dpas_cell_null() : dpas_cell_real(v); }

/* The rule's compute was timed (a roofline). */
static bool has_compute(const dpas_cost *c) { return c->peak_flops > 0 || c->memory_bandwidth > 0; }

static void text_head(dpas__buf *b, const dpas_cost *c, const dpas_cost_view *v)
{
    char gh[64];
    if (v->label) {
        dpas__buf_puts(b, "scenario  ");
        dpas__escape(b, DPAS_FORMAT_TEXT, v->label);
        dpas__buf_puts(b, "\n");
    }
    dpas_format_bytes_human(c->gradient_bytes, v->units, gh, sizeof gh);
    dpas__buf_printf(b, "step      dp_degree %lld, gradient_bytes ", (long long)c->dp_degree);
    dpas__buf_bytes_marked(b, c->gradient_bytes, " B");
    dpas__buf_printf(b, " (%s) per replica%s\n", gh, c->steps > 1 ? "" : ", one step");
    if (c->steps > 1)
        dpas__buf_printf(b, "steps     %lld (bytes and times below are totals)\n",
                         (long long)c->steps);
    const dpas_links *L = &c->links;
    if (c->calibrated) {
        dpas__buf_puts(b, "links     calibrated");
        if (c->links_source) {
            dpas__buf_puts(b, " from ");
            dpas__escape(b, DPAS_FORMAT_TEXT, c->links_source);
        }
        dpas__buf_printf(b, ": %.4g GB/s, %.4g us per step%s\n", L->inter_bandwidth / 1e9,
                         L->inter_latency * 1e6,
                         c->have_intra ? "" : " (no node: no hierarchical time)");
        if (c->net_kind >= 0)
            dpas__buf_printf(b, "model     %s: times from the calibration%s\n",
                             dpas_netmodel_kind_name(c->net_kind),
                             c->net_kind == DPAS_NETMODEL_DEFAULT
                                 ? " (the measured curve at a measured scale, the nccl model "
                                   "elsewhere; each with its basis and band)"
                                 : "");
    } else if (!c->have_links) {
        dpas__buf_printf(b, "links     unknown (a custom fleet without %s): no times\n",
                         !c->fabric && !c->node ? "fabric and node"
                         : !c->fabric           ? "fabric"
                                                : "node");
    } else {
        char bw[64], bw2[64];
        dpas_format_bytes_human((dpas_bytes){(uint64_t)L->inter_bandwidth, 0, 1}, DPAS_UNITS_SI, bw,
                                sizeof bw);
        dpas_format_bytes_human((dpas_bytes){(uint64_t)L->intra_bandwidth, 0, 1}, DPAS_UNITS_SI,
                                bw2, sizeof bw2);
        dpas__buf_puts(b, "links     fabric ");
        dpas__escape(b, DPAS_FORMAT_TEXT, c->fabric_name);
        dpas__buf_printf(b, " %s/s %g us; node ", bw, L->inter_latency * 1e6);
        dpas__escape(b, DPAS_FORMAT_TEXT, c->node_name);
        dpas__buf_printf(b, " %s/s %g ns (x%lld per node)\n", bw2, L->intra_latency * 1e9,
                         (long long)c->accelerators_per_node);
    }
    dpas__buf_puts(b, "\n");
}

/* The text table: realisable rows (all of them with v->all), human bytes, 6 digits. */
static int text_table(const dpas_cost *c, const dpas_cost_view *v, dpas__buf *b, dpas_error *err)
{
    dpas_column cols[14];
    size_t n = 0;
    cols[n++] = (dpas_column){"rule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"schedule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"max_f", DPAS_COL_INT, 0};
    if (c->f >= 0)
        cols[n++] = (dpas_column){"tolerates", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"bytes/worker", DPAS_COL_BYTES, DPAS_COL_HUMAN};
    cols[n++] = (dpas_column){"x allreduce", DPAS_COL_REAL, DPAS_COL_G6};
    if (c->have_links) {
        cols[n++] = (dpas_column){"time s", DPAS_COL_REAL, DPAS_COL_G6};
        cols[n++] = (dpas_column){"model", DPAS_COL_TEXT, 0};
        if (v->all) {
            cols[n++] = (dpas_column){"flat s", DPAS_COL_REAL, DPAS_COL_G6};
            cols[n++] = (dpas_column){"hierarchical s", DPAS_COL_REAL, DPAS_COL_G6};
        }
    }
    if (has_compute(c)) {
        cols[n++] = (dpas_column){"compute s", DPAS_COL_REAL, DPAS_COL_G6};
        cols[n++] = (dpas_column){"bound", DPAS_COL_TEXT, 0};
        if (c->have_links)
            cols[n++] = (dpas_column){"total s", DPAS_COL_REAL, DPAS_COL_G6};
    }
    if (v->all)
        cols[n++] = (dpas_column){"not realisable because", DPAS_COL_TEXT, 0};
    dpas_writer_opts wo = {.format = DPAS_FORMAT_TEXT, .units = v->units};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, n, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < c->nrows; i++) {
        const dpas_cost_row *r = &c->rows[i];
        if (!r->realisable && !v->all)
            continue;
        char name[96];
        if (strcmp(r->rule->convention, "standard") && !r->rule->is_default)
            snprintf(name, sizeof name, "%s (%s)", r->rule->name, r->rule->convention);
        else
            snprintf(name, sizeof name, "%s", r->rule->name);
        dpas_cell cell[14];
        /* which model answered, on what basis, and the band: "nccl, transferred, 0.8-6.6 ms" */
        char from[160], band[64] = "";
        const char *basis = dpas_time_basis_name(r->time_basis);
        if (isfinite(r->time_band_lo_s) && isfinite(r->time_band_hi_s))
            snprintf(band, sizeof band, ", %.3g-%.3g s", r->time_band_lo_s, r->time_band_hi_s);
        snprintf(from, sizeof from, "%s%s%s%s", r->time_model ? r->time_model : "",
                 basis ? ", " : "", basis ? basis : "", band);
        size_t k = 0;
        cell[k++] = dpas_cell_text(name);
        cell[k++] = dpas_cell_text(dpas_schedule_name(r->schedule));
        cell[k++] = r->max_f >= 0 ? dpas_cell_int(r->max_f) : dpas_cell_null();
        if (c->f >= 0)
            cell[k++] = dpas_cell_text(r->tolerates ? "yes" : "no");
        bool ok = r->realisable;
        cell[k++] = ok ? dpas_cell_bytes(r->bytes_per_worker) : dpas_cell_null();
        cell[k++] = ok ? real_or_null(r->ratio_to_allreduce) : dpas_cell_null();
        if (c->have_links) {
            cell[k++] = ok ? real_or_null(r->time_s) : dpas_cell_null();
            cell[k++] = ok && r->time_model ? dpas_cell_text(from) : dpas_cell_null();
            if (v->all) {
                cell[k++] = ok ? real_or_null(r->time_flat_s) : dpas_cell_null();
                cell[k++] = ok ? real_or_null(r->time_hierarchical_s) : dpas_cell_null();
            }
        }
        if (has_compute(c)) {
            cell[k++] = ok ? real_or_null(r->compute_s) : dpas_cell_null();
            cell[k++] =
                ok && r->compute_bound ? dpas_cell_text(r->compute_bound) : dpas_cell_null();
            if (c->have_links)
                cell[k++] = ok ? real_or_null(r->total_s) : dpas_cell_null();
        }
        if (v->all)
            cell[k++] = dpas_cell_text(r->why ? r->why : "");
        rc = dpas_writer_row(w, cell, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    if (rc)
        return rc;
    if (c->unrealisable && !v->all)
        dpas__buf_printf(b,
                         "(%zu rule x schedule combinations are not realisable; --all lists "
                         "them with the reason)\n",
                         c->unrealisable);
    for (size_t i = 0; i < c->nnotes; i++)
        dpas__buf_printf(b, "note: %s\n", c->notes[i]);
    return 0;
}

/* ---- the fields: a row's, the links', and the document's ---- */

enum { HAS_F = 1, HAS_COMPUTE = 2, HAS_NET = 4 }; /* what some documents only write */
#define V(name, type, flags, unit)                                                                 \
    {                                                                                              \
        name, DPAS_COL_##type, DPAS_FIELD_VALUE, flags, unit, NULL, 0                              \
    }
#define NUL DPAS_FIELD_NULLABLE
#define IF(c) (DPAS_FIELD_OPTIONAL | DPAS__FIELD_IF(c))
static const dpas_field row_fields[] = {
    V("rule", TEXT, 0, NULL),
    V("convention", TEXT, 0, NULL),
    V("schedule", TEXT, 0, NULL),
    V("realisable", BOOL, 0, NULL),
    V("why", TEXT, NUL, NULL),
    V("max_f", INT, NUL, NULL),
    V("tolerates", BOOL, IF(HAS_F), NULL),
    V("bytes_per_worker", BYTES, NUL, "B"),
    V("bytes_received", BYTES, NUL, "B"),
    V("scalar_bytes", BYTES, NUL, "B"),
    V("ratio_to_allreduce", REAL, NUL, NULL),
    V("time_s", REAL, NUL, "s"),
    V("time_model", TEXT, NUL, NULL),
    V("time_basis", TEXT, NUL, NULL),
    V("time_band_low_s", REAL, NUL, "s"),
    V("time_band_high_s", REAL, NUL, "s"),
    V("time_flat_s", REAL, NUL, "s"),
    V("time_hierarchical_s", REAL, NUL, "s"),
    V("compute_s", REAL, NUL, "s"),
    V("compute_flops", REAL, NUL | IF(HAS_COMPUTE), "FLOP"),
    V("compute_bytes", REAL, NUL | IF(HAS_COMPUTE), "B"),
    V("compute_bound", TEXT, NUL | IF(HAS_COMPUTE), NULL),
    V("total_s", REAL, NUL | IF(HAS_COMPUTE), "s"),
    V("time_extrapolated", BOOL, NUL | IF(HAS_NET), NULL),
    V("time_rescaled", BOOL, NUL | IF(HAS_NET), NULL),
};
enum { NROW = sizeof row_fields / sizeof row_fields[0] };

static const dpas_field link_fields[] = {
    V("fabric", TEXT, 0, NULL),
    V("node", TEXT, NUL, NULL),
    V("inter_bandwidth", REAL, NUL, "B/s"),
    V("inter_latency", REAL, NUL, "s"),
    V("intra_bandwidth", REAL, NUL, "B/s"),
    V("intra_latency", REAL, NUL, "s"),
};

const dpas_field dpas__cost_fields[] = {
    V("scenario", TEXT, NUL, NULL),
    V("dp_degree", INT, 0, NULL),
    V("gradient_bytes", BYTES, 0, "B"),
    V("steps", INT, 0, NULL),
    V("iterations", INT, 0, NULL),
    V("network_model", TEXT, IF(HAS_NET), NULL),
    {"links", DPAS_COL_TEXT, DPAS_FIELD_OBJECT, NUL, NULL, link_fields,
     sizeof link_fields / sizeof link_fields[0]},
    {"notes", DPAS_COL_TEXT, DPAS_FIELD_TEXTS, 0, NULL, NULL, 0},
    {"rows", DPAS_COL_TEXT, DPAS_FIELD_ROWS, 0, NULL, row_fields, NROW},
};
const size_t dpas__cost_nfields = sizeof dpas__cost_fields / sizeof dpas__cost_fields[0];
#undef V
#undef NUL
#undef IF

/* A row's value of a field, by its name. */
static dpas_cell row_cell(const dpas_cost_row *r, const char *name)
{
    bool ok = r->realisable;
    static const struct {
        const char *name;
        size_t off;
    } reals[] = {
        {"ratio_to_allreduce", offsetof(dpas_cost_row, ratio_to_allreduce)},
        {"time_s", offsetof(dpas_cost_row, time_s)},
        {"time_band_low_s", offsetof(dpas_cost_row, time_band_lo_s)},
        {"time_band_high_s", offsetof(dpas_cost_row, time_band_hi_s)},
        {"time_flat_s", offsetof(dpas_cost_row, time_flat_s)},
        {"time_hierarchical_s", offsetof(dpas_cost_row, time_hierarchical_s)},
        {"compute_s", offsetof(dpas_cost_row, compute_s)},
        {"compute_flops", offsetof(dpas_cost_row, compute_flops)},
        {"compute_bytes", offsetof(dpas_cost_row, compute_bytes)},
        {"total_s", offsetof(dpas_cost_row, total_s)},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!strcmp(name, reals[i].name))
            return real_or_null(*(const double *)((const char *)r + reals[i].off));
    const char *basis = ok ? dpas_time_basis_name(r->time_basis) : NULL;
    if (!strcmp(name, "rule"))
        return dpas_cell_text(r->rule->name);
    if (!strcmp(name, "convention"))
        return dpas_cell_text(r->rule->convention);
    if (!strcmp(name, "schedule"))
        return dpas_cell_text(dpas_schedule_name(r->schedule));
    if (!strcmp(name, "realisable"))
        return dpas_cell_bool(ok);
    if (!strcmp(name, "why"))
        return dpas_cell_text(r->why);
    if (!strcmp(name, "max_f"))
        return r->max_f >= 0 ? dpas_cell_int(r->max_f) : dpas_cell_null();
    if (!strcmp(name, "tolerates"))
        return dpas_cell_bool(r->tolerates);
    if (!strcmp(name, "bytes_per_worker"))
        return ok ? dpas_cell_bytes(r->bytes_per_worker) : dpas_cell_null();
    if (!strcmp(name, "bytes_received"))
        return ok ? dpas_cell_bytes(r->bytes_received) : dpas_cell_null();
    if (!strcmp(name, "scalar_bytes"))
        return ok ? dpas_cell_bytes(r->scalar_bytes) : dpas_cell_null();
    if (!strcmp(name, "time_model"))
        return ok && r->time_model ? dpas_cell_text(r->time_model) : dpas_cell_null();
    if (!strcmp(name, "time_basis"))
        return basis ? dpas_cell_text(basis) : dpas_cell_null();
    if (!strcmp(name, "compute_bound"))
        return r->compute_bound ? dpas_cell_text(r->compute_bound) : dpas_cell_null();
    if (!strcmp(name, "time_extrapolated"))
        return ok ? dpas_cell_bool(r->time_extrapolated) : dpas_cell_null();
    return ok ? dpas_cell_bool(r->time_rescaled) : dpas_cell_null(); /* time_rescaled */
}

static unsigned features(const dpas_cost *c)
{
    return (c->f >= 0 ? HAS_F : 0) | (has_compute(c) ? HAS_COMPUTE : 0) |
           (c->net_kind >= 0 ? HAS_NET : 0);
}

/* Every row, every column this cost has. */
static int full_table(const dpas_cost *c, int format, dpas__buf *b, dpas_error *err)
{
    dpas_column cols[NROW];
    size_t n = dpas__field_columns(row_fields, NROW, features(c), cols);
    dpas_writer_opts wo = {.format = (dpas_format)format, .null_text = ""};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, n, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < c->nrows; i++) {
        dpas_cell cell[NROW];
        for (size_t k = 0; k < n; k++)
            cell[k] = row_cell(&c->rows[i], cols[k].name);
        rc = dpas_writer_row(w, cell, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    return rc;
}

typedef struct cost_doc {
    const dpas_cost *c;
    const dpas_cost_view *v;
    dpas_error *err;
} cost_doc;

static int link_value(const dpas_field *f, dpas_cell *cell, dpas__buf *sub, void *ctx)
{
    (void)sub;
    const dpas_cost *c = ctx;
    const dpas_links *L = &c->links;
    if (!strcmp(f->name, "fabric"))
        *cell = dpas_cell_text(c->calibrated ? (c->links_source ? c->links_source : "calibration")
                                             : c->fabric);
    else if (!strcmp(f->name, "node"))
        *cell = dpas_cell_text(c->node);
    else if (!strcmp(f->name, "inter_bandwidth"))
        *cell = dpas_cell_real(L->inter_bandwidth);
    else if (!strcmp(f->name, "inter_latency"))
        *cell = dpas_cell_real(L->inter_latency);
    else if (!strcmp(f->name, "intra_bandwidth"))
        *cell = dpas_cell_real(L->intra_bandwidth);
    else
        *cell = dpas_cell_real(L->intra_latency);
    return 0;
}

static int cost_value(const dpas_field *f, dpas_cell *cell, dpas__buf *sub, void *ctx)
{
    const cost_doc *x = ctx;
    const dpas_cost *c = x->c;
    unsigned cond = f->flags >> 8;
    if (cond && !(cond & features(c)))
        return DPAS__FIELD_ABSENT;
    if (!strcmp(f->name, "scenario"))
        *cell = dpas_cell_text(x->v->label);
    else if (!strcmp(f->name, "dp_degree"))
        *cell = dpas_cell_int(c->dp_degree);
    else if (!strcmp(f->name, "gradient_bytes"))
        *cell = dpas_cell_bytes(c->gradient_bytes);
    else if (!strcmp(f->name, "steps"))
        *cell = dpas_cell_int(c->steps);
    else if (!strcmp(f->name, "iterations"))
        *cell = dpas_cell_int(c->iterations);
    else if (!strcmp(f->name, "network_model"))
        *cell = dpas_cell_text(dpas_netmodel_kind_name(c->net_kind));
    else if (!strcmp(f->name, "links"))
        return c->have_links ? dpas__json_fields(sub, f->sub, f->nsub, NULL, false, link_value,
                                                 (void *)(uintptr_t)c)
                             : 0;
    else if (!strcmp(f->name, "notes")) {
        dpas__buf_puts(sub, "[");
        for (size_t i = 0; i < c->nnotes; i++) {
            dpas__buf_puts(sub, i ? ", " : "");
            dpas__buf_json_str(sub, c->notes[i]);
        }
        dpas__buf_puts(sub, "]");
    } else if (!strcmp(f->name, "rows"))
        return full_table(c, DPAS_FORMAT_JSON, sub, x->err);
    else
        return dpas__fail(x->err, DPAS_EINVAL, "", "cost: no value for the field %s", f->name);
    return 0;
}

static int json_doc(const dpas_cost *c, const dpas_cost_view *v, dpas__buf *b, dpas_error *err)
{
    cost_doc x = {c, v, err};
    int rc = dpas__json_fields(b, dpas__cost_fields, dpas__cost_nfields, "", true, cost_value, &x);
    dpas__buf_puts(b, "\n");
    return rc;
}

char *dpas_render_cost(const dpas_cost *c, const dpas_cost_view *v, dpas_error *err)
{
    dpas__buf b = {0};
    int rc;
    if (v->format == DPAS_FORMAT_TEXT) {
        text_head(&b, c, v);
        rc = text_table(c, v, &b, err);
    } else if (v->format == DPAS_FORMAT_JSON) {
        rc = json_doc(c, v, &b, err);
    } else {
        rc = full_table(c, v->format, &b, err);
    }
    if (rc) {
        free(b.data);
        return NULL;
    }
    return dpas__buf_finish(&b, err);
}
