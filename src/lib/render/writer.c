/* SPDX-License-Identifier: Apache-2.0 */
/* The one table writer: typed columns as aligned or streamed text, JSON, CSV and markdown. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dpas_writer {
    const dpas_column *cols;
    size_t ncols;
    dpas_writer_opts o;
    dpas_sink_fn sink;
    void *ctx;
    int rc; /* the first error; every later call returns it */
    size_t nrows;
    bool header_done;
    /* aligned text: every cell held, escaped, until the end */
    char **held; /* nrows * ncols strings */
    size_t held_cap;
    size_t *widths; /* code points */
    dpas__buf line;
};

static bool numeric(const dpas_column *c)
{
    if (c->flags & DPAS_COL_RIGHT)
        return true;
    return c->type != DPAS_COL_TEXT && c->type != DPAS_COL_BOOL && !(c->flags & DPAS_COL_LEFT);
}

int dpas_writer_new(const dpas_column *cols, size_t ncols, const dpas_writer_opts *o,
                    dpas_sink_fn sink, void *ctx, dpas_writer **out, dpas_error *err)
{
    *out = NULL;
    if (!cols || !ncols || !sink)
        return dpas__fail(err, DPAS_EINVAL, "columns",
                          "a table needs at least one column and a sink");
    if ((unsigned)o->format > DPAS_FORMAT_MARKDOWN)
        return dpas__fail(err, DPAS_EINVAL, "format", "unknown format %d", (int)o->format);
    dpas_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->widths = calloc(ncols, sizeof *w->widths))) {
        free(w);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    w->cols = cols;
    w->ncols = ncols;
    w->o = *o;
    if (!w->o.null_text)
        w->o.null_text = "-";
    if (w->o.width <= 0)
        w->o.width = 16;
    w->sink = sink;
    w->ctx = ctx;
    for (size_t c = 0; c < ncols; c++) { /* streamed text: the width or the header's, if wider */
        w->widths[c] = dpas__utf8_width(cols[c].name);
        if (w->o.stream && w->widths[c] < (size_t)w->o.width)
            w->widths[c] = (size_t)w->o.width;
    }
    *out = w;
    return 0;
}

void dpas_writer_free(dpas_writer *w)
{
    if (!w)
        return;
    for (size_t i = 0; i < w->nrows * w->ncols && w->held; i++)
        free(w->held[i]);
    free(w->held);
    free(w->widths);
    free(w->line.data);
    free(w);
}

static int fail_rc(dpas_writer *w, int rc, dpas_error *err)
{
    if (!w->rc)
        w->rc = rc;
    if (rc == DPAS_ENOMEM)
        return dpas__fail(err, rc, "", "out of memory");
    return dpas__fail(err, rc, "output", "cannot write the output");
}

/* Send the line buffer to the sink and empty it. */
static int flush(dpas_writer *w, dpas_error *err)
{
    if (w->line.oom)
        return fail_rc(w, DPAS_ENOMEM, err);
    int rc = w->line.len ? w->sink(w->ctx, w->line.data, w->line.len) : 0;
    w->line.len = 0;
    return rc ? fail_rc(w, rc, err) : 0;
}

/* The cell's value as the format shows it, escaped, appended to b. */
static void cell_text(const dpas_writer *w, const dpas_column *col, const dpas_cell *v,
                      dpas__buf *b)
{
    const int f = w->o.format;
    const bool pretty = f == DPAS_FORMAT_TEXT || f == DPAS_FORMAT_MARKDOWN;
    char t[160];
    bool finite_real = col->type != DPAS_COL_REAL || isfinite(v->real);
    if (v->null || !finite_real || (col->type == DPAS_COL_TEXT && !v->text)) {
        if (f == DPAS_FORMAT_JSON)
            dpas__buf_puts(b, "null");
        else if (f == DPAS_FORMAT_TEXT)
            dpas__escape(b, f, w->o.null_text);
        return;
    }
    switch (col->type) {
    case DPAS_COL_TEXT:
        if ((col->flags & DPAS__COL_RAW) && f == DPAS_FORMAT_JSON) {
            /* a number the caller printed, bare; anything JSON has no literal for (inf, nan,
             * text) is null, so the document stays valid */
            char *end;
            double d = strtod(v->text, &end);
            bool literal = !strcmp(v->text, "true") || !strcmp(v->text, "false") ||
                           (end != v->text && !*end && isfinite(d) &&
                            strspn(v->text, "+-.0123456789eE") == strlen(v->text));
            dpas__buf_puts(b, !literal ? "null" : v->text + (v->text[0] == '+')); /* no "+1" */
        } else
            dpas__escape(b, f, v->text);
        return;
    case DPAS_COL_INT: dpas__buf_printf(b, "%lld", (long long)v->i); return;
    case DPAS_COL_UINT: dpas__buf_printf(b, "%llu", (unsigned long long)v->u); return;
    case DPAS_COL_BOOL: dpas__buf_puts(b, v->boolean ? "true" : "false"); return;
    case DPAS_COL_REAL: /* JSON and CSV: the shortest text of the double; text and markdown, read
                           by people: 6 or 10 significant digits where the column asks */
        if (pretty && (col->flags & (DPAS_COL_G6 | DPAS_COL_G10)) && isfinite(v->real) &&
            fabs(v->real) < 1.7976931345e308) /* above, 10 digits round past DBL_MAX */
            dpas__buf_printf(b, (col->flags & DPAS_COL_G6) ? "%.6g" : "%.10g", v->real);
        else
            dpas__buf_append(b, t, dpas__fmt_double(v->real, false, t, sizeof t));
        return;
    case DPAS_COL_BYTES:
        if (pretty && (col->flags & DPAS_COL_HUMAN)) { /* approximate by design: "1.333 B" */
            dpas_format_bytes_human(v->bytes, w->o.units, t, sizeof t);
            dpas__buf_puts(b, t);
            return;
        }
        /* exact digits; a count whose decimal does not terminate is rounded and said to be:
         * JSON adds "<column>_exact" after the cell (row_cell), the others say it in the cell */
        if (f == DPAS_FORMAT_JSON) {
            dpas__buf_bytes_exact(b, v->bytes);
        } else {
            dpas__buf fb = {0};
            dpas__buf_bytes_marked(&fb, v->bytes, "");
            if (fb.oom)
                b->oom = true;
            else if (f == DPAS_FORMAT_TEXT)
                dpas__buf_append(b, fb.data,
                                 fb.len); /* digits, spaces, '/', ';': nothing to escape */
            else
                dpas__escape(b, f, fb.data);
            free(fb.data);
        }
        if (pretty && (col->flags & DPAS_COL_EXACT_HUMAN) && w->o.units != DPAS_UNITS_BYTES) {
            dpas_format_bytes_human(v->bytes, w->o.units, t, sizeof t);
            dpas__buf_printf(b, " (%s)", t);
        }
        return;
    }
}

static void header(dpas_writer *w)
{
    dpas__buf *b = &w->line;
    const int f = w->o.format;
    w->header_done = true;
    if (f == DPAS_FORMAT_JSON) {
        if (w->o.document) { /* the head every JSON document of dpas carries */
            dpas__buf_puts(b, "{\n  \"dpas_version\": ");
            dpas__buf_json_str(b, DPAS_VERSION);
            dpas__buf_printf(
                b, ",\n  \"schema_version\": %d,\n  \"rows\": ", DPAS__JSON_SCHEMA_VERSION);
        }
        dpas__buf_puts(b, "[");
        return;
    }
    if (w->o.no_header || (f == DPAS_FORMAT_TEXT && !w->o.stream))
        return;
    if (f == DPAS_FORMAT_MARKDOWN) {
        dpas__buf_puts(b, "|");
        for (size_t c = 0; c < w->ncols; c++) {
            dpas__buf_puts(b, " ");
            dpas__escape(b, f, w->cols[c].name);
            dpas__buf_puts(b, " |");
        }
        dpas__buf_puts(b, "\n|");
        for (size_t c = 0; c < w->ncols; c++)
            dpas__buf_puts(b, numeric(&w->cols[c]) ? "---:|" : "---|");
        dpas__buf_puts(b, "\n");
        return;
    }
    for (size_t c = 0; c < w->ncols; c++) {
        if (c)
            dpas__buf_puts(b, f == DPAS_FORMAT_CSV ? "," : "  ");
        if (f == DPAS_FORMAT_CSV) {
            dpas__escape(b, f, w->cols[c].name);
        } else { /* streamed text: fixed widths, numbers right-aligned */
            size_t l = dpas__utf8_width(w->cols[c].name),
                   pad = l < w->widths[c] ? w->widths[c] - l : 0;
            if (numeric(&w->cols[c]))
                dpas__buf_printf(b, "%*s", (int)pad, "");
            dpas__escape(b, f, w->cols[c].name);
            if (!numeric(&w->cols[c]))
                dpas__buf_printf(b, "%*s", (int)pad, "");
        }
    }
    dpas__buf_puts(b, "\n");
}

static int hold(dpas_writer *w, const dpas_cell *cells, dpas_error *err)
{
    if (w->nrows * w->ncols + w->ncols > w->held_cap) {
        size_t cap = w->held_cap ? w->held_cap * 2 : 64 * w->ncols;
        char **p = realloc(w->held, cap * sizeof *p);
        if (!p)
            return fail_rc(w, DPAS_ENOMEM, err);
        w->held = p;
        w->held_cap = cap;
    }
    for (size_t c = 0; c < w->ncols; c++) {
        dpas__buf b = {0};
        cell_text(w, &w->cols[c], &cells[c], &b);
        dpas__buf_append(&b, "", 1);
        if (b.oom) {
            free(b.data);
            for (size_t k = 0; k < c; k++)
                free(w->held[w->nrows * w->ncols + k]);
            return fail_rc(w, DPAS_ENOMEM, err);
        }
        w->held[w->nrows * w->ncols + c] = b.data;
        size_t l = dpas__utf8_width(b.data);
        if (l > w->widths[c])
            w->widths[c] = l;
    }
    w->nrows++;
    return 0;
}

int dpas_writer_row(dpas_writer *w, const dpas_cell *cells, dpas_error *err)
{
    if (w->rc)
        return fail_rc(w, w->rc, err);
    const int f = w->o.format;
    if (f == DPAS_FORMAT_TEXT && !w->o.stream)
        return hold(w, cells, err);
    dpas__buf *b = &w->line;
    if (!w->header_done)
        header(w);
    if (f == DPAS_FORMAT_JSON)
        dpas__buf_puts(b, w->o.document ? (w->nrows ? ",\n    {" : "\n    {")
                                        : (w->nrows ? ",\n  {" : "\n  {"));
    else if (f == DPAS_FORMAT_MARKDOWN)
        dpas__buf_puts(b, "|");
    for (size_t c = 0; c < w->ncols; c++) {
        const dpas_column *col = &w->cols[c];
        if (f == DPAS_FORMAT_JSON) {
            if (c)
                dpas__buf_puts(b, ", ");
            const dpas_cell *v = &cells[c];
            if (col->type == DPAS_COL_BYTES && !v->null) {
                dpas__buf_json_bytes(b, col->name, v->bytes); /* and "<name>_exact" if rounded */
                continue;
            }
            dpas__buf_json_str(b, col->name);
            dpas__buf_puts(b, ": ");
            cell_text(w, col, v, b);
        } else if (f == DPAS_FORMAT_MARKDOWN) {
            dpas__buf_puts(b, " ");
            cell_text(w, col, &cells[c], b);
            dpas__buf_puts(b, " |");
        } else if (f == DPAS_FORMAT_CSV) {
            if (c)
                dpas__buf_puts(b, ",");
            cell_text(w, col, &cells[c], b);
        } else { /* streamed text */
            if (c)
                dpas__buf_puts(b, "  ");
            size_t start = b->len;
            cell_text(w, col, &cells[c], b);
            if (b->oom)
                break;
            /* nothing written yet (no header, an empty first cell): data is still NULL */
            size_t l = b->data ? dpas__utf8_width(b->data + start) : 0;
            if (l < w->widths[c]) {
                size_t pad = w->widths[c] - l;
                if (numeric(col)) { /* move the cell right */
                    dpas__buf_printf(b, "%*s", (int)pad, "");
                    memmove(b->data + start + pad, b->data + start, b->len - start - pad);
                    memset(b->data + start, ' ', pad);
                } else if (c + 1 < w->ncols) {
                    dpas__buf_printf(b, "%*s", (int)pad, "");
                }
            }
        }
    }
    if (f == DPAS_FORMAT_JSON)
        dpas__buf_puts(b, "}");
    else
        dpas__buf_puts(b, "\n");
    w->nrows++;
    /* hand the sink large pieces: a sweep of millions of rows is written in constant memory */
    if (b->len >= 1 << 16)
        return flush(w, err);
    return b->oom ? fail_rc(w, DPAS_ENOMEM, err) : 0;
}

/* Aligned text: header left-aligned, numbers right-aligned, two spaces between columns, no
 * trailing spaces. */
static void aligned(dpas_writer *w)
{
    dpas__buf *b = &w->line;
    for (size_t r = 0; r <= w->nrows; r++) {
        if (!r && w->o.no_header)
            continue;
        size_t pending = 0; /* spaces owed before the next cell: written only if text follows */
        for (size_t c = 0; c < w->ncols; c++) {
            const char *v = r ? w->held[(r - 1) * w->ncols + c] : NULL;
            dpas__buf cellb = {0};
            if (!r)
                dpas__escape(&cellb, DPAS_FORMAT_TEXT, w->cols[c].name);
            const char *t = r ? v : (cellb.data ? cellb.data : "");
            size_t l = dpas__utf8_width(t);
            if (c)
                pending += 2;
            if (r && numeric(&w->cols[c]))
                pending += w->widths[c] - l;
            if (*t) {
                dpas__buf_printf(b, "%*s", (int)pending, "");
                dpas__buf_puts(b, t);
                pending = 0;
            }
            if (!(r && numeric(&w->cols[c])))
                pending += w->widths[c] > l ? w->widths[c] - l : 0;
            free(cellb.data);
        }
        dpas__buf_puts(b, "\n");
        if (b->len >= 1 << 16 && !b->oom) {
            if (w->sink(w->ctx, b->data, b->len) && !w->rc)
                w->rc = DPAS_EIO;
            b->len = 0;
        }
    }
}

int dpas_writer_end(dpas_writer *w, dpas_error *err)
{
    if (w->rc)
        return fail_rc(w, w->rc, err);
    const int f = w->o.format;
    if (f == DPAS_FORMAT_TEXT && !w->o.stream) {
        aligned(w);
        if (w->rc)
            return fail_rc(w, w->rc, err);
    } else {
        if (!w->header_done)
            header(w);
        if (f == DPAS_FORMAT_JSON)
            dpas__buf_puts(&w->line, w->o.document ? (w->nrows ? "\n  ]\n}" : "]\n}")
                                                   : (w->nrows ? "\n]" : "]"));
    }
    return flush(w, err);
}
