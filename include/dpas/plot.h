/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/plot.h — line charts: SVG, PNG, PDF, text
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_PLOT_H
#define DPAS_PLOT_H

#include "dpas/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- plots ------------------------------------------------------------------------------------- */

typedef enum dpas_axis_unit {
    DPAS_AXIS_PLAIN = 0,   /* numbers */
    DPAS_AXIS_BYTES = 1,   /* tick labels in SI bytes: 1 GB, 10 TB */
    DPAS_AXIS_SECONDS = 2, /* tick labels in us, ms, s */
} dpas_axis_unit;

typedef struct dpas_series {
    const char *name;
    const double *x, *y; /* n points; points with a non-finite or (on a log axis) non-positive
                            coordinate are left out */
    size_t n;
} dpas_series;

typedef struct dpas_plot_spec {
    const char *title, *xlabel, *ylabel;
    int xlog, ylog; /* 0 linear, 2 log base 2, 10 log base 10 */
    dpas_axis_unit xunit, yunit;
    int width, height; /* pixels (PDF: points) of one panel; 0 = 800 x 500 */
    const char *font;  /* font family; NULL = DejaVu Sans (SVG lists fallbacks), sans-serif */
    double font_size;  /* the tick labels' size; the others scale with it; 0 = 12 */
    const char *legend_title; /* a heading over the legend (the series' input), or NULL */
} dpas_plot_spec;

typedef enum dpas_plot_format {
    DPAS_PLOT_SVG = 0,
    DPAS_PLOT_PNG, /* through cairo, opened at run time */
    DPAS_PLOT_PDF, /* through cairo: vector, one page per panel, its text selectable */
} dpas_plot_format;

/* A figure of npanels panels that share their axes: panel p draws series[p * nseries ..
 * p * nseries + nseries - 1] under the title panel_titles[p] (spec->title when panel_titles or
 * its entry is NULL). SVG and PNG stack the panels from top to bottom; a PDF has a page per
 * panel. Every series is drawn: one whose points all coincide with an earlier one's is dashed
 * and its legend entry names the other; one with no point that can be drawn says so in the
 * legend. *out (caller owns it: dpas_free) holds *len bytes (SVG: text, also NUL-terminated).
 * Errors: nothing to plot, cairo missing (PNG, PDF), out of memory. */
DPAS_API int dpas_plot_figure(const dpas_plot_spec *spec, dpas_plot_format format,
                              const dpas_series *series, size_t nseries, size_t npanels,
                              const char *const *panel_titles, unsigned char **out, size_t *len,
                              dpas_error *err);

/* A line chart with axes, ticks, grid, legend and title, as SVG text (deterministic: the same
 * input gives the same bytes). Caller owns the string (dpas_free). */
DPAS_API char *dpas_plot_svg(const dpas_plot_spec *spec, const dpas_series *series, size_t nseries,
                             dpas_error *err);
/* The same chart as PNG bytes through cairo: *png (caller owns it: dpas_free) and *len;
 * DPAS_EINVAL when built without cairo or when libcairo.so.2 cannot be loaded. */
DPAS_API int dpas_plot_png_data(const dpas_plot_spec *spec, const dpas_series *series,
                                size_t nseries, unsigned char **png, size_t *len, dpas_error *err);
/* The same written to the file at path through dpas_write_output (field "plot"). */
DPAS_API int dpas_plot_png(const dpas_plot_spec *spec, const dpas_series *series, size_t nseries,
                           const char *path, dpas_error *err);
DPAS_API int dpas_have_cairo(void);
/* The chart in Unicode characters, cols x rows cells of plot area (for a terminal). */
DPAS_API char *dpas_plot_text(const dpas_plot_spec *spec, const dpas_series *series, size_t nseries,
                              int cols, int rows, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
