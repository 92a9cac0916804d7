/* SPDX-License-Identifier: Apache-2.0 */
/* The report: typed rows (one per rank) and a summary, rendered in one place as text, JSON or
 * CSV. The per-rank table goes through the library's table writer (dpas/table.h); the JSON
 * object around it writes its strings with the writer's escaping and its reals by the writer's
 * one rule (the shortest round-trip text, null when not finite), so the JSON is always valid
 * and prints a number as the CLI, the server and Python do. The caller renders into memory and prints only a complete
 * report. */
#include "measure.h"

#include <math.h>
#include <string.h>

static int sink_file(void *ctx, const char *data, size_t len);

/* A JSON number by the writer's one rule for a real (the shortest text that reads back to the
 * same double, as the CLI, the server and Python print it), or null when it is not finite. */
static void json_num(FILE *f, double v) { dpas_write_json_real(v, sink_file, f); }

/* A JSON string literal by the writer's escaping (valid UTF-8, control characters escaped). */
static void json_str(FILE *f, const char *s) { dpas_write_json_string(s, sink_file, f); }

static double ratio(const rank_row *r)
{
    return r->predicted > 0 ? r->measured / r->predicted : 1.0;
}

static void json_fit(FILE *f, const char *key, const link_fit *l)
{
    fprintf(f, ",\n    \"%s\": ", key);
    if (!l->file) {
        fputs("null", f);
    } else {
        fputs("{\"file\": ", f);
        json_str(f, l->file);
        fprintf(f, ", \"collective\": \"%s\", \"ranks\": %lld, \"alpha_s\": ", l->collective,
                (long long)l->ranks);
        json_num(f, l->alpha);
        fputs(", \"beta_bytes_per_s\": ", f);
        json_num(f, l->beta);
        fputs("}", f);
    }
}

static void json_time_model(FILE *f, const report *r)
{
    const prediction *p = &r->pred;
    fputs(",\n  \"time_model\": ", f);
    if (!r->o->calibration) {
        fputs("null", f);
    } else {
        fputs("{\n    \"network_model\": ", f);
        if (p->have)
            json_str(f, p->model);
        else
            fputs("null", f);
        fprintf(f, ",\n    \"extrapolated\": %s,\n    \"rescaled\": %s,\n    \"topology\": \"%s\"",
                p->extrapolated ? "true" : "false", p->rescaled ? "true" : "false",
                p->topo == DPAS_TOPO_HIERARCHICAL ? "hierarchical" : "flat");
        /* named as a cost row's and a calibrate prediction's: time_basis, time_band_low_s and
         * time_band_high_s */
        const char *basis = p->have ? dpas_time_basis_name(p->basis) : NULL;
        fputs(",\n    \"time_basis\": ", f);
        if (basis)
            json_str(f, basis);
        else
            fputs("null", f);
        const int band = p->have && isfinite(p->band_lo) && isfinite(p->band_hi);
        fputs(",\n    \"time_band_low_s\": ", f);
        if (band)
            json_num(f, p->band_lo);
        else
            fputs("null", f);
        fputs(",\n    \"time_band_high_s\": ", f);
        if (band)
            json_num(f, p->band_hi);
        else
            fputs("null", f);
        json_fit(f, "inter_host", &p->inter);
        json_fit(f, "intra_host", &p->intra);
        fputs(",\n    \"note\": ", f);
        if (p->why)
            json_str(f, p->why);
        else
            fputs("null", f);
        fputs("\n  }", f);
    }
}

/* The per-rank table, through the library's one table writer (JSON, CSV or aligned text). */
static int sink_file(void *ctx, const char *data, size_t len)
{
    return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : DPAS_EIO;
}

static const dpas_column rank_cols[] = {
    {"rank", DPAS_COL_INT, 0},
    {"predicted_bytes", DPAS_COL_REAL, DPAS_COL_G10},
    {"measured_bytes", DPAS_COL_REAL, DPAS_COL_G10},
    {"ratio", DPAS_COL_REAL, DPAS_COL_G6},
    {"time_median_s", DPAS_COL_REAL, DPAS_COL_G6},
    {"time_min_s", DPAS_COL_REAL, DPAS_COL_G6},
    {"time_max_s", DPAS_COL_REAL, DPAS_COL_G6},
    {"compute_median_s", DPAS_COL_REAL, DPAS_COL_G6},
};

static int write_ranks(const report *r, dpas_format format, FILE *f)
{
    dpas_writer_opts wo = {.format = format};
    dpas_writer *w = NULL;
    dpas_error e;
    int rc =
        dpas_writer_new(rank_cols, sizeof rank_cols / sizeof *rank_cols, &wo, sink_file, f, &w, &e);
    for (int i = 0; i < r->L->nranks && !rc; i++) {
        const rank_row *x = &r->rows[i];
        /* hidden bytes are no measurement: null, never 0 */
        dpas_cell c[] = {dpas_cell_int(i),
                         dpas_cell_real(x->predicted),
                         r->sum.visible ? dpas_cell_real(x->measured) : dpas_cell_null(),
                         r->sum.visible ? dpas_cell_real(ratio(x)) : dpas_cell_null(),
                         dpas_cell_real(x->t_med),
                         dpas_cell_real(x->t_min),
                         dpas_cell_real(x->t_max),
                         dpas_cell_real(x->c_med)};
        rc = dpas_writer_row(w, c, &e);
    }
    if (!rc)
        rc = dpas_writer_end(w, &e);
    dpas_writer_free(w);
    if (rc)
        fprintf(stderr, "dpas-measure: error: %s\n", e.message);
    return rc ? 1 : 0;
}

static void json_summary(FILE *f, const report *r)
{
    const summary *s = &r->sum;
    static const char *keys[] = {"ratio_min",
                                 "ratio_max",
                                 "time_median_s",
                                 "compute_median_s",
                                 "predicted_time_s",
                                 "predicted_time_low_s",
                                 "predicted_time_high_s",
                                 "predicted_network_s",
                                 "time_ratio",
                                 "algbw_GBps",
                                 "busbw_GBps"};
    double v[] = {s->visible ? s->ratio_min : NAN,
                  s->visible ? s->ratio_max : NAN,
                  s->time_median_s,
                  s->compute_median_s,
                  s->predicted_time_s,
                  s->predicted_lo_s,
                  s->predicted_hi_s,
                  r->pred.have ? r->pred.network_s : NAN,
                  s->time_median_s / s->predicted_time_s,
                  s->algbw,
                  s->busbw};
    fputs(",\n  \"summary\": {", f);
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) {
        fprintf(f, "%s\"%s\": ", i ? ", " : "", keys[i]);
        json_num(f, v[i]);
    }
    fprintf(f,
            "},\n  \"checksum\": \"%s\",\n  \"consistent\": %s,\n  \"verified\": %s,\n  "
            "\"max_abs_diff\": ",
            s->checksum, s->consistent ? "true" : "false",
            s->verified < 0 ? "null"
            : s->verified   ? "true"
                            : "false");
    json_num(f, s->max_abs_diff);
    fputs(",\n  \"distance_from_honest_mean\": ", f);
    if (!s->have_dist) {
        fputs("null", f);
    } else {
        fputs("{\"mean\": ", f);
        json_num(f, s->dist_mean);
        fputs(", \"rule\": ", f);
        json_num(f, s->dist_rule);
        fputs("}", f);
    }
}

static int render_json(const report *r, FILE *f)
{
    const opts *o = r->o;
    const layout *L = r->L;
    fputs("{\n  \"dpas_version\": ", f); /* what wrote it, as every JSON document of dpas */
    json_str(f, dpas_version());
    fprintf(f, ",\n  \"schema_version\": %d,", dpas_json_schema_version());
    fprintf(
        f,
        "\n  \"ranks\": %d,\n  \"hosts\": %d,\n  \"ranks_per_host\": %d,\n  \"params\": %zu,\n"
        "  \"width\": %d,\n  \"gradient_bytes\": %zu,\n  \"rule\": \"%s\",\n  \"convention\": "
        "\"%s\",\n"
        "  \"schedule\": \"%s\",\n  \"topology\": \"%s\",\n  \"f\": %lld,\n  \"byzantine\": %lld,\n"
        "  \"attack\": \"%s\",\n  \"iterations\": %d,\n  \"warmup\": %d,\n  \"isa\": \"%s\",\n"
        "  \"transport_visible\": %s,\n  \"predicted_bytes\": %.0f",
        L->nranks, L->hosts, L->per_host, r->d, o->width, r->d * (size_t)o->width, o->rule->name,
        o->rule->convention, dpas_schedule_name(o->schedule),
        L->hierarchical ? "hierarchical" : "flat", (long long)o->f, (long long)o->byzantine,
        attack_name(o), o->iters, o->warmup, dpas_kernel_isa(), r->sum.visible ? "true" : "false",
        r->predicted_bytes);
    json_time_model(f, r);
    fputs(",\n  \"per_rank\": ", f);
    int rc = write_ranks(r, DPAS_FORMAT_JSON, f);
    json_summary(f, r);
    fputs("\n}\n", f);
    return rc;
}

static void text_time(const report *r, FILE *f)
{
    const prediction *p = &r->pred;
    const summary *s = &r->sum;
    if (p->have)
        fprintf(f,
                "time: predicted %.6f s (network %.6f s, %s, %s %s from %s%s%s; compute %.6f s "
                "measured), measured %.6f s: measured / predicted %.3f\n",
                s->predicted_time_s, p->network_s,
                p->topo == DPAS_TOPO_HIERARCHICAL ? "hierarchical" : "flat", p->inter.collective,
                p->model, p->inter.file, p->extrapolated ? ", extrapolated" : "",
                p->rescaled ? ", rescaled" : "", s->compute_median_s, s->time_median_s,
                s->time_median_s / s->predicted_time_s);
    else if (p->why)
        fprintf(f, "time: %s\n", p->why);
    if (p->have && dpas_time_basis_name(p->basis) && s->inside_band >= 0)
        fprintf(f, "basis: %s; band %.6f .. %.6f s (the network's band + compute): measured %s\n",
                dpas_time_basis_name(p->basis), s->predicted_lo_s, s->predicted_hi_s,
                s->inside_band ? "inside" : "outside");
}

static int render_text(const report *r, FILE *f)
{
    const opts *o = r->o;
    const summary *s = &r->sum;
    const int N = r->L->nranks;
    const size_t w = (size_t)o->width;
    fprintf(f,
            "dpas-measure  %d ranks, rule %s (%s, f = %lld), schedule %s, %zu coordinates x %zu B "
            "= %zu B per gradient\n",
            N, o->rule->name, o->rule->convention, (long long)o->f, dpas_schedule_name(o->schedule),
            r->d, w, r->d * w);
    fprintf(f, "%s; %d timed steps after %d warm-up; kernels %s\n",
            s->visible
                ? "bytes: the kernel's count of bytes written (wchar), over TCP"
                : "bytes: the transport hides them from the kernel (shared memory?): run over "
                  "TCP (--mca btl self,tcp) to count them",
            o->iters, o->warmup, dpas_kernel_isa());
    if (r->L->hierarchical)
        fprintf(f, "hosts: %d x %d ranks, the schedule runs hierarchically\n", r->L->hosts,
                r->L->per_host);
    if (o->byzantine)
        fprintf(f, "byzantine: the last %lld ranks send %s gradients\n", (long long)o->byzantine,
                attack_name(o));
    fputc('\n', f);
    int rc = write_ranks(r, DPAS_FORMAT_TEXT, f);
    fputc('\n', f);
    if (s->visible)
        fprintf(f, "measured / predicted: %.5f .. %.5f%s\n", s->ratio_min, s->ratio_max,
                o->check_bytes >= 0
                    ? (s->bytes_ok ? "  (within --check-bytes)" : "  (OUTSIDE --check-bytes)")
                    : "");
    fprintf(f,
            "step: median %.6f s (slowest rank); algbw %.3f GB/s, busbw %.3f GB/s (nccl-tests' "
            "terms)\n",
            s->time_median_s, s->algbw, s->busbw);
    text_time(r, f);
    fprintf(f, "aggregate: checksum %s, %s on every rank", s->checksum,
            s->consistent ? "identical" : "DIFFERENT");
    if (s->verified >= 0)
        fprintf(f, "; %s the single-process kernel (max |diff| %.3g)\n",
                s->verified ? "agrees with" : "DIFFERS from", s->max_abs_diff);
    else
        fprintf(f, "; not verified against the single-process kernel\n");
    if (s->have_dist && o->byzantine) {
        if (isfinite(s->dist_mean))
            fprintf(f, "distance from the honest mean (relative): mean %.4g, %s %.4g\n",
                    s->dist_mean, o->rule->name, s->dist_rule);
        else /* a NaN or an Inf gradient: the plain mean is no number */
            fprintf(f,
                    "distance from the honest mean (relative): mean none (non-finite "
                    "gradients), %s %.4g\n",
                    o->rule->name, s->dist_rule);
    }
    return rc;
}

int report_render(const report *r, FILE *out)
{
    int rc;
    if (r->o->format == OUT_JSON)
        rc = render_json(r, out);
    else if (r->o->format == OUT_CSV)
        rc = write_ranks(r, DPAS_FORMAT_CSV, out);
    else
        rc = render_text(r, out);
    return rc || ferror(out) ? 1 : 0;
}
