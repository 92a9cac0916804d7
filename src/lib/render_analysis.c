/* Renderers of the analyses beyond the seed: the rule catalogue, rule x schedule costs, the byte
 * inventory and the memory check. */
#include "internal.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cellf(char *cell, const char *fmt, long long v) { snprintf(cell, DPAS__CELL, fmt, v); }

static void cell_double(char *cell, double v) { dpas__fmt_double(v, false, cell, DPAS__CELL); }

static void cell_bytes(char *cell, dpas_bytes b) { dpas_format_bytes_exact(b, cell, DPAS__CELL); }

static void cell_bool(char *cell, int v) { snprintf(cell, DPAS__CELL, "%s", v ? "true" : "false"); }

/* "694.531 GB" or, below 1000, the exact count with its unit. */
static void human(char *cell, dpas_bytes b, int units)
{
    dpas_format_bytes_human(b, (dpas_units)units, cell, DPAS__CELL);
}

/* ---- rules ---- */

static bool rule_shown(size_t i, const char *convention)
{
    const dpas_rule *r = dpas_rule_at(i);
    if (convention && !strcmp(convention, "all"))
        return true;
    if (!convention)
        return r->is_default;
    /* the named convention where the rule has it, else the rule's default */
    bool has = false;
    for (size_t j = 0; j < dpas_rule_count(); j++) {
        const dpas_rule *o = dpas_rule_at(j);
        if (!strcmp(o->name, r->name) && !dpas__strcasecmp(o->convention, convention))
            has = true;
    }
    return has ? !dpas__strcasecmp(r->convention, convention) : r->is_default;
}

char *dpas_render_rules(int64_t n, int64_t f, const char *convention, int format, dpas_error *err)
{
    if (convention && strcmp(convention, "all")) {
        if (!dpas__convention_known(convention)) {
            dpas__fail(err, DPAS_ENOENT, "convention",
                       "unknown convention \"%s\"; expected standard, blanchard, byzfl or all",
                       convention);
            return NULL;
        }
    }
    if (n == 0 || n < -1) {
        dpas__fail(err, DPAS_EINVAL, "n", "n must be >= 1, got %lld", (long long)n);
        return NULL;
    }
    if (f < -1) {
        dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
        return NULL;
    }
    dpas__table t = {0};
    int c = 0;
    t.head[c++] = "rule";
    t.head[c++] = "convention";
    t.head[c++] = "condition";
    int cmax = -1, cmin = -1;
    if (n > 0) {
        cmax = c;
        t.type[c] = DPAS__NUM;
        t.head[c++] = "max_f";
    }
    if (f >= 0) {
        cmin = c;
        t.type[c] = DPAS__NUM;
        t.head[c++] = "min_n";
    }
    int ccoord = c;
    t.type[c] = DPAS__BOOL;
    t.head[c++] = "coordinatewise";
    t.type[c] = DPAS__BOOL;
    t.head[c++] = "needs_distances";
    t.head[c++] = "compute";
    int cneigh = c;
    t.head[c++] = "neighbours";
    t.head[c++] = "source";
    t.ncols = c;
    for (size_t i = 0; i < dpas_rule_count(); i++) {
        if (!rule_shown(i, convention))
            continue;
        const dpas_rule *r = dpas_rule_at(i);
        char(*row)[DPAS__CELL] = dpas__table_row(&t);
        if (!row)
            break;
        snprintf(row[0], DPAS__CELL, "%s", r->name);
        snprintf(row[1], DPAS__CELL, "%s", r->convention);
        snprintf(row[2], DPAS__CELL, "%s", r->condition);
        int64_t v;
        if (cmax >= 0 && !dpas_rule_max_f(r, n, &v, NULL) && v >= 0)
            cellf(row[cmax], "%lld", (long long)v);
        if (cmin >= 0) {
            if (dpas_rule_min_n(r, f, &v, err)) {
                free(t.cells);
                return NULL;
            }
            if (v >= 0)
                cellf(row[cmin], "%lld", (long long)v);
        }
        cell_bool(row[ccoord], !!(r->caps & DPAS_RULE_CAP_COORDINATEWISE));
        cell_bool(row[ccoord + 1], !!(r->caps & DPAS_RULE_CAP_DISTANCES));
        snprintf(row[ccoord + 2], DPAS__CELL, "%s", r->compute);
        if (r->neighbours)
            snprintf(row[cneigh], DPAS__CELL, "%s", r->neighbours);
        snprintf(row[cneigh + 1], DPAS__CELL, "%s", r->source);
        if (format == DPAS_FORMAT_TEXT) {
            /* text: "-" for what does not apply (JSON says null) */
            if (cmax >= 0 && !row[cmax][0])
                snprintf(row[cmax], DPAS__CELL, "-");
            if (cmin >= 0 && !row[cmin][0])
                snprintf(row[cmin], DPAS__CELL, "-");
            if (!row[cneigh][0])
                snprintf(row[cneigh], DPAS__CELL, "-");
        }
    }
    return dpas__table_finish(&t, format, err);
}

/* ---- cost ---- */

typedef struct cost_row {
    const dpas_rule *rule;
    int sched;
    int ok;
    const char *why;
    int64_t max_f;
    dpas_traffic tr;
    double ratio, tflat, thier, compute;
} cost_row;

static void header_json(dpas__buf *b, const char *label)
{
    dpas__buf_puts(b, "{\n  \"scenario\": ");
    if (label)
        dpas__buf_json_str(b, label);
    else
        dpas__buf_puts(b, "null");
}

static void links_text(dpas__buf *b, const dpas_scenario *s, const dpas_links *L, bool have)
{
    if (!have) {
        dpas__buf_puts(b, "links     unknown (a custom fleet without fabric and node): no times\n");
        return;
    }
    char bw[64], bw2[64];
    dpas_format_bytes_human((dpas_bytes){(uint64_t)L->inter_bandwidth, 0, 1}, DPAS_UNITS_SI, bw, sizeof bw);
    dpas_format_bytes_human((dpas_bytes){(uint64_t)L->intra_bandwidth, 0, 1}, DPAS_UNITS_SI, bw2, sizeof bw2);
    dpas__buf_printf(b, "links     fabric %s %s/s %g us; node %s %s/s %g ns (x%lld per node)\n",
                     s->fabric_entry->name, bw, L->inter_latency * 1e6, s->node_entry->name, bw2,
                     L->intra_latency * 1e9, (long long)s->accelerators_per_node);
}

char *dpas_render_cost(const dpas_scenario *s, const dpas_cost_opts *o, dpas_error *err)
{
    int rc;
    dpas_report rep;
    if ((rc = dpas_evaluate(s, &rep, err)))
        return NULL;
    const int64_t steps = o->steps > 0 ? o->steps : 1;
    const int64_t iters = o->iterations > 0 ? o->iterations : 10;
    const int64_t N = s->dp_degree;
    dpas_links L = {0};
    bool have_links = dpas_scenario_links(s, &L, NULL) == 0, have_intra = have_links;
    if (o->links) { /* a calibration replaces the fabric's alpha and beta */
        L.inter_bandwidth = o->links->inter_bandwidth;
        L.inter_latency = o->links->inter_latency;
        if (!have_links && s->node_entry) {
            L.intra_bandwidth = s->node_entry->intra_bandwidth;
            L.intra_latency = s->node_entry->intra_latency;
            have_intra = true;
        }
        have_links = true;
    }
    /* the rules */
    const dpas_rule *defaults[32];
    const dpas_rule *const *rules = o->rules;
    size_t nrules = o->nrules;
    if (!rules) {
        nrules = 0;
        for (size_t i = 0; i < dpas_rule_count() && nrules < 32; i++)
            if (dpas_rule_at(i)->is_default)
                defaults[nrules++] = dpas_rule_at(i);
        rules = defaults;
    }
    dpas_traffic ar;
    if ((rc = dpas_schedule_traffic(DPAS_SCHED_ALLREDUCE, s, NULL, 0, &ar, err)))
        return NULL;
    double ar_bytes = dpas_bytes_to_double(ar.sent);
    cost_row *rows = calloc(nrules * DPAS_SCHED_COUNT + 1, sizeof *rows);
    if (!rows) {
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    size_t nr = 0, hidden = 0;
    for (size_t i = 0; i < nrules; i++) {
        for (int k = 0; k < DPAS_SCHED_COUNT; k++) {
            if (o->schedules && !(o->schedules & (1u << k)))
                continue;
            cost_row *r = &rows[nr++];
            r->rule = rules[i];
            r->sched = k;
            r->ok = dpas_schedule_realises((dpas_schedule_id)k, r->rule, &r->why);
            dpas_rule_max_f(r->rule, N, &r->max_f, NULL);
            if ((rc = dpas_schedule_traffic((dpas_schedule_id)k, s, r->rule, iters, &r->tr, err)) ||
                (rc = dpas__bytes_times(r->tr.sent, (uint64_t)steps, &r->tr.sent, err)) ||
                (rc = dpas__bytes_times(r->tr.received, (uint64_t)steps, &r->tr.received, err)) ||
                (rc = dpas__bytes_times(r->tr.scalars, (uint64_t)steps, &r->tr.scalars, err))) {
                free(rows);
                return NULL;
            }
            r->ratio = ar_bytes > 0 ? dpas_bytes_to_double(r->tr.sent) / (ar_bytes * (double)steps) : -1;
            if (have_links) {
                dpas_schedule_time((dpas_schedule_id)k, s, r->rule, iters, DPAS_TOPO_FLAT, &L, &r->tflat, NULL);
                if (have_intra)
                    dpas_schedule_time((dpas_schedule_id)k, s, r->rule, iters, DPAS_TOPO_HIERARCHICAL, &L,
                                       &r->thier, NULL);
                else
                    r->thier = NAN;
                r->tflat *= (double)steps;
                r->thier *= (double)steps;
            }
            if (o->compute_rate > 0) {
                double fl = dpas_rule_flops(r->rule, N, s->parameters, iters);
                bool whole = k == DPAS_SCHED_ALLGATHER || k == DPAS_SCHED_PS || k == DPAS_SCHED_PS_SEPARATE;
                r->compute = (whole ? fl : fl / (double)N) / o->compute_rate * (double)steps;
            }
            if (!r->ok)
                hidden++;
        }
    }
    char notes[4][400];
    int nnotes = 0;
    if (have_links && N > 1 && N > s->nodes)
        snprintf(notes[nnotes++], sizeof notes[0],
                 "hierarchical times pre-reduce inside a node (%lld replicas per node on average): "
                 "sound for a robust rule only when a node is one trust domain",
                 (long long)(N / s->nodes));
    if (!have_links)
        snprintf(notes[nnotes++], sizeof notes[0],
                 "no times: the fleet has no known fabric and node (use a registry fleet, or "
                 "fleet.node and fleet.fabric)");
    bool iterative = false;
    for (size_t i = 0; i < nr; i++)
        iterative |= rows[i].ok && rows[i].sched == DPAS_SCHED_SHARDED_DISTANCE &&
                     (rows[i].rule->caps & DPAS_RULE_CAP_ITERATIVE);
    if (iterative)
        snprintf(notes[nnotes++], sizeof notes[0],
                 "iterative rules (geometric_median, centered_clipping) on sharded_distance: %lld "
                 "iterations", (long long)iters);
    if (o->f >= 0)
        snprintf(notes[nnotes++], sizeof notes[0], "tolerates: the rule's bound holds for f = %lld at "
                 "dp_degree %lld", (long long)o->f, (long long)N);

    dpas__buf b = {0};
    char t[128], gh[64];
    dpas_format_bytes_human(rep.gradient_bytes, (dpas_units)o->units, gh, sizeof gh);
    dpas_format_bytes_exact(rep.gradient_bytes, t, sizeof t);
    if (o->format == DPAS_FORMAT_TEXT) {
        if (o->label)
            dpas__buf_printf(&b, "scenario  %s\n", o->label);
        dpas__buf_printf(&b, "step      dp_degree %lld, gradient_bytes %s B (%s) per replica%s\n",
                         (long long)N, t, gh, steps > 1 ? "" : ", one step");
        if (steps > 1)
            dpas__buf_printf(&b, "steps     %lld (bytes and times below are totals)\n", (long long)steps);
        if (o->links)
            dpas__buf_printf(&b, "links     calibrated%s%s: %.4g GB/s, %.4g us per step%s\n",
                             o->links_source ? " from " : "", o->links_source ? o->links_source : "",
                             L.inter_bandwidth / 1e9, L.inter_latency * 1e6,
                             have_intra ? "" : " (no node: no hierarchical time)");
        else
            links_text(&b, s, &L, have_links);
        dpas__buf_puts(&b, "\n");
        dpas__table tt = {0};
        int c = 0;
        tt.head[c++] = "rule";
        tt.head[c++] = "schedule";
        tt.type[c] = DPAS__NUM, tt.head[c++] = "max_f";
        int ctol = -1;
        if (o->f >= 0)
            ctol = c, tt.head[c++] = "tolerates";
        tt.type[c] = DPAS__NUM, tt.head[c++] = "bytes/worker";
        tt.type[c] = DPAS__NUM, tt.head[c++] = "x allreduce";
        int ct = c;
        if (have_links) {
            tt.type[c] = DPAS__NUM, tt.head[c++] = "flat s";
            tt.type[c] = DPAS__NUM, tt.head[c++] = "hierarchical s";
        }
        int cc = c;
        if (o->compute_rate > 0)
            tt.type[c] = DPAS__NUM, tt.head[c++] = "compute s";
        int cwhy = c;
        if (o->all)
            tt.head[c++] = "not realisable because";
        tt.ncols = c;
        for (size_t i = 0; i < nr; i++) {
            cost_row *r = &rows[i];
            if (!r->ok && !o->all)
                continue;
            char(*row)[DPAS__CELL] = dpas__table_row(&tt);
            if (!row)
                break;
            if (strcmp(r->rule->convention, "standard") && !r->rule->is_default)
                snprintf(row[0], DPAS__CELL, "%s (%s)", r->rule->name, r->rule->convention);
            else
                snprintf(row[0], DPAS__CELL, "%s", r->rule->name);
            snprintf(row[1], DPAS__CELL, "%s", dpas_schedule_name((dpas_schedule_id)r->sched));
            if (r->max_f >= 0)
                cellf(row[2], "%lld", (long long)r->max_f);
            else
                snprintf(row[2], DPAS__CELL, "-");
            if (ctol >= 0)
                snprintf(row[ctol], DPAS__CELL, "%s", r->max_f >= o->f ? "yes" : "no");
            if (!r->ok) {
                for (int k = ctol >= 0 ? ctol + 1 : 3; k < cwhy; k++)
                    snprintf(row[k], DPAS__CELL, "-");
                snprintf(row[cwhy], DPAS__CELL, "%s", r->why);
                continue;
            }
            human(row[ct - 2], r->tr.sent, o->units);
            if (r->ratio >= 0)
                snprintf(row[ct - 1], DPAS__CELL, "%.6g", r->ratio);
            else
                snprintf(row[ct - 1], DPAS__CELL, "-");
            if (have_links) {
                snprintf(row[ct], DPAS__CELL, "%.6g", r->tflat);
                if (isnan(r->thier))
                    snprintf(row[ct + 1], DPAS__CELL, "-");
                else
                    snprintf(row[ct + 1], DPAS__CELL, "%.6g", r->thier);
            }
            if (o->compute_rate > 0)
                snprintf(row[cc], DPAS__CELL, "%.6g", r->compute);
        }
        dpas__table_emit(&tt, DPAS_FORMAT_TEXT, &b);
        if (hidden && !o->all)
            dpas__buf_printf(&b, "(%zu rule x schedule combinations are not realisable; --all lists "
                                 "them with the reason)\n", hidden);
        for (int i = 0; i < nnotes; i++)
            dpas__buf_printf(&b, "note: %s\n", notes[i]);
        free(rows);
        return dpas__buf_finish(&b, err);
    }
    /* JSON, CSV, Markdown: every row, every column */
    dpas__table tt = {0};
    int c = 0;
    tt.head[c++] = "rule";
    tt.head[c++] = "convention";
    tt.head[c++] = "schedule";
    tt.type[c] = DPAS__BOOL, tt.head[c++] = "realisable";
    tt.head[c++] = "why";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "max_f";
    int ctol = -1;
    if (o->f >= 0)
        ctol = c, tt.type[c] = DPAS__BOOL, tt.head[c++] = "tolerates";
    int cb = c;
    tt.type[c] = DPAS__NUM, tt.head[c++] = "bytes_per_worker";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "bytes_received";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "scalar_bytes";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "ratio_to_allreduce";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "time_flat_s";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "time_hierarchical_s";
    tt.type[c] = DPAS__NUM, tt.head[c++] = "compute_s";
    tt.ncols = c;
    for (size_t i = 0; i < nr; i++) {
        cost_row *r = &rows[i];
        char(*row)[DPAS__CELL] = dpas__table_row(&tt);
        if (!row)
            break;
        snprintf(row[0], DPAS__CELL, "%s", r->rule->name);
        snprintf(row[1], DPAS__CELL, "%s", r->rule->convention);
        snprintf(row[2], DPAS__CELL, "%s", dpas_schedule_name((dpas_schedule_id)r->sched));
        cell_bool(row[3], r->ok);
        if (r->why)
            snprintf(row[4], DPAS__CELL, "%s", r->why);
        if (r->max_f >= 0)
            cellf(row[5], "%lld", (long long)r->max_f);
        if (ctol >= 0)
            cell_bool(row[ctol], r->max_f >= o->f);
        if (!r->ok)
            continue;
        cell_bytes(row[cb], r->tr.sent);
        cell_bytes(row[cb + 1], r->tr.received);
        cell_bytes(row[cb + 2], r->tr.scalars);
        if (r->ratio >= 0)
            cell_double(row[cb + 3], r->ratio);
        if (have_links) {
            cell_double(row[cb + 4], r->tflat);
            if (!isnan(r->thier))
                cell_double(row[cb + 5], r->thier);
        }
        if (o->compute_rate > 0)
            cell_double(row[cb + 6], r->compute);
    }
    if (o->format != DPAS_FORMAT_JSON) {
        free(rows);
        return dpas__table_finish(&tt, o->format, err);
    }
    header_json(&b, o->label);
    dpas__buf_printf(&b, ",\n  \"dp_degree\": %lld,\n  \"gradient_bytes\": %s,\n  \"steps\": %lld,\n"
                         "  \"iterations\": %lld,\n  \"links\": ",
                     (long long)N, t, (long long)steps, (long long)iters);
    if (have_links) {
        char v[4][40];
        cell_double(v[0], L.inter_bandwidth);
        cell_double(v[1], L.inter_latency);
        cell_double(v[2], L.intra_bandwidth);
        cell_double(v[3], L.intra_latency);
        dpas__buf_puts(&b, "{\"fabric\": ");
        if (o->links)
            dpas__buf_json_str(&b, o->links_source ? o->links_source : "calibration");
        else
            dpas__buf_json_str(&b, s->fabric_entry->path);
        dpas__buf_puts(&b, ", \"node\": ");
        if (s->node_entry)
            dpas__buf_json_str(&b, s->node_entry->path);
        else
            dpas__buf_puts(&b, "null");
        dpas__buf_printf(&b, ", \"inter_bandwidth\": %s, \"inter_latency\": %s, \"intra_bandwidth\": %s, "
                             "\"intra_latency\": %s}", v[0], v[1], v[2], v[3]);
    } else {
        dpas__buf_puts(&b, "null");
    }
    dpas__buf_puts(&b, ",\n  \"notes\": [");
    for (int i = 0; i < nnotes; i++) {
        dpas__buf_puts(&b, i ? ", " : "");
        dpas__buf_json_str(&b, notes[i]);
    }
    dpas__buf_puts(&b, "],\n  \"rows\": ");
    dpas__table_emit(&tt, DPAS_FORMAT_JSON, &b);
    dpas__buf_puts(&b, "\n}\n");
    free(rows);
    return dpas__buf_finish(&b, err);
}

/* ---- inventory ---- */

char *dpas_render_inventory(const dpas_scenario *s, int format, int units, const char *label,
                            dpas_error *err)
{
    size_t n = 0;
    if (dpas_inventory(s, NULL, 0, &n, err))
        return NULL;
    dpas_inventory_row *rows = calloc(n ? n : 1, sizeof *rows);
    if (!rows) {
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    if (dpas_inventory(s, rows, n, &n, err)) {
        free(rows);
        return NULL;
    }
    dpas__table t = {0};
    t.ncols = 7;
    t.head[0] = "where", t.head[1] = "item", t.head[2] = "basis", t.head[3] = "bytes";
    t.head[4] = "si", t.head[5] = "iec", t.head[6] = "source";
    t.type[3] = DPAS__NUM;
    bool text = format == DPAS_FORMAT_TEXT;
    if (text) { /* one human column, in the units asked for */
        t.ncols = 6;
        t.head[4] = units == DPAS_UNITS_IEC ? "iec" : "si";
        t.head[5] = "source";
    }
    for (size_t i = 0; i < n; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(&t);
        if (!row)
            break;
        snprintf(row[0], DPAS__CELL, "%s", rows[i].where);
        snprintf(row[1], DPAS__CELL, "%s", rows[i].item);
        snprintf(row[2], DPAS__CELL, "%s", rows[i].basis);
        cell_bytes(row[3], rows[i].bytes);
        if (text) {
            human(row[4], rows[i].bytes, units == DPAS_UNITS_IEC ? DPAS_UNITS_IEC : DPAS_UNITS_SI);
            snprintf(row[5], DPAS__CELL, "%s", rows[i].source);
        } else {
            human(row[4], rows[i].bytes, DPAS_UNITS_SI);
            human(row[5], rows[i].bytes, DPAS_UNITS_IEC);
            snprintf(row[6], DPAS__CELL, "%s", rows[i].source);
        }
    }
    free(rows);
    if (format != DPAS_FORMAT_JSON) {
        dpas__buf b = {0};
        if (text && label)
            dpas__buf_printf(&b, "scenario  %s\n\n", label);
        dpas__table_emit(&t, format, &b);
    return dpas__buf_finish(&b, err);
    }
    dpas__buf b = {0};
    header_json(&b, label);
    dpas__buf_puts(&b, ",\n  \"rows\": ");
    dpas__table_emit(&t, DPAS_FORMAT_JSON, &b);
    dpas__buf_puts(&b, "\n}\n");
    return dpas__buf_finish(&b, err);
}

/* ---- memory ---- */

static void state_name(const dpas_convention *c, int zero, char *buf, size_t cap)
{
    if (zero)
        snprintf(buf, cap, "%s, ZeRO stage %d", c->name, zero);
    else
        snprintf(buf, cap, "%s", c->name);
}

size_t dpas_memory_message(const dpas_scenario *s, const dpas_convention *c, int zero,
                           const dpas_memory *m, char *buf, size_t cap)
{
    char st[64], capb[64], name[64], ex[96];
    dpas_format_bytes_human(m->state, DPAS_UNITS_SI, st, sizeof st);
    dpas_format_bytes_human(m->capacity, DPAS_UNITS_SI, capb, sizeof capb);
    dpas_format_bytes_exact(m->state, ex, sizeof ex);
    state_name(c, zero, name, sizeof name);
    char apr[40];
    dpas__fmt_double((double)(s->nodes * s->accelerators_per_node) / (double)s->dp_degree, false, apr,
                     sizeof apr);
    return (size_t)snprintf(buf, cap,
                            "one replica's training state (%s B = %s, %s) exceeds the memory of its "
                            "%s %s accelerators (%s): utilisation %.3g",
                            ex, st, name, apr, s->node_entry->accelerator->name, capb,
                            m->utilisation);
}

char *dpas_render_memory(const dpas_scenario *s, const dpas_convention *c, int zero,
                         const dpas_memory *m, int format, int units, const char *label,
                         dpas_error *err)
{
    char name[64], ex[96], hs[64], hc[64], ec[96], head[64], util[40], apr[40];
    state_name(c, zero, name, sizeof name);
    dpas_format_bytes_exact(m->state, ex, sizeof ex);
    dpas_format_bytes_exact(m->capacity, ec, sizeof ec);
    dpas_format_bytes_human(m->state, (dpas_units)units, hs, sizeof hs);
    dpas_format_bytes_human(m->capacity, (dpas_units)units, hc, sizeof hc);
    dpas__fmt_double(m->headroom, false, head, sizeof head);
    dpas__fmt_double(m->utilisation, false, util, sizeof util);
    dpas__fmt_double((double)(s->nodes * s->accelerators_per_node) / (double)s->dp_degree, false, apr,
                     sizeof apr);
    dpas__buf b = {0};
    if (format == DPAS_FORMAT_JSON) {
        header_json(&b, label);
        dpas__buf_puts(&b, ",\n  \"state\": ");
        dpas__buf_json_str(&b, c->name);
        dpas__buf_printf(&b, ",\n  \"zero_stage\": %d,\n  \"state_bytes\": %s,\n  \"capacity_bytes\": %s,\n"
                             "  \"accelerators_per_replica\": %s,\n  \"accelerator\": ",
                         zero, ex, ec, apr);
        dpas__buf_json_str(&b, s->node_entry->accelerator->path);
        dpas__buf_printf(&b, ",\n  \"headroom_bytes\": %s,\n  \"utilisation\": %s,\n  \"fits\": %s,\n"
                             "  \"source\": ",
                         head, util, m->fits ? "true" : "false");
        dpas__buf_json_str(&b, c->source);
        dpas__buf_puts(&b, "\n}\n");
    return dpas__buf_finish(&b, err);
    }
    char hh[64];
    if (m->headroom >= 0)
        dpas_format_bytes_human((dpas_bytes){(uint64_t)m->headroom, 0, 1}, (dpas_units)units, hh, sizeof hh);
    else {
        char t[60];
        dpas_format_bytes_human((dpas_bytes){(uint64_t)-m->headroom, 0, 1}, (dpas_units)units, t, sizeof t);
        snprintf(hh, sizeof hh, "-%s", t);
    }
    dpas__table t = {0};
    t.ncols = 2;
    t.head[0] = "quantity", t.head[1] = "value";
    const char *k[] = {"state", "state_bytes", "capacity_bytes", "accelerators_per_replica",
                       "headroom_bytes", "utilisation", "fits"};
    char v[7][DPAS__CELL];
    snprintf(v[0], DPAS__CELL, "%s (%s)", name, c->source);
    snprintf(v[1], DPAS__CELL, "%s (%s)", ex, hs);
    snprintf(v[2], DPAS__CELL, "%s (%s)", ec, hc);
    snprintf(v[3], DPAS__CELL, "%s x %s", apr, s->node_entry->accelerator->name);
    snprintf(v[4], DPAS__CELL, "%s (%s)", head, hh);
    snprintf(v[5], DPAS__CELL, "%s", util);
    snprintf(v[6], DPAS__CELL, "%s", m->fits ? "yes" : "no");
    for (int i = 0; i < 7; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(&t);
        if (!row)
            break;
        snprintf(row[0], DPAS__CELL, "%s", k[i]);
        snprintf(row[1], DPAS__CELL, "%s", v[i]);
    }
    if (format == DPAS_FORMAT_TEXT && label)
        dpas__buf_printf(&b, "scenario  %s\n\n", label);
    dpas__table_emit(&t, format, &b);
    return dpas__buf_finish(&b, err);
}
