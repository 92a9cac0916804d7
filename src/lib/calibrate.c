/* Alpha and beta from nccl-tests output. nccl-tests times a collective over message sizes; with
 * its own bus factors, time = steps x alpha + factor x size / beta, a line in size. The fit
 * minimises the relative error, so the small sizes (which carry alpha) count as much as the
 * large ones (which carry beta). */
#include "internal.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct block {
    char collective[32];
    int64_t ranks;
    size_t n, cap;
    double *size, *time; /* bytes, seconds */
    int line;            /* where the block starts */
} block;

static int add_point(block *b, double size, double time, dpas_error *err)
{
    if (b->n == b->cap) {
        size_t cap = b->cap ? b->cap * 2 : 32;
        double *s = realloc(b->size, cap * sizeof *s);
        if (!s)
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        b->size = s;
        double *t = realloc(b->time, cap * sizeof *t);
        if (!t)
            return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
        b->time = t;
        b->cap = cap;
    }
    b->size[b->n] = size;
    b->time[b->n] = time;
    b->n++;
    return 0;
}

/* Split a line into whitespace- or comma-separated fields (in place). */
static int split(char *line, char **f, int cap, char sep)
{
    int n = 0;
    char *p = line;
    while (*p && n < cap) {
        if (sep == ' ')
            while (*p == ' ' || *p == '\t')
                p++;
        if (!*p)
            break;
        f[n++] = p;
        while (*p && (sep == ' ' ? (*p != ' ' && *p != '\t') : *p != ','))
            p++;
        if (*p)
            *p++ = '\0';
    }
    return n;
}

static bool number(const char *s, double *v)
{
    char *end;
    errno = 0;
    *v = strtod(s, &end);
    while (*end == ' ' || *end == '\r')
        end++;
    return end != s && !*end && !errno && isfinite(*v);
}

static const char *normalise(const char *name)
{
    /* "all_reduce_perf", "AllReduce", "allreduce" -> all_reduce; likewise all_gather */
    char t[64];
    size_t k = 0;
    for (const char *p = name; *p && k < sizeof t - 1; p++)
        if (*p != '_' && *p != '-')
            t[k++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
    t[k] = '\0';
    if (!strncmp(t, "allreduce", 9))
        return "all_reduce";
    if (!strncmp(t, "allgather", 9))
        return "all_gather";
    return NULL;
}

static int fit(const block *b, dpas_calibration *c, const char *origin, dpas_error *err)
{
    const int64_t n = b->ranks;
    double steps, factor;
    if (!strcmp(b->collective, "all_reduce"))
        steps = 2.0 * (double)(n - 1), factor = 2.0 * (double)(n - 1) / (double)n;
    else
        steps = (double)(n - 1), factor = (double)(n - 1) / (double)n;
    if (n < 2)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "%s: %s needs at least 2 ranks to fit, got %lld",
                          origin, b->collective, (long long)n);
    /* weighted least squares of time = a + c size, weights 1/time^2 */
    double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
    size_t distinct = 0;
    for (size_t i = 0; i < b->n; i++) {
        double w = 1.0 / (b->time[i] * b->time[i]), x = b->size[i], y = b->time[i];
        sw += w, sx += w * x, sy += w * y, sxx += w * x * x, sxy += w * x * y;
        if (!i || b->size[i] != b->size[i - 1])
            distinct++;
    }
    if (distinct < 2)
        return dpas__fail(err, DPAS_EINVAL, "sizes", "%s: %s has %zu distinct size(s); a fit needs at "
                                                     "least 2", origin, b->collective, distinct);
    double det = sw * sxx - sx * sx;
    double slope = (sw * sxy - sx * sy) / det, icept = (sxx * sy - sx * sxy) / det;
    if (!(slope > 0))
        return dpas__fail(err, DPAS_EINVAL, "time", "%s: %s times do not grow with size (slope %g): "
                                                    "no bandwidth to fit", origin, b->collective, slope);
    if (!isfinite(slope) || !isfinite(icept) || !(factor / slope > 0) || !isfinite(factor / slope))
        return dpas__fail(err, DPAS_EINVAL, "time", "%s: %s: the fit is degenerate (sizes or times "
                                                    "too extreme for a line)", origin, b->collective);
    snprintf(c->collective, sizeof c->collective, "%s", b->collective);
    c->ranks = n;
    c->points = b->n;
    c->beta = factor / slope;
    c->alpha = icept > 0 ? icept / steps : 0.0;
    double mean = 0, ss_tot = 0, ss_res = 0, maxr = 0;
    for (size_t i = 0; i < b->n; i++)
        mean += b->time[i];
    mean /= (double)b->n;
    for (size_t i = 0; i < b->n; i++) {
        double pred = icept + slope * b->size[i], r = b->time[i] - pred;
        ss_res += r * r;
        ss_tot += (b->time[i] - mean) * (b->time[i] - mean);
        maxr = fmax(maxr, fabs(r) / b->time[i]);
    }
    c->r2 = ss_tot > 0 ? 1 - ss_res / ss_tot : 1;
    c->max_rel_residual = maxr;
    return 0;
}

int dpas_calibrate_text(const char *text, size_t len, const char *origin, const char *collective,
                        int64_t ranks, dpas_calibration *out, size_t cap, size_t *nout,
                        dpas_error *err)
{
    if (!origin)
        origin = "<input>";
    *nout = 0;
    if (collective && !normalise(collective))
        return dpas__fail(err, DPAS_EINVAL, "collective",
                          "collective must be all_reduce or all_gather, got \"%s\"", collective);
    if (memchr(text, '\0', len))
        return dpas__fail(err, DPAS_EPARSE, "file", "%s: contains a NUL byte; expected nccl-tests "
                                                    "output", origin);
    char *copy = malloc(len + 1);
    if (!copy)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    memcpy(copy, text, len);
    copy[len] = '\0';
    block blocks[8];
    int nb = 0, rc = 0;
    memset(blocks, 0, sizeof blocks);
    int time_col = -1, size_col = -1, name_col = -1, ranks_col = -1, csv = 0, lineno = 0;
    int64_t rank_lines = 0, ngpus_hint = 0;
    char pending[32] = "";
    char *save = NULL;
    for (char *line = strtok_r(copy, "\n", &save); line && !rc; line = strtok_r(NULL, "\n", &save)) {
        lineno++;
        size_t l = strlen(line);
        if (l && line[l - 1] == '\r')
            line[--l] = '\0';
        char *f[40];
        char buf[1024];
        snprintf(buf, sizeof buf, "%s", line);
        if (line[0] == '#') {
            const char *p;
            if ((p = strstr(line, "Collective test starting:"))) {
                char name[64] = "";
                sscanf(p + strlen("Collective test starting:"), "%63s", name);
                const char *nm = normalise(name);
                snprintf(pending, sizeof pending, "%s", nm ? nm : "");
            } else if ((p = strstr(line, "nThread")) && strstr(line, "nGpus")) {
                rank_lines = 0; /* a new run */
                long long g = 0;
                sscanf(strstr(line, "nGpus") + 5, "%lld", &g);
                ngpus_hint = g;
                time_col = size_col = -1;
            } else if (strstr(line, " Rank ") && strstr(line, "Pid")) {
                rank_lines++;
            } else {
                int nf = split(buf + 1, f, 40, ' ');
                int sc = -1, tc = -1;
                for (int i = 0; i < nf; i++) {
                    if (!strcmp(f[i], "size") && sc < 0)
                        sc = i;
                    if (!strcmp(f[i], "time") && tc < 0)
                        tc = i;
                }
                if (sc >= 0 && tc >= 0)
                    size_col = sc, time_col = tc, csv = 0;
            }
            continue;
        }
        int nf = 0;
        bool blank = true;
        for (const char *p = line; *p; p++)
            blank &= *p == ' ' || *p == '\t';
        if (blank)
            continue;
        if (strchr(line, ',')) { /* CSV: a header names the columns */
            nf = split(buf, f, 40, ',');
            int sc = -1, tc = -1, nc = -1, rcol = -1;
            for (int i = 0; i < nf; i++) {
                char *h = f[i];
                while (*h == ' ' || *h == '"')
                    h++;
                char lc[32];
                size_t k = 0;
                for (; h[k] && h[k] != '"' && k < sizeof lc - 1; k++)
                    lc[k] = (char)(h[k] >= 'A' && h[k] <= 'Z' ? h[k] - 'A' + 'a' : h[k]);
                lc[k] = '\0';
                if (!strcmp(lc, "size") || !strcmp(lc, "bytes") || !strcmp(lc, "size_bytes"))
                    sc = i;
                else if (!strcmp(lc, "time") || !strcmp(lc, "usecs") || !strcmp(lc, "time_us") ||
                         !strcmp(lc, "oop_time"))
                    tc = i;
                else if (!strcmp(lc, "name") || !strcmp(lc, "collective") || !strcmp(lc, "op"))
                    nc = i;
                else if (!strcmp(lc, "gpus") || !strcmp(lc, "ranks") || !strcmp(lc, "nranks"))
                    rcol = i;
            }
            if (sc >= 0 && tc >= 0) {
                size_col = sc, time_col = tc, name_col = nc, ranks_col = rcol, csv = 1;
                continue;
            }
            if (!csv) {
                rc = dpas__fail_at(err, DPAS_EPARSE, "file", lineno, 1,
                                   "%s:%d: a CSV row before a header naming size and time columns",
                                   origin, lineno);
                break;
            }
        } else {
            nf = split(buf, f, 40, ' ');
            if (csv)
                csv = 0, size_col = time_col = -1;
        }
        if (size_col < 0 || time_col < 0) {
            rc = dpas__fail_at(err, DPAS_EPARSE, "file", lineno, 1,
                               "%s:%d: a data row before nccl-tests' header (the line naming size "
                               "and time); is this nccl-tests output?", origin, lineno);
            break;
        }
        double size, time_us;
        if (nf <= time_col || nf <= size_col || !number(f[size_col], &size) ||
            !number(f[time_col], &time_us)) {
            rc = dpas__fail_at(err, DPAS_EPARSE, "file", lineno, 1,
                               "%s:%d: expected a size and a time in columns %d and %d, got \"%.60s\"",
                               origin, lineno, size_col + 1, time_col + 1, line);
            break;
        }
        if (!(size > 0) || !(time_us > 0)) {
            rc = dpas__fail_at(err, DPAS_EINVAL, "file", lineno, 1,
                               "%s:%d: size and time must be > 0, got %g B and %g us", origin, lineno,
                               size, time_us);
            break;
        }
        const char *coll = collective ? normalise(collective) : NULL;
        if (!coll && csv && name_col >= 0 && name_col < nf)
            coll = normalise(f[name_col]);
        if (!coll && pending[0])
            coll = pending;
        if (!coll) {
            rc = dpas__fail_at(err, DPAS_EINVAL, "collective", lineno, 1,
                               "%s:%d: cannot tell which collective this is; give --collective "
                               "all_reduce or all_gather", origin, lineno);
            break;
        }
        int64_t nr = ranks;
        if (!nr && csv && ranks_col >= 0 && ranks_col < nf) {
            double v;
            if (number(f[ranks_col], &v) && v >= 2 && v <= 1e9 && v == (double)(int64_t)v)
                nr = (int64_t)v;
            else if (!ranks) {
                rc = dpas__fail_at(err, DPAS_EINVAL, "ranks", lineno, 1,
                                   "%s:%d: the ranks column must be a whole number from 2 to 10^9, "
                                   "got \"%.40s\"", origin, lineno, f[ranks_col]);
                break;
            }
        }
        if (!nr)
            nr = rank_lines ? rank_lines : ngpus_hint;
        if (nr < 2) {
            rc = dpas__fail_at(err, DPAS_EINVAL, "ranks", lineno, 1,
                               "%s:%d: cannot tell the number of ranks (need >= 2); give --ranks N",
                               origin, lineno);
            break;
        }
        int k = 0;
        for (; k < nb; k++)
            if (!strcmp(blocks[k].collective, coll) && blocks[k].ranks == nr)
                break;
        if (k == nb) {
            if (nb == 8) {
                rc = dpas__fail(err, DPAS_EINVAL, "file", "%s: more than 8 runs in one file", origin);
                break;
            }
            snprintf(blocks[nb].collective, sizeof blocks[nb].collective, "%s", coll);
            blocks[nb].ranks = nr;
            blocks[nb].line = lineno;
            nb++;
        }
        rc = add_point(&blocks[k], size, time_us * 1e-6, err);
    }
    if (!rc && nb == 0)
        rc = dpas__fail(err, DPAS_EPARSE, "file", "%s: no nccl-tests rows found (expected lines of "
                                                  "size, count, type, ..., time)", origin);
    for (int k = 0; k < nb && !rc; k++) {
        if ((size_t)k >= cap)
            break;
        rc = fit(&blocks[k], &out[k], origin, err);
        if (!rc)
            (*nout)++;
    }
    for (int k = 0; k < nb; k++)
        free(blocks[k].size), free(blocks[k].time);
    free(copy);
    return rc;
}

int dpas_calibrate_file(const char *path, const char *collective, int64_t ranks,
                        dpas_calibration *out, size_t cap, size_t *n, dpas_error *err)
{
    char *text;
    size_t len;
    int rc = dpas__read_file(path, "", 16u << 20, &text, &len, err);
    if (rc)
        return rc;
    rc = dpas_calibrate_text(text, len, path, collective, ranks, out, cap, n, err);
    free(text);
    return rc;
}

char *dpas_render_calibration(const dpas_calibration *c, size_t n, int format, dpas_error *err)
{
    dpas__table t = {0};
    t.ncols = 7;
    t.head[0] = "collective", t.head[1] = "ranks", t.head[2] = "points", t.head[3] = "alpha_s";
    t.head[4] = "beta_bytes_per_s", t.head[5] = "r2", t.head[6] = "max_rel_residual";
    for (int k = 1; k < 7; k++)
        t.type[k] = DPAS__NUM;
    for (size_t i = 0; i < n; i++) {
        char(*row)[DPAS__CELL] = dpas__table_row(&t);
        if (!row)
            break;
        snprintf(row[0], DPAS__CELL, "%s", c[i].collective);
        snprintf(row[1], DPAS__CELL, "%lld", (long long)c[i].ranks);
        snprintf(row[2], DPAS__CELL, "%zu", c[i].points);
        snprintf(row[3], DPAS__CELL, "%.6g", c[i].alpha);
        snprintf(row[4], DPAS__CELL, "%.6g", c[i].beta);
        snprintf(row[5], DPAS__CELL, "%.6f", c[i].r2);
        snprintf(row[6], DPAS__CELL, "%.4g", c[i].max_rel_residual);
    }
    return dpas__table_finish(&t, format, err);
}
