/* SPDX-License-Identifier: Apache-2.0 */
/* /api/v1/sweep and /api/v1/plot.svg: the library's sweep analysis (dpas/sweep.h), set up as
 * `dpas sweep` sets it up from its flags, its rows through the library's table writer (the
 * CLI's `-o json`), its plot through dpas_plot_svg (the CLI's `--plot FILE.svg`). A request may
 * ask for at most SRV_MAX_SWEEP_POINTS points; points whose inputs break a rule are left out and
 * counted in an X-Dpas-Warning header (the CLI counts them on stderr). */
#include "serve.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define PLOT_MAX_SERIES 64 /* as the CLI: one series per value of the second axis */

typedef struct sweep_req {
    dpas_request *req;
    const dpas_sweep *sw;
    size_t n0, n1;
} sweep_req;

/* The request's sweep, within the server's cap on points. 0, or -1 with the error response
 * filled. */
static int setup(srv_request *rq, srv_response *r, sweep_req *x, dpas_analysis a)
{
    if (!(x->req = srv_request_of(rq, r, a)))
        return -1;
    x->sw = dpas_request_sweep(x->req);
    x->n0 = x->sw->axes[0].n;
    x->n1 = dpas_sweep_values(x->sw, 1) * dpas_sweep_values(x->sw, 2); /* a third axis too */
    if (x->n1 && x->n0 > SRV_MAX_SWEEP_POINTS / x->n1) {
        srv_fail(r, 422, DPAS_ERANGE, dpas_sweep_input_name(x->sw->axes[0].input),
                 "the sweep has %llu points, over the server's limit of %d per request "
                 "(dpas sweep on the command line has no such limit)",
                 (unsigned long long)x->n0 * x->n1, SRV_MAX_SWEEP_POINTS);
        return -1;
    }
    return 0;
}

/* Points left out, as a header (the body stays the CLI's JSON). */
static void note_skipped(srv_response *r, uint64_t skipped, uint64_t total, const char *first)
{
    if (!skipped)
        return;
    char t[sizeof r->warning];
    snprintf(t, sizeof t, "%llu of %llu points left out; the first: %s",
             (unsigned long long)skipped, (unsigned long long)total, first);
    size_t o = 0;
    for (const unsigned char *p = (const unsigned char *)t; *p && o + 1 < sizeof r->warning; p++)
        r->warning[o++] = *p >= 0x20 && *p < 0x7f ? (char)*p : '?';
    r->warning[o] = '\0';
}

typedef struct sink_buf {
    char *data;
    size_t len, cap;
} sink_buf;

static int sink(void *ctx, const char *data, size_t len)
{
    sink_buf *b = ctx;
    if (b->len + len + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (cap < b->len + len + 1)
            cap *= 2;
        char *p = realloc(b->data, cap);
        if (!p)
            return -1;
        b->data = p;
        b->cap = cap;
    }
    memcpy(b->data + b->len, data, len);
    b->len += len;
    b->data[b->len] = '\0';
    return 0;
}

typedef struct rows_ctx {
    const dpas_sweep *sw;
    int format;
    dpas_column cols[DPAS_SWEEP_MAX_AXES + DPAS_METRIC_COUNT];
    dpas_writer *w;
    sink_buf b;
    dpas_error err;
} rows_ctx;

static int rows_row(void *ctx, const dpas_cell *cells)
{
    rows_ctx *x = ctx;
    dpas_writer_opts wo = {.format = x->format, .stream = 1, .document = 1};
    int rc;
    if (!x->w && (rc = dpas_writer_new(x->cols, dpas_sweep_ncolumns(x->sw), &wo, sink, &x->b, &x->w,
                                       &x->err)))
        return rc;
    return dpas_writer_row(x->w, cells, &x->err);
}

void srv_api_sweep(srv_request *rq, srv_response *r)
{
    sweep_req x;
    memset(&x, 0, sizeof x);
    if (setup(rq, r, &x, DPAS_ANALYSIS_SWEEP)) {
        dpas_request_free(x.req);
        return;
    }
    rows_ctx t;
    dpas_sweep_tally tally;
    dpas_error err;
    memset(&t, 0, sizeof t);
    memset(&err, 0, sizeof err);
    t.sw = x.sw;
    t.format = rq->format;
    dpas_sweep_columns(x.sw, t.cols);
    int rc = dpas_sweep_rows(x.sw, rows_row, &t, &tally, &err);
    if (rc && !tally.shown) {
        srv_error(r, srv_status_of(err.code), &err);
    } else if (rc || (rc = dpas_writer_end(t.w, &t.err)) ||
               (rq->format == DPAS_FORMAT_JSON && sink(&t.b, "\n", 1))) {
        if (!t.err.code)
            t.err.code = DPAS_ENOMEM,
            snprintf(t.err.message, sizeof t.err.message, "out of memory");
        srv_error(r, srv_status_of(t.err.code), &t.err);
    } else {
        r->status = 200;
        r->type = "application/json; charset=utf-8";
        r->body = t.b.data;
        r->len = t.b.len;
        r->free_body = free;
        t.b.data = NULL;
        note_skipped(r, tally.skipped, tally.skipped + tally.shown, tally.first);
    }
    free(t.b.data);
    dpas_writer_free(t.w);
    dpas_request_free(x.req);
}

void srv_api_plot(srv_request *rq, srv_response *r)
{
    sweep_req x;
    memset(&x, 0, sizeof x);
    dpas_sweep_figure *fig = NULL;
    if (setup(rq, r, &x, DPAS_ANALYSIS_PLOT))
        goto done;
    const dpas_request_opts *o = dpas_request_opts_of(x.req);
    if (x.sw->naxes > 2) { /* panels are the CLI's (dpas sweep --plot): not drawn as one */
        srv_fail(r, 400, DPAS_EINVAL, dpas_sweep_input_name(x.sw->axes[2].input),
                 "a plot over HTTP varies at most two inputs; %s varies too (dpas sweep --plot "
                 "draws a panel per value)",
                 dpas_sweep_input_name(x.sw->axes[2].input));
        goto done;
    }
    if (x.n1 > PLOT_MAX_SERIES) {
        srv_fail(r, 400, DPAS_EINVAL, dpas_sweep_input_name(x.sw->axes[1].input),
                 "%zu series are too many to plot (at most %d values of %s)", x.n1, PLOT_MAX_SERIES,
                 dpas_sweep_input_name(x.sw->axes[1].input));
        goto done;
    }
    /* the figure's points and axes as `dpas sweep --plot` draws them: the library's */
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (dpas_sweep_figure_new(x.sw, o->y, &fig, &err)) {
        srv_error(r, srv_status_of(err.code), &err);
        goto done;
    }
    char title[160];
    snprintf(title, sizeof title, "%s vs %s", fig->yname, fig->xname);
    dpas_plot_spec spec = {.title = o->title ? o->title : title,
                           .xlabel = fig->xname,
                           .ylabel = fig->yname,
                           .xlog = fig->xlog,
                           .ylog = fig->ylog,
                           .xunit = fig->xunit,
                           .yunit = fig->yunit,
                           .legend_title = fig->series_input};
    char *svg = dpas_plot_svg(&spec, fig->series, fig->nseries, &err);
    if (!svg) {
        srv_error(r, srv_status_of(err.code), &err);
        goto done;
    }
    r->status = 200;
    r->type = "image/svg+xml";
    r->body = svg;
    r->len = strlen(svg);
    r->free_body = dpas_free;
    note_skipped(r, fig->skipped, fig->skipped + fig->kept, fig->first);
done:
    dpas_sweep_figure_free(fig);
    dpas_request_free(x.req);
}
