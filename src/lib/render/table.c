/* SPDX-License-Identifier: Apache-2.0 */
/* Tables of pre-formatted text cells (the calibration report), laid out by the one writer. */
#include "../internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char (*dpas__table_row(dpas__table *t))[DPAS__CELL]
{
    if (t->oom)
        return NULL;
    if (t->nrows == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 16;
        void *p = realloc(t->cells, cap * sizeof *t->cells);
        if (!p) {
            t->oom = true;
            return NULL;
        }
        t->cells = p;
        t->cap = cap;
    }
    memset(t->cells[t->nrows], 0, sizeof *t->cells);
    return t->cells[t->nrows++];
}

/* The cells are text already formatted (numbers by their own printf formats); the one writer
 * lays them out and escapes them: a number cell goes bare into JSON, an empty cell is null. */
void dpas__table_render(const dpas__table *t, int format, dpas__buf *b)
{
    dpas_column cols[DPAS__MAXCOLS];
    for (int c = 0; c < t->ncols; c++)
        cols[c] = (dpas_column){t->head[c], DPAS_COL_TEXT,
                                t->type[c] == DPAS__STR    ? 0u
                                : t->type[c] == DPAS__BOOL ? DPAS__COL_RAW
                                                           : DPAS__COL_RAW | DPAS_COL_RIGHT};
    dpas_writer_opts wo = {.format = (dpas_format)format, .null_text = ""};
    dpas_writer *w;
    if (dpas_writer_new(cols, (size_t)t->ncols, &wo, dpas__sink_buf, b, &w, NULL)) {
        b->oom = true;
        return;
    }
    int rc = 0;
    const bool people = format == DPAS_FORMAT_TEXT || format == DPAS_FORMAT_MARKDOWN;
    for (size_t r = 0; !rc && r < t->nrows; r++) {
        dpas_cell cells[DPAS__MAXCOLS];
        char shown[DPAS__MAXCOLS][40];
        for (int c = 0; c < t->ncols; c++) {
            const char *v = t->cells[r][c];
            int how = v[DPAS__CELL - 1]; /* a number's digits for people (calibrate.c), or 0 */
            int digits = how & ~DPAS__CELL_PLUS;
            if (people && v[0] && digits > 0 && digits < 18) { /* JSON and CSV: the exact text */
                snprintf(shown[c], sizeof shown[c], how & DPAS__CELL_PLUS ? "%+.*g" : "%.*g",
                         digits, strtod(v, NULL));
                v = shown[c];
            }
            cells[c] = v[0] ? dpas_cell_text(v) : dpas_cell_null();
        }
        rc = dpas_writer_row(w, cells, NULL);
    }
    if (rc || dpas_writer_end(w, NULL))
        b->oom = true;
    dpas_writer_free(w);
}

void dpas__table_emit(dpas__table *t, int format, dpas__buf *b)
{
    if (t->oom)
        b->oom = true;
    else
        dpas__table_render(t, format, b);
    free(t->cells);
    t->cells = NULL;
}
