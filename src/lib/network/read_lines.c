/* SPDX-License-Identifier: Apache-2.0 */
/* nccl-tests output as people capture it, split into the lines nccl-tests printed: launcher
 * prefixes recognised at the start of a line (srun --label, kubectl --prefix and --timestamps,
 * pdsh, mpiexec -l), and mpirun --tag-output's tags removed wherever they are, each process's
 * chunks joined (nccl.h says why and how). */
#include "nccl.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }
static bool is_alpha(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

/* mpirun's tag "[J,R]<name>:" at p: its length, or 0. */
typedef struct tag {
    unsigned long long job, rank;
    char chan[12];
} tag;

static size_t tag_at(const char *p, const char *end, tag *t)
{
    const char *q = p;
    if (q == end || *q != '[')
        return 0;
    unsigned long long v[2] = {0, 0};
    for (int k = 0; k < 2; k++) {
        const char *d = ++q;
        while (q < end && is_digit(*q) && q - d < 12)
            v[k] = v[k] * 10 + (unsigned)(*q++ - '0');
        if (q == d || q == end || *q != (k ? ']' : ','))
            return 0;
    }
    if (++q == end || *q != '<')
        return 0;
    const char *c = ++q;
    while (q < end && *q >= 'a' && *q <= 'z' && q - c < 11)
        q++;
    if (q == c || end - q < 2 || q[0] != '>' || q[1] != ':')
        return 0;
    if (t) {
        t->job = v[0], t->rank = v[1];
        memcpy(t->chan, c, (size_t)(q - c));
        t->chan[q - c] = '\0';
    }
    return (size_t)(q + 2 - p);
}

static const char *find_tag(const char *p, const char *end)
{
    while (p < end) {
        const char *b = memchr(p, '[', (size_t)(end - p));
        if (!b)
            return NULL;
        if (tag_at(b, end, NULL))
            return b;
        p = b + 1;
    }
    return NULL;
}

/* One prefix at q (after blanks): its kind and *p past it, or 0. */
static int one_prefix(const char *q, const char *end, const char **p)
{
    if (q < end && *q == '[') {
        const char *r = q + 1;
        while (r < end && is_digit(*r))
            r++;
        if (r > q + 1 && end - r >= 2 && r[0] == ']' && r[1] == ' ') { /* [N] (mpiexec -l) */
            *p = r + 2;
            return DPAS_NCCL_PREFIX_RANK;
        }
        const char *t = q + 1; /* [pod/NAME/CONTAINER]  (kubectl logs --prefix) */
        bool slash = false;
        while (t < end && *t != ']' && !is_ws(*t))
            slash |= *t++ == '/';
        if (slash && end - t >= 2 && t[0] == ']' && t[1] == ' ') {
            *p = t + 2;
            return DPAS_NCCL_PREFIX_KUBECTL;
        }
        return 0;
    }
    if (q < end && is_digit(*q)) {
        const char *r = q;
        while (r < end && is_digit(*r))
            r++;
        if (end - r >= 2 && r[0] == ':' && r[1] == ' ') { /* N: (srun --label) */
            *p = r + 2;
            return DPAS_NCCL_PREFIX_SRUN;
        }
        if (r - q == 4 && end - r > 6 && r[0] == '-' && is_digit(r[1]) && is_digit(r[2]) &&
            r[3] == '-' && is_digit(r[4]) && is_digit(r[5]) && r[6] == 'T') {
            /* 2024-05-01T12:00:00.123456789Z (RFC 3339) */
            const char *t = r + 7;
            while (t < end && !is_ws(*t))
                t++;
            if (t < end && *t == ' ' && memchr(r, ':', (size_t)(t - r))) {
                *p = t + 1;
                return DPAS_NCCL_PREFIX_TIMESTAMP;
            }
        }
    }
    if (q < end && (is_alpha(*q) || is_digit(*q))) { /* host: (pdsh, clush) */
        const char *r = q;
        while (r < end && (is_alpha(*r) || is_digit(*r) || *r == '.' || *r == '-' || *r == '_'))
            r++;
        if (end - r >= 2 && r[0] == ':' && r[1] == ' ') {
            *p = r + 2;
            return DPAS_NCCL_PREFIX_HOST;
        }
    }
    return 0;
}

int dpas__nccl_strip_prefixes(const char **s, const char *end)
{
    int first = 0;
    for (int round = 0; round < 4; round++) {
        const char *q = *s, *p = NULL;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        int kind = one_prefix(q, end, &p);
        if (!kind)
            break;
        if (!first)
            first = kind;
        *s = p;
    }
    return first;
}

void dpas__lline_pos(const dpas__lline *l, size_t off, int *line, int *col)
{
    size_t k = 0;
    while (k + 1 < l->nsegs && l->segs[k + 1].at <= off)
        k++;
    *line = l->segs[k].line;
    size_t c = (size_t)l->segs[k].col + (off - l->segs[k].at);
    *col = c > INT_MAX ? INT_MAX : (int)c;
}

/* ---- joining each process's chunks ----------------------------------------------------------- */

/* Lines open at once (processes whose last chunk did not end its line): beyond this the oldest
 * is handed over as it is, so that a hostile file cannot make the search quadratic. nccl-tests'
 * rows come from one process; other processes' lines seldom straddle a chunk. */
#define DPAS__MAX_OPEN_LINES 64

/* A process's line not yet ended. */
typedef struct open_line {
    tag t;
    char *buf;
    size_t len, cap;
    dpas__seg *segs;
    size_t nsegs, segcap;
    int prefix;
} open_line;

typedef struct splitter {
    dpas__lline_fn fn;
    void *ctx;
    open_line *open;
    size_t nopen, cap;
    size_t inline_tags, joined;
    dpas_error *err;
} splitter;

static int oom(splitter *sp) { return dpas__fail(sp->err, DPAS_ENOMEM, "", "out of memory"); }

static int emit(splitter *sp, const char *s, size_t n, int line, int col, int prefix)
{
    dpas__seg seg = {0, line, col};
    dpas__lline l = {s, n, &seg, 1, prefix};
    return sp->fn(sp->ctx, &l);
}

static open_line *find_open(splitter *sp, const tag *t)
{
    for (size_t i = 0; i < sp->nopen; i++)
        if (sp->open[i].t.job == t->job && sp->open[i].t.rank == t->rank &&
            !strcmp(sp->open[i].t.chan, t->chan))
            return &sp->open[i];
    return NULL;
}

static int append(splitter *sp, open_line *o, const char *s, size_t n, int line, int col)
{
    if (o->len + n > o->cap) {
        size_t cap = o->cap ? o->cap : 256;
        while (cap < o->len + n)
            cap *= 2;
        char *b = realloc(o->buf, cap);
        if (!b)
            return oom(sp);
        o->buf = b, o->cap = cap;
    }
    if (o->nsegs == o->segcap) {
        size_t cap = o->segcap ? o->segcap * 2 : 4;
        dpas__seg *g = realloc(o->segs, cap * sizeof *g);
        if (!g)
            return oom(sp);
        o->segs = g, o->segcap = cap;
    }
    o->segs[o->nsegs++] = (dpas__seg){o->len, line, col};
    if (n)
        memcpy(o->buf + o->len, s, n);
    o->len += n;
    return 0;
}

/* Hand over the open line i, and forget it. */
static int close_open(splitter *sp, size_t i)
{
    open_line o = sp->open[i];
    memmove(&sp->open[i], &sp->open[i + 1], (sp->nopen - i - 1) * sizeof *sp->open);
    sp->nopen--;
    if (o.segs[0].line != o.segs[o.nsegs - 1].line)
        sp->joined++;
    dpas__lline l = {o.buf ? o.buf : "", o.len, o.segs, o.nsegs, o.prefix};
    int rc = sp->fn(sp->ctx, &l);
    free(o.buf);
    free(o.segs);
    return rc;
}

/* A physical line that holds at least one tag, the first at t. */
static int tagged_line(splitter *sp, int line, const char *phys, const char *t, const char *end)
{
    const char *b = phys;
    int outer = dpas__nccl_strip_prefixes(&b, t);
    while (b < t && is_ws(*b))
        b++;
    int rc = 0;
    bool first = true;
    if (b < t) { /* untagged text before the tag (mpirun's own, say): a line of its own */
        rc = emit(sp, phys, (size_t)(t - phys), line, 1, 0);
        outer = 0, first = false;
    }
    for (; !rc && t; first = false) {
        tag tg;
        const char *s = t + tag_at(t, end, &tg);
        const char *next = find_tag(s, end), *e = next ? next : end;
        if (!first)
            sp->inline_tags++;
        int col = (int)(s - phys) + 1;
        open_line *o = find_open(sp, &tg);
        if (!o && !next) {
            rc = emit(sp, s, (size_t)(e - s), line, col, outer ? outer : DPAS_NCCL_PREFIX_MPIRUN);
        } else {
            if (!o && sp->nopen == DPAS__MAX_OPEN_LINES && (rc = close_open(sp, 0)))
                return rc; /* the oldest, as far as it goes */
            if (!o) {
                if (sp->nopen == sp->cap) {
                    size_t cap = sp->cap ? sp->cap * 2 : 4;
                    open_line *a = realloc(sp->open, cap * sizeof *a);
                    if (!a)
                        return oom(sp);
                    sp->open = a, sp->cap = cap;
                }
                o = &sp->open[sp->nopen++];
                memset(o, 0, sizeof *o);
                o->t = tg;
                o->prefix = outer ? outer : DPAS_NCCL_PREFIX_MPIRUN;
            }
            rc = append(sp, o, s, (size_t)(e - s), line, col);
            if (!rc && !next) /* the newline ends this process's line */
                rc = close_open(sp, (size_t)(o - sp->open));
        }
        t = next;
    }
    return rc;
}

int dpas__nccl_lines(const char *text, size_t len, const char *origin, dpas__lline_fn fn, void *ctx,
                     int *lines, size_t *inline_tags, size_t *joined, dpas_error *err)
{
    splitter sp = {fn, ctx, NULL, 0, 0, 0, 0, err};
    int rc = 0, line = 0;
    const char *s = text, *stop = text + len;
    while (!rc && s < stop) {
        const char *nl = memchr(s, '\n', (size_t)(stop - s));
        const char *end = nl ? nl : stop, *phys = s;
        s = nl ? nl + 1 : stop;
        if (line == INT_MAX) {
            rc = dpas__fail(err, DPAS_ERANGE, "file", "%s: more than %d lines", origin, INT_MAX);
            break;
        }
        line++;
        while (end > phys && end[-1] == '\r')
            end--;
        const char *t = find_tag(phys, end);
        if (t) {
            rc = tagged_line(&sp, line, phys, t, end);
        } else {
            rc = emit(&sp, phys, (size_t)(end - phys), line, 1, 0);
        }
    }
    while (!rc && sp.nopen) /* what a process wrote last without a newline */
        rc = close_open(&sp, 0);
    for (size_t i = 0; i < sp.nopen; i++)
        free(sp.open[i].buf), free(sp.open[i].segs);
    free(sp.open);
    *lines = line;
    *inline_tags = sp.inline_tags;
    *joined = sp.joined;
    return rc;
}
