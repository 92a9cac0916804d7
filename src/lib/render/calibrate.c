/* SPDX-License-Identifier: Apache-2.0 */
/* The calibration rendered: text and markdown sections, CSV rows, one JSON document, notes for
 * stderr, and plots of measured time against each model. Formatting only: every number comes
 * from the dpas_netmodel, its series and the predictions. */
#include "doc.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const source_names[] = {
    "unknown",     "given",      "test name",    "Rank lines",
    "busbw/algbw", "CSV column", "command line", "size / (count x type bytes)"};
static const char *const source_keys[] = {NULL,           "given",       "test_name",
                                          "rank_lines",   "busbw_algbw", "csv_column",
                                          "command_line", "count_column"};
static const char *const prefix_names[] = {"",
                                           "srun --label \"N: \"",
                                           "mpirun --tag-output \"[J,R]<stdout>:\"",
                                           "kubectl --prefix \"[pod/NAME/CONTAINER] \"",
                                           "pdsh \"host: \"",
                                           "an RFC 3339 timestamp",
                                           "mpiexec -l \"[N] \""};

static const char *source_name(int s)
{
    return s >= 0 && s <= DPAS_NCCL_COUNT_COLUMN ? source_names[s] : "?";
}
static const char *source_key(int s)
{
    return s > 0 && s <= DPAS_NCCL_COUNT_COLUMN ? source_keys[s] : NULL;
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

/* A number cell: the shortest text that reads back as v (what JSON and CSV carry, as every
 * table of the writer), with how text and markdown show it in the cell's last byte
 * (dpas__table_render): fmt is "%.Ng" or "%+.Ng", N significant digits (and DPAS__CELL_PLUS for
 * the sign). */
static void num(char *cell, double v, const char *fmt)
{
    if (isnan(v))
        cell[0] = '\0';
    else if (isinf(v))
        snprintf(cell, DPAS__CELL, "%s", v > 0 ? "inf" : "-inf");
    else {
        dpas__fmt_double(v, false, cell, DPAS__CELL - 1);
        int plus = fmt[1] == '+';
        cell[DPAS__CELL - 1] = (char)((fmt[2 + plus] - '0') | (plus ? DPAS__CELL_PLUS : 0));
    }
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
        else if (s->reason == DPAS_NCCL_SKIP_UNREADABLE)
            dpas__buf_printf(b, "%s%s%stest skipped (%zu row%s), the others read: %s\n",
                             s->name ? "the " : "a ", s->name ? s->name : "", s->name ? " " : "",
                             s->rows, s->rows == 1 ? "" : "s", s->why);
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
                         "%s%s:%d: %s: busbw/algbw = %.4g means %lld ranks, but the file %s "
                         "%lld; using %lld (the numbers)%s",
                         lead, origin, first, cn, t->bus_ratio, (long long)t->ratio_ranks,
                         t->rank_lines ? "has Rank lines of" : "says",
                         (long long)(t->rank_lines ? t->rank_lines : t->csv_ranks),
                         (long long)t->ranks, end);
    if (t->warnings & DPAS_NCCL_WARN_RANK_LINES_PARTIAL) {
        dpas__buf_printf(b, "%s%s:%d: %s: the file shows %lld Rank line%s, ", lead, origin, first,
                         cn, (long long)t->rank_lines, t->rank_lines == 1 ? "" : "s");
        if (t->elided_line)
            dpas__buf_printf(b, "elided at line %d", t->elided_line);
        else
            dpas__buf_puts(b, "whose ids skip some");
        dpas__buf_printf(b, "; %lld ranks from %s%s", (long long)t->ranks,
                         t->ranks_from == DPAS_NCCL_GIVEN          ? "ranks as given"
                         : t->ranks_from == DPAS_NCCL_COUNT_COLUMN ? "size / (count x type bytes)"
                                                                   : "busbw/algbw",
                         t->nodes_from && t->ranks_per_node ? "" : end);
        if (t->nodes_from && t->ranks_per_node)
            dpas__buf_printf(b,
                             "; %lld nodes x %lld from the hosts and devices of the lines shown "
                             "(rank r on device r mod %lld)%s",
                             (long long)t->nodes, (long long)t->ranks_per_node,
                             (long long)t->ranks_per_node, end);
    }
    if (t->warnings & DPAS_NCCL_WARN_RANKS_GIVEN)
        dpas__buf_printf(b,
                         "%s%s:%d: %s: the file says %lld rank%s, which busbw/algbw cannot "
                         "confirm; using ranks %lld as given%s",
                         lead, origin, first, cn,
                         (long long)(t->rank_lines ? t->rank_lines : t->ranks),
                         t->rank_lines == 1 ? "" : "s", (long long)t->ranks, end);
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
    if (cv->runs > 1 && cv->run_spread) {
        double worst = 1;
        for (size_t i = 0; i < cv->n; i++)
            worst = fmax(worst, cv->run_spread[i]);
        dpas__buf_printf(b,
                         "%s%s: %s on %lld ranks: %zu runs of this scale merged (the median "
                         "time per size); they differ by up to x%.4g%s",
                         lead, origin, dpas_collective_name(cv->collective), (long long)cv->ranks,
                         cv->runs, worst, end);
    }
    if (!ab->defined && !pw->defined && !strcmp(ab->reason, pw->reason))
        dpas__buf_printf(b, "%s%s: alpha_beta and piecewise: %s%s", lead, origin, ab->reason, end);
    else
        for (const dpas_fit *f = ab; f <= pw; f++)
            if (!f->defined)
                dpas__buf_printf(b, "%s%s: %s: %s%s", lead, origin,
                                 dpas_netmodel_kind_name(f->kind), f->reason, end);
}

static const char *const topo_names[] = {"", "Rank lines", "given", "assumed"};
static const char *const topo_keys[] = {NULL, "rank_lines", "given", "assumed"};
static const char *const proto_names[] = {"LL", "LL128", "Simple"};

static const char *origin_of(const dpas_netmodel *m, const dpas_curve *cv)
{
    return cv->test && cv->log < m->nlogs ? m->logs[cv->log]->origin : "<points>";
}

/* "8 nodes x 4" or "1 node of 8" */
static void scale_text(char *out, size_t cap, int64_t ranks, int64_t per_node)
{
    int64_t nodes = per_node > 0 ? ranks / per_node : 1;
    if (nodes <= 1)
        snprintf(out, cap, "1 node of %lld", (long long)ranks);
    else
        snprintf(out, cap, "%lld nodes x %lld", (long long)nodes, (long long)per_node);
}

/* Notes and warnings about one predicted time: why it is uncertain. */
static void time_notes(dpas__buf *b, const char *lead, const dpas_net_prediction *p,
                       const dpas_curve *cv, const char *end)
{
    char sc[64];
    scale_text(sc, sizeof sc, p->at.ranks, p->at.per_node);
    const char *cn = dpas_collective_name(p->collective);
    if (p->notes & DPAS_NETTIME_LATENCY_BOUND)
        dpas__buf_printf(b,
                         "%s%s at %llu B (%s): the sweep of %lld ranks stopped at %llu B before "
                         "reaching its bandwidth regime (its time still grew as size^%.2f), so "
                         "times above it are extrapolated from the model's bandwidth%s",
                         lead, cn, (unsigned long long)p->bytes, sc, (long long)cv->ranks,
                         (unsigned long long)cv->bytes[cv->n - 1], cv->end_elasticity, end);
    if (p->notes & DPAS_NETTIME_NO_INTRA)
        dpas__buf_printf(b,
                         "%s%s at %s: no curve measured inside one node; its bandwidth is "
                         "assumed equal to the network's, so the time is at most this (band "
                         "one-sided)%s",
                         lead, cn, sc, end);
    if (p->notes & DPAS_NETTIME_NO_INTER)
        dpas__buf_printf(b,
                         "%s%s at %s: no curve measured across nodes; the network is assumed as "
                         "fast as the links inside a node, so the time is at least this (band "
                         "one-sided)%s",
                         lead, cn, sc, end);
    if ((p->notes & DPAS_NETTIME_OTHER_REGIME) &&
        !(p->notes & (DPAS_NETTIME_NO_INTRA | DPAS_NETTIME_NO_INTER)))
        dpas__buf_printf(b,
                         "%s%s at %s: no curve measured the %s regime; transferred from the "
                         "%s one, so the time is %s this (band one-sided)%s",
                         lead, cn, sc, dpas_net_regime_name(p->regime),
                         dpas_net_regime_name(p->from_regime),
                         p->notes & DPAS_NETTIME_LOWER_BOUND   ? "at least"
                         : p->notes & DPAS_NETTIME_UPPER_BOUND ? "at most"
                                                               : "near",
                         end);
    if (!(p->notes & DPAS_NETTIME_OTHER_REGIME) &&
        (p->notes & (DPAS_NETTIME_LOWER_BOUND | DPAS_NETTIME_UPPER_BOUND)))
        dpas__buf_printf(b,
                         "%s%s at %s: no curve measured across nodes at %lld ranks per node and "
                         "the files do not tell how the network grows with them (taken in "
                         "proportion, which it never exceeds), so the time is %s this (band "
                         "one-sided)%s",
                         lead, cn, sc, (long long)p->at.per_node,
                         p->notes & DPAS_NETTIME_LOWER_BOUND ? "at least" : "at most", end);
    if (p->notes & DPAS_NETTIME_ASSUMED_TOPOLOGY)
        dpas__buf_printf(b,
                         "%s%s at %s: a file's ranks per node were assumed (its Rank lines do not "
                         "name hosts; give gpus_per_node)%s",
                         lead, cn, sc, end);
}

static void prediction_warnings(dpas__buf *b, const char *lead, const dpas_netmodel *m,
                                const dpas_net_prediction *p, size_t np, const char *end)
{
    unsigned seen = 0;
    for (size_t i = 0; i < np; i++) {
        const dpas_curve *cv = &m->curves[p[i].curve];
        unsigned fresh = p[i].notes & ~seen; /* each kind of note once */
        if (fresh) {
            dpas_net_prediction q = p[i];
            q.notes = fresh;
            time_notes(b, lead, &q, cv, end);
            seen |= fresh;
        }
        if (p[i].basis == DPAS_BASIS_NONE && p[i].at.ranks > 1) {
            dpas__buf_printf(b, "%s%s on %lld ranks at %llu B: no model can answer%s", lead,
                             dpas_collective_name(p[i].collective), (long long)p[i].at.ranks,
                             (unsigned long long)p[i].bytes, end);
        }
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

static void log_notes(dpas__buf *b, const dpas_nccl_log *g)
{
    const char *o = g->origin;
    if (g->foreign_lines) {
        char *q = quote_all(g->first_foreign);
        if (!q)
            b->oom = true;
        else
            dpas__buf_printf(b,
                             "note: %s: %zu of %d lines skipped (not nccl-tests output); "
                             "the first, line %d: %s\n",
                             o, g->foreign_lines, g->lines, g->first_foreign_line, q);
        free(q);
    }
    if (g->prefixed_lines)
        dpas__buf_printf(b, "note: %s: a launcher prefix stripped from %zu lines (%s)\n", o,
                         g->prefixed_lines, prefix_names[g->prefix]);
    if (g->unselected)
        dpas__buf_printf(b, "note: %s: %zu test%s left out by --collective or --ranks\n", o,
                         g->unselected, g->unselected == 1 ? "" : "s");
}

char *dpas_netmodel_notes(const dpas_netmodel *m, const dpas_net_prediction *pred, size_t npred,
                          int verbose, dpas_error *err)
{
    dpas__buf b = {0};
    dpas__buf_puts(&b, "");
    for (size_t f = 0; f < m->nlogs; f++) {
        if (verbose)
            log_notes(&b, m->logs[f]);
        reader_notes(&b, m->logs[f], verbose);
    }
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        const dpas_nccl_test *t = cv->test;
        if (!t)
            continue;
        bool guessed = t->collective_from == DPAS_NCCL_BUS_RATIO ||
                       t->ranks_from == DPAS_NCCL_BUS_RATIO ||
                       t->ranks_from == DPAS_NCCL_COUNT_COLUMN;
        if (guessed || verbose) {
            dpas__buf_printf(&b, "note: %s:%d: %s on %lld ranks: ", origin_of(m, cv),
                             t->header_line, dpas_collective_name(t->collective),
                             (long long)t->ranks);
            how_found(&b, t);
            dpas__buf_puts(&b, "\n");
        }
        if (cv->per_node_from == DPAS_TOPO_FROM_GIVEN && t->nodes > 0 && t->ranks_per_node > 0 &&
            t->nodes * t->ranks_per_node == t->ranks && t->ranks_per_node != cv->per_node)
            dpas__buf_printf(&b,
                             "note: %s:%d: %s on %lld ranks: gpus_per_node %lld is used as "
                             "given, though its Rank lines put %lld ranks on each of its %lld "
                             "hosts\n",
                             origin_of(m, cv), t->header_line, dpas_collective_name(t->collective),
                             (long long)t->ranks, (long long)cv->per_node,
                             (long long)t->ranks_per_node, (long long)t->nodes);
        if (cv->per_node_from == DPAS_TOPO_FROM_ASSUMED && cv->ranks > 1) {
            char sc[64];
            scale_text(sc, sizeof sc, cv->ranks, cv->per_node);
            dpas__buf_printf(
                &b,
                "note: %s:%d: %s on %lld ranks: no Rank lines name the host of every rank, so "
                "%s is assumed (gpus_per_node G says otherwise)\n",
                origin_of(m, cv), t->header_line, dpas_collective_name(t->collective),
                (long long)t->ranks, sc);
        }
    }
    for (size_t i = 0; i < m->ncurves; i++) {
        const char *o = origin_of(m, &m->curves[i]);
        if (m->curves[i].test)
            test_warnings(&b, "warning: ", o, m->curves[i].test, "\n");
        curve_warnings(&b, "warning: ", o, &m->curves[i], "\n");
    }
    for (size_t i = 0; i < m->nscalefits; i++)
        if (!m->scalefits[i].defined && m->scalefits[i].ncurves)
            dpas__buf_printf(&b, "warning: %s: the nccl model: %s\n",
                             dpas_collective_name(m->scalefits[i].collective),
                             m->scalefits[i].reason);
    prediction_warnings(&b, "warning: ", m, pred, npred, "\n");
    return dpas__buf_finish(&b, err);
}

/* ---- tables --------------------------------------------------------------------------------- */

static const char *residuals_from(int kind, const dpas_curve *cv)
{
    switch (kind) {
    case DPAS_NETMODEL_EMPIRICAL: return cv->n > 1 ? "each size from the others" : "one size: none";
    case DPAS_NETMODEL_PIECEWISE: return "in sample; beta: last regime";
    case DPAS_NETMODEL_NCCL: return "in sample, fitted with every curve of the collective";
    default: return "in sample";
    }
}

static void fits_table(dpas__table *t, const dpas_curve *cv, bool csv_rows)
{
    int c = 0;
    if (csv_rows) {
        t->head[c++] = "collective";
        t->head[c] = "ranks", t->type[c++] = DPAS__NUM;
        t->head[c] = "ranks_per_node", t->type[c++] = DPAS__NUM;
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
                snprintf(row[j++], DPAS__CELL, "%lld", (long long)cv->per_node);
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
                if (f->defined && f->nregimes)
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
                snprintf(row[j++], DPAS__CELL, "%s", residuals_from(k + 1, cv));
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
    static const char *const h[] = {
        "bytes",         "measured_s",  "alpha_beta_s",  "alpha_beta_rel", "piecewise_s",
        "piecewise_rel", "empirical_s", "empirical_rel", "nccl_s",         "nccl_rel"};
    t->ncols = 10;
    for (int c = 0; c < 10; c++)
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

/* The nccl model's latencies per protocol. */
static void nccl_table(dpas__table *t, const dpas_scale_fit *sf)
{
    static const char *const h[] = {"protocol", "base_latency_s", "hop_latency_s",
                                    "bandwidth_share"};
    t->ncols = 4;
    for (int c = 0; c < 4; c++)
        t->head[c] = h[c], t->type[c] = c ? DPAS__NUM : DPAS__STR;
    for (int k = 0; k < 3; k++) {
        char(*row)[DPAS__CELL] = dpas__table_row(t);
        if (!row)
            return;
        snprintf(row[0], DPAS__CELL, "%s", proto_names[k]);
        num(row[1], sf->p.base_s[k], "%.4g");
        num(row[2], sf->p.hop_s[k], "%.4g");
        num(row[3], sf->p.eff[k], "%.3g");
    }
}

static void nccl_section(dpas__buf *b, const dpas_scale_fit *sf, int format)
{
    bool md = format == DPAS_FORMAT_MARKDOWN;
    const char *cn = dpas_collective_name(sf->collective);
    dpas__buf_printf(b, "\n%snccl model of %s: %zu curve%s at %zu scale%s, %zu size%s\n",
                     md ? "### " : "", cn, sf->ncurves, sf->ncurves == 1 ? "" : "s", sf->nscales,
                     sf->nscales == 1 ? "" : "s", sf->npoints, sf->npoints == 1 ? "" : "s");
    if (!sf->defined) {
        dpas__buf_printf(b, "%sundefined: %s\n", md ? "\n" : "", sf->reason);
        return;
    }
    dpas__buf_puts(b, md ? "\n" : "");
    dpas__table t = {0};
    nccl_table(&t, sf);
    dpas__table_emit(&t, format, b);
    const dpas_nccl_params *p = &sf->p;
    dpas__buf_printf(
        b,
        "%sbandwidth across nodes: %.4g GB/s per rank x (ranks per node)^%.3g x "
        "(nodes/2)^-%.3g%s; inside a node: %.4g GB/s%s\n",
        md ? "\n" : "", p->inter_bw / 1e9, p->kappa, p->gamma,
        sf->determined & DPAS_SCALEFIT_INTER ? "" : " (assumed: no curve across nodes)",
        p->intra_bw / 1e9,
        sf->determined & DPAS_SCALEFIT_INTRA ? "" : " (assumed: no curve inside one node)");
    /* kappa is 1 unless curves across nodes measured two ranks-per-node counts: said, since a
     * prediction at another count then scales the bandwidth across nodes in proportion */
    bool kappa_assumed =
        (sf->determined & DPAS_SCALEFIT_INTER) && !(sf->determined & DPAS_SCALEFIT_KAPPA);
    dpas__buf_printf(b, "%sfrom the curves: %s%s%s%s%s; the rest from NCCL's constants%s\n",
                     md ? "\n" : "", "latencies",
                     sf->determined & DPAS_SCALEFIT_HOPS ? " (base and hop apart)"
                                                         : " (base + hops)",
                     sf->determined & DPAS_SCALEFIT_INTER ? ", the network's bandwidth" : "",
                     sf->determined & DPAS_SCALEFIT_KAPPA ? ", its growth with ranks per node" : "",
                     sf->determined & DPAS_SCALEFIT_GAMMA ? ", its loss with node count" : "",
                     kappa_assumed ? " (kappa 1: the curves across nodes have one ranks-per-node "
                                     "count, so at another the bandwidth across nodes is taken "
                                     "to grow in proportion)"
                                   : "");
    dpas__buf_printf(b, "%serror in sample: median %.3g, worst %.3g", md ? "\n" : "",
                     sf->insample_median, sf->insample_max);
    if (sf->loro_points)
        dpas__buf_printf(b,
                         "; each scale left out and predicted from the others: median %.3g, "
                         "worst %.3g over %zu size%s (90%% of |ln error| within %.3g)\n",
                         sf->loro_median, sf->loro_max, sf->loro_points,
                         sf->loro_points == 1 ? "" : "s", sf->loro_q90);
    else
        dpas__buf_puts(b, sf->nscales > 1 ? "; no scale whose regime (one node, 2 nodes, more) "
                                            "another scale measured: none left out\n"
                                          : "; one scale measured: no scale to leave out\n");
}

static void predictions_table(dpas__table *t, const dpas_net_prediction *p, size_t np)
{
    static const char *const h[] = {
        "collective",  "ranks",       "nodes",           "ranks_per_node",   "bytes",
        "time_s",      "time_basis",  "time_band_low_s", "time_band_high_s", "nccl_s",
        "empirical_s", "piecewise_s", "alpha_beta_s"};
    t->ncols = 13;
    for (int c = 0; c < 13; c++)
        t->head[c] = h[c], t->type[c] = c == 0 || c == 6 ? DPAS__STR : DPAS__NUM;
    for (size_t i = 0; i < np; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(t);
        if (!row)
            return;
        const dpas_net_prediction *q = &p[i];
        snprintf(row[0], DPAS__CELL, "%s", dpas_collective_name(q->collective));
        snprintf(row[1], DPAS__CELL, "%lld", (long long)q->at.ranks);
        snprintf(row[2], DPAS__CELL, "%lld", (long long)(q->at.ranks / q->at.per_node));
        snprintf(row[3], DPAS__CELL, "%lld", (long long)q->at.per_node);
        snprintf(row[4], DPAS__CELL, "%llu", (unsigned long long)q->bytes);
        num(row[5], q->time_s, "%.4g");
        if (dpas_time_basis_name(q->basis))
            snprintf(row[6], DPAS__CELL, "%s", dpas_time_basis_name(q->basis));
        num(row[7], q->band_lo, "%.4g");
        num(row[8], q->band_hi, "%.4g");
        num(row[9], q->seconds[DPAS_NETMODEL_NCCL - 1], "%.4g");
        num(row[10], q->seconds[DPAS_NETMODEL_EMPIRICAL - 1], "%.4g");
        num(row[11], q->seconds[DPAS_NETMODEL_PIECEWISE - 1], "%.4g");
        num(row[12], q->seconds[DPAS_NETMODEL_ALPHA_BETA - 1], "%.4g");
    }
}

static void section(dpas__buf *b, int format, const char *title)
{
    if (format == DPAS_FORMAT_MARKDOWN)
        dpas__buf_printf(b, "\n#### %s\n\n", title);
    else
        dpas__buf_printf(b, "\n%s\n", title);
}

static void csv_tables(dpas__buf *b, const dpas_netmodel *m, const dpas_net_prediction *p,
                       size_t np)
{
    dpas__table t = {0};
    if (np) {
        predictions_table(&t, p, np);
        dpas__table_emit(&t, DPAS_FORMAT_CSV, b);
        return;
    }
    for (size_t i = 0; i < m->ncurves; i++) {
        dpas__table u = {0};
        fits_table(&u, &m->curves[i], true);
        if (i && u.cells) { /* one header for all the tests */
            dpas__buf part = {0};
            dpas__table_emit(&u, DPAS_FORMAT_CSV, &part);
            const char *body = part.data ? strchr(part.data, '\n') : NULL;
            if (body)
                dpas__buf_puts(b, body + 1);
            if (part.oom)
                b->oom = true;
            free(part.data);
        } else {
            dpas__table_emit(&u, DPAS_FORMAT_CSV, b);
        }
    }
}

static void file_line(dpas__buf *b, const dpas_nccl_log *g, bool md)
{
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

static void curve_head(dpas__buf *b, const dpas_netmodel *m, const dpas_curve *cv, size_t number,
                       bool md)
{
    const dpas_nccl_test *t = cv->test;
    char lo[32], hi[32], sc[64];
    human(cv->bytes[0], lo, sizeof lo);
    human(cv->bytes[cv->n - 1], hi, sizeof hi);
    scale_text(sc, sizeof sc, cv->ranks, cv->per_node);
    dpas__buf_printf(b, "\n%s", md ? "### " : "");
    if (m->ncurves > 1)
        dpas__buf_printf(b, "test %zu: ", number);
    dpas__buf_printf(b, "%s on %lld ranks (%s, %s)", coll_name(cv), (long long)cv->ranks, sc,
                     topo_names[cv->per_node_from]);
    if (cv->n == 1)
        dpas__buf_printf(b, ": 1 size, %s", lo);
    else
        dpas__buf_printf(b, ": %zu sizes from %s to %s", cv->n, lo, hi);
    if (t)
        dpas__buf_printf(b, " (%s%slines %d-%d)", m->nlogs > 1 ? origin_of(m, cv) : "",
                         m->nlogs > 1 ? ", " : "", t->header_line,
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
        test_warnings(b, "warning: ", origin_of(m, cv), t, "\n");
    }
    if (cv->n >= 2 && !cv->bandwidth_reached)
        dpas__buf_printf(b,
                         "%sthe sweep stopped before its bandwidth regime: its time grew as "
                         "size^%.2f over its last two sizes\n",
                         md ? "\n" : "", cv->end_elasticity);
}

static void render_tables(dpas__buf *b, const dpas_netmodel *m, const dpas_net_prediction *p,
                          size_t np, int format)
{
    if (format == DPAS_FORMAT_CSV) {
        csv_tables(b, m, p, np);
        return;
    }
    bool md = format == DPAS_FORMAT_MARKDOWN;
    for (size_t f = 0; f < m->nlogs; f++)
        file_line(b, m->logs[f], md);
    for (size_t i = 0; i < m->ncurves; i++) {
        const dpas_curve *cv = &m->curves[i];
        curve_head(b, m, cv, i + 1, md);
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
    for (size_t i = 0; i < m->nscalefits; i++)
        if (m->scalefits[i].ncurves)
            nccl_section(b, &m->scalefits[i], format);
    if (np) {
        section(b, format,
                "predictions (seconds): time_s is the default model's, with its basis and band");
        dpas__table pt = {0};
        predictions_table(&pt, p, np);
        dpas__table_emit(&pt, format, b);
    }
}

/* ---- JSON ----------------------------------------------------------------------------------- */

static void regime_json(dpas__doc *d, const dpas_regime *g)
{
    dpas__doc_open(d, NULL, '{');
    dpas__doc_u64(d, "from_bytes", g->from_bytes);
    dpas__doc_u64(d, "to_bytes", g->to_bytes);
    dpas__doc_int(d, "sizes", (long long)g->count);
    dpas__doc_real(d, "alpha_s", g->alpha);
    dpas__doc_real(d, "beta_bytes_per_s", g->beta);
    dpas__doc_real(d, "max_rel_residual", g->max_rel_residual);
    dpas__doc_close(d, '{');
}

static void fit_json(dpas__doc *d, const dpas_curve *cv, size_t number, const dpas_fit *f)
{
    dpas__doc_open(d, NULL, '{');
    dpas__doc_int(d, "test", (long long)number);
    dpas__doc_str(d, "collective", coll_name(cv));
    dpas__doc_int(d, "ranks", (long long)cv->ranks);
    dpas__doc_int(d, "ranks_per_node", (long long)cv->per_node);
    dpas__doc_str(d, "model", dpas_netmodel_kind_name(f->kind));
    dpas__doc_bool(d, "defined", f->defined);
    dpas__doc_str(d, "error", f->defined ? NULL : f->reason);
    dpas__doc_real(d, "alpha_s", f->alpha);
    dpas__doc_real(d, "beta_bytes_per_s", f->beta);
    if (f->kind == DPAS_NETMODEL_PIECEWISE) {
        dpas__doc_open(d, "regimes", '[');
        for (size_t r = 0; f->defined && r < f->nregimes; r++)
            regime_json(d, &f->regimes[r]);
        dpas__doc_close(d, '[');
    }
    if (f->kind == DPAS_NETMODEL_ALPHA_BETA)
        dpas__doc_real(d, "r2", f->r2);
    dpas__doc_real(d, "max_rel_residual", f->max_rel_residual);
    if (isfinite(f->max_rel_residual))
        dpas__doc_u64(d, "max_rel_residual_bytes", cv->bytes[f->worst]);
    else
        dpas__doc_null(d, "max_rel_residual_bytes");
    dpas__doc_real(d, "median_rel_residual", f->median_rel_residual);
    dpas__doc_str(d, "residuals_from",
                  f->kind == DPAS_NETMODEL_EMPIRICAL ? "leave_one_out" : "in_sample");
    dpas__doc_int(d, "sizes", (long long)cv->n);
    dpas__doc_open(d, "residuals", '[');
    for (size_t i = 0; i < cv->n; i++) {
        dpas__doc_open(d, NULL, '{');
        dpas__doc_u64(d, "bytes", cv->bytes[i]);
        dpas__doc_real(d, "measured_s", cv->seconds[i]);
        dpas__doc_real(d, "predicted_s", f->predicted[i]);
        dpas__doc_real(d, "rel_residual", f->rel_residual[i]);
        dpas__doc_close(d, '{');
    }
    dpas__doc_close(d, '[');
    dpas__doc_close(d, '{');
}

static void test_json(dpas__doc *d, const dpas_netmodel *m, const dpas_curve *cv, size_t number)
{
    const dpas_nccl_test *t = cv->test;
    dpas__doc_open(d, NULL, '{');
    dpas__doc_int(d, "test", (long long)number);
    dpas__doc_str(d, "file", t ? origin_of(m, cv) : NULL);
    dpas__doc_str(d, "collective", coll_name(cv));
    dpas__doc_int(d, "ranks", (long long)cv->ranks);
    dpas__doc_int(d, "nodes", (long long)(cv->ranks / cv->per_node));
    dpas__doc_int(d, "ranks_per_node", (long long)cv->per_node);
    dpas__doc_str(d, "ranks_per_node_from", topo_keys[cv->per_node_from]);
    if (t && t->nodes_from) {
        dpas__doc_int(d, "hosts", (long long)t->nodes);
        dpas__doc_int(d, "ranks_per_host_min", (long long)t->ranks_per_node_min);
        dpas__doc_int(d, "ranks_per_host_max", (long long)t->ranks_per_node_max);
    } else {
        dpas__doc_null(d, "hosts");
        dpas__doc_null(d, "ranks_per_host_min");
        dpas__doc_null(d, "ranks_per_host_max");
    }
    if (t)
        dpas__doc_int(d, "zero_rows", (long long)t->zero_rows);
    else
        dpas__doc_null(d, "zero_rows");
    dpas__doc_str(d, "collective_from", t ? source_key(t->collective_from) : NULL);
    dpas__doc_str(d, "ranks_from", t ? source_key(t->ranks_from) : NULL);
    dpas__doc_str(d, "name", t ? t->name : NULL);
    dpas__doc_str(d, "type", t ? t->type : NULL);
    dpas__doc_str(d, "redop", t ? t->redop : NULL);
    dpas__doc_real(d, "bus_ratio", t ? t->bus_ratio : NAN);
    if (t)
        dpas__doc_int(d, "rank_lines", (long long)t->rank_lines);
    else
        dpas__doc_null(d, "rank_lines");
    if (t)
        dpas__doc_int(d, "header_line", t->header_line);
    else
        dpas__doc_null(d, "header_line");
    if (t && t->npoints)
        dpas__doc_int(d, "last_line", t->points[t->npoints - 1].line);
    else
        dpas__doc_null(d, "last_line");
    if (t)
        dpas__doc_int(d, "rows", (long long)t->npoints);
    else
        dpas__doc_null(d, "rows");
    dpas__doc_int(d, "sizes", (long long)cv->n);
    dpas__doc_u64(d, "min_bytes", cv->bytes[0]);
    dpas__doc_u64(d, "max_bytes", cv->bytes[cv->n - 1]);
    dpas__doc_real(d, "peak_busbw_bytes_per_s", cv->peak_busbw);
    if (isfinite(cv->peak_busbw))
        dpas__doc_u64(d, "peak_busbw_at_bytes", cv->peak_busbw_bytes);
    else
        dpas__doc_null(d, "peak_busbw_at_bytes");
    dpas__doc_real(d, "end_elasticity", cv->end_elasticity);
    dpas__doc_bool(d, "bandwidth_reached", cv->bandwidth_reached);
    dpas__doc_real(d, "extrapolation_per_octave", cv->extrapolation_per_octave);
    if (t)
        dpas__doc_int(d, "wrong_rows", (long long)t->wrong_rows);
    else
        dpas__doc_null(d, "wrong_rows");
    dpas__doc_close(d, '{');
}

static void triple(dpas__doc *d, const char *key, const double *v)
{
    dpas__doc_open_inline(d, key);
    for (int k = 0; k < 3; k++)
        dpas__doc_real(d, NULL, v[k]);
    dpas__doc_close(d, '[');
}

static void scalefit_json(dpas__doc *d, const dpas_scale_fit *sf)
{
    static const struct {
        unsigned bit;
        const char *name;
    } det[] = {{DPAS_SCALEFIT_INTER, "inter_bw"},    {DPAS_SCALEFIT_INTRA, "intra_bw"},
               {DPAS_SCALEFIT_KAPPA, "kappa"},       {DPAS_SCALEFIT_GAMMA, "gamma"},
               {DPAS_SCALEFIT_TWO_NODE, "two_node"}, {DPAS_SCALEFIT_HOPS, "base_and_hop_apart"}};
    dpas__doc_open(d, NULL, '{');
    dpas__doc_str(d, "collective", dpas_collective_name(sf->collective));
    dpas__doc_bool(d, "defined", sf->defined);
    dpas__doc_str(d, "error", sf->defined ? NULL : sf->reason);
    dpas__doc_int(d, "curves", (long long)sf->ncurves);
    dpas__doc_int(d, "scales", (long long)sf->nscales);
    dpas__doc_int(d, "sizes", (long long)sf->npoints);
    dpas__doc_open_inline(d, "determined");
    for (size_t i = 0; i < sizeof det / sizeof *det; i++)
        if (sf->determined & det[i].bit)
            dpas__doc_str(d, NULL, det[i].name);
    dpas__doc_close(d, '[');
    triple(d, "base_latency_s", sf->p.base_s);
    triple(d, "hop_latency_s", sf->p.hop_s);
    triple(d, "bandwidth_share", sf->p.eff);
    dpas__doc_real(d, "inter_bw_bytes_per_s", sf->defined ? sf->p.inter_bw : NAN);
    dpas__doc_real(d, "kappa", sf->defined ? sf->p.kappa : NAN);
    dpas__doc_real(d, "gamma", sf->defined ? sf->p.gamma : NAN);
    dpas__doc_real(d, "intra_bw_bytes_per_s", sf->defined ? sf->p.intra_bw : NAN);
    dpas__doc_real(d, "two_node", sf->defined ? sf->p.two_node : NAN);
    dpas__doc_real(d, "in_sample_median_rel", sf->insample_median);
    dpas__doc_real(d, "in_sample_max_rel", sf->insample_max);
    dpas__doc_open(d, "leave_one_scale_out", '{');
    dpas__doc_int(d, "sizes", (long long)sf->loro_points);
    dpas__doc_real(d, "median_rel", sf->loro_median);
    dpas__doc_real(d, "max_rel", sf->loro_max);
    dpas__doc_real(d, "q90_abs_ln", sf->loro_q90);
    dpas__doc_real(d, "distance", sf->loro_distance);
    dpas__doc_close(d, '{');
    dpas__doc_close(d, '{');
}

static void prediction_json(dpas__doc *d, const dpas_net_prediction *q)
{
    static const struct {
        unsigned bit;
        const char *name;
    } notes[] = {{DPAS_NETTIME_LATENCY_BOUND, "latency_bound_sweep"},
                 {DPAS_NETTIME_NO_INTRA, "no_curve_inside_a_node"},
                 {DPAS_NETTIME_NO_INTER, "no_curve_across_nodes"},
                 {DPAS_NETTIME_ASSUMED_TOPOLOGY, "assumed_ranks_per_node"},
                 {DPAS_NETTIME_OTHER_REGIME, "regime_not_measured"},
                 {DPAS_NETTIME_LOWER_BOUND, "time_at_least"},
                 {DPAS_NETTIME_UPPER_BOUND, "time_at_most"}};
    dpas__doc_open(d, NULL, '{');
    dpas__doc_str(d, "collective", dpas_collective_name(q->collective));
    dpas__doc_int(d, "ranks", (long long)q->at.ranks);
    dpas__doc_int(d, "nodes", (long long)(q->at.ranks / q->at.per_node));
    dpas__doc_int(d, "ranks_per_node", (long long)q->at.per_node);
    dpas__doc_u64(d, "bytes", q->bytes);
    /* the one time with its model, basis and band, named as a cost row's and a sweep point's */
    dpas__doc_real(d, "time_s", q->time_s);
    dpas__doc_str(d, "time_model",
                  q->default_kind ? dpas_netmodel_kind_name(q->default_kind) : NULL);
    dpas__doc_str(d, "time_basis", dpas_time_basis_name(q->basis));
    dpas__doc_real(d, "time_band_low_s", q->band_lo);
    dpas__doc_real(d, "time_band_high_s", q->band_hi);
    dpas__doc_str(d, "regime", dpas_net_regime_name(q->regime));
    dpas__doc_str(d, "from_regime", dpas_net_regime_name(q->from_regime));
    dpas__doc_real(d, "nccl_s", q->seconds[DPAS_NETMODEL_NCCL - 1]);
    dpas__doc_real(d, "empirical_s", q->seconds[DPAS_NETMODEL_EMPIRICAL - 1]);
    dpas__doc_real(d, "piecewise_s", q->seconds[DPAS_NETMODEL_PIECEWISE - 1]);
    dpas__doc_real(d, "alpha_beta_s", q->seconds[DPAS_NETMODEL_ALPHA_BETA - 1]);
    dpas__doc_bool(d, "extrapolated", q->extrapolated);
    dpas__doc_open_inline(d, "notes");
    for (size_t i = 0; i < sizeof notes / sizeof *notes; i++)
        if (q->notes & notes[i].bit)
            dpas__doc_str(d, NULL, notes[i].name);
    dpas__doc_close(d, '[');
    dpas__doc_close(d, '{');
}

/* The lines of a notes text that start with lead, without it, as strings of an array. */
static void lines_json(dpas__doc *d, const char *key, const char *text, const char *lead)
{
    dpas__doc_open(d, key, '[');
    size_t ll = strlen(lead);
    for (const char *p = text; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t n = nl ? (size_t)(nl - p) : strlen(p);
        if (n >= ll && !memcmp(p, lead, ll)) {
            char *s = malloc(n - ll + 1);
            if (!s) {
                d->b->oom = true;
                break;
            }
            memcpy(s, p + ll, n - ll);
            s[n - ll] = '\0';
            dpas__doc_str(d, NULL, s);
            free(s);
        }
        p = nl ? nl + 1 : p + n;
    }
    dpas__doc_close(d, '[');
}

static void file_json(dpas__doc *d, const dpas_nccl_log *g)
{
    dpas__doc_open(d, NULL, '{');
    dpas__doc_str(d, "file", g->origin);
    dpas__doc_int(d, "lines", g->lines);
    dpas__doc_int(d, "tests", (long long)g->ntests);
    dpas__doc_int(d, "foreign_lines", (long long)g->foreign_lines);
    if (g->foreign_lines)
        dpas__doc_int(d, "first_foreign_line", g->first_foreign_line);
    else
        dpas__doc_null(d, "first_foreign_line");
    dpas__doc_str(d, "first_foreign", g->first_foreign);
    dpas__doc_int(d, "prefixed_lines", (long long)g->prefixed_lines);
    dpas__doc_int(d, "unselected_tests", (long long)g->unselected);
    dpas__doc_int(d, "inline_tags", (long long)g->inline_tags);
    dpas__doc_int(d, "joined_lines", (long long)g->joined_lines);
    static const char *const reasons[] = {"", "unmodelled", "looks_unmodelled", "zero_only",
                                          "unreadable"};
    dpas__doc_open(d, "skipped_tables", '[');
    for (size_t i = 0; i < g->nskipped; i++) {
        const dpas_nccl_skipped *s = &g->skipped[i];
        dpas__doc_open(d, NULL, '{');
        dpas__doc_int(d, "line", s->line);
        dpas__doc_str(d, "name", s->name);
        dpas__doc_str(d, "reason", s->reason >= 1 && s->reason <= 4 ? reasons[s->reason] : NULL);
        dpas__doc_int(d, "rows", (long long)s->rows);
        bool unread = s->reason == DPAS_NCCL_SKIP_UNREADABLE;
        dpas__doc_str(d, "columns", !unread && s->why[0] ? s->why : NULL);
        if (unread)
            dpas__doc_str(d, "why", s->why);
        dpas__doc_close(d, '{');
    }
    dpas__doc_close(d, '[');
    dpas__doc_close(d, '{');
}

static char *render_json(const dpas_netmodel *m, const dpas_net_prediction *p, size_t np,
                         dpas_error *err)
{
    char *notes = dpas_netmodel_notes(m, p, np, 1, err);
    if (!notes)
        return NULL;
    dpas__buf b = {0};
    dpas__doc d = {.b = &b};
    dpas__doc_open(&d, NULL, '{');
    dpas__doc_str(&d, "dpas_version", DPAS_VERSION); /* what wrote it, as every JSON document */
    dpas__doc_int(&d, "schema_version", DPAS__JSON_SCHEMA_VERSION);
    dpas__doc_open(&d, "files", '[');
    for (size_t f = 0; f < m->nlogs; f++)
        file_json(&d, m->logs[f]);
    dpas__doc_close(&d, '[');
    dpas__doc_open(&d, "tests", '[');
    for (size_t i = 0; i < m->ncurves; i++)
        test_json(&d, m, &m->curves[i], i + 1);
    dpas__doc_close(&d, '[');
    dpas__doc_open(&d, "fits", '[');
    for (size_t i = 0; i < m->ncurves; i++)
        for (int k = 0; k < DPAS_NETMODEL_KINDS; k++)
            fit_json(&d, &m->curves[i], i + 1, &m->curves[i].fits[k]);
    dpas__doc_close(&d, '[');
    dpas__doc_open(&d, "nccl_models", '[');
    for (size_t i = 0; i < m->nscalefits; i++)
        scalefit_json(&d, &m->scalefits[i]);
    dpas__doc_close(&d, '[');
    dpas__doc_open(&d, "predictions", '[');
    for (size_t i = 0; i < np; i++)
        prediction_json(&d, &p[i]);
    dpas__doc_close(&d, '[');
    lines_json(&d, "notes", notes, "note: ");
    lines_json(&d, "warnings", notes, "warning: ");
    dpas__doc_close(&d, '{');
    free(notes);
    return dpas__buf_finish(&b, err);
}

char *dpas_render_netmodel(const dpas_netmodel *m, const dpas_net_prediction *pred, size_t npred,
                           dpas_format format, dpas_error *err)
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
    dpas_net_series *ns;
    size_t nns;
    dpas_series *s;
    char (*names)[96];
    char *title;
} plot_data;

static void plot_free(plot_data *d)
{
    dpas_net_series_free(d->ns, d->nns);
    free(d->s), free(d->names), free(d->title);
    memset(d, 0, sizeof *d);
}

/* The analysis' series (each defined model on a log grid over the measured sizes, then the
 * measured points, drawn last so that they are on top), named. */
static int plot_build(const dpas_netmodel *m, plot_data *d, dpas_plot_spec *ps, dpas_error *err)
{
    memset(d, 0, sizeof *d);
    if (dpas_netmodel_series(m, GRID, &d->ns, &d->nns, err))
        return err ? err->code : DPAS_ENOMEM;
    d->s = calloc(d->nns ? d->nns : 1, sizeof *d->s);
    d->names = calloc(d->nns ? d->nns : 1, sizeof *d->names);
    const char *o = m->nlogs ? m->logs[0]->origin : "";
    const char *base = strrchr(o, '/') ? strrchr(o, '/') + 1 : o;
    static const char what[] = "measured time and the models";
    size_t tl = strlen(base) + sizeof what + 16;
    d->title = malloc(tl);
    if (!d->s || !d->names || !d->title) {
        plot_free(d);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    for (size_t i = 0; i < d->nns; i++) {
        const dpas_net_series *e = &d->ns[i];
        const dpas_curve *cv = &m->curves[e->curve];
        char lead[48] = "";
        if (m->ncurves > 1)
            snprintf(lead, sizeof lead, "%s %lld: ", coll_name(cv), (long long)cv->ranks);
        snprintf(d->names[i], sizeof d->names[0], "%s%s", lead,
                 e->kind == 0                          ? "measured"
                 : e->kind == DPAS_NETMODEL_ALPHA_BETA ? "alpha-beta"
                                                       : dpas_netmodel_kind_name(e->kind));
        d->s[i] = (dpas_series){d->names[i], e->x, e->y, e->n};
    }
    if (m->nlogs > 1)
        snprintf(d->title, tl, "%s and %zu more: %s", base, m->nlogs - 1, what);
    else
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
    char *svg = dpas_plot_svg(&ps, d.s, d.nns, err);
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
    rc = dpas_plot_png(&ps, d.s, d.nns, path, err);
    plot_free(&d);
    return rc;
}
