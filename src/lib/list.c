/* Registry listings: one table per kind, rendered as aligned text, JSON, CSV or Markdown. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXCOLS 8
#define CELL 160

typedef struct table {
    int ncols;
    const char *head[MAXCOLS];
    bool numeric[MAXCOLS]; /* JSON number rather than string */
    size_t nrows;
    char (*cells)[MAXCOLS][CELL];
} table;

static void render_table(dpas__buf *b, const table *t, int format)
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
                else if (t->numeric[c])
                    dpas__buf_puts(b, v);
                else
                    dpas__buf_json_str(b, v);
            }
            dpas__buf_puts(b, "}");
        }
        dpas__buf_puts(b, t->nrows ? "\n]\n" : "]\n");
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
                dpas__buf_csv_str(b, t->cells[r][c]);
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
            dpas__buf_puts(b, t->numeric[c] ? "---:|" : "---|");
        dpas__buf_puts(b, "\n");
        for (size_t r = 0; r < t->nrows; r++) {
            dpas__buf_puts(b, "|");
            for (int c = 0; c < t->ncols; c++)
                dpas__buf_printf(b, " %s |", t->cells[r][c]);
            dpas__buf_puts(b, "\n");
        }
        return;
    }
    size_t w[MAXCOLS];
    for (int c = 0; c < t->ncols; c++) {
        w[c] = strlen(t->head[c]);
        for (size_t r = 0; r < t->nrows; r++)
            if (strlen(t->cells[r][c]) > w[c])
                w[c] = strlen(t->cells[r][c]);
    }
    for (size_t r = 0; r <= t->nrows; r++) {
        size_t pending = 0; /* spaces owed before the next cell, dropped at line end */
        for (int c = 0; c < t->ncols; c++) {
            const char *v = r ? t->cells[r - 1][c] : t->head[c];
            size_t l = strlen(v);
            if (c)
                pending += 2;
            if (t->numeric[c] && r) { /* right-align numbers */
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

static void num(char *cell, double v)
{
    dpas__fmt_double(v, false, cell, CELL);
}

char *dpas_render_list(const dpas_registry *reg, int kind, int format, dpas_error *err)
{
    table t = {0};
    size_t n = kind < 0 ? dpas_precision_count() : dpas_registry_count(reg, (dpas_kind)kind);
    if (kind >= DPAS_KIND_COUNT) {
        dpas__fail(err, DPAS_EINVAL, "kind", "unknown registry kind %d", kind);
        return NULL;
    }
    t.cells = calloc(n ? n : 1, sizeof *t.cells);
    if (!t.cells) {
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    t.nrows = n;
    for (size_t i = 0; i < n; i++) {
        char(*row)[CELL] = t.cells[i];
        switch (kind) {
        case -1: {
            const dpas_precision *p = dpas_precision_at(i);
            t.ncols = 3;
            t.head[0] = "name", t.head[1] = "bytes_per_param", t.head[2] = "source";
            t.numeric[1] = true;
            snprintf(row[0], CELL, "%s", p->name);
            dpas_bytes x = {p->width.num / p->width.den, p->width.num % p->width.den, p->width.den};
            if (!x.frac_num)
                x.frac_den = 1;
            dpas_format_bytes_exact(x, row[1], CELL);
            snprintf(row[2], CELL, "%s", p->source);
            break;
        }
        case DPAS_KIND_MODEL: {
            const dpas_model *m = dpas_registry_at(reg, DPAS_KIND_MODEL, i);
            t.ncols = 5;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "parameters",
            t.head[3] = "active_parameters", t.head[4] = "display";
            t.numeric[2] = t.numeric[3] = true;
            snprintf(row[0], CELL, "%s", m->path);
            snprintf(row[1], CELL, "%s", m->name);
            if (m->parameters)
                snprintf(row[2], CELL, "%llu", (unsigned long long)m->parameters);
            if (m->active_parameters)
                snprintf(row[3], CELL, "%llu", (unsigned long long)m->active_parameters);
            snprintf(row[4], CELL, "%s", m->display);
            break;
        }
        case DPAS_KIND_HARDWARE: {
            const dpas_hardware *h = dpas_registry_at(reg, DPAS_KIND_HARDWARE, i);
            t.ncols = 7;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "memory_bytes",
            t.head[3] = "peak_flops", t.head[4] = "hbm_bytes_per_s",
            t.head[5] = "nvlink_bytes_per_s", t.head[6] = "tdp_watts";
            for (int c = 2; c < 7; c++)
                t.numeric[c] = true;
            snprintf(row[0], CELL, "%s", h->path);
            snprintf(row[1], CELL, "%s", h->name);
            dpas_format_bytes_exact(h->memory, row[2], CELL);
            num(row[3], h->peak_flops);
            num(row[4], h->hbm_bandwidth);
            num(row[5], h->nvlink_bandwidth);
            num(row[6], h->tdp_watts);
            break;
        }
        case DPAS_KIND_NODE: {
            const dpas_node *d = dpas_registry_at(reg, DPAS_KIND_NODE, i);
            t.ncols = 6;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "accelerator",
            t.head[3] = "accelerators_per_node", t.head[4] = "intra_bytes_per_s",
            t.head[5] = "intra_latency_s";
            t.numeric[3] = t.numeric[4] = t.numeric[5] = true;
            snprintf(row[0], CELL, "%s", d->path);
            snprintf(row[1], CELL, "%s", d->name);
            snprintf(row[2], CELL, "%s", d->accelerator->name);
            snprintf(row[3], CELL, "%lld", (long long)d->accelerators_per_node);
            num(row[4], d->intra_bandwidth);
            num(row[5], d->intra_latency);
            break;
        }
        case DPAS_KIND_FABRIC: {
            const dpas_fabric *f = dpas_registry_at(reg, DPAS_KIND_FABRIC, i);
            t.ncols = 5;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "bytes_per_s",
            t.head[3] = "latency_s", t.head[4] = "topology";
            t.numeric[2] = t.numeric[3] = true;
            snprintf(row[0], CELL, "%s", f->path);
            snprintf(row[1], CELL, "%s", f->name);
            num(row[2], f->bandwidth);
            num(row[3], f->latency);
            snprintf(row[4], CELL, "%s", f->topology);
            break;
        }
        case DPAS_KIND_FLEET: {
            const dpas_fleet *f = dpas_registry_at(reg, DPAS_KIND_FLEET, i);
            t.ncols = 6;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "node", t.head[3] = "nodes",
            t.head[4] = "accelerators", t.head[5] = "fabric";
            t.numeric[3] = t.numeric[4] = true;
            snprintf(row[0], CELL, "%s", f->path);
            snprintf(row[1], CELL, "%s", f->name);
            snprintf(row[2], CELL, "%s", f->node->name);
            snprintf(row[3], CELL, "%lld", (long long)f->count);
            snprintf(row[4], CELL, "%lld", (long long)(f->count * f->node->accelerators_per_node));
            snprintf(row[5], CELL, "%s", f->fabric->name);
            break;
        }
        default: {
            const dpas_named_scenario *s = dpas_registry_at(reg, DPAS_KIND_SCENARIO, i);
            t.ncols = 8;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "workload", t.head[3] = "fleet",
            t.head[4] = "dp_degree", t.head[5] = "gradient_bytes_per_param",
            t.head[6] = "checkpoint_bytes_per_param", t.head[7] = "weight_bytes_per_param";
            t.numeric[4] = t.numeric[5] = t.numeric[6] = t.numeric[7] = true;
            snprintf(row[0], CELL, "%s", s->path);
            snprintf(row[1], CELL, "%s", s->name);
            snprintf(row[2], CELL, "%s", s->workload_entry->name);
            snprintf(row[3], CELL, "%s", s->scenario.fleet_entry->name);
            snprintf(row[4], CELL, "%lld", (long long)s->scenario.dp_degree);
            const dpas_rational *w[3] = {&s->scenario.gradient_bytes_per_param,
                                         &s->scenario.checkpoint_bytes_per_param,
                                         &s->scenario.weight_bytes_per_param};
            for (int k = 0; k < 3; k++) {
                if (!w[k]->den)
                    continue;
                dpas_bytes x = {w[k]->num / w[k]->den, w[k]->num % w[k]->den, w[k]->den};
                if (!x.frac_num)
                    x.frac_den = 1;
                dpas_format_bytes_exact(x, row[5 + k], CELL);
            }
            break;
        }
        }
    }
    dpas__buf b = {0};
    render_table(&b, &t, format);
    free(t.cells);
    return dpas__buf_finish(&b, err);
}
