/* SPDX-License-Identifier: Apache-2.0 */
/* Line charts: one layout (ranges, log or linear axes, ticks with unit-aware labels, legend)
 * drawn through a small canvas interface by three backends: SVG text (built in, deterministic),
 * cairo (PNG and PDF, when built with it) and Unicode characters for a terminal. A figure is one
 * or more panels sharing their axes (a sweep's third varied input): stacked in SVG and PNG, a
 * page each in a PDF. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifdef DPAS_HAVE_CAIRO
#include <cairo-pdf.h>
#include <cairo.h>
#include <dlfcn.h>
#endif

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                "#9467bd", "#8c564b", "#e377c2", "#17becf"};
#define NPALETTE 8

typedef struct canvas canvas;
struct canvas {
    void (*line)(canvas *c, double x1, double y1, double x2, double y2, const char *color,
                 double width);
    void (*polyline)(canvas *c, const double *xs, const double *ys, size_t n, const char *color,
                     int dashed);
    void (*dot)(canvas *c, double x, double y, const char *color);
    /* anchor: -1 start, 0 middle, 1 end; rotate: 0 or -90 degrees */
    void (*text)(canvas *c, double x, double y, const char *s, int anchor, double size, int rotate);
    void (*rect)(canvas *c, double x, double y, double w, double h, const char *fill,
                 const char *stroke);
    void *ctx;
};

/* ---- axes ---- */

typedef struct axis {
    int log; /* 0, 2 or 10 */
    int unit;
    double lo, hi;    /* in transformed space */
    double ticks[64]; /* in data space */
    int nticks;
} axis;

static double tf(const axis *a, double v)
{
    if (a->log == 10)
        return log10(v);
    if (a->log == 2)
        return log2(v);
    return v;
}

static bool usable(const axis *a, double v) { return isfinite(v) && (!a->log || v > 0); }

static double nice_step(double span, int target)
{
    double raw = span / target, p = pow(10, floor(log10(raw))), m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static void axis_fit(axis *a, double lo, double hi)
{
    a->nticks = 0;
    if (a->log) {
        double tl = floor(tf(a, lo)), th = ceil(tf(a, hi));
        if (th <= tl)
            th = tl + 1;
        a->lo = tl, a->hi = th;
        double span = th - tl;
        if (a->log == 10 && span <= 2) { /* 1, 2, 5 x 10^k */
            for (double k = tl; k <= th && a->nticks < 60; k++)
                for (int m = 0; m < 3; m++) {
                    double v = (m == 0 ? 1 : m == 1 ? 2 : 5) * pow(10, k);
                    if (log10(v) >= tl - 1e-9 && log10(v) <= th + 1e-9)
                        a->ticks[a->nticks++] = v;
                }
        } else {
            int every = (int)ceil(span / 10);
            for (double k = tl; k <= th + 1e-9 && a->nticks < 60; k += every)
                a->ticks[a->nticks++] = pow(a->log == 2 ? 2.0 : 10.0, k);
        }
        return;
    }
    if (hi <= lo) {
        double d = lo == 0 ? 1 : fabs(lo) * 0.1;
        lo -= d, hi += d;
    }
    double step = nice_step(hi - lo, 5);
    a->lo = floor(lo / step) * step;
    a->hi = ceil(hi / step) * step;
    for (double v = a->lo; v <= a->hi + step * 1e-9 && a->nticks < 60; v += step)
        a->ticks[a->nticks++] = fabs(v) < step * 1e-9 ? 0.0 : v;
}

/* A byte tick in SI units. Below 2^64 through the exact formatter (a tick is a whole number of
 * bytes there); from 2^64 on, where no uint64 holds it (and llround, which stops at 2^63, once
 * made every such tick "9.223 EB"), in EB from the double, with the same 3 decimals. */
static void bytes_tick(double v, char *buf, size_t cap)
{
    if (v < 18446744073709551616.0) { /* 2^64 */
        dpas_format_bytes_human((dpas_bytes){(uint64_t)floor(v + 0.5), 0, 1}, DPAS_UNITS_SI, buf,
                                cap);
        return;
    }
    char num[64];
    snprintf(num, sizeof num, "%.3f", v / 1e18);
    char *dot = strchr(num, '.'), *e = num + strlen(num) - 1;
    while (dot && e > dot && *e == '0')
        *e-- = '\0';
    if (dot && e == dot)
        *e = '\0';
    snprintf(buf, cap, "%s EB", num);
}

static void tick_label(const axis *a, double v, char *buf, size_t cap)
{
    if (a->unit == DPAS_AXIS_BYTES && v >= 1 && isfinite(v)) {
        bytes_tick(v, buf, cap);
        return;
    }
    if (a->unit == DPAS_AXIS_SECONDS && v != 0) {
        double av = fabs(v);
        if (av >= 1)
            snprintf(buf, cap, "%g s", v);
        else if (av >= 1e-3)
            snprintf(buf, cap, "%g ms", v * 1e3);
        else
            snprintf(buf, cap, "%g \xc2\xb5s", v * 1e6);
        return;
    }
    snprintf(buf, cap, "%g", v);
}

/* ---- the chart, on any canvas ---- */

typedef struct layout {
    double W, H, left, right, top, bottom;
    double fs; /* text scale: font_size / 12 */
    axis x, y;
} layout;

static int layout_fit(const dpas_plot_spec *sp, const dpas_series *s, size_t ns, layout *L,
                      dpas_error *err)
{
    memset(L, 0, sizeof *L);
    L->W = sp->width > 0 ? sp->width : 800;
    L->H = sp->height > 0 ? sp->height : 500;
    L->fs = sp->font_size > 0 ? sp->font_size / 12 : 1;
    double m = fmax(1, L->fs); /* larger text, wider margins */
    L->left = 90 * m, L->right = 20, L->top = 50 * m, L->bottom = 60 * m;
    L->x.log = sp->xlog, L->x.unit = sp->xunit;
    L->y.log = sp->ylog, L->y.unit = sp->yunit;
    double xl = INFINITY, xh = -INFINITY, yl = INFINITY, yh = -INFINITY;
    size_t used = 0;
    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            if (!usable(&L->x, s[k].x[i]) || !usable(&L->y, s[k].y[i]))
                continue;
            xl = fmin(xl, s[k].x[i]), xh = fmax(xh, s[k].x[i]);
            yl = fmin(yl, s[k].y[i]), yh = fmax(yh, s[k].y[i]);
            used++;
        }
    if (!used)
        return dpas__fail(err, DPAS_EINVAL, "plot",
                          "nothing to plot: no point has finite%s "
                          "coordinates",
                          sp->xlog || sp->ylog ? ", positive" : "");
    axis_fit(&L->x, xl, xh);
    axis_fit(&L->y, yl, yh);
    /* a series of zeros on the bottom of the frame would hide under the axis: the frame starts
     * a little below 0 (the ticks stay where they are) */
    if (!L->y.log && yl == 0 && L->y.lo == 0)
        L->y.lo = -0.04 * (L->y.hi - L->y.lo);
    return 0;
}

static double px(const layout *L, double v)
{
    return L->left + (tf(&L->x, v) - L->x.lo) / (L->x.hi - L->x.lo) * (L->W - L->left - L->right);
}

static double py(const layout *L, double v)
{
    return L->H - L->bottom -
           (tf(&L->y, v) - L->y.lo) / (L->y.hi - L->y.lo) * (L->H - L->top - L->bottom);
}

/* Do series a and b draw the same points (the same x and, within rounding, the same y)? */
static bool coincide(const layout *L, const dpas_series *a, const dpas_series *b)
{
    if (a->n != b->n)
        return false;
    size_t drawn = 0;
    for (size_t i = 0; i < a->n; i++) {
        bool ua = usable(&L->x, a->x[i]) && usable(&L->y, a->y[i]),
             ub = usable(&L->x, b->x[i]) && usable(&L->y, b->y[i]);
        if (ua != ub)
            return false;
        if (!ua)
            continue;
        double d = fabs(a->y[i] - b->y[i]), scale = fmax(fabs(a->y[i]), fabs(b->y[i]));
        if (a->x[i] != b->x[i] || d > 1e-9 * scale)
            return false;
        drawn++;
    }
    return drawn > 0;
}

static size_t drawable(const layout *L, const dpas_series *s)
{
    size_t m = 0;
    for (size_t i = 0; i < s->n; i++)
        m += usable(&L->x, s->x[i]) && usable(&L->y, s->y[i]);
    return m;
}

static int draw(canvas *c, const dpas_plot_spec *sp, const char *title, const dpas_series *s,
                size_t ns, const layout *L, dpas_error *err)
{
    char label[64];
    const double fs = L->fs;
    double x0 = L->left, x1 = L->W - L->right, y0 = L->H - L->bottom, y1 = L->top;
    c->rect(c, 0, 0, L->W, L->H, "#ffffff", NULL);
    for (int i = 0; i < L->x.nticks; i++) { /* grid and ticks */
        double x = px(L, L->x.ticks[i]);
        c->line(c, x, y0, x, y1, "#e0e0e0", 1);
        c->line(c, x, y0, x, y0 + 5, "#000000", 1);
        tick_label(&L->x, L->x.ticks[i], label, sizeof label);
        c->text(c, x, y0 + 18 * fs, label, 0, 12 * fs, 0);
    }
    for (int i = 0; i < L->y.nticks; i++) {
        double y = py(L, L->y.ticks[i]);
        c->line(c, x0, y, x1, y, "#e0e0e0", 1);
        c->line(c, x0 - 5, y, x0, y, "#000000", 1);
        tick_label(&L->y, L->y.ticks[i], label, sizeof label);
        c->text(c, x0 - 8, y + 4 * fs, label, 1, 12 * fs, 0);
    }
    c->line(c, x0, y0, x1, y0, "#000000", 1.5);
    c->line(c, x0, y0, x0, y1, "#000000", 1.5);
    if (title)
        c->text(c, L->W / 2, 28 * fs, title, 0, 16 * fs, 0);
    if (sp->xlabel)
        c->text(c, (x0 + x1) / 2, L->H - 18 * fs, sp->xlabel, 0, 13 * fs, 0);
    if (sp->ylabel)
        c->text(c, 18 * fs, (y0 + y1) / 2, sp->ylabel, 0, 13 * fs, -90);
    double *xs = NULL, *ys = NULL;
    size_t cap = 0;
    for (size_t k = 0; k < ns; k++) {
        if (s[k].n > cap) {
            free(xs), free(ys);
            cap = s[k].n;
            xs = malloc(cap * sizeof *xs), ys = malloc(cap * sizeof *ys);
            if (!xs || !ys) {
                free(xs), free(ys);
                return dpas__fail(err, DPAS_ENOMEM, "plot", "out of memory");
            }
        }
        size_t m = 0;
        for (size_t i = 0; i < s[k].n; i++)
            if (usable(&L->x, s[k].x[i]) && usable(&L->y, s[k].y[i])) {
                xs[m] = px(L, s[k].x[i]);
                ys[m++] = py(L, s[k].y[i]);
            }
        const char *col = palette[k % NPALETTE];
        bool dashed = false; /* drawn over an earlier series: dashed, so both show */
        for (size_t j = 0; j < k && !dashed; j++)
            dashed = coincide(L, &s[j], &s[k]);
        if (m > 1)
            c->polyline(c, xs, ys, m, col, dashed);
        if (m <= 200)
            for (size_t i = 0; i < m; i++)
                c->dot(c, xs[i], ys[i], col);
    }
    free(xs), free(ys);
    if (ns > 1 || (ns == 1 && s[0].name)) { /* legend, top left of the plot area */
        /* each entry names its series, and says when it lies on an earlier one or has no point
         * that can be drawn: every series is accounted for */
        char **text = calloc(ns, sizeof *text);
        if (!text)
            return dpas__fail(err, DPAS_ENOMEM, "plot", "out of memory");
        double lx = x0 + 12, ly = y1 + 10, w = 0, row = 18 * fs;
        size_t head = sp->legend_title ? 1 : 0;
        for (size_t k = 0; k < ns; k++) {
            dpas__buf b = {0};
            dpas__buf_puts(&b, s[k].name ? s[k].name : "");
            for (size_t j = 0; j < k; j++)
                if (coincide(L, &s[j], &s[k])) {
                    dpas__buf_printf(&b, " (same as %s)", s[j].name ? s[j].name : "");
                    break;
                }
            bool any = false; /* a value at all: a left-out point has none */
            for (size_t i = 0; i < s[k].n && !any; i++)
                any = isfinite(s[k].x[i]) && isfinite(s[k].y[i]);
            if (!drawable(L, &s[k]))
                dpas__buf_puts(&b, !any ? " (every point left out)"
                                        : " (no positive value: not drawn on a log axis)");
            if (!(text[k] = dpas__buf_finish(&b, NULL))) {
                for (size_t j = 0; j < k; j++)
                    free(text[j]);
                free(text);
                return dpas__fail(err, DPAS_ENOMEM, "plot", "out of memory");
            }
            w = fmax(w, 7.0 * fs * (double)strlen(text[k]));
        }
        if (head)
            w = fmax(w, 7.0 * fs * (double)strlen(sp->legend_title) - 30 * fs);
        c->rect(c, lx, ly, w + 44 * fs, row * (double)(ns + head) + 8, "#ffffff", "#999999");
        if (head)
            c->text(c, lx + 6, ly + 16 * fs, sp->legend_title, -1, 12 * fs, 0);
        for (size_t k = 0; k < ns; k++) {
            double yy = ly + 16 * fs + row * (double)(k + head);
            c->line(c, lx + 6, yy - 4 * fs, lx + 30 * fs, yy - 4 * fs, palette[k % NPALETTE], 2.5);
            c->text(c, lx + 36 * fs, yy, text[k], -1, 12 * fs, 0);
            free(text[k]);
        }
        free(text);
    }
    return 0;
}

/* ---- SVG ---- */

/* User text (titles, series names) as XML: the writer's escaping, so it is valid UTF-8 too. */
static void svg_escaped(dpas__buf *b, const char *s) { dpas__escape_xml(b, s); }

static void svg_line(canvas *c, double x1, double y1, double x2, double y2, const char *color,
                     double w)
{
    dpas__buf_printf(c->ctx,
                     "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" "
                     "stroke-width=\"%.1f\"/>\n",
                     x1, y1, x2, y2, color, w);
}

static void svg_polyline(canvas *c, const double *xs, const double *ys, size_t n, const char *color,
                         int dashed)
{
    dpas__buf_printf(c->ctx, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s points=\"",
                     color, dashed ? " stroke-dasharray=\"7,5\"" : "");
    for (size_t i = 0; i < n; i++)
        dpas__buf_printf(c->ctx, "%s%.2f,%.2f", i ? " " : "", xs[i], ys[i]);
    dpas__buf_puts(c->ctx, "\"/>\n");
}

static void svg_dot(canvas *c, double x, double y, const char *color)
{
    dpas__buf_printf(c->ctx, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", x, y,
                     color);
}

static void svg_text(canvas *c, double x, double y, const char *s, int anchor, double size,
                     int rotate)
{
    const char *a = anchor < 0 ? "start" : anchor > 0 ? "end" : "middle";
    dpas__buf_printf(c->ctx, "<text x=\"%.2f\" y=\"%.2f\" font-size=\"%.0f\" text-anchor=\"%s\"", x,
                     y, size, a);
    if (rotate)
        dpas__buf_printf(c->ctx, " transform=\"rotate(%d %.2f %.2f)\"", rotate, x, y);
    dpas__buf_puts(c->ctx, ">");
    svg_escaped(c->ctx, s);
    dpas__buf_puts(c->ctx, "</text>\n");
}

static void svg_rect(canvas *c, double x, double y, double w, double h, const char *fill,
                     const char *stroke)
{
    dpas__buf_printf(c->ctx,
                     "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"", x, y,
                     w, h, fill);
    if (stroke)
        dpas__buf_printf(c->ctx, " stroke=\"%s\"", stroke);
    dpas__buf_puts(c->ctx, "/>\n");
}

static const char *panel_title(const dpas_plot_spec *sp, const char *const *titles, size_t p)
{
    return titles && titles[p] ? titles[p] : sp->title;
}

static char *figure_svg(const dpas_plot_spec *sp, const dpas_series *s, size_t ns, size_t np,
                        const char *const *titles, dpas_error *err)
{
    layout L;
    if (layout_fit(sp, s, ns * np, &L, err))
        return NULL;
    dpas__buf b = {0};
    canvas c = {svg_line, svg_polyline, svg_dot, svg_text, svg_rect, &b};
    double H = L.H * (double)np;
    dpas__buf_printf(&b,
                     "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                     "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
                     "viewBox=\"0 0 %.0f %.0f\" font-family=\"",
                     L.W, H, L.W, H);
    if (sp->font) { /* the family asked for, then the generic one */
        svg_escaped(&b, sp->font);
        dpas__buf_puts(&b, ", sans-serif\">\n");
    } else {
        dpas__buf_puts(&b, "DejaVu Sans, Helvetica, Arial, sans-serif\">\n");
    }
    for (size_t p = 0; p < np; p++) {
        if (np > 1)
            dpas__buf_printf(&b, "<g transform=\"translate(0 %.0f)\">\n", L.H * (double)p);
        if (draw(&c, sp, panel_title(sp, titles, p), s + p * ns, ns, &L, err)) {
            free(b.data);
            return NULL;
        }
        if (np > 1)
            dpas__buf_puts(&b, "</g>\n");
    }
    dpas__buf_puts(&b, "</svg>\n");
    return dpas__buf_finish(&b, err);
}

/* The look a caller gives, checked where every front end passes (the CLI, Python, HTTP): 0 is
 * the default; otherwise a panel of 100 to 20000 pixels (PDF: points) a side, and text of 4 to
 * 72 (its tick labels; the rest scale with it). */
static int spec_check(const dpas_plot_spec *sp, dpas_error *err)
{
    const struct {
        const char *name;
        int v;
    } sides[] = {{"width", sp->width}, {"height", sp->height}};
    for (size_t i = 0; i < 2; i++)
        if (sides[i].v && (sides[i].v < 100 || sides[i].v > 20000))
            return dpas__fail(err, DPAS_EINVAL, sides[i].name,
                              "%s must be a whole number from 100 to 20000 (pixels; PDF: "
                              "points), got %d",
                              sides[i].name, sides[i].v);
    if (sp->font_size != 0 && !(sp->font_size >= 4 && sp->font_size <= 72))
        return dpas__fail(err, DPAS_EINVAL, "font_size",
                          "font_size must be a number from 4 to 72, got %g", sp->font_size);
    return 0;
}

char *dpas_plot_svg(const dpas_plot_spec *sp, const dpas_series *s, size_t ns, dpas_error *err)
{
    if (spec_check(sp, err))
        return NULL;
    return figure_svg(sp, s, ns, 1, NULL, err);
}

/* ---- PNG through cairo ---- */

#ifdef DPAS_HAVE_CAIRO
/* cairo is opened when a PNG is drawn, not linked: linked, it and its dependency chain (X11,
 * fontconfig, freetype, ...) would double the start-up time of every dpas command. The table
 * lives on the stack of dpas_plot_png: no global state. */
/* clang-format off */
#define CAIRO_FUNCS(X)                                                                      \
    X(cairo_image_surface_create) X(cairo_create) X(cairo_destroy)                          \
    X(cairo_surface_write_to_png_stream) X(cairo_surface_destroy) X(cairo_set_source_rgb)          \
    X(cairo_set_line_width) X(cairo_move_to) X(cairo_line_to) X(cairo_stroke) X(cairo_arc)  \
    X(cairo_fill) X(cairo_select_font_face) X(cairo_set_font_size) X(cairo_text_extents)    \
    X(cairo_save) X(cairo_translate) X(cairo_rotate) X(cairo_show_text) X(cairo_restore)    \
    X(cairo_rectangle) X(cairo_fill_preserve) X(cairo_new_path) X(cairo_surface_status)    \
    X(cairo_set_dash) X(cairo_show_page) X(cairo_surface_finish)                            \
    X(cairo_pdf_surface_create_for_stream)
/* clang-format on */

typedef struct cairo_api {
#define CAIRO_FIELD(f) __typeof__(&f) f;
    CAIRO_FUNCS(CAIRO_FIELD)
#undef CAIRO_FIELD
    void *handle;
} cairo_api;

static int cairo_open(cairo_api *api)
{
    api->handle = dlopen("libcairo.so.2", RTLD_NOW | RTLD_LOCAL);
    if (!api->handle)
        return -1;
#define CAIRO_LOAD(f)                                                                              \
    *(void **)(&api->f) = dlsym(api->handle, #f);                                                  \
    if (!api->f) {                                                                                 \
        dlclose(api->handle);                                                                      \
        return -1;                                                                                 \
    }
    CAIRO_FUNCS(CAIRO_LOAD)
#undef CAIRO_LOAD
    return 0;
}

typedef struct cr_ctx {
    const cairo_api *api;
    cairo_t *cr;
    const char *font;
} cr_ctx;

static void cr_color(const cr_ctx *x, const char *hex)
{
    unsigned r = 0, g = 0, b = 0;
    sscanf(hex, "#%02x%02x%02x", &r, &g, &b);
    x->api->cairo_set_source_rgb(x->cr, r / 255.0, g / 255.0, b / 255.0);
}

static void cr_line(canvas *c, double x1, double y1, double x2, double y2, const char *color,
                    double w)
{
    const cr_ctx *x = c->ctx;
    cr_color(x, color);
    x->api->cairo_set_line_width(x->cr, w);
    x->api->cairo_move_to(x->cr, x1, y1);
    x->api->cairo_line_to(x->cr, x2, y2);
    x->api->cairo_stroke(x->cr);
}

static void cr_polyline(canvas *c, const double *xs, const double *ys, size_t n, const char *color,
                        int dashed)
{
    const cr_ctx *x = c->ctx;
    static const double dash[] = {7, 5};
    cr_color(x, color);
    x->api->cairo_set_line_width(x->cr, 2);
    if (dashed)
        x->api->cairo_set_dash(x->cr, dash, 2, 0);
    x->api->cairo_move_to(x->cr, xs[0], ys[0]);
    for (size_t i = 1; i < n; i++)
        x->api->cairo_line_to(x->cr, xs[i], ys[i]);
    x->api->cairo_stroke(x->cr);
    if (dashed)
        x->api->cairo_set_dash(x->cr, NULL, 0, 0);
}

static void cr_dot(canvas *c, double px_, double py_, const char *color)
{
    const cr_ctx *x = c->ctx;
    cr_color(x, color);
    x->api->cairo_arc(x->cr, px_, py_, 3, 0, 2 * 3.14159265358979323846);
    x->api->cairo_fill(x->cr);
}

static void cr_text(canvas *c, double tx, double ty, const char *s, int anchor, double size,
                    int rotate)
{
    const cr_ctx *x = c->ctx;
    cairo_text_extents_t e;
    cr_color(x, "#000000");
    x->api->cairo_select_font_face(x->cr, x->font ? x->font : "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                                   CAIRO_FONT_WEIGHT_NORMAL);
    x->api->cairo_set_font_size(x->cr, size);
    x->api->cairo_text_extents(x->cr, s, &e);
    double dx = anchor < 0 ? 0 : anchor > 0 ? -e.x_advance : -e.x_advance / 2;
    x->api->cairo_save(x->cr);
    x->api->cairo_translate(x->cr, tx, ty);
    if (rotate)
        x->api->cairo_rotate(x->cr, rotate * 3.14159265358979323846 / 180);
    x->api->cairo_move_to(x->cr, dx, 0);
    x->api->cairo_show_text(x->cr, s);
    x->api->cairo_restore(x->cr);
}

static void cr_rect(canvas *c, double rx, double ry, double w, double h, const char *fill,
                    const char *stroke)
{
    const cr_ctx *x = c->ctx;
    x->api->cairo_rectangle(x->cr, rx, ry, w, h);
    cr_color(x, fill);
    x->api->cairo_fill_preserve(x->cr);
    if (stroke) {
        cr_color(x, stroke);
        x->api->cairo_set_line_width(x->cr, 1);
        x->api->cairo_stroke(x->cr);
    } else {
        x->api->cairo_new_path(x->cr);
    }
}

static cairo_status_t png_chunk(void *closure, const unsigned char *data, unsigned int len)
{
    dpas__buf *b = closure;
    dpas__buf_append(b, (const char *)data, len);
    return b->oom ? CAIRO_STATUS_NO_MEMORY : CAIRO_STATUS_SUCCESS;
}

/* The figure as PNG (the panels stacked) or PDF (a page per panel), made in memory: the caller
 * writes it through dpas_write_output (cairo opening a path itself would block on a FIFO and
 * write into a device). */
static int figure_cairo(const dpas_plot_spec *sp, dpas_plot_format fmt, const dpas_series *s,
                        size_t ns, size_t np, const char *const *titles, dpas__buf *out,
                        dpas_error *err)
{
    layout L;
    int rc = layout_fit(sp, s, ns * np, &L, err);
    if (rc)
        return rc;
    cairo_api api;
    if (cairo_open(&api))
        return dpas__fail(err, DPAS_EINVAL, "plot",
                          "cannot load libcairo.so.2 (install libcairo2): "
                          "write an .svg instead");
    cairo_surface_t *surf = fmt == DPAS_PLOT_PDF
                                ? api.cairo_pdf_surface_create_for_stream(png_chunk, out, L.W, L.H)
                                : api.cairo_image_surface_create(CAIRO_FORMAT_ARGB32, (int)L.W,
                                                                 (int)(L.H * (double)np));
    cr_ctx x = {&api, api.cairo_create(surf), sp->font};
    canvas c = {cr_line, cr_polyline, cr_dot, cr_text, cr_rect, &x};
    for (size_t p = 0; !rc && p < np; p++) {
        api.cairo_save(x.cr);
        if (fmt != DPAS_PLOT_PDF)
            api.cairo_translate(x.cr, 0, L.H * (double)p);
        rc = draw(&c, sp, panel_title(sp, titles, p), s + p * ns, ns, &L, err);
        api.cairo_restore(x.cr);
        if (fmt == DPAS_PLOT_PDF)
            api.cairo_show_page(x.cr);
    }
    api.cairo_destroy(x.cr);
    if (fmt == DPAS_PLOT_PDF) {
        api.cairo_surface_finish(surf); /* the PDF's trailer, through png_chunk */
        if (!rc && api.cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS)
            rc =
                dpas__fail(err, out->oom ? DPAS_ENOMEM : DPAS_EIO, "plot", "cannot encode the PDF");
    } else if (!rc && api.cairo_surface_write_to_png_stream(surf, png_chunk, out) !=
                          CAIRO_STATUS_SUCCESS) {
        rc = dpas__fail(err, out->oom ? DPAS_ENOMEM : DPAS_EIO, "plot", "cannot encode the PNG");
    }
    api.cairo_surface_destroy(surf);
    /* cairo keeps font caches for the life of the process: leave it loaded rather than unmap
     * code its caches may still reach (dlclose would not unload it anyway while in use) */
    return rc;
}
#endif

int dpas_have_cairo(void)
{
#ifdef DPAS_HAVE_CAIRO
    void *h = dlopen("libcairo.so.2", RTLD_LAZY | RTLD_LOCAL);
    if (h)
        dlclose(h);
    return h != NULL;
#else
    return 0;
#endif
}

int dpas_plot_figure(const dpas_plot_spec *sp, dpas_plot_format fmt, const dpas_series *s,
                     size_t ns, size_t np, const char *const *titles, unsigned char **out,
                     size_t *len, dpas_error *err)
{
    *out = NULL;
    *len = 0;
    if (np < 1)
        return dpas__fail(err, DPAS_EINVAL, "plot", "a figure needs at least one panel");
    int src = spec_check(sp, err);
    if (src)
        return src;
    if (fmt == DPAS_PLOT_SVG) {
        char *svg = figure_svg(sp, s, ns, np, titles, err);
        if (!svg)
            return err && err->code ? err->code : DPAS_ENOMEM;
        *out = (unsigned char *)svg;
        *len = strlen(svg);
        return 0;
    }
    if (fmt != DPAS_PLOT_PNG && fmt != DPAS_PLOT_PDF)
        return dpas__fail(err, DPAS_EINVAL, "plot", "unknown plot format %d", (int)fmt);
#ifdef DPAS_HAVE_CAIRO
    dpas__buf b = {0};
    int rc = figure_cairo(sp, fmt, s, ns, np, titles, &b, err);
    if (rc) {
        free(b.data);
        return rc;
    }
    *out = (unsigned char *)b.data;
    *len = b.len;
    return 0;
#else
    (void)sp, (void)s, (void)ns, (void)titles;
    return dpas__fail(err, DPAS_EINVAL, "plot",
                      "this dpas was built without cairo: write an .svg "
                      "instead (or install libcairo2-dev and rebuild)");
#endif
}

int dpas_plot_png_data(const dpas_plot_spec *sp, const dpas_series *s, size_t ns,
                       unsigned char **out, size_t *len, dpas_error *err)
{
    return dpas_plot_figure(sp, DPAS_PLOT_PNG, s, ns, 1, NULL, out, len, err);
}

int dpas_plot_png(const dpas_plot_spec *sp, const dpas_series *s, size_t ns, const char *path,
                  dpas_error *err)
{
    unsigned char *png = NULL;
    size_t len = 0;
    int rc = dpas_plot_png_data(sp, s, ns, &png, &len, err);
    if (!rc)
        rc = dpas_write_output(path, "plot", png, len, err);
    dpas_free(png);
    return rc;
}

/* ---- Unicode characters ---- */

char *dpas_plot_text(const dpas_plot_spec *sp, const dpas_series *s, size_t ns, int cols, int rows,
                     dpas_error *err)
{
    static const char *marks[] = {"\xe2\x97\x8f", "\xe2\x96\xb2", "\xe2\x96\xa0", "\xe2\x97\x86",
                                  "\xe2\x97\x8b", "\xe2\x96\xb3", "\xe2\x96\xa1", "\xe2\x97\x87"};
    layout L;
    if (cols < 10 || rows < 4 || cols > 400 || rows > 200)
        return dpas__fail(err, DPAS_EINVAL, "chart", "chart size out of range"), NULL;
    if (layout_fit(sp, s, ns, &L, err))
        return NULL;
    /* one cell per character; a cell remembers the last series drawn in it */
    int *cell = malloc((size_t)cols * (size_t)rows * sizeof *cell);
    if (!cell)
        return dpas__fail(err, DPAS_ENOMEM, "chart", "out of memory"), NULL;
    for (int i = 0; i < cols * rows; i++)
        cell[i] = -1;
    for (size_t k = 0; k < ns; k++)
        for (size_t i = 0; i < s[k].n; i++) {
            if (!usable(&L.x, s[k].x[i]) || !usable(&L.y, s[k].y[i]))
                continue;
            double fx = (tf(&L.x, s[k].x[i]) - L.x.lo) / (L.x.hi - L.x.lo);
            double fy = (tf(&L.y, s[k].y[i]) - L.y.lo) / (L.y.hi - L.y.lo);
            int cx = (int)lround(fx * (cols - 1)), cy = rows - 1 - (int)lround(fy * (rows - 1));
            if (cx >= 0 && cx < cols && cy >= 0 && cy < rows)
                cell[cy * cols + cx] = (int)k;
        }
    dpas__buf b = {0};
    char top[40], bot[40], lft[40], rgt[40];
    tick_label(&L.y, L.y.log ? pow(L.y.log, L.y.hi) : L.y.hi, top, sizeof top);
    tick_label(&L.y, L.y.log ? pow(L.y.log, L.y.lo) : L.y.lo, bot, sizeof bot);
    tick_label(&L.x, L.x.log ? pow(L.x.log, L.x.lo) : L.x.lo, lft, sizeof lft);
    tick_label(&L.x, L.x.log ? pow(L.x.log, L.x.hi) : L.x.hi, rgt, sizeof rgt);
    if (sp->title) {
        dpas__escape(&b, DPAS_FORMAT_TEXT, sp->title);
        dpas__buf_puts(&b, "\n");
    }
    for (int r = 0; r < rows; r++) {
        const char *lab = r == 0 ? top : r == rows - 1 ? bot : "";
        dpas__buf_printf(&b, "%10s \xe2\x94\x82", lab);
        for (int c = 0; c < cols; c++) {
            int k = cell[r * cols + c];
            dpas__buf_puts(&b, k < 0 ? " " : marks[k % 8]);
        }
        dpas__buf_puts(&b, "\n");
    }
    dpas__buf_printf(&b, "%10s \xe2\x94\x94", "");
    for (int c = 0; c < cols; c++)
        dpas__buf_puts(&b, "\xe2\x94\x80");
    dpas__buf_printf(&b, "\n%11s %-*s%s\n", "", cols - (int)strlen(rgt), lft, rgt);
    if (sp->xlabel) { /* user text, escaped as the title is */
        dpas__buf_printf(&b, "%11s x: ", "");
        dpas__escape(&b, DPAS_FORMAT_TEXT, sp->xlabel);
        dpas__buf_printf(&b, "%s\n", L.x.log ? " (log)" : "");
    }
    if (sp->ylabel) {
        dpas__buf_printf(&b, "%11s y: ", "");
        dpas__escape(&b, DPAS_FORMAT_TEXT, sp->ylabel);
        dpas__buf_printf(&b, "%s\n", L.y.log ? " (log)" : "");
    }
    for (size_t k = 0; k < ns; k++) {
        dpas__buf_printf(&b, "%11s %s ", "", marks[k % 8]);
        dpas__escape(&b, DPAS_FORMAT_TEXT, s[k].name ? s[k].name : "");
        dpas__buf_puts(&b, "\n");
    }
    free(cell);
    return dpas__buf_finish(&b, err);
}
