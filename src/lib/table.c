/* Tables of text cells: aligned text, JSON, CSV and Markdown from one description. */
#include "internal.h"

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

void dpas__table_render(const dpas__table *t, int format, dpas__buf *b)
{
    if (format == DPAS_FORMAT_JSON) {
        dpas__buf_puts(b, "[");
        for (size_t r = 0; r < t->nrows; r++) {
            dpas__buf_puts(b, r ? ",\n  {" : "\n  {");
            for (int c = 0; c < t->ncols; c++) {
                dpas__buf_printf(b, "%s\"%s\": ", c ? ", " : "", t->head[c]);
                const char *v = t->cells[r][c];
                if (!*v)
                    dpas__buf_puts(b, "null");
                else if (t->type[c] != DPAS__STR)
                    dpas__buf_puts(b, v);
                else
                    dpas__buf_json_str(b, v);
            }
            dpas__buf_puts(b, "}");
        }
        dpas__buf_puts(b, t->nrows ? "\n]" : "]");
        return;
    }
    if (format == DPAS_FORMAT_CSV) {
        for (int c = 0; c < t->ncols; c++)
            dpas__buf_printf(b, "%s%s", c ? "," : "", t->head[c]);
        dpas__buf_puts(b, "\n");
        for (size_t r = 0; r < t->nrows; r++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c)
                    dpas__buf_puts(b, ",");
                dpas__escape(b, DPAS_FORMAT_CSV, t->cells[r][c]);
            }
            dpas__buf_puts(b, "\n");
        }
        return;
    }
    if (format == DPAS_FORMAT_MARKDOWN) {
        dpas__buf_puts(b, "|");
        for (int c = 0; c < t->ncols; c++)
            dpas__buf_printf(b, " %s |", t->head[c]);
        dpas__buf_puts(b, "\n|");
        for (int c = 0; c < t->ncols; c++)
            dpas__buf_puts(b, t->type[c] == DPAS__NUM ? "---:|" : "---|");
        dpas__buf_puts(b, "\n");
        for (size_t r = 0; r < t->nrows; r++) {
            dpas__buf_puts(b, "|");
            for (int c = 0; c < t->ncols; c++)
                dpas__buf_printf(b, " %s |", t->cells[r][c]);
            dpas__buf_puts(b, "\n");
        }
        return;
    }
    size_t w[DPAS__MAXCOLS];
    for (int c = 0; c < t->ncols; c++) {
        w[c] = strlen(t->head[c]);
        for (size_t r = 0; r < t->nrows; r++)
            if (strlen(t->cells[r][c]) > w[c])
                w[c] = strlen(t->cells[r][c]);
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        size_t pending = 0; /* spaces owed before the next cell, dropped at the end of a line */
        for (int c = 0; c < t->ncols; c++) {
            const char *v = r ? t->cells[r - 1][c] : t->head[c];
            size_t l = strlen(v);
            if (c)
                pending += 2;
            if (t->type[c] == DPAS__NUM && r) { /* numbers right-aligned */
                pending += w[c] - l;
                dpas__buf_printf(b, "%*s%s", (int)pending, "", v);
                pending = 0;
            } else {
                dpas__buf_printf(b, "%*s%s", (int)pending, "", v);
                pending = w[c] - l;
            }
        }
        dpas__buf_puts(b, "\n");
    }
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

char *dpas__table_finish(dpas__table *t, int format, dpas_error *err)
{
    dpas__buf b = {0};
    dpas__table_emit(t, format, &b);
    if (format == DPAS_FORMAT_JSON)
        dpas__buf_puts(&b, "\n");
    return dpas__buf_finish(&b, err);
}
