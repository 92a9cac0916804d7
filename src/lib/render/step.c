/* SPDX-License-Identifier: Apache-2.0 */
/* The step rows rendered: a text report (the compute, the buckets, the baseline, the realisable
 * rows), or every field and row as JSON, CSV or markdown. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static dpas_cell real_or_null(double v) { return isnan(v) ? dpas_cell_null() : dpas_cell_real(v); }

static void rule_name(const dpas_rule *r, char *buf, size_t cap)
{
    if (strcmp(r->convention, "standard") && !r->is_default)
        snprintf(buf, cap, "%s (%s)", r->name, r->convention);
    else
        snprintf(buf, cap, "%s", r->name);
}

static void text_head(dpas__buf *b, const dpas_step *st, const dpas_step_view *v)
{
    char gh[64];
    if (v->label) {
        dpas__buf_puts(b, "scenario  ");
        dpas__escape(b, DPAS_FORMAT_TEXT, v->label);
        dpas__buf_puts(b, "\n");
    }
    dpas__buf_printf(b, "compute   %.6g s per step (forward %.6g, backward %.6g", st->compute_s,
                     st->forward_s, st->backward_s);
    if (st->compute_lo_s != st->compute_hi_s) /* a band only from an assumed MFU */
        dpas__buf_printf(b, "; band %.6g-%.6g", st->compute_lo_s, st->compute_hi_s);
    dpas__buf_printf(b, "): %g x %llu parameter%s x %llu token%s", st->flops_factor,
                     (unsigned long long)st->parameters, st->parameters == 1 ? "" : "s",
                     (unsigned long long)st->tokens, st->tokens == 1 ? "" : "s");
    if (st->attention_flops > 0)
        dpas__buf_printf(b, " + attention %.6g FLOP (%g x layers x sequence %llu x hidden per token)",
                         st->attention_flops, st->flops_factor * 2,
                         (unsigned long long)st->attention_sequence);
    dpas__buf_puts(b, "\n");
    dpas__buf_printf(b, "          on %lld accelerator%s at %.6g TFLOP/s (",
                     (long long)st->accelerators, st->accelerators == 1 ? "" : "s",
                     st->peak_flops / 1e12);
    dpas__escape(b, DPAS_FORMAT_TEXT, st->peak_source);
    dpas__buf_printf(b, ") x MFU %g, %s", st->mfu, st->mfu_basis);
    if (st->mfu_source)
        dpas__buf_printf(b, " (%g-%g)", st->mfu_lo, st->mfu_hi);
    dpas__buf_puts(b, "\n");
    dpas_format_bytes_human(st->gradient_bytes, v->units, gh, sizeof gh);
    dpas__buf_printf(b, "buckets   %llu of %llu parameter%s (", (unsigned long long)st->buckets,
                     (unsigned long long)st->bucket_parameters,
                     st->bucket_parameters == 1 ? "" : "s");
    char bb[64];
    dpas_format_bytes_human((dpas_bytes){st->bucket_bytes, 0, 1}, DPAS_UNITS_IEC, bb, sizeof bb);
    dpas__buf_printf(b, "%s) of a %s gradient; dp_degree %lld", bb, gh, (long long)st->dp_degree);
    if (st->zero)
        dpas__buf_printf(b, ", ZeRO stage %d", st->zero);
    dpas__buf_puts(b, "\n");
    if (!isnan(st->baseline_s))
        dpas__buf_printf(b, "baseline  mean under allreduce: %.6g s per step\n", st->baseline_s);
    if (st->have_memory) {
        const dpas_memory *m = &st->memory;
        char tot[64], cap[64], sth[64], act[64];
        dpas__buf wb = {0};
        dpas_format_bytes_human(m->total, v->units, tot, sizeof tot);
        dpas_format_bytes_human(m->capacity, v->units, cap, sizeof cap);
        dpas_format_bytes_human(m->state, v->units, sth, sizeof sth);
        dpas_format_bytes_human(m->activations, v->units, act, sizeof act);
        dpas__memory_where(m, st->zero, &wb);
        const char *where = wb.data ? wb.data : "";
        dpas__buf_printf(b, "memory    %s per replica of %s: state %s + activations %s%s; %s%s%s",
                         tot, cap, sth, m->activations_counted ? act : "not counted",
                         m->activations_counted ? "" : " (see the note)",
                         m->fits ? "fits" : "does not fit", *where ? "; it fits " : "", where);
        if (!m->fits && !*where)
            dpas__buf_printf(b, "; it fits at no dp_degree on this fleet%s%s",
                             st->zero < 3 ? ", no ZeRO stage" : "",
                             m->activations_counted ? " and no recomputation" : "");
        dpas__buf_puts(b, "\n");
        free(wb.data);
    }
    dpas__buf_puts(b, "\n");
}

static int text_table(const dpas_step *st, const dpas_step_view *v, dpas__buf *b, dpas_error *err)
{
    dpas_column cols[14];
    size_t n = 0;
    cols[n++] = (dpas_column){"rule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"schedule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"bytes/worker", DPAS_COL_BYTES, DPAS_COL_HUMAN};
    if (st->have_times) {
        cols[n++] = (dpas_column){"exchange s", DPAS_COL_REAL, DPAS_COL_G6};
        cols[n++] = (dpas_column){"exposed s", DPAS_COL_REAL, DPAS_COL_G6};
    }
    if (st->zero)
        cols[n++] = (dpas_column){"zero s", DPAS_COL_REAL, DPAS_COL_G6};
    cols[n++] = (dpas_column){"rule s", DPAS_COL_REAL, DPAS_COL_G6};
    if (st->have_times) {
        cols[n++] = (dpas_column){"step s", DPAS_COL_REAL, DPAS_COL_G6};
        cols[n++] = (dpas_column){"band s", DPAS_COL_TEXT, DPAS_COL_RIGHT};
        cols[n++] = (dpas_column){"added s", DPAS_COL_REAL, DPAS_COL_G6};
        cols[n++] = (dpas_column){"share", DPAS_COL_REAL, DPAS_COL_G6};
        cols[n++] = (dpas_column){"exchange model", DPAS_COL_TEXT, 0};
    }
    if (v->all)
        cols[n++] = (dpas_column){"not realisable because", DPAS_COL_TEXT, 0};
    dpas_writer_opts wo = {.format = DPAS_FORMAT_TEXT, .units = v->units};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, n, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < st->nrows; i++) {
        const dpas_step_row *r = &st->rows[i];
        if (!r->realisable && !v->all)
            continue;
        bool ok = r->realisable;
        char name[96], band[64] = "", model[96] = "";
        rule_name(r->rule, name, sizeof name);
        if (ok && isfinite(r->step_lo_s))
            snprintf(band, sizeof band, "%.3g-%.3g", r->step_lo_s, r->step_hi_s);
        const char *basis = dpas_time_basis_name(r->exchange_basis);
        if (ok && r->exchange_model)
            snprintf(model, sizeof model, "%s%s%s", r->exchange_model, basis ? ", " : "",
                     basis ? basis : "");
        dpas_cell cell[14];
        size_t k = 0;
        cell[k++] = dpas_cell_text(name);
        cell[k++] = dpas_cell_text(dpas_schedule_name(r->schedule));
        cell[k++] = ok ? dpas_cell_bytes(r->bytes_per_worker) : dpas_cell_null();
        if (st->have_times) {
            cell[k++] = ok ? real_or_null(r->exchange_s) : dpas_cell_null();
            cell[k++] = ok ? real_or_null(r->exposed_s) : dpas_cell_null();
        }
        if (st->zero)
            cell[k++] = ok ? real_or_null(r->zero_s) : dpas_cell_null();
        cell[k++] = ok ? real_or_null(r->rule_s) : dpas_cell_null();
        if (st->have_times) {
            cell[k++] = ok ? real_or_null(r->step_s) : dpas_cell_null();
            cell[k++] = band[0] ? dpas_cell_text(band) : dpas_cell_null();
            cell[k++] = ok ? real_or_null(r->added_s) : dpas_cell_null();
            cell[k++] = ok ? real_or_null(r->share) : dpas_cell_null();
            cell[k++] = model[0] ? dpas_cell_text(model) : dpas_cell_null();
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
    if (st->unrealisable && !v->all)
        dpas__buf_printf(b,
                         "(%zu rule x schedule combinations are not realisable; --all lists "
                         "them with the reason)\n",
                         st->unrealisable);
    if (st->zero) { /* each rule's composition with sharded gradients, once per rule */
        const dpas_rule *last = NULL;
        for (size_t i = 0; i < st->nrows; i++) {
            if (st->rows[i].rule == last)
                continue;
            last = st->rows[i].rule;
            dpas__buf_printf(b, "zero: %s: %s\n", last->name, dpas_step_zero_composition(last));
        }
    }
    for (size_t i = 0; i < st->nnotes; i++)
        dpas__buf_printf(b, "note: %s\n", st->notes[i]);
    return 0;
}

static int full_table(const dpas_step *st, int format, dpas__buf *b, dpas_error *err)
{
    dpas_column cols[24];
    size_t n = 0;
    cols[n++] = (dpas_column){"rule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"convention", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"schedule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"realisable", DPAS_COL_BOOL, 0};
    cols[n++] = (dpas_column){"why", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"bytes_per_worker", DPAS_COL_BYTES, 0};
    cols[n++] = (dpas_column){"exchange_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"exchange_model", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"exchange_basis", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"exchange_band_low_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"exchange_band_high_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"exposed_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"zero_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"rule_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"rule_bound", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"step_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"step_band_low_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"step_band_high_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"added_s", DPAS_COL_REAL, 0};
    cols[n++] = (dpas_column){"share", DPAS_COL_REAL, 0};
    if (st->zero)
        cols[n++] = (dpas_column){"zero_composition", DPAS_COL_TEXT, 0};
    dpas_writer_opts wo = {.format = (dpas_format)format, .null_text = ""};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, n, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < st->nrows; i++) {
        const dpas_step_row *r = &st->rows[i];
        bool ok = r->realisable;
        const char *basis = ok ? dpas_time_basis_name(r->exchange_basis) : NULL;
        dpas_cell cell[24];
        size_t k = 0;
        cell[k++] = dpas_cell_text(r->rule->name);
        cell[k++] = dpas_cell_text(r->rule->convention);
        cell[k++] = dpas_cell_text(dpas_schedule_name(r->schedule));
        cell[k++] = dpas_cell_bool(ok);
        cell[k++] = dpas_cell_text(r->why);
        cell[k++] = ok ? dpas_cell_bytes(r->bytes_per_worker) : dpas_cell_null();
        cell[k++] = real_or_null(r->exchange_s);
        cell[k++] = ok && r->exchange_model ? dpas_cell_text(r->exchange_model) : dpas_cell_null();
        cell[k++] = basis ? dpas_cell_text(basis) : dpas_cell_null();
        cell[k++] = real_or_null(r->exchange_lo_s);
        cell[k++] = real_or_null(r->exchange_hi_s);
        cell[k++] = real_or_null(r->exposed_s);
        cell[k++] = real_or_null(r->zero_s);
        cell[k++] = real_or_null(r->rule_s);
        cell[k++] = r->rule_bound ? dpas_cell_text(r->rule_bound) : dpas_cell_null();
        cell[k++] = real_or_null(r->step_s);
        cell[k++] = real_or_null(r->step_lo_s);
        cell[k++] = real_or_null(r->step_hi_s);
        cell[k++] = real_or_null(r->added_s);
        cell[k++] = real_or_null(r->share);
        if (st->zero)
            cell[k++] = dpas_cell_text(dpas_step_zero_composition(r->rule));
        rc = dpas_writer_row(w, cell, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    return rc;
}

static void json_real(dpas__buf *b, const char *key, double v)
{
    char t[40];
    dpas__buf_printf(b, "  \"%s\": ", key);
    if (!isfinite(v)) {
        dpas__buf_puts(b, "null,\n");
        return;
    }
    dpas__fmt_double(v, false, t, sizeof t);
    dpas__buf_printf(b, "%s,\n", t);
}

static void json_str(dpas__buf *b, const char *key, const char *v)
{
    dpas__buf_printf(b, "  \"%s\": ", key);
    if (v)
        dpas__buf_json_str(b, v);
    else
        dpas__buf_puts(b, "null");
    dpas__buf_puts(b, ",\n");
}

static int json_doc(const dpas_step *st, const dpas_step_view *v, dpas__buf *b, dpas_error *err)
{
    dpas__json_doc_head(b); /* dpas_version, schema_version, "scenario": */
    if (v->label)
        dpas__buf_json_str(b, v->label);
    else
        dpas__buf_puts(b, "null");
    dpas__buf_printf(
        b,
        ",\n  \"dp_degree\": %lld,\n  \"accelerators\": %lld,\n  \"parameters\": %llu,\n"
        "  \"tokens\": %llu,\n",
        (long long)st->dp_degree, (long long)st->accelerators, (unsigned long long)st->parameters,
        (unsigned long long)st->tokens);
    json_real(b, "flops", st->flops);
    json_real(b, "attention_flops", st->attention_flops);
    json_real(b, "peak_flops", st->peak_flops);
    json_str(b, "peak_source", st->peak_source);
    json_real(b, "mfu", st->mfu);
    json_str(b, "mfu_basis", st->mfu_basis);
    json_str(b, "mfu_source", st->mfu_source);
    json_real(b, "mfu_band_low", st->mfu_lo);
    json_real(b, "mfu_band_high", st->mfu_hi);
    json_real(b, "compute_s", st->compute_s);
    json_real(b, "forward_s", st->forward_s);
    json_real(b, "backward_s", st->backward_s);
    json_real(b, "compute_band_low_s", st->compute_lo_s);
    json_real(b, "compute_band_high_s", st->compute_hi_s);
    dpas__buf_printf(b,
                     "  \"bucket_bytes\": %llu,\n  \"bucket_parameters\": %llu,\n"
                     "  \"buckets\": %llu,\n  \"zero\": %d,\n  \"iterations\": %lld,\n  ",
                     (unsigned long long)st->bucket_bytes,
                     (unsigned long long)st->bucket_parameters, (unsigned long long)st->buckets,
                     st->zero, (long long)st->iterations);
    dpas__buf_json_bytes(b, "gradient_bytes", st->gradient_bytes);
    dpas__buf_puts(b, ",\n  ");
    dpas__buf_json_bytes(b, "weight_bytes", st->weight_bytes);
    dpas__buf_puts(b, ",\n");
    json_real(b, "baseline_s", st->baseline_s);
    dpas__buf_printf(b, "  \"flops_factor\": %g,\n  \"recompute\": ", st->flops_factor);
    dpas__buf_json_str(b, dpas_recompute_name((dpas_recompute)st->recompute));
    dpas__buf_puts(b, ",\n  \"memory\": ");
    if (st->have_memory)
        dpas__memory_json(b, &st->memory, "  ");
    else
        dpas__buf_puts(b, "null");
    dpas__buf_puts(b, ",\n  \"notes\": [");
    for (size_t i = 0; i < st->nnotes; i++) {
        dpas__buf_puts(b, i ? ", " : "");
        dpas__buf_json_str(b, st->notes[i]);
    }
    dpas__buf_puts(b, "],\n  \"rows\": ");
    int rc = full_table(st, DPAS_FORMAT_JSON, b, err);
    dpas__buf_puts(b, "\n}\n");
    return rc;
}

char *dpas_render_step(const dpas_step *st, const dpas_step_view *v, dpas_error *err)
{
    dpas__buf b = {0};
    int rc;
    if (v->format == DPAS_FORMAT_TEXT) {
        text_head(&b, st, v);
        rc = text_table(st, v, &b, err);
    } else if (v->format == DPAS_FORMAT_JSON) {
        rc = json_doc(st, v, &b, err);
    } else {
        rc = full_table(st, v->format, &b, err);
    }
    if (rc) {
        free(b.data);
        return NULL;
    }
    return dpas__buf_finish(&b, err);
}
