/* The calibration rendered: text and markdown sections, CSV rows, one JSON document, notes for
 * stderr, and plots of measured time against each model. Formatting only: every number comes
 * from the dpas_netmodel and the predictions. */
#include "../internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const source_names[] = {"unknown",     "given",      "test name",   "Rank lines",
                                           "busbw/algbw", "CSV column", "command line"};
static const char *const source_keys[] = {NULL,          "given",      "test_name",   "rank_lines",
                                          "busbw_algbw", "csv_column", "command_line"};
static const char *const prefix_names[] = {"",
                                           "srun --label \"N: \"",
                                           "mpirun --tag-output \"[J,R]<stdout>:\"",
                                           "kubectl --prefix \"[pod/NAME/CONTAINER] \"",
                                           "pdsh \"host: \"",
                                           "an RFC 3339 timestamp",
                                           "mpiexec -l \"[N] \""};

static const char *source_name(int s)
{
    return s >= 0 && s <= DPAS_NCCL_COMMAND ? source_names[s] : "?";
}
static const char *source_key(int s)
{
    return s > 0 && s <= DPAS_NCCL_COMMAND ? source_keys[s] : NULL;
}

/* A byte count as "8 GiB" when it is a whole number of a binary unit, else "123456 B". */
static void human(uint64_t b, char *out, size_t cap)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    int k = 0;
    while (k < 6 && b >= 1024 && b % 1024 == 0)
        b /= 1024, k++;
    snprintf(out, cap, "%llu %s", (unsigned long long)b, u[k]);
}

static void num(char *cell, double v, const char *fmt)
{
    if (isnan(v))
        cell[0] = '\0';
    else if (isinf(v))
        snprintf(cell, DPAS__CELL, "%s", v > 0 ? "inf" : "-inf");
    else
        snprintf(cell, DPAS__CELL, fmt, v);
}

static const char *coll_name(const dpas_curve *cv) { return dpas_collective_name(cv->collective); }

/* ---- notes ---------------------------------------------------------------------------------- */

static void how_found(dpas__buf *b, const dpas_nccl_test *t)
{
    dpas__buf_printf(b, "collective from %s", source_name(t->collective_from));
    if (t->collective_from == DPAS_NCCL_BUS_RATIO)
        dpas__buf_printf(b, " = %.4g (line %d)%s%s", t->bus_ratio, t->ratio_line,
                         t->redop ? " and redop " : "", t->redop ? t->redop : "");
    else if ((t->collective_from == DPAS_NCCL_TEST_NAME ||
              t->collective_from == DPAS_NCCL_COMMAND) &&
             t->name)
        dpas__buf_printf(b, " %s", t->name);
    dpas__buf_printf(b, ", ranks from %s", source_name(t->ranks_from));
    if (t->ranks_from == DPAS_NCCL_BUS_RATIO)
        dpas__buf_printf(b, " = %.4g (line %d)", t->bus_ratio, t->ratio_line);
    else if (t->ranks_from == DPAS_NCCL_RANK_LINES)
        dpas__buf_printf(b, " (%lld)", (long long)t->rank_lines);
    if (t->nodes_from && t->ranks_per_node)
        dpas__buf_printf(b, ", %lld node%s x %lld ranks from the hosts of the Rank lines",
                         (long long)t->nodes, t->nodes == 1 ? "" : "s",
                         (long long)t->ranks_per_node);
    else if (t->nodes_from)
        dpas__buf_printf(b,
                         ", %lld nodes from the hosts of the Rank lines, %lld to %lld ranks "
                         "each",
                         (long long)t->nodes, (long long)t->ranks_per_node_min,
                         (long long)t->ranks_per_node_max);
}

/* What the reader skipped: tables it did not read, rows of size 0, tags inside lines. */
static void reader_notes(dpas__buf *b, const dpas_nccl_log *g, bool verbose)
{
    const char *o = g->origin;
    for (size_t i = 0; i < g->nskipped; i++) {
        const dpas_nccl_skipped *s = &g->skipped[i];
        dpas__buf_printf(b, "note: %s:%d: ", o, s->line);
        if (s->reason == DPAS_NCCL_SKIP_UNMODELLED)
            dpas__buf_printf(b, "%s skipped (%zu row%s): dpas does not model it\n", s->name,
                             s->rows, s->rows == 1 ? "" : "s");
        else if (s->reason == DPAS_NCCL_SKIP_LOOKS_UNMODELLED)
            dpas__buf_printf(b,
                             "a table skipped (%zu row%s): its columns (%s) fit only %s, which "
                             "dpas does not model\n",
                             s->rows, s->rows == 1 ? "" : "s", s->why, s->name);
        else
            dpas__buf_printf(b, "a table skipped: its %zu rows all have size 0\n", s->rows);
    }
    for (size_t i = 0; i < g->ntests; i++) {
        const dpas_nccl_test *t = &g->tests[i];
        if (t->zero_rows)
            dpas__buf_printf(b,
                             "note: %s:%d: %s: %zu row%s of size 0 skipped (nccl-tests prints "
                             "them when the count per rank rounds to 0)\n",
                             o, t->zero_row_line, dpas_collective_name(t->collective), t->zero_rows,
                             t->zero_rows == 1 ? "" : "s");
    }
    if (verbose && g->inline_tags)
        dpas__buf_printf(b,
                         "note: %s: %zu mpirun tag%s removed from inside lines, %zu line%s "
                         "joined across another process's output\n",
                         o, g->inline_tags, g->inline_tags == 1 ? "" : "s", g->joined_lines,
                         g->joined_lines == 1 ? "" : "s");
}

static void test_warnings(dpas__buf *b, const char *lead, const char *origin,
                          const dpas_nccl_test *t, const char *end)
{
    const char *cn = dpas_collective_name(t->collective);
    int first = t->npoints ? t->points[0].line : t->header_line;
    if (t->warnings & DPAS_NCCL_WARN_RANKS_DISAGREE)
        dpas__buf_printf(b,
                         "%s%s:%d: %s: busbw/algbw = %.4g means %lld ranks, but the file has %lld "
                         "Rank lines; using %lld%s",
                         lead, origin, first, cn, t->bus_ratio, (long long)t->ratio_ranks,
                         (long long)t->rank_lines, (long long)t->rank_lines, end);
    if (t->warnings & DPAS_NCCL_WARN_NAME_DISAGREE)
        dpas__buf_printf(b,
                         "%s%s:%d: the test is named %s, but busbw/algbw = %.4g does not fit "
                         "%s; using the name%s",
                         lead, origin, first, t->name, t->bus_ratio, cn, end);
    if (t->warnings & DPAS_NCCL_WARN_WRONG)
        dpas__buf_printf(b,
                         "%s%s:%d: %s: %zu row%s report #wrong > 0 (nccl-tests' data check "
                         "failed); their times are used%s",
                         lead, origin, first, cn, t->wrong_rows, t->wrong_rows == 1 ? "" : "s",
                         end);
    if (t->warnings & DPAS_NCCL_WARN_REPEATED)
        dpas__buf_printf(b,
                         "%s%s:%d: %s: sizes measured more than once; their times are merged "
                         "(geometric mean)%s",
                         lead, origin, first, cn, end);
}

static void curve_warnings(dpas__buf *b, const char *lead, const char *origin, const dpas_curve *cv,
                           const char *end)
{
    const dpas_fit *ab = &cv->fits[DPAS_NETMODEL_ALPHA_BETA - 1];
    const dpas_fit *pw = &cv->fits[DPAS_NETMODEL_PIECEWISE - 1];
    if (!ab->defined && !pw->defined && !strcmp(ab->reason, pw->reason))
        dpas__buf_printf(b, "%s%s: alpha_beta and piecewise: %s%s", lead, origin, ab->reason, end);
    else
        for (const dpas_fit *f = ab; f <= pw; f++)
            if (!f->defined)
                dpas__buf_printf(b, "%s%s: %s: %s%s", lead, origin,
                                 dpas_netmodel_kind_name(f->kind), f->reason, end);
}

static void prediction_warnings(dpas__buf *b, const char *lead, const dpas_netmodel *m,
                                const dpas_net_prediction *p, size_t np, const char *end)
{
    for (size_t i = 0; i < np; i++) {
        const dpas_curve *cv = &m->curves[p[i].curve];
        if (!p[i].extrapolated || !cv->n)
            continue;
        bool none = true;
        for (int k = 0; k < DPAS_NETMODEL_KINDS; k++)
            none &= isnan(p[i].seconds[k]);
        dpas__buf_printf(b, "%s%s on %lld ranks at %llu B: ", lead, coll_name(cv),
                         (long long)cv->ranks, (unsigned long long)p[i].bytes);
        if (cv->n == 1)
            dpas__buf_printf(b, "only %llu B was measured, ", (unsigned long long)cv->bytes[0]);
        else
            dpas__buf_printf(b, "outside the measured sizes (%llu to %llu B): ",
                             (unsigned long long)cv->bytes[0],
                             (unsigned long long)cv->bytes[cv->n - 1]);
        dpas__buf_printf(b, "%s%s", none ? "no model can answer" : "the models extrapolate", end);
    }
}

/* text quoted whole, for a note (the caller frees) */
static char *quote_all(const char *text)
{
    size_t cap = 4 * strlen(text) + 8;
    char *q = malloc(cap);
    if (q)
        dpas__quote(text, q, cap);
    return q;
}

char *dpas_netmodel_notes(const dpas_netmodel *m, const dpas_net_prediction *pred, size_t npred,
                          int verbose, dpas_error *err)
{
    dpas__buf b = {0};
    dpas__buf_puts(&b, "");
    const dpas_nccl_log *g = m->log;
    const char *o = g ? g->origin : "<points>";
    if (g && verbose) {
        if (g->foreign_lines) {
            char *q = quote_all(g->first_foreign);
            if (!q)
                b.oom = true;
            else
                dpas__buf_printf(&b,
                                 "note: %s: %zu of %d lines skipped (not nccl-tests output); "
                                 "the first, line %d: %s\n",
                                 o, g->foreign_lines, g->lines, g->first_foreign_line, q);
            free(q);
        }
        if (g->prefixed_lines)
            dpas__buf_printf(&b, "note: %s: a launcher prefix stripped from %zu lines (%s)\n", o,
                             g->prefixed_lines, prefix_names[g->prefix]);
        if (g->unselected)
            dpas__buf_printf(&b, "note: %s: %zu test%s left out by --collective or --ranks\n", o,
                             g->unselected, g->unselected == 1 ? "" : "s");
    }
    if (g)
        reader_notes(&b, g, verbose);
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_nccl_test *t = m->curves[i].test;
        if (!t)
            continue;
        bool guessed =
            t->collective_from == DPAS_NCCL_BUS_RATIO || t->ranks_from == DPAS_NCCL_BUS_RATIO;
        if (guessed || verbose) {
            dpas__buf_printf(&b, "note: %s:%d: %s on %lld ranks: ", o, t->header_line,
                             dpas_collective_name(t->collective), (long long)t->ranks);
            how_found(&b, t);
            dpas__buf_puts(&b, "\n");
        }
    }
    for (size_t i = 0; i < m->ncurves; i++) {
        if (m->curves[i].test)
            test_warnings(&b, "warning: ", o, m->curves[i].test, "\n");
        curve_warnings(&b, "warning: ", o, &m->curves[i], "\n");
    }
    prediction_warnings(&b, "warning: ", m, pred, npred, "\n");
    return dpas__buf_finish(&b, err);
}

/* ---- tables --------------------------------------------------------------------------------- */

static void fits_table(dpas__table *t, const dpas_curve *cv, bool csv_rows)
{
    int c = 0;
    if (csv_rows) {
        t->head[c++] = "collective", t->head[c++] = "ranks";
    }
    t->head[c++] = "model";
    if (csv_rows) {
        t->head[c] = "regime", t->type[c++] = DPAS__NUM;
        t->head[c] = "from_bytes", t->type[c++] = DPAS__NUM;
        t->head[c] = "to_bytes", t->type[c++] = DPAS__NUM;
    } else {
        t->head[c] = "regimes", t->type[c++] = DPAS__NUM;
    }
    t->head[c] = "alpha_s", t->type[c++] = DPAS__NUM;
    t->head[c] = "beta_bytes_per_s", t->type[c++] = DPAS__NUM;
    t->head[c] = "max_rel_residual", t->type[c++] = DPAS__NUM;
    if (!csv_rows) {
        t->head[c] = "at_bytes", t->type[c++] = DPAS__NUM;
        t->head[c] = "median_rel_residual", t->type[c++] = DPAS__NUM;
        t->head[c++] = "residuals";
    }
    t->ncols = c;
    for (int k = 0; k < DPAS_NETMODEL_KINDS; k++) {
        const dpas_fit *f = &cv->fits[k];
        size_t rows = csv_rows && f->nregimes > 1 ? f->nregimes : 1;
        for (size_t r = 0; r < rows; r++) {
            char(*row)[DPAS__CELL] = dpas__table_row(t);
            if (!row)
                return;
            int j = 0;
            if (csv_rows) {
                snprintf(row[j++], DPAS__CELL, "%s", coll_name(cv));
                snprintf(row[j++], DPAS__CELL, "%lld", (long long)cv->ranks);
            }
            snprintf(row[j++], DPAS__CELL, "%s", dpas_netmodel_kind_name(k + 1));
            const dpas_regime *g = f->nregimes ? &f->regimes[r] : NULL;
            if (csv_rows) {
                if (g && f->defined) {
                    snprintf(row[j], DPAS__CELL, "%zu", r + 1), j++;
                    snprintf(row[j], DPAS__CELL, "%llu", (unsigned long long)g->from_bytes), j++;
                    snprintf(row[j], DPAS__CELL, "%llu", (unsigned long long)g->to_bytes), j++;
                } else {
                    j++;
                    snprintf(row[j], DPAS__CELL, "%llu", (unsigned long long)cv->bytes[0]), j++;
                    snprintf(row[j], DPAS__CELL, "%llu", (unsigned long long)cv->bytes[cv->n - 1]),
                        j++;
                }
            } else {
                if (f->defined && k + 1 != DPAS_NETMODEL_EMPIRICAL)
                    snprintf(row[j], DPAS__CELL, "%zu", f->nregimes);
                j++;
            }
            if (!f->defined) {
                j += 3;
                if (!csv_rows) {
                    j += 2;
                    snprintf(row[j], DPAS__CELL, "undefined: %s", f->reason);
                }
                continue;
            }
            num(row[j++], g && csv_rows ? g->alpha : f->alpha, "%.4g");
            num(row[j++], g && csv_rows ? g->beta : f->beta, "%.4g");
            num(row[j++], g && csv_rows ? g->max_rel_residual : f->max_rel_residual, "%.4g");
            if (!csv_rows) {
                if (isfinite(f->max_rel_residual))
                    snprintf(row[j], DPAS__CELL, "%llu", (unsigned long long)cv->bytes[f->worst]);
                j++;
                num(row[j++], f->median_rel_residual, "%.4g");
                snprintf(row[j++], DPAS__CELL, "%s",
                         k + 1 == DPAS_NETMODEL_EMPIRICAL
                             ? (cv->n > 1 ? "each size from the others" : "one size: none")
                         : k + 1 == DPAS_NETMODEL_PIECEWISE ? "in sample; beta: last regime"
                                                            : "in sample");
            }
        }
    }
}

static void regimes_table(dpas__table *t, const dpas_fit *f)
{
    static const char *const h[] = {"regime",  "from_bytes",       "to_bytes",        "sizes",
                                    "alpha_s", "beta_bytes_per_s", "max_rel_residual"};
    t->ncols = 7;
    for (int c = 0; c < 7; c++)
        t->head[c] = h[c], t->type[c] = DPAS__NUM;
    for (size_t r = 0; r < f->nregimes; r++) {
        char(*row)[DPAS__CELL] = dpas__table_row(t);
        if (!row)
            return;
        const dpas_regime *g = &f->regimes[r];
        snprintf(row[0], DPAS__CELL, "%zu", r + 1);
        snprintf(row[1], DPAS__CELL, "%llu", (unsigned long long)g->from_bytes);
        snprintf(row[2], DPAS__CELL, "%llu", (unsigned long long)g->to_bytes);
        snprintf(row[3], DPAS__CELL, "%zu", g->count);
        num(row[4], g->alpha, "%.4g");
        num(row[5], g->beta, "%.4g");
        num(row[6], g->max_rel_residual, "%.4g");
    }
}

static void residuals_table(dpas__table *t, const dpas_curve *cv)
{
    static const char *const h[] = {"bytes",          "measured_s",   "alpha_beta_s",
                                    "alpha_beta_rel", "piecewise_s",  "piecewise_rel",
                                    "empirical_s",    "empirical_rel"};
    t->ncols = 8;
    for (int c = 0; c < 8; c++)
        t->head[c] = h[c], t->type[c] = DPAS__NUM;
    for (size_t i = 0; i < cv->n; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(t);
        if (!row)
            return;
        snprintf(row[0], DPAS__CELL, "%llu", (unsigned long long)cv->bytes[i]);
        num(row[1], cv->seconds[i], "%.4g");
        for (int k = 0; k < DPAS_NETMODEL_KINDS; k++) {
            num(row[2 + 2 * k], cv->fits[k].predicted[i], "%.4g");
            num(row[3 + 2 * k], cv->fits[k].rel_residual[i], "%+.3g");
        }
    }
}

static void predictions_table(dpas__table *t, const dpas_net_prediction *p, size_t np)
{
    static const char *const h[] = {"collective",  "ranks",       "bytes",         "alpha_beta_s",
                                    "piecewise_s", "empirical_s", "default_model", "extrapolated"};
    t->ncols = 8;
    for (int c = 1; c < 6; c++)
        t->type[c] = DPAS__NUM;
    t->type[7] = DPAS__BOOL;
    for (int c = 0; c < 8; c++)
        t->head[c] = h[c];
    for (size_t i = 0; i < np; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(t);
        if (!row)
            return;
        snprintf(row[0], DPAS__CELL, "%s", dpas_collective_name(p[i].collective));
        snprintf(row[1], DPAS__CELL, "%lld", (long long)p[i].ranks);
        snprintf(row[2], DPAS__CELL, "%llu", (unsigned long long)p[i].bytes);
        for (int k = 0; k < DPAS_NETMODEL_KINDS; k++)
            num(row[3 + k], p[i].seconds[k], "%.4g");
        if (p[i].default_kind)
            snprintf(row[6], DPAS__CELL, "%s", dpas_netmodel_kind_name(p[i].default_kind));
        snprintf(row[7], DPAS__CELL, "%s", p[i].extrapolated ? "true" : "false");
    }
}

static void section(dpas__buf *b, int format, const char *title)
{
    if (format == DPAS_FORMAT_MARKDOWN)
        dpas__buf_printf(b, "\n#### %s\n\n", title);
    else
        dpas__buf_printf(b, "\n%s\n", title);
}

static void render_tables(dpas__buf *b, const dpas_netmodel *m, const dpas_net_prediction *p,
                          size_t np, int format)
{
    const dpas_nccl_log *g = m->log;
    if (format == DPAS_FORMAT_CSV) {
        dpas__table t = {0};
        if (np) {
            predictions_table(&t, p, np);
            dpas__table_emit(&t, format, b);
            return;
        }
        for (size_t i = 0; i < m->ncurves; i++) {
            dpas__table u = {0};
            fits_table(&u, &m->curves[i], true);
            if (i && u.cells) { /* one header for all the tests */
                dpas__buf part = {0};
                dpas__table_emit(&u, format, &part);
                const char *body = part.data ? strchr(part.data, '\n') : NULL;
                if (body)
                    dpas__buf_puts(b, body + 1);
                if (part.oom)
                    b->oom = true;
                free(part.data);
            } else {
                dpas__table_emit(&u, format, b);
            }
        }
        return;
    }
    bool md = format == DPAS_FORMAT_MARKDOWN;
    if (g) {
        bool plain = true; /* a name with control characters or quotes is quoted */
        for (const unsigned char *c = (const unsigned char *)g->origin; *c; c++)
            plain &= *c >= 0x20 && *c != 0x7f && *c != '"';
        char *q = plain ? NULL : quote_all(g->origin);
        if (!plain && !q)
            b->oom = true;
        dpas__buf_printf(b, "%sfile %s: %d lines, %zu test%s", md ? "### " : "",
                         plain ? g->origin
                         : q   ? q
                               : "",
                         g->lines, g->ntests, g->ntests == 1 ? "" : "s");
        free(q);
        if (g->foreign_lines)
            dpas__buf_printf(b, ", %zu line%s skipped (not nccl-tests output; -v names the first)",
                             g->foreign_lines, g->foreign_lines == 1 ? "" : "s");
        dpas__buf_puts(b, "\n");
    }
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        const dpas_nccl_test *t = cv->test;
        char lo[32], hi[32];
        human(cv->bytes[0], lo, sizeof lo);
        human(cv->bytes[cv->n - 1], hi, sizeof hi);
        if (cv->n == 1)
            dpas__buf_printf(b, "\n%s%s on %lld ranks: 1 size, %s", md ? "### " : "", coll_name(cv),
                             (long long)cv->ranks, lo);
        else
            dpas__buf_printf(b, "\n%s%s on %lld ranks: %zu sizes from %s to %s", md ? "### " : "",
                             coll_name(cv), (long long)cv->ranks, cv->n, lo, hi);
        if (t)
            dpas__buf_printf(b, " (lines %d-%d)", t->header_line,
                             t->npoints ? t->points[t->npoints - 1].line : t->header_line);
        if (isfinite(cv->peak_busbw)) {
            char at[32];
            human(cv->peak_busbw_bytes, at, sizeof at);
            dpas__buf_printf(b, ", peak busbw %.2f GB/s at %s", cv->peak_busbw / 1e9, at);
        }
        dpas__buf_puts(b, "\n");
        if (t) {
            dpas__buf_puts(b, md ? "\n" : "");
            how_found(b, t);
            dpas__buf_puts(b, "\n");
            test_warnings(b, "warning: ", g->origin, t, "\n");
        }
        dpas__buf_puts(b, "\n");
        dpas__table ft = {0};
        fits_table(&ft, cv, false);
        dpas__table_emit(&ft, format, b);
        if (np) /* predictions asked for: the fits, then them; regimes and residuals are in
                   the report without --predict and in the JSON */
            continue;
        const dpas_fit *pw = &cv->fits[DPAS_NETMODEL_PIECEWISE - 1];
        if (pw->defined) {
            section(b, format, "piecewise regimes");
            dpas__table rt = {0};
            regimes_table(&rt, pw);
            dpas__table_emit(&rt, format, b);
        }
        section(b, format,
                "residuals: (model - measured) / measured; empirical: each size from "
                "the others");
        dpas__table rs = {0};
        residuals_table(&rs, cv);
        dpas__table_emit(&rs, format, b);
    }
    if (np) {
        section(b, format, "predictions (seconds)");
        dpas__table pt = {0};
        predictions_table(&pt, p, np);
        dpas__table_emit(&pt, format, b);
    }
}

/* ---- JSON ----------------------------------------------------------------------------------- */

/* Text as valid UTF-8: any byte that is not part of a valid sequence becomes U+FFFD. */
static char *utf8_clean(const char *s)
{
    size_t n = strlen(s);
    char *o = malloc(3 * n + 1);
    if (!o)
        return NULL;
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        size_t len = 0;
        if (*p < 0x80)
            len = 1;
        else if (*p >= 0xc2 && *p <= 0xdf)
            len = 2;
        else if (*p >= 0xe0 && *p <= 0xef)
            len = 3;
        else if (*p >= 0xf0 && *p <= 0xf4)
            len = 4;
        bool ok = len > 0;
        for (size_t i = 1; ok && i < len; i++)
            ok = (p[i] & 0xc0) == 0x80;
        if (ok && len == 3) /* no overlong forms, no surrogates */
            ok = !(p[0] == 0xe0 && p[1] < 0xa0) && !(p[0] == 0xed && p[1] >= 0xa0);
        if (ok && len == 4)
            ok = !(p[0] == 0xf0 && p[1] < 0x90) && !(p[0] == 0xf4 && p[1] >= 0x90);
        if (ok) {
            memcpy(o + k, p, len);
            k += len, p += len;
        } else {
            memcpy(o + k, "\xef\xbf\xbd", 3);
            k += 3, p++;
        }
    }
    o[k] = '\0';
    return o;
}

static json_t *jstr(const char *s)
{
    if (!s)
        return json_null();
    char *c = utf8_clean(s);
    json_t *j = c ? json_string(c) : NULL;
    free(c);
    return j;
}

static json_t *jreal(double v) { return isfinite(v) ? json_real(v) : json_null(); }
static json_t *jint(long long v) { return json_integer(v); }
static json_t *ju64(uint64_t v) { return json_integer((json_int_t)v); }

/* json_object_set_new that remembers a failure (NULL value or allocation). */
static void put(json_t *o, const char *k, json_t *v, bool *bad)
{
    if (!v || json_object_set_new(o, k, v))
        *bad = true;
}

static void add(json_t *a, json_t *v, bool *bad)
{
    if (!v || json_array_append_new(a, v))
        *bad = true;
}

static json_t *regime_json(const dpas_regime *g, bool *bad)
{
    json_t *o = json_object();
    if (!o) {
        *bad = true;
        return NULL;
    }
    put(o, "from_bytes", ju64(g->from_bytes), bad);
    put(o, "to_bytes", ju64(g->to_bytes), bad);
    put(o, "sizes", jint((long long)g->count), bad);
    put(o, "alpha_s", jreal(g->alpha), bad);
    put(o, "beta_bytes_per_s", jreal(g->beta), bad);
    put(o, "max_rel_residual", jreal(g->max_rel_residual), bad);
    return o;
}

static json_t *fit_json(const dpas_curve *cv, const dpas_fit *f, bool *bad)
{
    json_t *o = json_object();
    if (!o) {
        *bad = true;
        return NULL;
    }
    put(o, "collective", json_string(coll_name(cv)), bad);
    put(o, "ranks", jint((long long)cv->ranks), bad);
    put(o, "model", json_string(dpas_netmodel_kind_name(f->kind)), bad);
    put(o, "defined", json_boolean(f->defined), bad);
    put(o, "error", f->defined ? json_null() : jstr(f->reason), bad);
    put(o, "alpha_s", jreal(f->alpha), bad);
    put(o, "beta_bytes_per_s", jreal(f->beta), bad);
    if (f->kind == DPAS_NETMODEL_PIECEWISE) {
        json_t *a = json_array();
        for (size_t r = 0; a && f->defined && r < f->nregimes; r++)
            add(a, regime_json(&f->regimes[r], bad), bad);
        put(o, "regimes", a, bad);
    }
    if (f->kind == DPAS_NETMODEL_ALPHA_BETA)
        put(o, "r2", jreal(f->r2), bad);
    put(o, "max_rel_residual", jreal(f->max_rel_residual), bad);
    put(o, "max_rel_residual_bytes",
        isfinite(f->max_rel_residual) ? ju64(cv->bytes[f->worst]) : json_null(), bad);
    put(o, "median_rel_residual", jreal(f->median_rel_residual), bad);
    put(o, "residuals_from",
        json_string(f->kind == DPAS_NETMODEL_EMPIRICAL ? "leave_one_out" : "in_sample"), bad);
    put(o, "sizes", jint((long long)cv->n), bad);
    json_t *rs = json_array();
    for (size_t i = 0; rs && i < cv->n; i++) {
        json_t *r = json_object();
        if (!r) {
            *bad = true;
            break;
        }
        put(r, "bytes", ju64(cv->bytes[i]), bad);
        put(r, "measured_s", jreal(cv->seconds[i]), bad);
        put(r, "predicted_s", jreal(f->predicted[i]), bad);
        put(r, "rel_residual", jreal(f->rel_residual[i]), bad);
        add(rs, r, bad);
    }
    put(o, "residuals", rs, bad);
    return o;
}

static json_t *test_json(const dpas_curve *cv, bool *bad)
{
    json_t *o = json_object();
    if (!o) {
        *bad = true;
        return NULL;
    }
    const dpas_nccl_test *t = cv->test;
    put(o, "collective", json_string(coll_name(cv)), bad);
    put(o, "ranks", jint((long long)cv->ranks), bad);
    put(o, "collective_from", t ? jstr(source_key(t->collective_from)) : json_null(), bad);
    put(o, "ranks_from", t ? jstr(source_key(t->ranks_from)) : json_null(), bad);
    put(o, "name", t ? jstr(t->name) : json_null(), bad);
    put(o, "type", t ? jstr(t->type) : json_null(), bad);
    put(o, "redop", t ? jstr(t->redop) : json_null(), bad);
    put(o, "bus_ratio", t ? jreal(t->bus_ratio) : json_null(), bad);
    put(o, "rank_lines", t ? jint((long long)t->rank_lines) : json_null(), bad);
    bool nodes = t && t->nodes_from;
    put(o, "nodes", nodes ? jint((long long)t->nodes) : json_null(), bad);
    put(o, "ranks_per_node",
        nodes && t->ranks_per_node ? jint((long long)t->ranks_per_node) : json_null(), bad);
    put(o, "ranks_per_node_min", nodes ? jint((long long)t->ranks_per_node_min) : json_null(), bad);
    put(o, "ranks_per_node_max", nodes ? jint((long long)t->ranks_per_node_max) : json_null(), bad);
    put(o, "nodes_from", nodes ? jstr(source_key(t->nodes_from)) : json_null(), bad);
    put(o, "zero_rows", t ? jint((long long)t->zero_rows) : json_null(), bad);
    put(o, "header_line", t ? jint(t->header_line) : json_null(), bad);
    put(o, "last_line", t && t->npoints ? jint(t->points[t->npoints - 1].line) : json_null(), bad);
    put(o, "rows", t ? jint((long long)t->npoints) : json_null(), bad);
    put(o, "sizes", jint((long long)cv->n), bad);
    put(o, "min_bytes", ju64(cv->bytes[0]), bad);
    put(o, "max_bytes", ju64(cv->bytes[cv->n - 1]), bad);
    put(o, "peak_busbw_bytes_per_s", jreal(cv->peak_busbw), bad);
    put(o, "peak_busbw_at_bytes",
        isfinite(cv->peak_busbw) ? ju64(cv->peak_busbw_bytes) : json_null(), bad);
    put(o, "wrong_rows", t ? jint((long long)t->wrong_rows) : json_null(), bad);
    return o;
}

static json_t *skipped_json(const dpas_nccl_log *g, bool *bad)
{
    static const char *const reasons[] = {"", "unmodelled", "looks_unmodelled", "zero_only"};
    json_t *a = json_array();
    if (!a) {
        *bad = true;
        return NULL;
    }
    for (size_t i = 0; i < g->nskipped; i++) {
        const dpas_nccl_skipped *s = &g->skipped[i];
        json_t *o = json_object();
        if (!o) {
            *bad = true;
            break;
        }
        put(o, "line", jint(s->line), bad);
        put(o, "name", jstr(s->name), bad);
        put(o, "reason", jstr(s->reason >= 1 && s->reason <= 3 ? reasons[s->reason] : NULL), bad);
        put(o, "rows", jint((long long)s->rows), bad);
        put(o, "columns", s->why[0] ? jstr(s->why) : json_null(), bad);
        add(a, o, bad);
    }
    return a;
}

/* The lines of a notes text as a JSON array, without their "note: " / "warning: " lead. */
static json_t *lines_json(const char *text, const char *lead, bool *bad)
{
    json_t *a = json_array();
    if (!a) {
        *bad = true;
        return NULL;
    }
    size_t ll = strlen(lead);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= ll && !memcmp(p, lead, ll)) {
            char *s = malloc(n - ll + 1);
            if (!s) {
                *bad = true;
                break;
            }
            memcpy(s, p + ll, n - ll);
            s[n - ll] = '\0';
            add(a, jstr(s), bad);
            free(s);
        }
        p = nl ? nl + 1 : p + n;
    }
    return a;
}

static char *render_json(const dpas_netmodel *m, const dpas_net_prediction *p, size_t np,
                         dpas_error *err)
{
    bool bad = false;
    json_t *root = json_object(), *fits = json_array(), *preds = json_array(),
           *tests = json_array();
    if (!root || !fits || !preds || !tests) {
        json_decref(root), json_decref(fits), json_decref(preds), json_decref(tests);
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    put(root, "fits", fits, &bad);
    put(root, "predictions", preds, &bad);
    for (size_t i = 0; i < m->ncurves; i++) {
        for (int k = 0; k < DPAS_NETMODEL_KINDS; k++)
            add(fits, fit_json(&m->curves[i], &m->curves[i].fits[k], &bad), &bad);
        add(tests, test_json(&m->curves[i], &bad), &bad);
    }
    for (size_t i = 0; i < np; i++) {
        json_t *o = json_object();
        if (!o) {
            bad = true;
            break;
        }
        put(o, "collective", json_string(dpas_collective_name(p[i].collective)), &bad);
        put(o, "ranks", jint((long long)p[i].ranks), &bad);
        put(o, "bytes", ju64(p[i].bytes), &bad);
        put(o, "alpha_beta_s", jreal(p[i].seconds[0]), &bad);
        put(o, "piecewise_s", jreal(p[i].seconds[1]), &bad);
        put(o, "empirical_s", jreal(p[i].seconds[2]), &bad);
        put(o, "default_model",
            p[i].default_kind ? json_string(dpas_netmodel_kind_name(p[i].default_kind))
                              : json_null(),
            &bad);
        put(o, "extrapolated", json_boolean(p[i].extrapolated), &bad);
        add(preds, o, &bad);
    }
    put(root, "tests", tests, &bad);
    const dpas_nccl_log *g = m->log;
    put(root, "file", g ? jstr(g->origin) : json_null(), &bad);
    put(root, "lines", g ? jint(g->lines) : json_null(), &bad);
    put(root, "foreign_lines", g ? jint((long long)g->foreign_lines) : json_null(), &bad);
    put(root, "first_foreign_line",
        g && g->foreign_lines ? jint(g->first_foreign_line) : json_null(), &bad);
    put(root, "first_foreign", g ? jstr(g->first_foreign) : json_null(), &bad);
    put(root, "prefixed_lines", g ? jint((long long)g->prefixed_lines) : json_null(), &bad);
    put(root, "unselected_tests", g ? jint((long long)g->unselected) : json_null(), &bad);
    put(root, "inline_tags", g ? jint((long long)g->inline_tags) : json_null(), &bad);
    put(root, "joined_lines", g ? jint((long long)g->joined_lines) : json_null(), &bad);
    put(root, "skipped_tables", g ? skipped_json(g, &bad) : json_null(), &bad);
    char *notes = dpas_netmodel_notes(m, p, np, 1, err);
    if (!notes) {
        json_decref(root);
        return NULL;
    }
    put(root, "notes", lines_json(notes, "note: ", &bad), &bad);
    put(root, "warnings", lines_json(notes, "warning: ", &bad), &bad);
    free(notes);
    char *text = bad ? NULL : json_dumps(root, JSON_INDENT(2) | JSON_REAL_PRECISION(10));
    json_decref(root);
    if (!text) {
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        return NULL;
    }
    /* with the newline every payload ends with */
    size_t n = strlen(text);
    char *out = malloc(n + 2);
    if (out) {
        memcpy(out, text, n);
        out[n] = '\n', out[n + 1] = '\0';
    } else {
        dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    free(text);
    return out;
}

char *dpas_render_netmodel(const dpas_netmodel *m, const dpas_net_prediction *pred, size_t npred,
                           int format, dpas_error *err)
{
    if (format == DPAS_FORMAT_JSON)
        return render_json(m, pred, npred, err);
    dpas__buf b = {0};
    render_tables(&b, m, pred, npred, format);
    return dpas__buf_finish(&b, err);
}

/* ---- plots ---------------------------------------------------------------------------------- */

#define GRID 256

typedef struct plot_data {
    dpas_series *s;
    size_t n;
    double *mem;
    char (*names)[96];
    char *title;
} plot_data;

static void plot_free(plot_data *d)
{
    free(d->s), free(d->mem), free(d->names), free(d->title);
    d->s = NULL, d->mem = NULL, d->names = NULL, d->title = NULL;
}

/* Each defined model on a log grid over the measured sizes, then the measured points (last, so
 * that they are drawn on top). */
static int plot_build(const dpas_netmodel *m, plot_data *d, dpas_plot_spec *ps, dpas_error *err)
{
    memset(d, 0, sizeof *d);
    size_t per = 1 + DPAS_NETMODEL_KINDS;
    d->s = calloc(per * m->ncurves, sizeof *d->s);
    d->names = calloc(per * m->ncurves, sizeof *d->names);
    size_t need = 0;
    for (size_t i = 0; i < m->ncurves; i++)
        need += 2 * m->curves[i].n + 2 * GRID * DPAS_NETMODEL_KINDS;
    d->mem = malloc((need ? need : 1) * sizeof *d->mem);
    if (!d->s || !d->names || !d->mem) {
        plot_free(d);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    double *mem = d->mem;
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        char lead[64] = "";
        if (m->ncurves > 1)
            snprintf(lead, sizeof lead, "%s %lld: ", coll_name(cv), (long long)cv->ranks);
        double lo = log((double)cv->bytes[0]), hi = log((double)cv->bytes[cv->n - 1]);
        for (int k = 1; k <= DPAS_NETMODEL_KINDS && cv->n > 1; k++) {
            if (!cv->fits[k - 1].defined)
                continue;
            double *gx = mem, *gy = mem + GRID;
            mem += 2 * GRID;
            for (int j = 0; j < GRID; j++) {
                gx[j] = j == GRID - 1 ? (double)cv->bytes[cv->n - 1]
                                      : exp(lo + (hi - lo) * j / (GRID - 1));
                dpas_net_time t;
                dpas_curve_time(cv, k, gx[j], 0, &t, NULL);
                gy[j] = t.seconds;
            }
            snprintf(d->names[d->n], sizeof d->names[0], "%s%s", lead,
                     k == DPAS_NETMODEL_ALPHA_BETA ? "alpha-beta" : dpas_netmodel_kind_name(k));
            d->s[d->n] = (dpas_series){d->names[d->n], gx, gy, GRID};
            d->n++;
        }
        double *x = mem, *y = mem + cv->n;
        mem += 2 * cv->n;
        for (size_t j = 0; j < cv->n; j++)
            x[j] = (double)cv->bytes[j], y[j] = cv->seconds[j];
        snprintf(d->names[d->n], sizeof d->names[0], "%smeasured", lead);
        d->s[d->n] = (dpas_series){d->names[d->n], x, y, cv->n};
        d->n++;
    }
    const char *o = m->log ? m->log->origin : "";
    const char *base = strrchr(o, '/') ? strrchr(o, '/') + 1 : o;
    static const char what[] = "measured time and the models";
    size_t tl = strlen(base) + sizeof what + 2;
    if (!(d->title = malloc(tl))) {
        plot_free(d);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    snprintf(d->title, tl, "%s%s%s", base, *base ? ": " : "", what);
    *ps = (dpas_plot_spec){.title = d->title,
                           .xlabel = "size (nccl-tests' size column)",
                           .ylabel = "time",
                           .xlog = 2,
                           .ylog = 10,
                           .xunit = DPAS_AXIS_BYTES,
                           .yunit = DPAS_AXIS_SECONDS};
    return 0;
}

char *dpas_netmodel_svg(const dpas_netmodel *m, dpas_error *err)
{
    plot_data d;
    dpas_plot_spec ps;
    if (plot_build(m, &d, &ps, err))
        return NULL;
    char *svg = dpas_plot_svg(&ps, d.s, d.n, err);
    plot_free(&d);
    return svg;
}

int dpas_netmodel_png(const dpas_netmodel *m, const char *path, dpas_error *err)
{
    plot_data d;
    dpas_plot_spec ps;
    int rc = plot_build(m, &d, &ps, err);
    if (rc)
        return rc;
    rc = dpas_plot_png(&ps, d.s, d.n, path, err);
    plot_free(&d);
    return rc;
}
