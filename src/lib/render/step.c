/* SPDX-License-Identifier: Apache-2.0 */
/* The step rows rendered: a text report (the compute, the buckets, the baseline, the realisable
 * rows), or every field and row as JSON, CSV or markdown. */
#include "../internal.h"

#include <math.h>
#include <stddef.h>
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
        dpas__buf_printf(
            b, " + attention %.6g FLOP (%g x layers x sequence %llu x hidden per token)",
            st->attention_flops, st->flops_factor * 2, (unsigned long long)st->attention_sequence);
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

/* ---- the fields: a row's, and the document's ---- */

enum { HAS_ZERO = 1 }; /* a row's field written only with a ZeRO stage */
#define V(name, type, flags, unit)                                                                 \
    {                                                                                              \
        name, DPAS_COL_##type, DPAS_FIELD_VALUE, flags, unit, NULL, 0                              \
    }
#define NUL DPAS_FIELD_NULLABLE
static const dpas_field row_fields[] = {
    V("rule", TEXT, 0, NULL),
    V("convention", TEXT, 0, NULL),
    V("schedule", TEXT, 0, NULL),
    V("realisable", BOOL, 0, NULL),
    V("why", TEXT, NUL, NULL),
    V("bytes_per_worker", BYTES, NUL, "B"),
    V("exchange_s", REAL, NUL, "s"),
    V("exchange_model", TEXT, NUL, NULL),
    V("exchange_basis", TEXT, NUL, NULL),
    V("exchange_band_low_s", REAL, NUL, "s"),
    V("exchange_band_high_s", REAL, NUL, "s"),
    V("exposed_s", REAL, NUL, "s"),
    V("zero_s", REAL, NUL, "s"),
    V("rule_s", REAL, NUL, "s"),
    V("rule_bound", TEXT, NUL, NULL),
    V("step_s", REAL, NUL, "s"),
    V("step_band_low_s", REAL, NUL, "s"),
    V("step_band_high_s", REAL, NUL, "s"),
    V("added_s", REAL, NUL, "s"),
    V("share", REAL, NUL, NULL),
    V("zero_composition", TEXT, DPAS_FIELD_OPTIONAL | DPAS__FIELD_IF(HAS_ZERO), NULL),
};
enum { NROW = sizeof row_fields / sizeof row_fields[0] };

/* The memory check's fields in a step's "memory" object (render/analysis.c gives the values). */
const dpas_field dpas__step_memory_fields[] = {
    V("state_bytes", BYTES, 0, "B"),
    V("activations_counted", BOOL, 0, NULL),
    V("activations_per_layer_bytes", BYTES, 0, "B"),
    V("activations_bytes", BYTES, 0, "B"),
    V("activations", TEXT, 0, NULL),
    V("layers", INT, 0, NULL),
    V("micro_batch", UINT, 0, "sequences"),
    V("sequence", UINT, 0, "tokens"),
    V("recompute", TEXT, NUL, NULL),
    V("optimizer", TEXT, NUL, NULL),
    V("optimizer_bytes_per_param", UINT, 0, "B/parameter"),
    V("total_bytes", BYTES, 0, "B"),
    V("capacity_bytes", BYTES, 0, "B"),
    V("accelerators_per_replica", INT, 0, NULL),
    V("utilisation", REAL, NUL, NULL),
    V("fits", BOOL, 0, NULL),
    V("smallest_zero_stage_that_fits", INT, NUL, NULL),
    V("largest_dp_degree_that_fits", INT, NUL, NULL),
    V("smallest_dp_degree_that_fits", INT, NUL, NULL),
    V("smallest_nodes_that_fits", INT, NUL, NULL),
    V("smallest_recompute_that_fits", TEXT, NUL, NULL),
};
enum { NMEM = sizeof dpas__step_memory_fields / sizeof dpas__step_memory_fields[0] };
const size_t dpas__step_memory_nfields = NMEM;

const dpas_field dpas__step_fields[] = {
    V("scenario", TEXT, NUL, NULL),
    V("dp_degree", INT, 0, NULL),
    V("accelerators", INT, 0, NULL),
    V("parameters", UINT, 0, "parameters"),
    V("tokens", UINT, 0, "tokens"),
    V("flops", REAL, NUL, "FLOP"),
    V("attention_flops", REAL, NUL, "FLOP"),
    V("peak_flops", REAL, NUL, "FLOP/s"),
    V("peak_source", TEXT, NUL, NULL),
    V("mfu", REAL, NUL, NULL),
    V("mfu_basis", TEXT, NUL, NULL),
    V("mfu_source", TEXT, NUL, NULL),
    V("mfu_band_low", REAL, NUL, NULL),
    V("mfu_band_high", REAL, NUL, NULL),
    V("compute_s", REAL, NUL, "s"),
    V("forward_s", REAL, NUL, "s"),
    V("backward_s", REAL, NUL, "s"),
    V("compute_band_low_s", REAL, NUL, "s"),
    V("compute_band_high_s", REAL, NUL, "s"),
    V("bucket_bytes", UINT, 0, "B"),
    V("bucket_parameters", UINT, 0, "parameters"),
    V("buckets", UINT, 0, NULL),
    V("zero", INT, 0, NULL),
    V("iterations", INT, 0, NULL),
    V("gradient_bytes", BYTES, 0, "B"),
    V("weight_bytes", BYTES, 0, "B"),
    V("baseline_s", REAL, NUL, "s"),
    V("flops_factor", REAL, 0, NULL),
    V("recompute", TEXT, NUL, NULL),
    {"memory", DPAS_COL_TEXT, DPAS_FIELD_OBJECT, NUL, NULL, dpas__step_memory_fields, NMEM},
    {"notes", DPAS_COL_TEXT, DPAS_FIELD_TEXTS, 0, NULL, NULL, 0},
    {"rows", DPAS_COL_TEXT, DPAS_FIELD_ROWS, 0, NULL, row_fields, NROW},
};
const size_t dpas__step_nfields = sizeof dpas__step_fields / sizeof dpas__step_fields[0];
#undef V
#undef NUL

/* A row's value of a field, by its name. */
static dpas_cell row_cell(const dpas_step_row *r, const char *name)
{
    bool ok = r->realisable;
    const char *basis = ok ? dpas_time_basis_name(r->exchange_basis) : NULL;
    static const struct {
        const char *name;
        size_t off;
    } reals[] = {
        {"exchange_s", offsetof(dpas_step_row, exchange_s)},
        {"exchange_band_low_s", offsetof(dpas_step_row, exchange_lo_s)},
        {"exchange_band_high_s", offsetof(dpas_step_row, exchange_hi_s)},
        {"exposed_s", offsetof(dpas_step_row, exposed_s)},
        {"zero_s", offsetof(dpas_step_row, zero_s)},
        {"rule_s", offsetof(dpas_step_row, rule_s)},
        {"step_s", offsetof(dpas_step_row, step_s)},
        {"step_band_low_s", offsetof(dpas_step_row, step_lo_s)},
        {"step_band_high_s", offsetof(dpas_step_row, step_hi_s)},
        {"added_s", offsetof(dpas_step_row, added_s)},
        {"share", offsetof(dpas_step_row, share)},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!strcmp(name, reals[i].name))
            return real_or_null(*(const double *)((const char *)r + reals[i].off));
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
    if (!strcmp(name, "bytes_per_worker"))
        return ok ? dpas_cell_bytes(r->bytes_per_worker) : dpas_cell_null();
    if (!strcmp(name, "exchange_model"))
        return ok && r->exchange_model ? dpas_cell_text(r->exchange_model) : dpas_cell_null();
    if (!strcmp(name, "exchange_basis"))
        return basis ? dpas_cell_text(basis) : dpas_cell_null();
    if (!strcmp(name, "rule_bound"))
        return r->rule_bound ? dpas_cell_text(r->rule_bound) : dpas_cell_null();
    return dpas_cell_text(dpas_step_zero_composition(r->rule)); /* zero_composition */
}

static int full_table(const dpas_step *st, int format, dpas__buf *b, dpas_error *err)
{
    dpas_column cols[NROW];
    size_t n = dpas__field_columns(row_fields, NROW, st->zero ? HAS_ZERO : 0, cols);
    dpas_writer_opts wo = {.format = (dpas_format)format, .null_text = ""};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, n, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < st->nrows; i++) {
        dpas_cell cell[NROW];
        for (size_t k = 0; k < n; k++)
            cell[k] = row_cell(&st->rows[i], cols[k].name);
        rc = dpas_writer_row(w, cell, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    return rc;
}

typedef struct step_doc {
    const dpas_step *st;
    const dpas_step_view *v;
    dpas_error *err;
} step_doc;

static int step_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    const step_doc *x = ctx;
    const dpas_step *st = x->st;
    static const struct {
        const char *name;
        size_t off;
    } reals[] = {
        {"flops", offsetof(dpas_step, flops)},
        {"attention_flops", offsetof(dpas_step, attention_flops)},
        {"peak_flops", offsetof(dpas_step, peak_flops)},
        {"mfu", offsetof(dpas_step, mfu)},
        {"mfu_band_low", offsetof(dpas_step, mfu_lo)},
        {"mfu_band_high", offsetof(dpas_step, mfu_hi)},
        {"compute_s", offsetof(dpas_step, compute_s)},
        {"forward_s", offsetof(dpas_step, forward_s)},
        {"backward_s", offsetof(dpas_step, backward_s)},
        {"compute_band_low_s", offsetof(dpas_step, compute_lo_s)},
        {"compute_band_high_s", offsetof(dpas_step, compute_hi_s)},
        {"baseline_s", offsetof(dpas_step, baseline_s)},
        {"flops_factor", offsetof(dpas_step, flops_factor)},
    };
    for (size_t i = 0; i < sizeof reals / sizeof reals[0]; i++)
        if (!strcmp(f->name, reals[i].name)) {
            *c = dpas_cell_real(*(const double *)((const char *)st + reals[i].off));
            return 0;
        }
    if (!strcmp(f->name, "scenario"))
        *c = dpas_cell_text(x->v->label);
    else if (!strcmp(f->name, "dp_degree"))
        *c = dpas_cell_int(st->dp_degree);
    else if (!strcmp(f->name, "accelerators"))
        *c = dpas_cell_int(st->accelerators);
    else if (!strcmp(f->name, "parameters"))
        *c = dpas_cell_uint(st->parameters);
    else if (!strcmp(f->name, "tokens"))
        *c = dpas_cell_uint(st->tokens);
    else if (!strcmp(f->name, "peak_source"))
        *c = dpas_cell_text(st->peak_source);
    else if (!strcmp(f->name, "mfu_basis"))
        *c = dpas_cell_text(st->mfu_basis);
    else if (!strcmp(f->name, "mfu_source"))
        *c = dpas_cell_text(st->mfu_source);
    else if (!strcmp(f->name, "bucket_bytes"))
        *c = dpas_cell_uint(st->bucket_bytes);
    else if (!strcmp(f->name, "bucket_parameters"))
        *c = dpas_cell_uint(st->bucket_parameters);
    else if (!strcmp(f->name, "buckets"))
        *c = dpas_cell_uint(st->buckets);
    else if (!strcmp(f->name, "zero"))
        *c = dpas_cell_int(st->zero);
    else if (!strcmp(f->name, "iterations"))
        *c = dpas_cell_int(st->iterations);
    else if (!strcmp(f->name, "gradient_bytes"))
        *c = dpas_cell_bytes(st->gradient_bytes);
    else if (!strcmp(f->name, "weight_bytes"))
        *c = dpas_cell_bytes(st->weight_bytes);
    else if (!strcmp(f->name, "recompute"))
        *c = dpas_cell_text(dpas_recompute_name((dpas_recompute)st->recompute));
    else if (!strcmp(f->name, "memory"))
        return st->have_memory ? dpas__memory_json(sub, &st->memory, "  ") : 0;
    else if (!strcmp(f->name, "notes")) {
        dpas__buf_puts(sub, "[");
        for (size_t i = 0; i < st->nnotes; i++) {
            dpas__buf_puts(sub, i ? ", " : "");
            dpas__buf_json_str(sub, st->notes[i]);
        }
        dpas__buf_puts(sub, "]");
    } else if (!strcmp(f->name, "rows"))
        return full_table(st, DPAS_FORMAT_JSON, sub, x->err);
    else
        return dpas__fail(x->err, DPAS_EINVAL, "", "step: no value for the field %s", f->name);
    return 0;
}

static int json_doc(const dpas_step *st, const dpas_step_view *v, dpas__buf *b, dpas_error *err)
{
    step_doc x = {st, v, err};
    int rc = dpas__json_fields(b, dpas__step_fields, dpas__step_nfields, "", true, step_value, &x);
    dpas__buf_puts(b, "\n");
    if (rc && !err->code)
        dpas__fail(err, rc, "", "a field of the step document has no value");
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
