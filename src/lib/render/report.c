/* SPDX-License-Identifier: Apache-2.0 */
/* Renderers: a scenario's inputs and report, registry listings and error objects, as text,
 * JSON, CSV or Markdown, into a string the caller owns. */
#include "../internal.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t dpas_warning_message(const dpas_report *r, unsigned warning, char *buf, size_t cap)
{
    if (warning == DPAS_WARN_UNEQUAL_REPLICAS)
        return (size_t)snprintf(buf, cap,
                                "dp_degree %lld does not divide accelerators %lld: replicas are "
                                "unequal (the scenario assumes equal replicas; "
                                "accelerators_per_replica is a mean; a memory check holds the "
                                "smallest replica)",
                                (long long)(r->gather_factor + 1), (long long)r->accelerators);
    return (size_t)snprintf(buf, cap, "unknown warning %u", warning);
}

/* The value of an attribute as text: exact bytes, integers, shortest doubles. With units set,
 * bytes get a human form in parentheses ("350000000000 B (350 GB)"); units -1 (JSON) gives the
 * bare number, UNITS_BARE_MARKED (CSV, markdown cells) the number without its unit, marked when
 * rounded. */
enum { UNITS_JSON = -1, UNITS_BARE_MARKED = -2 };
static void value_text(const dpas_report *r, dpas_attr a, bool python_reals, int units, char *buf,
                       size_t cap)
{
    dpas_value v;
    if (dpas_report_get(r, a, &v, NULL)) {
        snprintf(buf, cap, "undefined");
        return;
    }
    if (v.kind == DPAS_VALUE_INT)
        snprintf(buf, cap, "%lld", (long long)v.i);
    else if (v.kind == DPAS_VALUE_REAL && units == UNITS_JSON && !isfinite(v.r))
        snprintf(buf, cap, "null"); /* a report filled by a caller: JSON has no inf or nan */
    else if (v.kind == DPAS_VALUE_REAL)
        dpas__fmt_double(v.r, python_reals, buf, cap);
    else {
        /* exact digits, or rounded and marked ("1.333333333333333333 B (rounded; exactly 4/3)")
         * where the decimal does not terminate; JSON (units < 0) gets the bare number and its
         * exact fraction in a field of its own (render_json) */
        char exact[112], human[64], frac[128] = ""; /* 112 + 128 + 64 < every caller's 256 */
        dpas_format_bytes_exact(v.bytes, exact, sizeof exact);
        if (units != UNITS_JSON && !dpas_bytes_is_decimal(v.bytes)) {
            char f[64];
            dpas_format_bytes_fraction(v.bytes, f, sizeof f);
            snprintf(frac, sizeof frac, "%s (rounded; exactly %s)",
                     units == UNITS_BARE_MARKED ? "" : " B", f);
        }
        bool small = v.bytes.whole < 1000;
        if (units == DPAS_UNITS_BYTES || units < 0 || small)
            snprintf(buf, cap, "%s%s", exact, frac[0] ? frac : units < 0 ? "" : " B");
        else {
            dpas_format_bytes_human(v.bytes, (dpas_units)units, human, sizeof human);
            if (frac[0])
                snprintf(buf, cap, "%s%s (%s)", exact, frac, human);
            else
                snprintf(buf, cap, "%s B (%s)", exact, human);
        }
    }
}

/* The equation with the inputs substituted, e.g. "dp_degree - 1 = 128 - 1 = 127". */
static void explain_text(const dpas_scenario *s, const dpas_report *r, dpas_attr a, char *buf,
                         size_t cap)
{
    char v[256], w[128];
    value_text(r, a, false, DPAS_UNITS_BYTES, v, sizeof v);
    long long n = (long long)s->dp_degree;
    const char *eq = dpas_attr_equation(a);
    switch (a) {
    case DPAS_ATTR_ACCELERATORS:
        snprintf(buf, cap, "%s = nodes x accelerators_per_node = %lld x %lld = %s", eq,
                 (long long)s->nodes, (long long)s->accelerators_per_node, v);
        break;
    case DPAS_ATTR_NODES:
    case DPAS_ATTR_ACCELERATORS_PER_NODE: snprintf(buf, cap, "%s = %s", eq, v); break;
    case DPAS_ATTR_ACCELERATORS_PER_REPLICA:
        snprintf(buf, cap, "%s = %lld / %lld = %s", eq, (long long)r->accelerators, n, v);
        break;
    case DPAS_ATTR_GRADIENT_BYTES:
    case DPAS_ATTR_CHECKPOINT_BYTES:
    case DPAS_ATTR_WEIGHT_BYTES: {
        dpas_rational wd = a == DPAS_ATTR_GRADIENT_BYTES     ? s->gradient_bytes_per_param
                           : a == DPAS_ATTR_CHECKPOINT_BYTES ? s->checkpoint_bytes_per_param
                                                             : s->weight_bytes_per_param;
        if (r->undefined & (1u << a)) {
            snprintf(buf, cap, "%s: undefined, %s", eq, dpas_report_undefined_reason(r, a));
            break;
        }
        dpas_format_width(wd, w, sizeof w);
        snprintf(buf, cap, "%s = %llu x %s = %s", eq, (unsigned long long)s->parameters, w, v);
        break;
    }
    case DPAS_ATTR_ALLREDUCE_FACTOR:
        if (n == 1)
            snprintf(buf, cap, "%s = 0 (one replica exchanges nothing)", eq);
        else
            snprintf(buf, cap, "%s = 2 x (%lld - 1) / %lld = %s", eq, n, n, v);
        break;
    case DPAS_ATTR_GATHER_FACTOR: snprintf(buf, cap, "%s = %lld - 1 = %s", eq, n, v); break;
    case DPAS_ATTR_GATHER_TRAFFIC_RATIO: {
        if (r->undefined & (1u << a)) {
            snprintf(buf, cap, "%s: undefined, %s", eq, dpas_report_undefined_reason(r, a));
            break;
        }
        char af[40];
        dpas__fmt_double(r->allreduce_factor, false, af, sizeof af);
        snprintf(buf, cap, "%s = %lld / %s = %s (= dp_degree / 2)", eq, (long long)r->gather_factor,
                 af, v);
        break;
    }
    default: snprintf(buf, cap, "%s", eq); break;
    }
}

size_t dpas_report_explain(const dpas_scenario *s, const dpas_report *r, dpas_attr a, char *buf,
                           size_t cap)
{
    char t[600];
    if ((unsigned)a >= DPAS_ATTR_COUNT)
        return (size_t)snprintf(buf, cap, "unknown attribute %d", (int)a);
    explain_text(s, r, a, t, sizeof t);
    return (size_t)snprintf(buf, cap, "%s", t);
}

static void width_text(dpas_rational w, char *buf, size_t cap)
{
    if (!w.den)
        snprintf(buf, cap, "none");
    else
        dpas_format_width(w, buf, cap);
}

/* "key": the width as a bare number of bytes (and "key_exact" when it does not terminate), or
 * null. */
static void render_text(dpas__buf *b, const dpas_scenario *s, const dpas_report *r,
                        const dpas_render_opts *o, unsigned show)
{
    char t[600], w[128];
    if (!o->attrs) {
        if (o->label) {
            dpas__buf_puts(b, "scenario  ");
            dpas__escape(b, DPAS_FORMAT_TEXT, o->label);
            dpas__buf_puts(b, "\n\n");
        }
        dpas__buf_puts(b, "inputs\n");
        dpas__buf_printf(b, "  %-28s", "workload");
        dpas__escape(b, DPAS_FORMAT_TEXT, s->workload ? s->workload : "custom");
        dpas__buf_printf(b, " (%llu parameters)\n", (unsigned long long)s->parameters);
        dpas__buf_printf(b, "  %-28s", "fleet");
        dpas__escape(b, DPAS_FORMAT_TEXT, s->fleet ? s->fleet : "custom");
        dpas__buf_printf(b, " (%lld nodes x %lld accelerators)\n", (long long)s->nodes,
                         (long long)s->accelerators_per_node);
        dpas__buf_printf(b, "  %-28s%lld\n", "dp_degree", (long long)s->dp_degree);
        width_text(s->gradient_bytes_per_param, w, sizeof w);
        dpas__buf_printf(b, "  %-28s%s\n", "gradient_bytes_per_param", w);
        width_text(s->checkpoint_bytes_per_param, w, sizeof w);
        dpas__buf_printf(b, "  %-28s%s\n", "checkpoint_bytes_per_param", w);
        width_text(s->weight_bytes_per_param, w, sizeof w);
        dpas__buf_printf(b, "  %-28s%s\n", "weight_bytes_per_param", w);
        dpas__buf_puts(b, "\nattributes\n");
    }
    for (int a = 0; a < DPAS_ATTR_COUNT; a++) {
        if (!(show & (1u << a)))
            continue;
        if (r->undefined & (1u << a))
            snprintf(t, sizeof t, "undefined (%s)", dpas_report_undefined_reason(r, (dpas_attr)a));
        else
            value_text(r, (dpas_attr)a, false, o->units, t, sizeof t);
        dpas__buf_printf(b, "  %-28s%s\n", dpas_attr_name((dpas_attr)a), t);
        if (o->explain) {
            explain_text(s, r, (dpas_attr)a, t, sizeof t);
            dpas__buf_printf(b, "  %-28s= %s\n", "", t);
        }
    }
}

/* ---- the eval document's fields ---- */

#define V(name, type, flags, unit)                                                                 \
    {                                                                                              \
        name, DPAS_COL_##type, DPAS_FIELD_VALUE, flags, unit, NULL, 0                              \
    }
#define NUL DPAS_FIELD_NULLABLE
#define OPT DPAS_FIELD_OPTIONAL
static const dpas_field workload_fields[] = {V("name", TEXT, 0, NULL),
                                             V("parameters", UINT, 0, "parameters")};
static const dpas_field fleet_fields[] = {
    V("name", TEXT, 0, NULL),
    V("nodes", INT, 0, NULL),
    V("accelerators_per_node", INT, 0, NULL),
    V("node", TEXT, OPT, NULL),
    V("fabric", TEXT, OPT, NULL),
};
static const dpas_field input_fields[] = {
    {"workload", DPAS_COL_TEXT, DPAS_FIELD_OBJECT, 0, NULL, workload_fields, 2},
    {"fleet", DPAS_COL_TEXT, DPAS_FIELD_OBJECT, 0, NULL, fleet_fields,
     sizeof fleet_fields / sizeof fleet_fields[0]},
    V("dp_degree", INT, 0, NULL),
    V("gradient_bytes_per_param", BYTES, NUL, "B/parameter"),
    V("checkpoint_bytes_per_param", BYTES, NUL, "B/parameter"),
    V("weight_bytes_per_param", BYTES, NUL, "B/parameter"),
};
static const dpas_field sentence = V("", TEXT, 0, NULL);
const dpas_field dpas__eval_fields[] = {
    V("scenario", TEXT, NUL, NULL),
    {"inputs", DPAS_COL_TEXT, DPAS_FIELD_OBJECT, 0, NULL, input_fields,
     sizeof input_fields / sizeof input_fields[0]},
    {"attributes", DPAS_COL_TEXT, DPAS_FIELD_ATTRS, 0, NULL, NULL, 0},
    {"undefined", DPAS_COL_TEXT, DPAS_FIELD_ATTRS, 0, NULL, &sentence, 1},
    {"equations", DPAS_COL_TEXT, DPAS_FIELD_ATTRS, OPT, NULL, &sentence, 1}, /* with explain */
    {"warnings", DPAS_COL_TEXT, DPAS_FIELD_TEXTS, 0, NULL, NULL, 0},
};
const size_t dpas__eval_nfields = sizeof dpas__eval_fields / sizeof dpas__eval_fields[0];
#undef V
#undef NUL
#undef OPT

typedef struct eval_doc {
    const dpas_scenario *s;
    const dpas_report *r;
    const dpas_render_opts *o;
    unsigned show;
} eval_doc;

static dpas_cell width_cell(dpas_rational w)
{
    if (!w.den)
        return dpas_cell_null();
    dpas_bytes x = {w.num / w.den, w.num % w.den, w.den};
    if (!x.frac_num)
        x.frac_den = 1;
    return dpas_cell_bytes(x);
}

static int workload_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    (void)sub;
    const dpas_scenario *s = ctx;
    *c = !strcmp(f->name, "name") ? dpas_cell_text(s->workload ? s->workload : "custom")
                                  : dpas_cell_uint(s->parameters);
    return 0;
}

static int fleet_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    (void)sub;
    const dpas_scenario *s = ctx;
    if (!strcmp(f->name, "name"))
        *c = dpas_cell_text(s->fleet ? s->fleet : "custom");
    else if (!strcmp(f->name, "nodes"))
        *c = dpas_cell_int(s->nodes);
    else if (!strcmp(f->name, "accelerators_per_node"))
        *c = dpas_cell_int(s->accelerators_per_node);
    else if (!strcmp(f->name, "node")) /* a fleet given by its parts may have none */
        return s->node_entry ? (*c = dpas_cell_text(s->node_entry->path), 0) : DPAS__FIELD_ABSENT;
    else
        return s->fabric_entry ? (*c = dpas_cell_text(s->fabric_entry->path), 0)
                               : DPAS__FIELD_ABSENT;
    return 0;
}

static int input_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    const dpas_scenario *s = ctx;
    if (!strcmp(f->name, "workload"))
        return dpas__json_fields(sub, f->sub, f->nsub, NULL, false, workload_value, ctx);
    if (!strcmp(f->name, "fleet"))
        return dpas__json_fields(sub, f->sub, f->nsub, NULL, false, fleet_value, ctx);
    if (!strcmp(f->name, "dp_degree"))
        *c = dpas_cell_int(s->dp_degree);
    else if (!strcmp(f->name, "gradient_bytes_per_param"))
        *c = width_cell(s->gradient_bytes_per_param);
    else if (!strcmp(f->name, "checkpoint_bytes_per_param"))
        *c = width_cell(s->checkpoint_bytes_per_param);
    else
        *c = width_cell(s->weight_bytes_per_param);
    return 0;
}

/* attributes, undefined, equations: an object of the attributes shown, by name */
static void attrs_json(dpas__buf *b, const eval_doc *x, const char *which)
{
    const dpas_report *r = x->r;
    char t[600];
    bool first = true, values = !strcmp(which, "attributes"), undef = !strcmp(which, "undefined");
    dpas__buf_puts(b, "{");
    for (int a = 0; a < DPAS_ATTR_COUNT; a++) {
        if (!(x->show & (1u << a)) || (undef && !(r->undefined & (1u << a))))
            continue;
        dpas__buf_puts(b, first ? "\n    " : ",\n    ");
        first = false;
        dpas_value v;
        if (values && !(r->undefined & (1u << a)) &&
            dpas_attr_kind((dpas_attr)a) == DPAS_VALUE_BYTES &&
            !dpas_report_get(r, (dpas_attr)a, &v, NULL)) { /* and "<attr>_exact" if rounded */
            dpas__buf_json_bytes(b, dpas_attr_name((dpas_attr)a), v.bytes);
            continue;
        }
        dpas__buf_printf(b, "\"%s\": ", dpas_attr_name((dpas_attr)a));
        if (undef) {
            dpas__buf_json_str(b, dpas_report_undefined_reason(r, (dpas_attr)a));
        } else if (values) {
            if (r->undefined & (1u << a))
                snprintf(t, sizeof t, "null");
            else
                value_text(r, (dpas_attr)a, true, UNITS_JSON, t, sizeof t);
            dpas__buf_puts(b, t);
        } else {
            explain_text(x->s, r, (dpas_attr)a, t, sizeof t);
            dpas__buf_json_str(b, t);
        }
    }
    dpas__buf_puts(b, first && undef ? "}" : "\n  }");
}

static int eval_value(const dpas_field *f, dpas_cell *c, dpas__buf *sub, void *ctx)
{
    const eval_doc *x = ctx;
    if (!strcmp(f->name, "scenario")) {
        *c = dpas_cell_text(x->o->label);
    } else if (!strcmp(f->name, "inputs")) {
        return dpas__json_fields(sub, f->sub, f->nsub, "  ", false, input_value,
                                 (void *)(uintptr_t)x->s);
    } else if (!strcmp(f->name, "warnings")) {
        char t[600];
        bool first = true;
        dpas__buf_puts(sub, "[");
        for (unsigned bit = 1; bit && bit <= x->r->warnings; bit <<= 1) {
            if (!(x->r->warnings & bit))
                continue;
            dpas_warning_message(x->r, bit, t, sizeof t);
            dpas__buf_puts(sub, first ? "\n    " : ",\n    ");
            dpas__buf_json_str(sub, t);
            first = false;
        }
        dpas__buf_puts(sub, first ? "]" : "\n  ]");
    } else if (!strcmp(f->name, "equations") && !x->o->explain) {
        return DPAS__FIELD_ABSENT;
    } else {
        attrs_json(sub, x, f->name);
    }
    return 0;
}

static int render_json(dpas__buf *b, const dpas_scenario *s, const dpas_report *r,
                       const dpas_render_opts *o, unsigned show)
{
    eval_doc x = {s, r, o, show};
    int rc = dpas__json_fields(b, dpas__eval_fields, dpas__eval_nfields, "", true, eval_value, &x);
    dpas__buf_puts(b, "\n");
    return rc;
}

/* Rows through the writer: CSV gets the attributes; markdown the inputs, then the attributes. */
static int write_table(dpas__buf *b, int format, const dpas_column *cols, size_t ncols,
                       const char *const *cells, size_t nrows, dpas_error *err)
{
    dpas_writer_opts wo = {.format = (dpas_format)format};
    dpas_writer *w;
    int rc = dpas_writer_new(cols, ncols, &wo, dpas__sink_buf, b, &w, err);
    for (size_t i = 0; !rc && i < nrows; i++) {
        dpas_cell c[4];
        for (size_t k = 0; k < ncols; k++)
            c[k] = dpas_cell_text(cells[i * ncols + k]);
        rc = dpas_writer_row(w, c, err);
    }
    if (!rc)
        rc = dpas_writer_end(w, err);
    dpas_writer_free(w);
    return rc;
}

static int render_inputs_md(dpas__buf *b, const dpas_scenario *s, const dpas_render_opts *o,
                            dpas_error *err)
{
    static const dpas_column cols[2] = {{"input", DPAS_COL_TEXT, 0}, {"value", DPAS_COL_TEXT, 0}};
    dpas__buf wl = {0}, fl = {0};
    char dp[32], w[3][128];
    dpas__buf_printf(&wl, "%s (%llu parameters)", s->workload ? s->workload : "custom",
                     (unsigned long long)s->parameters);
    dpas__buf_printf(&fl, "%s (%lld nodes x %lld accelerators)", s->fleet ? s->fleet : "custom",
                     (long long)s->nodes, (long long)s->accelerators_per_node);
    snprintf(dp, sizeof dp, "%lld", (long long)s->dp_degree);
    width_text(s->gradient_bytes_per_param, w[0], sizeof w[0]);
    width_text(s->checkpoint_bytes_per_param, w[1], sizeof w[1]);
    width_text(s->weight_bytes_per_param, w[2], sizeof w[2]);
    if (o->label) {
        dpas__buf_puts(b, "**scenario** ");
        dpas__escape(b, DPAS_FORMAT_MARKDOWN, o->label);
        dpas__buf_puts(b, "\n\n");
    }
    const char *cells[] = {"workload",
                           wl.data ? wl.data : "",
                           "fleet",
                           fl.data ? fl.data : "",
                           "dp_degree",
                           dp,
                           "gradient_bytes_per_param",
                           w[0],
                           "checkpoint_bytes_per_param",
                           w[1],
                           "weight_bytes_per_param",
                           w[2]};
    int rc = wl.oom || fl.oom ? dpas__fail(err, DPAS_ENOMEM, "", "out of memory")
                              : write_table(b, DPAS_FORMAT_MARKDOWN, cols, 2, cells, 6, err);
    free(wl.data);
    free(fl.data);
    dpas__buf_puts(b, "\n");
    return rc;
}

static int render_rows(dpas__buf *b, const dpas_scenario *s, const dpas_report *r,
                       const dpas_render_opts *o, unsigned show, bool csv, dpas_error *err)
{
    static const dpas_column cols[4] = {{"attribute", DPAS_COL_TEXT, 0},
                                        {"value", DPAS_COL_TEXT, DPAS_COL_RIGHT},
                                        {"unit", DPAS_COL_TEXT, 0},
                                        {"note", DPAS_COL_TEXT, 0}};
    char v[DPAS_ATTR_COUNT][320];
    char note[DPAS_ATTR_COUNT][600];
    const char *cells[DPAS_ATTR_COUNT * 4];
    size_t n = 0;
    int rc;
    if (!csv && !o->attrs && (rc = render_inputs_md(b, s, o, err)))
        return rc;
    for (int a = 0; a < DPAS_ATTR_COUNT; a++) {
        if (!(show & (1u << a)))
            continue;
        note[a][0] = v[a][0] = '\0';
        if (r->undefined & (1u << a)) {
            snprintf(note[a], sizeof note[a], "undefined: %s",
                     dpas_report_undefined_reason(r, (dpas_attr)a));
        } else {
            value_text(r, (dpas_attr)a, false, UNITS_BARE_MARKED, v[a], sizeof v[a]);
            if (o->explain)
                explain_text(s, r, (dpas_attr)a, note[a], sizeof note[a]);
        }
        if (!csv && !(r->undefined & (1u << a)) &&
            dpas_attr_kind((dpas_attr)a) == DPAS_VALUE_BYTES && o->units != DPAS_UNITS_BYTES) {
            dpas_value x;
            char h[64];
            dpas_report_get(r, (dpas_attr)a, &x, NULL);
            if (x.bytes.whole >= 1000) {
                dpas_format_bytes_human(x.bytes, (dpas_units)o->units, h, sizeof h);
                size_t l = strlen(v[a]);
                snprintf(v[a] + l, sizeof v[a] - l, " (%s)", h);
            }
        }
        cells[n * 4] = dpas_attr_name((dpas_attr)a);
        cells[n * 4 + 1] = v[a];
        cells[n * 4 + 2] = dpas_attr_unit((dpas_attr)a);
        cells[n * 4 + 3] = note[a];
        n++;
    }
    return write_table(b, csv ? DPAS_FORMAT_CSV : DPAS_FORMAT_MARKDOWN, cols, 4, cells, n, err);
}

char *dpas_render_report(const dpas_scenario *s, const dpas_report *r, const dpas_render_opts *o,
                         dpas_error *err)
{
    dpas_render_opts def = {0};
    if (!o)
        o = &def;
    unsigned all = (1u << DPAS_ATTR_COUNT) - 1;
    unsigned show = o->attrs ? o->attrs & all : all;
    if (o->attrs) { /* an attribute asked for by name must have a value */
        for (int a = 0; a < DPAS_ATTR_COUNT; a++)
            if ((show & r->undefined) & (1u << a)) {
                dpas_value v;
                dpas_report_get(r, (dpas_attr)a, &v, err);
                return NULL;
            }
    }
    dpas__buf b = {0};
    switch (o->format) {
    case DPAS_FORMAT_JSON: (void)render_json(&b, s, r, o, show); break;
    case DPAS_FORMAT_CSV:
    case DPAS_FORMAT_MARKDOWN:
        if (render_rows(&b, s, r, o, show, o->format == DPAS_FORMAT_CSV, err)) {
            free(b.data);
            return NULL;
        }
        break;
    default: render_text(&b, s, r, o, show); break;
    }
    return dpas__buf_finish(&b, err);
}

char *dpas_render_error_json(const dpas_error *e, int status, const char *instance,
                             const char *hint)
{
    dpas__buf b = {0};
    dpas__buf_printf(&b, "{\"type\": \"urn:dpas:error:%s\", \"title\": ", dpas_err_name(e->code));
    dpas__buf_json_str(&b, dpas_err_title(e->code));
    dpas__buf_printf(
        &b, ", \"status\": %d, \"detail\": ", status > 0 ? status : dpas_err_status(e->code));
    dpas__buf_json_str(&b, e->message);
    if (instance && *instance) {
        dpas__buf_puts(&b, ", \"instance\": ");
        dpas__buf_json_str(&b, instance);
    }
    dpas__buf_puts(&b, ", \"code\": ");
    dpas__buf_json_str(&b, dpas_err_name(e->code));
    if (e->field[0]) {
        dpas__buf_puts(&b, ", \"field\": ");
        dpas__buf_json_str(&b, e->field);
    }
    if (hint && *hint) {
        dpas__buf_puts(&b, ", \"hint\": ");
        dpas__buf_json_str(&b, hint);
    }
    dpas__buf_puts(&b, "}\n");
    return dpas__buf_finish(&b, NULL);
}
