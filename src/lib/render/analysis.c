/* SPDX-License-Identifier: Apache-2.0 */
/* Renderers of the smaller analyses, each from its rows: the rule catalogue, the byte inventory
 * and the memory check. */
#include "../internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Write rows through a writer into b; 0 or the error. */
typedef int (*row_fn)(const void *rows, size_t i, dpas_cell *cells, char *scratch);

static int table(const dpas_column *cols, size_t ncols, const dpas_writer_opts *wo, dpas__buf *b,
                 const void *rows, size_t nrows, row_fn fill, dpas_error *err)
{
    dpas_writer *w;
    dpas_cell cells[16];
    char scratch[2][64];
    int rc = dpas_writer_new(cols, ncols, wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < nrows; i++) {
        fill(rows, i, cells, scratch[0]);
        rc = dpas_writer_row(w, cells, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    return rc;
}

static char *finish(dpas__buf *b, int rc, dpas_error *err)
{
    if (rc) {
        free(b->data);
        return NULL;
    }
    return dpas__buf_finish(b, err);
}

static void label_text(dpas__buf *b, const char *label)
{
    if (!label)
        return;
    dpas__buf_puts(b, "scenario  ");
    dpas__escape(b, DPAS_FORMAT_TEXT, label);
    dpas__buf_puts(b, "\n\n");
}

/* ---- rules ---- */

typedef struct rules_ctx {
    const dpas_rule_row *rows;
    bool max_f, min_n;
} rules_ctx;

static int rule_cells(const void *ctx, size_t i, dpas_cell *c, char *scratch)
{
    (void)scratch;
    const rules_ctx *x = ctx;
    const dpas_rule_row *r = &x->rows[i];
    size_t k = 0;
    c[k++] = dpas_cell_text(r->rule->name);
    c[k++] = dpas_cell_text(r->rule->convention);
    c[k++] = dpas_cell_text(r->rule->condition);
    if (x->max_f)
        c[k++] = r->max_f >= 0 ? dpas_cell_int(r->max_f) : dpas_cell_null();
    if (x->min_n)
        c[k++] = r->min_n >= 0 ? dpas_cell_int(r->min_n) : dpas_cell_null();
    c[k++] = dpas_cell_bool(!!(r->rule->caps & DPAS_RULE_CAP_COORDINATEWISE));
    c[k++] = dpas_cell_bool(!!(r->rule->caps & DPAS_RULE_CAP_DISTANCES));
    c[k++] = dpas_cell_text(r->rule->compute);
    c[k++] = dpas_cell_text(r->rule->neighbours);
    c[k++] = dpas_cell_text(r->rule->source);
    return 0;
}

size_t dpas_rules_columns(int with_max_f, int with_min_n, dpas_column cols[10])
{
    size_t n = 0;
    cols[n++] = (dpas_column){"rule", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"convention", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"condition", DPAS_COL_TEXT, 0};
    if (with_max_f)
        cols[n++] = (dpas_column){"max_f", DPAS_COL_INT, 0};
    if (with_min_n)
        cols[n++] = (dpas_column){"min_n", DPAS_COL_INT, 0};
    cols[n++] = (dpas_column){"coordinatewise", DPAS_COL_BOOL, 0};
    cols[n++] = (dpas_column){"needs_distances", DPAS_COL_BOOL, 0};
    cols[n++] = (dpas_column){"compute", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"neighbours", DPAS_COL_TEXT, 0};
    cols[n++] = (dpas_column){"source", DPAS_COL_TEXT, 0};
    return n;
}

char *dpas_render_rules(const dpas_rule_row *rows, size_t nrows, int with_max_f, int with_min_n,
                        dpas_format format, dpas_error *err)
{
    dpas_column cols[10];
    size_t n = dpas_rules_columns(with_max_f, with_min_n, cols);
    rules_ctx x = {rows, with_max_f != 0, with_min_n != 0};
    dpas_writer_opts wo = {.format = format, .document = 1};
    dpas__buf b = {0};
    int rc = table(cols, n, &wo, &b, &x, nrows, rule_cells, err);
    if (format == DPAS_FORMAT_JSON)
        dpas__buf_puts(&b, "\n");
    return finish(&b, rc, err);
}

/* ---- inventory ---- */

typedef struct inv_ctx {
    const dpas_inventory_row *rows;
    bool text;
    dpas_units units;
    char si[64], iec[64];
} inv_ctx;

static int inv_cells(const void *ctx, size_t i, dpas_cell *c, char *scratch)
{
    (void)scratch;
    inv_ctx *x = (inv_ctx *)ctx;
    const dpas_inventory_row *r = &x->rows[i];
    size_t k = 0;
    c[k++] = dpas_cell_text(r->where);
    c[k++] = dpas_cell_text(r->item);
    c[k++] = dpas_cell_text(r->basis);
    c[k++] = dpas_cell_bytes(r->bytes);
    dpas_format_bytes_human(r->bytes, x->text ? x->units : DPAS_UNITS_SI, x->si, sizeof x->si);
    dpas_format_bytes_human(r->bytes, DPAS_UNITS_IEC, x->iec, sizeof x->iec);
    c[k++] = dpas_cell_text(x->si);
    if (!x->text)
        c[k++] = dpas_cell_text(x->iec);
    c[k++] = dpas_cell_text(r->source);
    return 0;
}

/* The inventory document: the scenario and a row per item (the text shows one human column). */
static const dpas_field inventory_row_fields[] = {
    {"where", DPAS_COL_TEXT, DPAS_FIELD_VALUE, 0, NULL, NULL, 0},
    {"item", DPAS_COL_TEXT, DPAS_FIELD_VALUE, 0, NULL, NULL, 0},
    {"basis", DPAS_COL_TEXT, DPAS_FIELD_VALUE, 0, NULL, NULL, 0},
    {"bytes", DPAS_COL_BYTES, DPAS_FIELD_VALUE, 0, "B", NULL, 0},
    {"si", DPAS_COL_TEXT, DPAS_FIELD_VALUE, 0, NULL, NULL, 0},
    {"iec", DPAS_COL_TEXT, DPAS_FIELD_VALUE, 0, NULL, NULL, 0},
    {"source", DPAS_COL_TEXT, DPAS_FIELD_VALUE, 0, NULL, NULL, 0},
};
enum { NINV = sizeof inventory_row_fields / sizeof inventory_row_fields[0] };
const dpas_field dpas__inventory_fields[] = {
    {"scenario", DPAS_COL_TEXT, DPAS_FIELD_VALUE, DPAS_FIELD_NULLABLE, NULL, NULL, 0},
    {"rows", DPAS_COL_TEXT, DPAS_FIELD_ROWS, 0, NULL, inventory_row_fields, NINV},
};
const size_t dpas__inventory_nfields = 2;

typedef struct inv_doc {
    const char *label;
    const dpas_column *cols;
    size_t ncols, nrows;
    inv_ctx *x;
    dpas_error *err;
} inv_doc;

static int inv_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    inv_doc *d = ctx;
    if (f->shape == DPAS_FIELD_VALUE) { /* scenario */
        *c = dpas_cell_text(d->label);
        return 0;
    }
    dpas_writer_opts wo = {.format = DPAS_FORMAT_JSON};
    return table(d->cols, d->ncols, &wo, sub, d->x, d->nrows, inv_cells, d->err);
}

char *dpas_render_inventory(const dpas_inventory_row *rows, size_t nrows, dpas_format format,
                            dpas_units units, const char *label, dpas_error *err)
{
    const bool text = format == DPAS_FORMAT_TEXT;
    /* text: one human column, in the units asked for; the others: both */
    dpas_units hu = units == DPAS_UNITS_IEC ? DPAS_UNITS_IEC : DPAS_UNITS_SI;
    dpas_column cols[NINV];
    size_t n = dpas__field_columns(inventory_row_fields, NINV, 0, cols);
    if (text) {
        cols[4].name = hu == DPAS_UNITS_IEC ? "iec" : "si";
        cols[5] = cols[6];
        n = 6;
    }
    inv_ctx x = {.rows = rows, .text = text, .units = hu};
    dpas_writer_opts wo = {.format = format};
    dpas__buf b = {0};
    int rc;
    if (format == DPAS_FORMAT_JSON) {
        inv_doc d = {label, cols, n, nrows, &x, err};
        rc = dpas__json_fields(&b, dpas__inventory_fields, dpas__inventory_nfields, "", true,
                               inv_value, &d);
        dpas__buf_puts(&b, "\n");
        return finish(&b, rc, err);
    }
    if (text)
        label_text(&b, label);
    rc = table(cols, n, &wo, &b, &x, nrows, inv_cells, err);
    return finish(&b, rc, err);
}

/* ---- memory ---- */

static void state_name(const dpas_convention *c, int zero, char *buf, size_t cap)
{
    if (zero)
        snprintf(buf, cap, "%s, ZeRO stage %d", c->name, zero);
    else
        snprintf(buf, cap, "%s", c->name);
}

/* The accelerators of the smallest replica, as the check counted them. */
static void per_replica(const dpas_memory *m, char *buf, size_t cap)
{
    dpas__fmt_double(m->accelerators_per_replica, false, buf, cap);
}

void dpas__memory_where(const dpas_memory *m, int zero, dpas__buf *out)
{
    const char *rec = NULL;
    if (m->smallest_recompute >= 0 && m->recompute &&
        strcmp(m->recompute, dpas_recompute_name((dpas_recompute)m->smallest_recompute)) &&
        !m->fits)
        rec = dpas_recompute_name((dpas_recompute)m->smallest_recompute);
    const bool has[4] = {m->smallest_dp_degree >= 1, m->smallest_zero_stage > zero, rec != NULL,
                         m->largest_dp_degree >= 1};
    int n = has[0] + has[1] + has[2] + has[3], k = 0;
    for (int i = 0; i < 4; i++) {
        if (!has[i])
            continue;
        dpas__buf_puts(out, k ? (k + 1 == n ? ", or " : ", ") : "");
        k++;
        if (i == 0)
            dpas__buf_printf(out, "from dp_degree %lld on %lld node%s (%lld x %.0f accelerators)",
                             (long long)m->smallest_dp_degree, (long long)m->smallest_nodes,
                             m->smallest_nodes == 1 ? "" : "s", (long long)m->smallest_dp_degree,
                             m->accelerators_per_replica);
        else if (i == 1)
            dpas__buf_printf(out, "with ZeRO stage %d", m->smallest_zero_stage);
        else if (i == 2)
            dpas__buf_printf(out, "with recompute %s", rec);
        else
            dpas__buf_printf(out, "at dp_degree <= %lld", (long long)m->largest_dp_degree);
    }
}

/* ---- memory's fields: the document's, and the object a step carries ---- */

#define V(name, type, flags, unit)                                                                 \
    {                                                                                              \
        name, DPAS_COL_##type, DPAS_FIELD_VALUE, flags, unit, NULL, 0                              \
    }
#define NUL DPAS_FIELD_NULLABLE
/* The memory document: the check's inputs and answer (dpas memory -o json). */
const dpas_field dpas__memory_fields[] = {
    V("scenario", TEXT, NUL, NULL),
    V("state", TEXT, 0, NULL),
    V("zero_stage", INT, 0, NULL),
    V("state_bytes", BYTES, 0, "B"),
    V("capacity_bytes", BYTES, 0, "B"),
    V("accelerators_per_replica", REAL, 0, NULL),
    V("accelerator", TEXT, 0, NULL),
    V("headroom_bytes", BYTES, DPAS_FIELD_SIGNED, "B"),
    V("utilisation", REAL, NUL, NULL),
    V("fits", BOOL, 0, NULL),
    V("smallest_zero_stage_that_fits", INT, NUL, NULL),
    V("largest_dp_degree_that_fits", INT, NUL, NULL),
    V("smallest_dp_degree_that_fits", INT, NUL, NULL),
    V("smallest_nodes_that_fits", INT, NUL, NULL),
    V("smallest_recompute_that_fits", TEXT, NUL, NULL),
    V("optimizer", TEXT, NUL, NULL),
    V("optimizer_bytes_per_param", UINT, 0, "B/parameter"),
    V("activations_counted", BOOL, 0, NULL),
    V("activations_bytes", BYTES, 0, "B"),
    V("activations_per_layer_bytes", BYTES, 0, "B"),
    V("activations", TEXT, 0, NULL),
    V("recompute", TEXT, NUL, NULL),
    V("micro_batch", UINT, 0, "sequences"),
    V("sequence", UINT, 0, "tokens"),
    V("layers", INT, 0, NULL),
    V("total_bytes", BYTES, 0, "B"),
    V("source", TEXT, 0, NULL),
};
const size_t dpas__memory_nfields = sizeof dpas__memory_fields / sizeof dpas__memory_fields[0];
#undef V
#undef NUL

/* A memory check's value of a field, by its name (both tables above). */
static int memory_cell(const dpas_memory *m, const char *name, dpas_cell *c)
{
    const bool finite = isfinite(m->utilisation);
    if (!strcmp(name, "state_bytes"))
        *c = dpas_cell_bytes(m->state);
    else if (!strcmp(name, "capacity_bytes"))
        *c = dpas_cell_bytes(m->capacity);
    else if (!strcmp(name, "activations_counted"))
        *c = dpas_cell_bool(m->activations_counted);
    else if (!strcmp(name, "activations_per_layer_bytes"))
        *c = dpas_cell_bytes(m->activations_per_layer);
    else if (!strcmp(name, "activations_bytes"))
        *c = dpas_cell_bytes(m->activations);
    else if (!strcmp(name, "activations"))
        *c = dpas_cell_text(m->activations_note);
    else if (!strcmp(name, "layers"))
        *c = dpas_cell_int(m->layers);
    else if (!strcmp(name, "micro_batch"))
        *c = dpas_cell_uint(m->micro_batch);
    else if (!strcmp(name, "sequence"))
        *c = dpas_cell_uint(m->sequence);
    else if (!strcmp(name, "recompute"))
        *c = dpas_cell_text(m->recompute);
    else if (!strcmp(name, "optimizer"))
        *c = dpas_cell_text(m->optimizer);
    else if (!strcmp(name, "optimizer_bytes_per_param"))
        *c = dpas_cell_uint(m->optimizer_bytes);
    else if (!strcmp(name, "total_bytes"))
        *c = dpas_cell_bytes(m->total);
    else if (!strcmp(name, "utilisation")) /* not finite (a zero capacity): null */
        *c = finite ? dpas_cell_real(m->utilisation) : dpas_cell_null();
    else if (!strcmp(name, "fits"))
        *c = dpas_cell_bool(m->fits);
    else if (!strcmp(name,
                     "smallest_zero_stage_that_fits")) /* where it would fit: null when nowhere */
        *c = m->smallest_zero_stage >= 0 ? dpas_cell_int(m->smallest_zero_stage) : dpas_cell_null();
    else if (!strcmp(name, "largest_dp_degree_that_fits"))
        *c = m->largest_dp_degree >= 1 ? dpas_cell_int(m->largest_dp_degree) : dpas_cell_null();
    else if (!strcmp(name, "smallest_dp_degree_that_fits"))
        *c = m->smallest_dp_degree >= 1 ? dpas_cell_int(m->smallest_dp_degree) : dpas_cell_null();
    else if (!strcmp(name, "smallest_nodes_that_fits")) /* with smallest_dp_degree */
        *c = m->smallest_dp_degree >= 1 ? dpas_cell_int(m->smallest_nodes) : dpas_cell_null();
    else if (!strcmp(name, "accelerators_per_replica")) /* floor(A / N): whole */
        *c = dpas_cell_int((int64_t)m->accelerators_per_replica);
    else if (!strcmp(name, "smallest_recompute_that_fits"))
        *c = m->smallest_recompute >= 0
                 ? dpas_cell_text(dpas_recompute_name((dpas_recompute)m->smallest_recompute))
                 : dpas_cell_null();
    else
        return DPAS_EINVAL; /* a field of the table no value is given for: a bug here */
    return 0;
}

static int step_memory_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    (void)sub;
    return memory_cell(ctx, f->name, c);
}

int dpas__memory_json(dpas__buf *b, const dpas_memory *m, const char *ind)
{
    return dpas__json_fields(b, dpas__step_memory_fields, dpas__step_memory_nfields, ind, false,
                             step_memory_value, (void *)(uintptr_t)m);
}

size_t dpas_memory_message(const dpas_scenario *s, const dpas_convention *c, int zero,
                           const dpas_memory *m, char *buf, size_t cap)
{
    char st[64], capb[64], name[64], apr[40];
    dpas__buf ex = {0};
    dpas_format_bytes_human(m->state, DPAS_UNITS_SI, st, sizeof st);
    dpas_format_bytes_human(m->capacity, DPAS_UNITS_SI, capb, sizeof capb);
    dpas__buf_bytes_marked(&ex, m->state, " B");
    state_name(c, zero, name, sizeof name);
    per_replica(m, apr, sizeof apr);
    /* where it would fit, as dpas_memory_check found it */
    char act[96] = "";
    dpas__buf wb = {0};
    dpas__memory_where(m, zero, &wb);
    const char *where = wb.data ? wb.data : "";
    if (m->activations_counted) {
        char ah[64];
        dpas_format_bytes_human(m->activations, DPAS_UNITS_SI, ah, sizeof ah);
        snprintf(act, sizeof act, " and its activations (%s)", ah);
    }
    bool zero16 = !strcmp(c->name, "zero16");
    size_t n = (size_t)snprintf(buf, cap,
                                "one replica's training state (%s = %s, %s)%s exceed%s the memory "
                                "of its %s %s accelerators (%s): utilisation %.3g; it fits %s%s",
                                ex.data ? ex.data : "?", st, name, act, *act ? "" : "s", apr,
                                s->node_entry->accelerator->name, capb, m->utilisation,
                                *where ? where : "at no dp_degree on this fleet",
                                *where || !(zero16 && zero < 3) ? "" : " and no ZeRO stage");
    free(ex.data);
    free(wb.data);
    return n;
}

/* A text or markdown value: [-]digits (marked when rounded) and the human form. */
static char *bytes_value(const char *sign, dpas_bytes v, const char *human_sign, const char *human)
{
    dpas__buf b = {0};
    dpas__buf_puts(&b, sign);
    dpas__buf_bytes_marked(&b, v, "");
    dpas__buf_printf(&b, " (%s%s)", human_sign, human);
    return dpas__buf_finish(&b, NULL);
}

/* The memory document's values: the check's, and its inputs'. */
typedef struct memory_doc {
    const dpas_scenario *s;
    const dpas_convention *c;
    int zero;
    const dpas_memory *m;
    const char *label;
    bool negative; /* the headroom: past the capacity */
} memory_doc;

static int memory_doc_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    (void)sub;
    const memory_doc *x = ctx;
    if (!strcmp(f->name, "scenario"))
        *c = dpas_cell_text(x->label);
    else if (!strcmp(f->name, "state"))
        *c = dpas_cell_text(x->c->name);
    else if (!strcmp(f->name, "zero_stage"))
        *c = dpas_cell_int(x->zero);
    else if (!strcmp(f->name, "accelerators_per_replica"))
        *c = dpas_cell_real(x->m->accelerators_per_replica);
    else if (!strcmp(f->name, "accelerator"))
        *c = dpas_cell_text(x->s->node_entry->accelerator->path);
    else if (!strcmp(f->name, "headroom_bytes")) {
        *c = dpas_cell_bytes(x->m->headroom);
        c->boolean = x->negative;
    } else if (!strcmp(f->name, "source"))
        *c = dpas_cell_text(x->c->source);
    else
        return memory_cell(x->m, f->name, c);
    return 0;
}

char *dpas_render_memory(const dpas_scenario *s, const dpas_convention *c, int zero,
                         const dpas_memory *m, dpas_format format, dpas_units units,
                         const char *label, dpas_error *err)
{
    char name[64], hs[64], hc[64], util[40], apr[40], hhum[64];
    state_name(c, zero, name, sizeof name);
    dpas_format_bytes_human(m->state, units, hs, sizeof hs);
    dpas_format_bytes_human(m->capacity, units, hc, sizeof hc);
    const char *sign = !m->fits && (m->headroom.whole || m->headroom.frac_num) ? "-" : "";
    dpas_format_bytes_human(m->headroom, units, hhum, sizeof hhum);
    /* a utilisation that is not finite (a caller's zero capacity) is null: JSON has no inf */
    bool finite = m->utilisation == m->utilisation && m->utilisation - m->utilisation == 0;
    if (finite)
        dpas__fmt_double(m->utilisation, false, util, sizeof util);
    else
        snprintf(util, sizeof util, format == DPAS_FORMAT_JSON ? "null" : "undefined");
    per_replica(m, apr, sizeof apr);
    dpas__buf b = {0};
    if (format == DPAS_FORMAT_JSON) {
        memory_doc x = {s, c, zero, m, label, sign[0] == '-'};
        int rc = dpas__json_fields(&b, dpas__memory_fields, dpas__memory_nfields, "", true,
                                   memory_doc_value, &x);
        dpas__buf_puts(&b, "\n");
        if (rc) {
            free(b.data);
            return dpas__fail(err, rc, "", "a field of the memory document has no value"), NULL;
        }
        return dpas__buf_finish(&b, err);
    }
    dpas__buf src = {0};
    dpas__buf_printf(&src, "%s (%s)", name, c->source);
    enum { NV = 16 };
    char *v[NV] = {dpas__buf_finish(&src, NULL), bytes_value("", m->state, "", hs),
                   bytes_value("", m->capacity, "", hc), NULL,
                   bytes_value(sign, m->headroom, sign, hhum)};
    dpas__buf x = {0};
    dpas__buf_printf(&x, "%s x %s", apr, s->node_entry->accelerator->name);
    {
        const int64_t A = s->nodes * s->accelerators_per_node, N = s->dp_degree;
        if (N > 0 && A % N) /* unequal replicas: the check holds the smallest */
            dpas__buf_printf(&x,
                             " (the smallest replica: %lld of the %lld have %lld, %lld have %lld)",
                             (long long)(N - A % N), (long long)N, (long long)(A / N),
                             (long long)(A % N), (long long)(A / N + 1));
    }
    v[3] = dpas__buf_finish(&x, NULL);
    v[5] = strdup(util);
    v[6] = strdup(m->fits ? "yes" : "no");
    char zs[32] = "none", dps[32] = "none", sdp[64] = "none", opt[160], ha[64], ht[64];
    if (m->smallest_zero_stage >= 0)
        snprintf(zs, sizeof zs, "%d", m->smallest_zero_stage);
    if (m->largest_dp_degree >= 1)
        snprintf(dps, sizeof dps, "%lld", (long long)m->largest_dp_degree);
    if (m->smallest_dp_degree >= 1)
        snprintf(sdp, sizeof sdp, "%lld (on %lld node%s)", (long long)m->smallest_dp_degree,
                 (long long)m->smallest_nodes, m->smallest_nodes == 1 ? "" : "s");
    v[7] = strdup(zs);
    v[8] = strdup(dps);
    v[9] = strdup(sdp);
    if (m->optimizer)
        snprintf(opt, sizeof opt, "%s (%llu B/param)", m->optimizer,
                 (unsigned long long)m->optimizer_bytes);
    else
        snprintf(opt, sizeof opt, "none: the state %s is fixed", c->name);
    v[10] = strdup(opt);
    v[11] = strdup(m->recompute ? m->recompute : "none");
    dpas_format_bytes_human(m->activations, units, ha, sizeof ha);
    dpas_format_bytes_human(m->total, units, ht, sizeof ht);
    v[12] = bytes_value("", m->activations, "", ha);
    v[13] = strdup(m->activations_note);
    v[14] = bytes_value("", m->total, "", ht);
    v[15] = strdup(m->smallest_recompute > 0
                       ? dpas_recompute_name((dpas_recompute)m->smallest_recompute)
                   : m->smallest_recompute == 0 ? "none (it fits without recomputation)"
                   : m->activations_counted     ? "no recomputation fits"
                                                : "activations not counted");
    static const char *const k[NV] = {"state",
                                      "state_bytes",
                                      "capacity_bytes",
                                      "accelerators_per_replica",
                                      "headroom_bytes",
                                      "utilisation",
                                      "fits",
                                      "smallest_zero_stage_that_fits",
                                      "largest_dp_degree_that_fits",
                                      "smallest_dp_degree_that_fits",
                                      "optimizer",
                                      "recompute",
                                      "activations_bytes",
                                      "activations",
                                      "total_bytes",
                                      "smallest_recompute_that_fits"};
    static const dpas_column cols[2] = {{"quantity", DPAS_COL_TEXT, 0},
                                        {"value", DPAS_COL_TEXT, 0}};
    int rc = 0;
    for (int i = 0; i < NV; i++)
        if (!v[i])
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    if (format == DPAS_FORMAT_TEXT)
        label_text(&b, label);
    dpas_writer_opts wo = {.format = format};
    dpas_writer *w = NULL;
    if (!rc)
        rc = dpas_writer_new(cols, 2, &wo, dpas__sink_buf, &b, &w, err);
    for (int i = 0; !rc && i < NV; i++) {
        dpas_cell cells[2] = {dpas_cell_text(k[i]), dpas_cell_text(v[i])};
        rc = dpas_writer_row(w, cells, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    for (int i = 0; i < NV; i++)
        free(v[i]);
    return finish(&b, rc, err);
}
