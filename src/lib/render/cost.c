/* SPDX-License-Identifier: Apache-2.0 */
/* The cost rows rendered: a text report (the realisable rows, human bytes), or every row and
 * column as JSON (inside a document with the step and the links), CSV or markdown. */
#include "../internal.h"

#include <math.h>
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

/* Every row, every column. */
static int full_table(const dpas_cost *c, int format, dpas__buf *b, dpas_error *err)
{
    dpas_column cols[28];
    size_t n = 0;
    cols[n++] = (dpas_column){"rule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"convention", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"schedule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"realisable", DPAS_COL_BOOL, 0};
    cols[n++] = (dpas_column){"why", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"max_f", DPAS_COL_INT, 0};
    if (c->f >= 0)
        cols[n++] = (dpas_column){"tolerates", DPAS_COL_BOOL, 0};
    cols[n++] = (dpas_column){"bytes_per_worker", DPAS_COL_BYTES, 0};
    cols[n++] = (dpas_column){"bytes_received", DPAS_COL_BYTES, 0};
    cols[n++] = (dpas_column){"scalar_bytes", DPAS_COL_BYTES, 0};
    cols[n++] = (dpas_column){"ratio_to_allreduce", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"time_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"time_model", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"time_basis", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"time_band_low_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"time_band_high_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"time_flat_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"time_hierarchical_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"compute_s", DPAS_COL_REAL, 0};
    if (has_compute(c)) {
        cols[n++] = (dpas_column){"compute_flops", DPAS_COL_REAL, 0};
        cols[n++] = (dpas_column){"compute_bytes", DPAS_COL_REAL, 0};
        cols[n++] = (dpas_column){"compute_bound", DPAS_COL_TEXT, 0};
        cols[n++] = (dpas_column){"total_s", DPAS_COL_REAL, 0};
    }
    if (c->net_kind >= 0) {
        cols[n++] = (dpas_column){"time_extrapolated", DPAS_COL_BOOL, 0};
        cols[n++] = (dpas_column){"time_rescaled", DPAS_COL_BOOL, 0};
    }
    dpas_writer_opts wo = {.format = (dpas_format)format, .null_text = ""};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, n, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < c->nrows; i++) {
        const dpas_cost_row *r = &c->rows[i];
        bool ok = r->realisable;
        dpas_cell cell[28];
        size_t k = 0;
        cell[k++] = dpas_cell_text(r->rule->name);
        cell[k++] = dpas_cell_text(r->rule->convention);
        cell[k++] = dpas_cell_text(dpas_schedule_name(r->schedule));
        cell[k++] = dpas_cell_bool(ok);
        cell[k++] = dpas_cell_text(r->why);
        cell[k++] = r->max_f >= 0 ? dpas_cell_int(r->max_f) : dpas_cell_null();
        if (c->f >= 0)
            cell[k++] = dpas_cell_bool(r->tolerates);
        cell[k++] = ok ? dpas_cell_bytes(r->bytes_per_worker) : dpas_cell_null();
        cell[k++] = ok ? dpas_cell_bytes(r->bytes_received) : dpas_cell_null();
        cell[k++] = ok ? dpas_cell_bytes(r->scalar_bytes) : dpas_cell_null();
        cell[k++] = real_or_null(r->ratio_to_allreduce);
        const char *basis = ok ? dpas_time_basis_name(r->time_basis) : NULL;
        cell[k++] = real_or_null(r->time_s);
        cell[k++] = ok && r->time_model ? dpas_cell_text(r->time_model) : dpas_cell_null();
        cell[k++] = basis ? dpas_cell_text(basis) : dpas_cell_null();
        cell[k++] = real_or_null(r->time_band_lo_s);
        cell[k++] = real_or_null(r->time_band_hi_s);
        cell[k++] = real_or_null(r->time_flat_s);
        cell[k++] = real_or_null(r->time_hierarchical_s);
        cell[k++] = real_or_null(r->compute_s);
        if (has_compute(c)) {
            cell[k++] = real_or_null(r->compute_flops);
            cell[k++] = real_or_null(r->compute_bytes);
            cell[k++] = r->compute_bound ? dpas_cell_text(r->compute_bound) : dpas_cell_null();
            cell[k++] = real_or_null(r->total_s);
        }
        if (c->net_kind >= 0) {
            cell[k++] = ok ? dpas_cell_bool(r->time_extrapolated) : dpas_cell_null();
            cell[k++] = ok ? dpas_cell_bool(r->time_rescaled) : dpas_cell_null();
        }
        rc = dpas_writer_row(w, cell, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    return rc;
}

static void json_real(dpas__buf *b, double v)
{
    char t[40];
    if (!isfinite(v)) {
        dpas__buf_puts(b, "null");
        return;
    }
    dpas__fmt_double(v, false, t, sizeof t);
    dpas__buf_puts(b, t);
}

static int json_doc(const dpas_cost *c, const dpas_cost_view *v, dpas__buf *b, dpas_error *err)
{
    dpas__json_doc_head(b);
    if (v->label)
        dpas__buf_json_str(b, v->label);
    else
        dpas__buf_puts(b, "null");
    dpas__buf_printf(b, ",\n  \"dp_degree\": %lld,\n  ", (long long)c->dp_degree);
    dpas__buf_json_bytes(b, "gradient_bytes", c->gradient_bytes); /* "_exact" too when rounded */
    dpas__buf_printf(b, ",\n  \"steps\": %lld,\n  \"iterations\": %lld,\n", (long long)c->steps,
                     (long long)c->iterations);
    if (c->net_kind >= 0)
        dpas__buf_printf(b, "  \"network_model\": \"%s\",\n", dpas_netmodel_kind_name(c->net_kind));
    dpas__buf_puts(b, "  \"links\": ");
    if (c->have_links) {
        dpas__buf_puts(b, "{\"fabric\": ");
        if (c->calibrated)
            dpas__buf_json_str(b, c->links_source ? c->links_source : "calibration");
        else
            dpas__buf_json_str(b, c->fabric);
        dpas__buf_puts(b, ", \"node\": ");
        if (c->node)
            dpas__buf_json_str(b, c->node);
        else
            dpas__buf_puts(b, "null");
        dpas__buf_puts(b, ", \"inter_bandwidth\": ");
        json_real(b, c->links.inter_bandwidth);
        dpas__buf_puts(b, ", \"inter_latency\": ");
        json_real(b, c->links.inter_latency);
        dpas__buf_puts(b, ", \"intra_bandwidth\": ");
        json_real(b, c->links.intra_bandwidth);
        dpas__buf_puts(b, ", \"intra_latency\": ");
        json_real(b, c->links.intra_latency);
        dpas__buf_puts(b, "}");
    } else {
        dpas__buf_puts(b, "null");
    }
    dpas__buf_puts(b, ",\n  \"notes\": [");
    for (size_t i = 0; i < c->nnotes; i++) {
        dpas__buf_puts(b, i ? ", " : "");
        dpas__buf_json_str(b, c->notes[i]);
    }
    dpas__buf_puts(b, "],\n  \"rows\": ");
    int rc = full_table(c, DPAS_FORMAT_JSON, b, err);
    dpas__buf_puts(b, "\n}\n");
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
