/* Registry listings: one table per kind, rendered as aligned text, JSON, CSV or Markdown. */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void num(char *cell, double v)
{
    dpas__fmt_double(v, false, cell, DPAS__CELL);
}

char *dpas_render_list(const dpas_registry *reg, int kind, int format, dpas_error *err)
{
    dpas__table t = {0};
    size_t n = kind < 0 ? dpas_precision_count() : dpas_registry_count(reg, (dpas_kind)kind);
    if (kind >= DPAS_KIND_COUNT) {
        dpas__fail(err, DPAS_EINVAL, "kind", "unknown registry kind %d", kind);
        return NULL;
    }
    for (size_t i = 0; i < n; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(&t);
        if (!row)
            break;
        switch (kind) {
        case -1: {
            const dpas_precision *p = dpas_precision_at(i);
            t.ncols = 3;
            t.head[0] = "name", t.head[1] = "bytes_per_param", t.head[2] = "source";
            t.type[1] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", p->name);
            dpas_bytes x = {p->width.num / p->width.den, p->width.num % p->width.den, p->width.den};
            if (!x.frac_num)
                x.frac_den = 1;
            dpas_format_bytes_exact(x, row[1], DPAS__CELL);
            snprintf(row[2], DPAS__CELL, "%s", p->source);
            break;
        }
        case DPAS_KIND_MODEL: {
            const dpas_model *m = dpas_registry_at(reg, DPAS_KIND_MODEL, i);
            t.ncols = 5;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "parameters",
            t.head[3] = "active_parameters", t.head[4] = "display";
            t.type[2] = t.type[3] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", m->path);
            snprintf(row[1], DPAS__CELL, "%s", m->name);
            if (m->parameters)
                snprintf(row[2], DPAS__CELL, "%llu", (unsigned long long)m->parameters);
            if (m->active_parameters)
                snprintf(row[3], DPAS__CELL, "%llu", (unsigned long long)m->active_parameters);
            snprintf(row[4], DPAS__CELL, "%s", m->display);
            break;
        }
        case DPAS_KIND_HARDWARE: {
            const dpas_hardware *h = dpas_registry_at(reg, DPAS_KIND_HARDWARE, i);
            t.ncols = 7;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "memory_bytes",
            t.head[3] = "peak_flops", t.head[4] = "hbm_bytes_per_s",
            t.head[5] = "nvlink_bytes_per_s", t.head[6] = "tdp_watts";
            for (int c = 2; c < 7; c++)
                t.type[c] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", h->path);
            snprintf(row[1], DPAS__CELL, "%s", h->name);
            dpas_format_bytes_exact(h->memory, row[2], DPAS__CELL);
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
            t.type[3] = t.type[4] = t.type[5] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", d->path);
            snprintf(row[1], DPAS__CELL, "%s", d->name);
            snprintf(row[2], DPAS__CELL, "%s", d->accelerator->name);
            snprintf(row[3], DPAS__CELL, "%lld", (long long)d->accelerators_per_node);
            num(row[4], d->intra_bandwidth);
            num(row[5], d->intra_latency);
            break;
        }
        case DPAS_KIND_FABRIC: {
            const dpas_fabric *f = dpas_registry_at(reg, DPAS_KIND_FABRIC, i);
            t.ncols = 5;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "bytes_per_s",
            t.head[3] = "latency_s", t.head[4] = "topology";
            t.type[2] = t.type[3] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", f->path);
            snprintf(row[1], DPAS__CELL, "%s", f->name);
            num(row[2], f->bandwidth);
            num(row[3], f->latency);
            snprintf(row[4], DPAS__CELL, "%s", f->topology);
            break;
        }
        case DPAS_KIND_FLEET: {
            const dpas_fleet *f = dpas_registry_at(reg, DPAS_KIND_FLEET, i);
            t.ncols = 6;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "node", t.head[3] = "nodes",
            t.head[4] = "accelerators", t.head[5] = "fabric";
            t.type[3] = t.type[4] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", f->path);
            snprintf(row[1], DPAS__CELL, "%s", f->name);
            snprintf(row[2], DPAS__CELL, "%s", f->node->name);
            snprintf(row[3], DPAS__CELL, "%lld", (long long)f->count);
            snprintf(row[4], DPAS__CELL, "%lld", (long long)(f->count * f->node->accelerators_per_node));
            snprintf(row[5], DPAS__CELL, "%s", f->fabric->name);
            break;
        }
        default: {
            const dpas_named_scenario *s = dpas_registry_at(reg, DPAS_KIND_SCENARIO, i);
            t.ncols = 8;
            t.head[0] = "path", t.head[1] = "name", t.head[2] = "workload", t.head[3] = "fleet",
            t.head[4] = "dp_degree", t.head[5] = "gradient_bytes_per_param",
            t.head[6] = "checkpoint_bytes_per_param", t.head[7] = "weight_bytes_per_param";
            t.type[4] = t.type[5] = t.type[6] = t.type[7] = DPAS__NUM;
            snprintf(row[0], DPAS__CELL, "%s", s->path);
            snprintf(row[1], DPAS__CELL, "%s", s->name);
            snprintf(row[2], DPAS__CELL, "%s", s->workload_entry->name);
            snprintf(row[3], DPAS__CELL, "%s", s->scenario.fleet_entry->name);
            snprintf(row[4], DPAS__CELL, "%lld", (long long)s->scenario.dp_degree);
            const dpas_rational *w[3] = {&s->scenario.gradient_bytes_per_param,
                                         &s->scenario.checkpoint_bytes_per_param,
                                         &s->scenario.weight_bytes_per_param};
            for (int k = 0; k < 3; k++) {
                if (!w[k]->den)
                    continue;
                dpas_bytes x = {w[k]->num / w[k]->den, w[k]->num % w[k]->den, w[k]->den};
                if (!x.frac_num)
                    x.frac_den = 1;
                dpas_format_bytes_exact(x, row[5 + k], DPAS__CELL);
            }
            break;
        }
        }
    }
    return dpas__table_finish(&t, format, err);
}
