/* Reading nccl-tests output as people paste it. Facts about the format, from nccl-tests'
 * src/common.cu and src/util.cu (2017-2025): every run prints, on rank 0 only, "# nThread ..."
 * (since 2.18 after "# nccl-tests version" and "# Collective test starting: NAME"), one
 * "#  Rank R Group G Pid P on HOST device D [BUS] NAME" line per rank (older: without Group, or
 * "#   Rank R on HOST device D"), a column header "size count type redop root time algbw busbw
 * #wrong time algbw busbw #wrong" (older ones: "bytes N type op time algbw busbw res" with the
 * time in ms; "error" instead of "#wrong"; no redop for all_gather and broadcast, no root before
 * 2022), a units line "(B) (elements) (us) (GB/s) (GB/s)", one row per size ("%12li  %12li
 * %8s  %6s  %6s" then time, algbw, busbw and #wrong or N/A, out-of-place then in-place), and
 * footers "# Out of bounds values", "# Avg bus bandwidth", "# Collective test concluded".
 * algbw = size / time in every collective dpas reads, busbw = algbw x the bus factor.
 *
 * Around that, launchers add prefixes (srun --label, mpirun --tag-output, kubectl --prefix,
 * pdsh) and other programs add lines (NCCL INFO, ssh and kubectl notices). A line is read only
 * when it is one of nccl-tests' own lines; anything else is counted as foreign and skipped,
 * except a line that starts like a data row (inside a table, a whole number; outside, two) and
 * is malformed or misplaced: that is an error, so that a damaged table is never half read. */
#include "../internal.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- collectives ---------------------------------------------------------------------------- */

static const char *const coll_names[DPAS_COLL_COUNT] = {"all_reduce", "all_gather",
                                                        "reduce_scatter", "broadcast", "reduce"};

const char *dpas_collective_name(int coll)
{
    return coll >= 0 && coll < DPAS_COLL_COUNT ? coll_names[coll] : NULL;
}

/* Lower case without '_' and '-', the directory and a _perf / _perf_mpi suffix dropped:
 * "./build/all_reduce_perf" and "AllReduce" are both "allreduce". */
static int collective_of(const char *text, size_t len)
{
    const char *s = text;
    for (size_t i = 0; i < len; i++)
        if (text[i] == '/')
            s = text + i + 1;
    size_t n = len - (size_t)(s - text);
    char t[32];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char c = s[i];
        if (c == '_' || c == '-')
            continue;
        if (k == sizeof t - 1)
            return -1;
        t[k++] = (char)(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
    }
    t[k] = '\0';
    static const char *const suffixes[] = {"perfmpi", "perf"};
    for (size_t i = 0; i < 2; i++) {
        size_t l = strlen(suffixes[i]);
        if (k > l && !strcmp(t + k - l, suffixes[i])) {
            t[k - l] = '\0';
            break;
        }
    }
    static const char *const compact[DPAS_COLL_COUNT] = {"allreduce", "allgather", "reducescatter",
                                                         "broadcast", "reduce"};
    for (int c = 0; c < DPAS_COLL_COUNT; c++)
        if (!strcmp(t, compact[c]))
            return c;
    return -1;
}

int dpas_collective_parse(const char *text, int *coll, dpas_error *err)
{
    char q[96];
    int c = text ? collective_of(text, strlen(text)) : -1;
    if (c < 0)
        return dpas__fail(err, DPAS_EINVAL, "collective",
                          "collective must be one of all_reduce, all_gather, reduce_scatter, "
                          "broadcast or reduce, got %s",
                          dpas__quote(text ? text : "", q, sizeof q));
    *coll = c;
    return 0;
}

int dpas_collective_ring(int coll, int64_t n, double *steps, double *factor, dpas_error *err)
{
    if (coll < 0 || coll >= DPAS_COLL_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "collective", "unknown collective %d", coll);
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 1, got %lld", (long long)n);
    double m = (double)(n - 1);
    switch (coll) {
    case DPAS_COLL_ALL_REDUCE: *steps = 2 * m, *factor = 2 * m / (double)n; break;
    case DPAS_COLL_ALL_GATHER:
    case DPAS_COLL_REDUCE_SCATTER: *steps = m, *factor = m / (double)n; break;
    default: *steps = m, *factor = n > 1 ? 1.0 : 0.0; break;
    }
    return 0;
}

/* ---- sizes with units ----------------------------------------------------------------------- */

int dpas_parse_size_bytes(const char *field, const char *text, uint64_t *out, dpas_error *err)
{
    static const char hint[] =
        "expected a whole number of bytes such as 4096, 64KiB, 16MiB, 1GB or 1.5 GiB";
    static const struct {
        const char *unit;
        int pow10, pow2;
    } units[] = {
        {"", 0, 0},     {"b", 0, 0},    {"byte", 0, 0}, {"bytes", 0, 0}, {"k", 3, 0},
        {"kb", 3, 0},   {"m", 6, 0},    {"mb", 6, 0},   {"g", 9, 0},     {"gb", 9, 0},
        {"t", 12, 0},   {"tb", 12, 0},  {"p", 15, 0},   {"pb", 15, 0},   {"ki", 0, 10},
        {"kib", 0, 10}, {"mi", 0, 20},  {"mib", 0, 20}, {"gi", 0, 30},   {"gib", 0, 30},
        {"ti", 0, 40},  {"tib", 0, 40}, {"pi", 0, 50},  {"pib", 0, 50},
    };
    char q[96];
    if (!field)
        field = "size";
    if (!text)
        return dpas__fail(err, DPAS_EPARSE, field, "%s is missing; %s", field, hint);
    const char *p = text;
    while (*p == ' ' || *p == '\t')
        p++;
    bool neg = false;
    if (*p == '-' || *p == '+')
        neg = *p++ == '-';
    /* mantissa digits (at most 30 significant) and the position of the point */
    dpas__u128 mant = 0;
    int sig = 0, frac = 0, digits = 0;
    bool point = false;
    for (;; p++) {
        if (*p >= '0' && *p <= '9') {
            digits++;
            if (mant == 0 && *p == '0') {
                if (point)
                    frac++;
                continue;
            }
            if (++sig > 30)
                return dpas__fail(err, DPAS_ERANGE, field, "%s has too many digits, got %s", field,
                                  dpas__quote(text, q, sizeof q));
            mant = mant * 10 + (unsigned)(*p - '0');
            if (point)
                frac++;
        } else if (*p == '.' && !point) {
            point = true;
        } else {
            break;
        }
    }
    if (!digits)
        return dpas__fail(err, DPAS_EPARSE, field, "%s: cannot read %s; %s", field,
                          dpas__quote(text, q, sizeof q), hint);
    long exp10 = 0;
    if ((*p == 'e' || *p == 'E') &&
        ((p[1] >= '0' && p[1] <= '9') ||
         ((p[1] == '-' || p[1] == '+') && p[2] >= '0' && p[2] <= '9'))) {
        p++;
        bool eneg = false;
        if (*p == '-' || *p == '+')
            eneg = *p++ == '-';
        while (*p >= '0' && *p <= '9') {
            if (exp10 < 1000)
                exp10 = exp10 * 10 + (*p - '0');
            p++;
        }
        if (eneg)
            exp10 = -exp10;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    const char *u = p;
    while (*p && *p != ' ' && *p != '\t')
        p++;
    size_t ulen = (size_t)(p - u);
    while (*p == ' ' || *p == '\t')
        p++;
    int unit = -1;
    if (!*p && ulen < 8) {
        char lu[8];
        for (size_t i = 0; i < ulen; i++)
            lu[i] = (char)(u[i] >= 'A' && u[i] <= 'Z' ? u[i] - 'A' + 'a' : u[i]);
        lu[ulen] = '\0';
        for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
            if (!strcmp(lu, units[i].unit))
                unit = (int)i;
    }
    if (unit < 0)
        return dpas__fail(err, DPAS_EPARSE, field, "%s: unknown unit in %s; %s", field,
                          dpas__quote(text, q, sizeof q), hint);
    if (neg && mant)
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be > 0, got %s", field,
                          dpas__quote(text, q, sizeof q));
    if (!mant)
        return dpas__fail(err, DPAS_EINVAL, field, "%s must be > 0, got %s", field,
                          dpas__quote(text, q, sizeof q));
    /* value = mant x 10^(exp10 - frac + pow10) x 2^pow2, which must be whole and < 2^63 */
    const dpas__u128 limit = (dpas__u128)INT64_MAX;
    long e = exp10 - frac + units[unit].pow10;
    dpas__u128 v = mant;
    for (int i = 0; i < units[unit].pow2; i++) {
        v *= 2;
        if (v > limit * 1000000000000000000ull) /* far beyond: cannot come back under 2^63 */
            return dpas__fail(err, DPAS_ERANGE, field, "%s must be below 2^63 bytes, got %s", field,
                              dpas__quote(text, q, sizeof q));
    }
    for (; e < 0; e++) {
        if (v % 10)
            return dpas__fail(err, DPAS_EINVAL, field, "%s must be a whole number of bytes, got %s",
                              field, dpas__quote(text, q, sizeof q));
        v /= 10;
    }
    for (; e > 0; e--) {
        if (v > limit)
            break;
        v *= 10;
    }
    if (e > 0 || v > limit)
        return dpas__fail(err, DPAS_ERANGE, field, "%s must be below 2^63 bytes, got %s", field,
                          dpas__quote(text, q, sizeof q));
    *out = (uint64_t)v;
    return 0;
}

/* ---- lines and tokens ----------------------------------------------------------------------- */

typedef struct tok {
    const char *s;
    size_t n;
} tok;

typedef struct toks {
    tok *t;
    size_t n, cap;
} toks;

static bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }
static bool is_digit(char c) { return c >= '0' && c <= '9'; }

static int split_ws(const char *s, const char *end, toks *tk)
{
    tk->n = 0;
    while (s < end) {
        while (s < end && is_ws(*s))
            s++;
        if (s == end)
            break;
        const char *b = s;
        while (s < end && !is_ws(*s))
            s++;
        if (tk->n == tk->cap) {
            size_t cap = tk->cap ? tk->cap * 2 : 32;
            tok *t = realloc(tk->t, cap * sizeof *t);
            if (!t)
                return -1;
            tk->t = t, tk->cap = cap;
        }
        tk->t[tk->n].s = b;
        tk->t[tk->n++].n = (size_t)(s - b);
    }
    return 0;
}

/* CSV fields, trimmed of blanks and of one pair of quotes. */
static int split_csv(const char *s, const char *end, toks *tk)
{
    tk->n = 0;
    for (;;) {
        const char *b = s;
        while (s < end && *s != ',')
            s++;
        const char *e = s;
        while (b < e && is_ws(*b))
            b++;
        while (e > b && is_ws(e[-1]))
            e--;
        if (e - b >= 2 && *b == '"' && e[-1] == '"')
            b++, e--;
        if (tk->n == tk->cap) {
            size_t cap = tk->cap ? tk->cap * 2 : 32;
            tok *t = realloc(tk->t, cap * sizeof *t);
            if (!t)
                return -1;
            tk->t = t, tk->cap = cap;
        }
        tk->t[tk->n].s = b;
        tk->t[tk->n++].n = (size_t)(e - b);
        if (s == end)
            return 0;
        s++;
    }
}

static bool tok_is(tok t, const char *w) { return t.n == strlen(w) && !memcmp(t.s, w, t.n); }

static bool tok_is_ci(tok t, const char *w)
{
    if (t.n != strlen(w))
        return false;
    for (size_t i = 0; i < t.n; i++) {
        char c = t.s[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c - 'A' + 'a');
        if (c != w[i])
            return false;
    }
    return true;
}

static bool tok_digits(tok t)
{
    if (!t.n)
        return false;
    for (size_t i = 0; i < t.n; i++)
        if (!is_digit(t.s[i]))
            return false;
    return true;
}

/* A whole number of at most 19 digits; false on overflow. */
static bool tok_u64(tok t, uint64_t *v)
{
    if (!tok_digits(t))
        return false;
    uint64_t x = 0;
    for (size_t i = 0; i < t.n; i++) {
        unsigned d = (unsigned)(t.s[i] - '0');
        if (x > (UINT64_MAX - d) / 10)
            return false;
        x = x * 10 + d;
    }
    *v = x;
    return true;
}

/* A finite decimal number as nccl-tests prints it ("123.4", "1.2e+05", "-1"); *half is half a
 * unit of its last printed digit (its rounding error). */
static bool tok_double(tok t, double *v, double *half)
{
    char b[64];
    if (!t.n || t.n >= sizeof b)
        return false;
    memcpy(b, t.s, t.n);
    b[t.n] = '\0';
    for (size_t i = 0; i < t.n; i++) /* no hex, inf, nan: only what printf("%f/%e") writes */
        if (!is_digit(b[i]) && !strchr("+-.eE", b[i]))
            return false;
    char *end;
    errno = 0;
    double x = strtod(b, &end);
    if (end != b + t.n || errno || !isfinite(x))
        return false;
    if (half) {
        int decimals = 0, exp10 = 0;
        const char *dot = strchr(b, '.'), *e = strpbrk(b, "eE");
        if (dot)
            decimals = (int)((e ? e : b + t.n) - dot - 1);
        if (e)
            exp10 = atoi(e + 1);
        *half = 0.5 * pow(10.0, exp10 - decimals);
    }
    *v = x;
    return true;
}

static char *dup_tok(tok t)
{
    char *s = malloc(t.n + 1);
    if (s) {
        memcpy(s, t.s, t.n);
        s[t.n] = '\0';
    }
    return s;
}

static bool same_str(const char *a, tok t, bool has)
{
    if (!has)
        return a == NULL;
    return a && strlen(a) == t.n && !memcmp(a, t.s, t.n);
}

/* Launcher prefixes, stripped one after another (kubectl's around srun's, say). Returns the
 * kind of the first stripped, or 0; *s is advanced past them. */
static int strip_prefixes(const char **s, const char *end)
{
    int first = 0;
    for (int round = 0; round < 4; round++) {
        const char *p = *s;
        int kind = 0;
        const char *q = p;
        while (q < end && (*q == ' ' || *q == '\t'))
            q++;
        if (q < end && *q == '[') {
            /* [J,R]<stdout>:  (mpirun --tag-output) */
            const char *r = q + 1;
            while (r < end && is_digit(*r))
                r++;
            if (r > q + 1 && r < end && *r == ',') {
                const char *r2 = ++r;
                while (r < end && is_digit(*r))
                    r++;
                if (r > r2 && end - r >= 3 && r[0] == ']' && r[1] == '<') {
                    const char *t = r + 2;
                    while (t < end && *t >= 'a' && *t <= 'z')
                        t++;
                    if (end - t >= 2 && t[0] == '>' && t[1] == ':') {
                        kind = DPAS_NCCL_PREFIX_MPIRUN;
                        p = t + 2;
                    }
                }
            }
            if (!kind) { /* [pod/NAME/CONTAINER]  (kubectl logs --prefix) */
                const char *t = q + 1;
                bool slash = false;
                while (t < end && *t != ']' && !is_ws(*t))
                    slash |= *t++ == '/';
                if (slash && end - t >= 2 && t[0] == ']' && t[1] == ' ') {
                    kind = DPAS_NCCL_PREFIX_KUBECTL;
                    p = t + 2;
                }
            }
        } else if (q < end && is_digit(*q)) {
            const char *r = q;
            while (r < end && is_digit(*r))
                r++;
            if (end - r >= 2 && r[0] == ':' && r[1] == ' ') { /* N: (srun --label) */
                kind = DPAS_NCCL_PREFIX_SRUN;
                p = r + 2;
            } else if (r - q == 4 && end - r > 6 && r[0] == '-' && is_digit(r[1]) &&
                       is_digit(r[2]) && r[3] == '-' && is_digit(r[4]) && is_digit(r[5]) &&
                       r[6] == 'T') { /* 2024-05-01T12:00:00.123456789Z (RFC 3339) */
                const char *t = r + 7;
                while (t < end && !is_ws(*t))
                    t++;
                if (t < end && *t == ' ' && memchr(r, ':', (size_t)(t - r))) {
                    kind = DPAS_NCCL_PREFIX_TIMESTAMP;
                    p = t + 1;
                }
            }
        }
        if (!kind && p == q && q < end &&
            ((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || is_digit(*q))) {
            /* host: (pdsh, clush) */
            const char *r = q;
            while (r < end && ((*r >= 'a' && *r <= 'z') || (*r >= 'A' && *r <= 'Z') ||
                               is_digit(*r) || *r == '.' || *r == '-' || *r == '_'))
                r++;
            if (end - r >= 2 && r[0] == ':' && r[1] == ' ') {
                kind = DPAS_NCCL_PREFIX_HOST;
                p = r + 2;
            }
        }
        if (!kind)
            break;
        if (!first)
            first = kind;
        *s = p;
    }
    return first;
}

/* ---- the reader ----------------------------------------------------------------------------- */

enum {
    C_SIZE,
    C_COUNT,
    C_TYPE,
    C_REDOP,
    C_ROOT,
    C_TIME,
    C_ALGBW,
    C_BUSBW,
    C_WRONG,
    C_NAME,
    C_RANKS,
    C_NCOLS
};

/* What the reader keeps of a test beside the public struct: the row that best tells the bus
 * factor (the largest algbw, whose printed digits are the most precise). */
typedef struct tpriv {
    double algbw, busbw, ea, eb;
    int line;
    int has_root;
    long long root;
    int has_redop_col;
    int64_t csv_ranks; /* the CSV ranks column, 0 when none */
    size_t cap;        /* of the test's points */
} tpriv;

/* Where a table's columns are. */
typedef struct layout {
    int col[C_NCOLS];
    size_t need; /* fields a row needs to reach size and time */
    double time_unit;
    int csv;
} layout;

typedef struct reader {
    const char *origin;
    int want; /* the caller's collective, -1 when none */
    int64_t want_ranks;
    dpas_nccl_log *log;
    tpriv *priv;
    size_t cap;
    dpas_error *err;
    /* context of the run being set up */
    char *pending_name;
    int64_t *rank_ids;
    size_t nrank_ids, rank_cap;
    /* the open table */
    int table; /* 0: none; else a serial number */
    int tables;
    layout L;
    int header_line;
    size_t table_first; /* its tests: log->tests[table_first ..] */
    int ended_line;     /* where the last table ended, for messages */
    toks tk;
} reader;

static int oom(reader *r) { return dpas__fail(r->err, DPAS_ENOMEM, "", "out of memory"); }

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Distinct rank numbers of the Rank lines (sorted in place: their order is not used). */
static int64_t distinct_ranks(reader *r)
{
    if (r->nrank_ids > 1)
        qsort(r->rank_ids, r->nrank_ids, sizeof *r->rank_ids, cmp_i64);
    int64_t n = 0;
    for (size_t i = 0; i < r->nrank_ids; i++)
        n += !i || r->rank_ids[i] != r->rank_ids[i - 1];
    return n;
}

/* The rank count busbw/algbw gives for a collective: the only whole n >= 2 whose factor lies
 * within the rounding of the printed numbers; 0 when none or several. */
static int64_t ranks_from_ratio(int coll, double rlo, double rhi)
{
    double lo, hi;
    if (coll == DPAS_COLL_ALL_REDUCE) { /* r = 2(n-1)/n, n = 2/(2-r) */
        if (rhi <= 1 || rlo >= 2)
            return 0;
        lo = 2 / (2 - rlo);
        hi = rhi >= 2 ? INFINITY : 2 / (2 - rhi);
    } else if (coll == DPAS_COLL_ALL_GATHER || coll == DPAS_COLL_REDUCE_SCATTER) { /* (n-1)/n */
        if (rhi <= 0.5 || rlo >= 1)
            return 0;
        lo = 1 / (1 - rlo);
        hi = rhi >= 1 ? INFINITY : 1 / (1 - rhi);
    } else {
        return 0;
    }
    double a = ceil(lo - 1e-9), b = floor(hi + 1e-9);
    if (a < 2)
        a = 2;
    if (a != b || a > 1e9)
        return 0;
    return (int64_t)a;
}

/* Decide a finished test's collective and rank count; 1 when it is left out (it does not match
 * the caller's choice), 0 when kept, or an error. */
static int finish_test(reader *r, dpas_nccl_test *t, tpriv *p)
{
    const char *o = r->origin;
    int first = t->npoints ? t->points[0].line : t->header_line;
    /* the bus factor, with the rounding of the printed numbers */
    double rlo = NAN, rhi = NAN;
    if (p->line && p->algbw > p->ea) {
        t->bus_ratio = p->busbw / p->algbw;
        t->ratio_line = p->line;
        rlo = (p->busbw - p->eb) / (p->algbw + p->ea);
        rhi = (p->busbw + p->eb) / (p->algbw - p->ea);
    }
    bool near1 = rlo <= 1 && rhi >= 1;
    bool reduction = t->redop && strcmp(t->redop, "none") != 0;
    int from_ratio = -1;
    if (isfinite(rlo)) {
        if (p->has_root && p->root >= 0)
            from_ratio = !p->has_redop_col || !reduction ? DPAS_COLL_BROADCAST : DPAS_COLL_REDUCE;
        else if (rlo > 1)
            from_ratio = DPAS_COLL_ALL_REDUCE;
        else if (rhi < 1)
            from_ratio =
                !p->has_redop_col || !reduction ? DPAS_COLL_ALL_GATHER : DPAS_COLL_REDUCE_SCATTER;
        else if (near1 && reduction && p->has_root) /* root -1: all_reduce on 2 ranks */
            from_ratio = DPAS_COLL_ALL_REDUCE;
    }
    /* the collective */
    int named = -1;
    if (t->name)
        named = collective_of(t->name, strlen(t->name));
    if (named >= 0) {
        t->collective = named;
        t->collective_from = t->collective_from ? t->collective_from : DPAS_NCCL_TEST_NAME;
        if (from_ratio >= 0 && from_ratio != named)
            t->warnings |= DPAS_NCCL_WARN_NAME_DISAGREE;
    } else if (!t->name && from_ratio >= 0) {
        t->collective = from_ratio;
        t->collective_from = DPAS_NCCL_BUS_RATIO;
    } else {
        t->collective = -1;
        t->collective_from = DPAS_NCCL_UNKNOWN;
    }
    if (r->want >= 0) {
        if (t->collective < 0 && !t->name) {
            t->collective = r->want;
            t->collective_from = DPAS_NCCL_GIVEN;
        } else if (t->collective != r->want) {
            return 1;
        }
    }
    char q[96];
    if (t->collective < 0 && t->name)
        return dpas__fail_at(r->err, DPAS_EINVAL, "collective", first, 1,
                             "%s:%d: the test %s is not a collective dpas models (all_reduce, "
                             "all_gather, reduce_scatter, broadcast, reduce); choose another with "
                             "--collective",
                             o, first, dpas__quote(t->name, q, sizeof q));
    if (t->collective < 0)
        return dpas__fail_at(r->err, DPAS_EINVAL, "collective", first, 1,
                             "%s:%d: cannot tell which collective this is (no \"# Collective test "
                             "starting\" line, and %s); give --collective all_reduce, all_gather, "
                             "reduce_scatter, broadcast or reduce",
                             o, first,
                             !isfinite(rlo) ? "busbw/algbw cannot be read: no row has a busbw "
                                              "and an algbw above their rounding"
                                            : "busbw/algbw and the redop and root columns fit "
                                              "more than one");
    /* the rank count */
    if (isfinite(rlo))
        t->ratio_ranks = ranks_from_ratio(t->collective, rlo, rhi);
    if (t->rank_lines > 0) {
        t->ranks = t->rank_lines;
        t->ranks_from = DPAS_NCCL_RANK_LINES;
        if (t->ratio_ranks && t->ratio_ranks != t->ranks)
            t->warnings |= DPAS_NCCL_WARN_RANKS_DISAGREE;
    } else if (p->csv_ranks > 0) {
        t->ranks = p->csv_ranks;
        t->ranks_from = DPAS_NCCL_CSV_COLUMN;
    } else if (t->ratio_ranks) {
        t->ranks = t->ratio_ranks;
        t->ranks_from = DPAS_NCCL_BUS_RATIO;
    }
    if (r->want_ranks > 0) {
        if (!t->ranks_from) {
            t->ranks = r->want_ranks;
            t->ranks_from = DPAS_NCCL_GIVEN;
        } else if (t->ranks != r->want_ranks) {
            return 1;
        }
    }
    if (!t->ranks_from)
        return dpas__fail_at(r->err, DPAS_EINVAL, "ranks", first, 1,
                             "%s:%d: cannot tell the number of ranks of this %s test (no \"#  "
                             "Rank\" lines, and busbw/algbw %s); give --ranks N",
                             o, first, dpas_collective_name(t->collective),
                             t->collective == DPAS_COLL_BROADCAST ||
                                     t->collective == DPAS_COLL_REDUCE
                                 ? "is 1 at any rank count for it"
                             : !isfinite(rlo) ? "cannot be read: no row has a busbw and an algbw "
                                                "above their rounding"
                                              : "fits no single rank count");
    /* a size measured twice (a repeated sweep): merged when fitted */
    uint64_t *sizes = malloc((t->npoints ? t->npoints : 1) * sizeof *sizes);
    if (!sizes)
        return oom(r);
    for (size_t i = 0; i < t->npoints; i++)
        sizes[i] = t->points[i].bytes;
    qsort(sizes, t->npoints, sizeof *sizes, cmp_u64);
    for (size_t i = 1; i < t->npoints; i++)
        if (sizes[i] == sizes[i - 1])
            t->warnings |= DPAS_NCCL_WARN_REPEATED;
    free(sizes);
    if (t->wrong_rows)
        t->warnings |= DPAS_NCCL_WARN_WRONG;
    return 0;
}

static void test_release(dpas_nccl_test *t)
{
    free(t->name), free(t->type), free(t->redop), free(t->points);
    memset(t, 0, sizeof *t);
}

/* Close the open table: settle its tests, and drop those the caller did not choose. */
static int end_table(reader *r, int line)
{
    if (!r->table)
        return 0;
    dpas_nccl_log *g = r->log;
    size_t keep = r->table_first;
    for (size_t i = r->table_first; i < g->ntests; i++) {
        int rc = finish_test(r, &g->tests[i], &r->priv[i]);
        if (rc < 0)
            return rc;
        if (rc == 1) {
            g->unselected++;
            test_release(&g->tests[i]);
            continue;
        }
        if (keep != i) {
            g->tests[keep] = g->tests[i];
            r->priv[keep] = r->priv[i];
            memset(&g->tests[i], 0, sizeof g->tests[i]);
        }
        keep++;
    }
    g->ntests = keep;
    r->table = 0;
    r->ended_line = line;
    return 0;
}

static void reset_run(reader *r)
{
    free(r->pending_name);
    r->pending_name = NULL;
    r->nrank_ids = 0;
}

/* The test of the open table that a row with this type and redop belongs to (a table of
 * several types or operations holds one test each), created when new. */
static int test_for(reader *r, tok type, bool has_type, tok redop, bool has_redop, tok name,
                    bool has_name, int64_t csv_ranks, dpas_nccl_test **out, tpriv **pout)
{
    dpas_nccl_log *g = r->log;
    for (size_t i = r->table_first; i < g->ntests; i++) {
        dpas_nccl_test *t = &g->tests[i];
        if (same_str(t->type, type, has_type) && same_str(t->redop, redop, has_redop) &&
            (!r->L.csv ||
             (same_str(t->name, name, has_name) && r->priv[i].csv_ranks == csv_ranks))) {
            *out = t, *pout = &r->priv[i];
            return 0;
        }
    }
    if (g->ntests == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 4;
        dpas_nccl_test *t = realloc(g->tests, cap * sizeof *t);
        if (!t)
            return oom(r);
        g->tests = t;
        tpriv *p = realloc(r->priv, cap * sizeof *p);
        if (!p)
            return oom(r);
        r->priv = p;
        r->cap = cap;
    }
    dpas_nccl_test *t = &g->tests[g->ntests];
    tpriv *p = &r->priv[g->ntests];
    memset(t, 0, sizeof *t);
    memset(p, 0, sizeof *p);
    g->ntests++;
    t->collective = -1;
    t->bus_ratio = NAN;
    t->header_line = r->header_line;
    t->rank_lines = r->L.csv ? 0 : distinct_ranks(r);
    p->has_redop_col = r->L.col[C_REDOP] >= 0;
    p->csv_ranks = csv_ranks;
    if ((has_type && !(t->type = dup_tok(type))) || (has_redop && !(t->redop = dup_tok(redop))))
        return oom(r);
    if (r->L.csv && has_name) {
        if (!(t->name = dup_tok(name)))
            return oom(r);
        t->collective_from = DPAS_NCCL_CSV_COLUMN;
    } else if (!r->L.csv && r->pending_name && !(t->name = strdup(r->pending_name))) {
        return oom(r);
    }
    *out = t, *pout = p;
    return 0;
}

static const char *time_unit_name(double u) { return u == 1e-3 ? "ms" : "us"; }

/* One data row of the open table (its tokens in r->tk). */
static int data_row(reader *r, int line, const char *phys)
{
    const char *o = r->origin;
    tok *f = r->tk.t;
    size_t nf = r->tk.n;
    char q[96];
#define COLUMN(k) ((int)(f[k].s - phys) + 1)
    if (nf < r->L.need)
        return dpas__fail_at(r->err, DPAS_EPARSE, "file", line, 1,
                             "%s:%d: a data row of %zu fields, but the column header (line %d) "
                             "puts the time in column %d",
                             o, line, nf, r->header_line, r->L.col[C_TIME] + 1);
    uint64_t size;
    tok ts = f[r->L.col[C_SIZE]];
    if (!tok_u64(ts, &size) || size == 0 || size > (uint64_t)INT64_MAX) {
        char b[64];
        snprintf(b, sizeof b, "%.*s", (int)(ts.n < 60 ? ts.n : 60), ts.s);
        return dpas__fail_at(r->err, DPAS_EPARSE, "size", line, COLUMN(r->L.col[C_SIZE]),
                             "%s:%d:%d: size must be a whole number of bytes from 1 to 2^63 - 1, "
                             "got %s",
                             o, line, COLUMN(r->L.col[C_SIZE]), dpas__quote(b, q, sizeof q));
    }
    double t;
    tok tt = f[r->L.col[C_TIME]];
    if (!tok_double(tt, &t, NULL) || !(t > 0)) {
        char b[64];
        snprintf(b, sizeof b, "%.*s", (int)(tt.n < 60 ? tt.n : 60), tt.s);
        return dpas__fail_at(r->err, DPAS_EPARSE, "time", line, COLUMN(r->L.col[C_TIME]),
                             "%s:%d:%d: time must be a number > 0 (%s), got %s", o, line,
                             COLUMN(r->L.col[C_TIME]), time_unit_name(r->L.time_unit),
                             dpas__quote(b, q, sizeof q));
    }
    double seconds = t * r->L.time_unit;
    double alg = NAN, bus = NAN, ea = 0, eb = 0;
    if (r->L.col[C_ALGBW] >= 0 && (size_t)r->L.col[C_ALGBW] < nf &&
        tok_double(f[r->L.col[C_ALGBW]], &alg, &ea) && alg < 0)
        alg = NAN;
    if (r->L.col[C_BUSBW] >= 0 && (size_t)r->L.col[C_BUSBW] < nf &&
        tok_double(f[r->L.col[C_BUSBW]], &bus, &eb) && bus < 0)
        bus = NAN;
    /* algbw is size / time in every collective read here: a time in another unit than the
     * header says would be 1000 times off */
    if (isfinite(alg) && alg >= 1.0) {
        double implied = (double)size / seconds / 1e9;
        if (implied > 10 * alg || implied < alg / 10)
            return dpas__fail_at(r->err, DPAS_EPARSE, "time", line, COLUMN(r->L.col[C_TIME]),
                                 "%s:%d:%d: the time %.*s %s and the size %llu B give %.4g GB/s, "
                                 "but the row's algbw is %g GB/s: the time is not in %s",
                                 o, line, COLUMN(r->L.col[C_TIME]), (int)(tt.n < 30 ? tt.n : 30),
                                 tt.s, time_unit_name(r->L.time_unit), (unsigned long long)size,
                                 implied, alg, time_unit_name(r->L.time_unit));
    }
    bool wrong = false;
    if (r->L.col[C_WRONG] >= 0 && (size_t)r->L.col[C_WRONG] < nf) {
        double w;
        tok tw = f[r->L.col[C_WRONG]];
        /* "#wrong" counts wrong elements ("N/A" without the data check) */
        wrong = tok_double(tw, &w, NULL) && w > 0;
    }
    tok none = {"", 0};
    bool has_type = r->L.col[C_TYPE] >= 0 && (size_t)r->L.col[C_TYPE] < nf;
    bool has_redop = r->L.col[C_REDOP] >= 0 && (size_t)r->L.col[C_REDOP] < nf;
    bool has_name = r->L.col[C_NAME] >= 0 && (size_t)r->L.col[C_NAME] < nf && f[r->L.col[C_NAME]].n;
    int64_t csv_ranks = 0;
    if (r->L.col[C_RANKS] >= 0 && (size_t)r->L.col[C_RANKS] < nf) {
        uint64_t v;
        tok tr = f[r->L.col[C_RANKS]];
        if (!tok_u64(tr, &v) || v < 1 || v > 1000000000) {
            char b[64];
            snprintf(b, sizeof b, "%.*s", (int)(tr.n < 60 ? tr.n : 60), tr.s);
            return dpas__fail_at(r->err, DPAS_EINVAL, "ranks", line, COLUMN(r->L.col[C_RANKS]),
                                 "%s:%d:%d: the ranks column must be a whole number from 1 to "
                                 "10^9, got %s",
                                 o, line, COLUMN(r->L.col[C_RANKS]), dpas__quote(b, q, sizeof q));
        }
        csv_ranks = (int64_t)v;
    }
#undef COLUMN
    dpas_nccl_test *test = NULL;
    tpriv *p = NULL;
    int rc = test_for(r, has_type ? f[r->L.col[C_TYPE]] : none, has_type,
                      has_redop ? f[r->L.col[C_REDOP]] : none, has_redop,
                      has_name ? f[r->L.col[C_NAME]] : none, has_name, csv_ranks, &test, &p);
    if (rc)
        return rc;
    if (test->npoints == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        dpas_nccl_point *pts = realloc(test->points, cap * sizeof *pts);
        if (!pts)
            return oom(r);
        test->points = pts;
        p->cap = cap;
    }
    test->points[test->npoints++] =
        (dpas_nccl_point){.bytes = size,
                          .seconds = seconds,
                          .algbw = alg * 1e9,
                          .busbw = bus * 1e9,
                          .seconds_inplace = NAN,
                          .line = line,
                          .wrong = wrong};
    test->wrong_rows += wrong;
    if (isfinite(alg) && isfinite(bus) && alg > ea && (!p->line || alg > p->algbw)) {
        p->algbw = alg, p->busbw = bus, p->ea = ea, p->eb = eb, p->line = line;
        p->has_root = 0;
        if (r->L.col[C_ROOT] >= 0 && (size_t)r->L.col[C_ROOT] < nf) {
            double root;
            if (tok_double(f[r->L.col[C_ROOT]], &root, NULL) && root == floor(root) &&
                fabs(root) < 1e9) {
                p->has_root = 1;
                p->root = (long long)root;
            }
        }
    }
    return 0;
}

/* A column header line: "size count type redop root time algbw busbw #wrong ..." (with or
 * without '#'), or v1's "bytes N type op time algbw busbw res". */
static bool column_header(const toks *tk, layout *L)
{
    const tok *f = tk->t;
    size_t nf = tk->n;
    if (nf < 4 || !(tok_is(f[0], "size") || tok_is(f[0], "bytes")) ||
        !(tok_is(f[1], "count") || tok_is(f[1], "N")) || !tok_is(f[2], "type"))
        return false;
    for (int k = 0; k < C_NCOLS; k++)
        L->col[k] = -1;
    L->col[C_SIZE] = 0, L->col[C_COUNT] = 1, L->col[C_TYPE] = 2;
    /* every name must be one of nccl-tests' columns, so that a comment that happens to start
     * with "size count type" is not taken for a header */
    static const char *const others[] = {"count", "N",     "type",  "error", "res",
                                         "i_min", "i_max", "i_p99", "i_cv%", "timestamp"};
    for (size_t i = 3; i < nf; i++) {
        int k = -1;
        if (tok_is(f[i], "redop") || tok_is(f[i], "op"))
            k = C_REDOP;
        else if (tok_is(f[i], "root"))
            k = C_ROOT;
        else if (tok_is(f[i], "time") || tok_is(f[i], "cputime"))
            k = C_TIME;
        else if (tok_is(f[i], "algbw"))
            k = C_ALGBW;
        else if (tok_is(f[i], "busbw"))
            k = C_BUSBW;
        else if (tok_is(f[i], "#wrong") || tok_is(f[i], "wrong"))
            k = C_WRONG;
        if (k >= 0) {
            if (L->col[k] < 0)
                L->col[k] = (int)i;
            continue;
        }
        bool known = false;
        for (size_t j = 0; j < sizeof others / sizeof others[0] && !known; j++)
            known = tok_is(f[i], others[j]);
        if (!known)
            return false;
    }
    if (L->col[C_TIME] < 0)
        return false;
    L->need = (size_t)L->col[C_TIME] + 1;
    L->time_unit = tok_is(f[0], "bytes") ? 1e-3 : 1e-6; /* v1 printed milliseconds */
    L->csv = 0;
    return true;
}

/* A CSV header naming at least a size and a time column. */
static bool csv_header(const toks *tk, layout *L)
{
    static const struct {
        const char *name;
        int col;
    } names[] = {
        {"size", C_SIZE},       {"bytes", C_SIZE},   {"size_bytes", C_SIZE}, {"time", C_TIME},
        {"usecs", C_TIME},      {"time_us", C_TIME}, {"oop_time", C_TIME},   {"name", C_NAME},
        {"collective", C_NAME}, {"op", C_NAME},      {"gpus", C_RANKS},      {"ranks", C_RANKS},
        {"nranks", C_RANKS},    {"algbw", C_ALGBW},  {"busbw", C_BUSBW},     {"type", C_TYPE},
        {"redop", C_REDOP},     {"root", C_ROOT},
    };
    for (int k = 0; k < C_NCOLS; k++)
        L->col[k] = -1;
    for (size_t i = 0; i < tk->n; i++)
        for (size_t k = 0; k < sizeof names / sizeof names[0]; k++)
            if (tok_is_ci(tk->t[i], names[k].name) && L->col[names[k].col] < 0)
                L->col[names[k].col] = (int)i;
    if (L->col[C_SIZE] < 0 || L->col[C_TIME] < 0)
        return false;
    L->need = (size_t)(L->col[C_TIME] > L->col[C_SIZE] ? L->col[C_TIME] : L->col[C_SIZE]) + 1;
    L->time_unit = 1e-6;
    L->csv = 1;
    return true;
}

/* Close the open table and open a new one with layout L. */
static int start_table(reader *r, const layout *L, int line)
{
    int rc = end_table(r, line);
    if (rc)
        return rc;
    r->L = *L;
    r->header_line = line;
    r->table = ++r->tables;
    r->table_first = r->log->ntests;
    return 0;
}

/* Remember the first foreign line, whole. */
static int foreign(reader *r, int line, const char *phys, const char *end)
{
    dpas_nccl_log *g = r->log;
    if (g->foreign_lines++)
        return 0;
    g->first_foreign_line = line;
    size_t n = (size_t)(end - phys);
    if (!(g->first_foreign = malloc(n + 1)))
        return oom(r);
    memcpy(g->first_foreign, phys, n);
    g->first_foreign[n] = '\0';
    return 0;
}

/* One physical line, without its newline and trailing CRs: *ours = 0 when it is not one of
 * nccl-tests' lines. */
static int read_line(reader *r, int line, const char *phys, const char *e, bool *ours)
{
    dpas_nccl_log *g = r->log;
    const char *b = phys;
    int prefix = strip_prefixes(&b, e);
    while (b < e && is_ws(*b))
        b++;
    *ours = true;
    if (b == e)
        return 0; /* blank */
    bool hash = *b == '#';
    const char *body = hash ? b + 1 : b;
    if (split_ws(body, e, &r->tk))
        return oom(r);
    tok *f = r->tk.t;
    size_t nf = r->tk.n;
    layout L;
    int rc = 0;
    if (nf == 0) {
        /* a lone '#' */
    } else if (nf >= 3 && tok_is(f[0], "Collective") && tok_is(f[1], "test") &&
               (tok_is(f[2], "starting:") || tok_is(f[2], "concluded:"))) {
        rc = end_table(r, line);
        reset_run(r);
        if (!rc && tok_is(f[2], "starting:") && nf >= 4 && !(r->pending_name = dup_tok(f[3])))
            rc = oom(r);
    } else if (nf >= 2 && tok_is(f[0], "nccl-tests") && tok_is(f[1], "version")) {
        rc = end_table(r, line);
    } else if (nf >= 4 && tok_is(f[0], "nThread") && tok_is(f[2], "nGpus")) {
        rc = end_table(r, line);
        r->nrank_ids = 0; /* a new run: its own Rank lines follow */
    } else if (nf >= 4 && tok_is(f[0], "Rank") && tok_digits(f[1]) &&
               (tok_is(f[2], "Group") || tok_is(f[2], "Pid") || tok_is(f[2], "on"))) {
        /* "Rank R Group G Pid P on HOST device D [BUS] NAME", or without Group, or (2017)
         * "Rank R on HOST device D [BUS] NAME" */
        bool device = false, on = false;
        for (size_t i = 2; i < nf; i++)
            device |= tok_is(f[i], "device"), on |= tok_is(f[i], "on");
        device &= on;
        uint64_t id;
        if (!device || !tok_u64(f[1], &id) || id > (uint64_t)INT64_MAX) {
            *ours = false;
        } else if (!(rc = end_table(r, line))) {
            if (r->nrank_ids == r->rank_cap) {
                size_t cap = r->rank_cap ? r->rank_cap * 2 : 16;
                int64_t *ids = realloc(r->rank_ids, cap * sizeof *ids);
                if (!ids)
                    return oom(r);
                r->rank_ids = ids, r->rank_cap = cap;
            }
            r->rank_ids[r->nrank_ids++] = (int64_t)id;
        }
    } else if (nf == 2 && tok_is(f[0], "Using") && tok_is(f[1], "devices")) {
        rc = end_table(r, line);
    } else if (column_header(&r->tk, &L)) {
        rc = start_table(r, &L, line);
    } else if (tok_is(f[0], "(B)") || tok_is(f[0], "out-of-place")) {
        for (size_t i = 0; i < nf && r->table && !r->L.csv; i++) {
            if (tok_is(f[i], "(ms)"))
                r->L.time_unit = 1e-3;
            else if (tok_is(f[i], "(us)"))
                r->L.time_unit = 1e-6;
        }
    } else if (nf >= 3 &&
               ((tok_is(f[0], "Out") && tok_is(f[1], "of") && tok_is(f[2], "bounds")) ||
                (tok_is(f[0], "Avg") && tok_is(f[1], "bus") && tok_is(f[2], "bandwidth")))) {
        rc = end_table(r, line);
        reset_run(r); /* the run is over: its name and Rank lines are not the next one's */
    } else if (!hash && tok_digits(f[0]) && !memchr(b, ',', (size_t)(e - b)) &&
               ((r->table && !r->L.csv) || (nf >= 2 && tok_digits(f[1])))) {
        /* a data row: inside a table any line that starts with a whole number (a cut row is an
         * error, not a foreign line); outside, one that starts with two */
        if (r->table && !r->L.csv)
            rc = data_row(r, line, phys);
        else if (r->ended_line)
            rc = dpas__fail_at(r->err, DPAS_EPARSE, "file", line, 1,
                               "%s:%d: a data row after the table that ended at line %d (a footer "
                               "or a new test came before it); is this nccl-tests output?",
                               r->origin, line, r->ended_line);
        else
            rc = dpas__fail_at(r->err, DPAS_EPARSE, "file", line, 1,
                               "%s:%d: a data row before nccl-tests' column header (the line "
                               "naming size, count, type, ..., time); is this nccl-tests output?",
                               r->origin, line);
    } else if (!hash && memchr(b, ',', (size_t)(e - b))) {
        if (split_csv(b, e, &r->tk))
            return oom(r);
        if (csv_header(&r->tk, &L))
            rc = start_table(r, &L, line);
        else if (r->table && r->L.csv && r->tk.n > (size_t)r->L.col[C_SIZE] &&
                 tok_digits(r->tk.t[r->L.col[C_SIZE]]))
            rc = data_row(r, line, phys);
        else
            *ours = false;
    } else {
        *ours = false;
    }
    if (!rc && *ours && prefix && !g->prefixed_lines++)
        g->prefix = prefix;
    return rc;
}

int dpas_nccl_read(const char *text, size_t len, const char *origin, const char *collective,
                   int64_t ranks, dpas_nccl_log **out, dpas_error *err)
{
    *out = NULL;
    if (!origin)
        origin = "<input>";
    int want = -1;
    if (collective && dpas_collective_parse(collective, &want, err))
        return DPAS_EINVAL;
    if (ranks < 0)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 1, got %lld",
                          (long long)ranks);
    if (!text && len)
        return dpas__fail(err, DPAS_EINVAL, "file", "%s: no text", origin);
    if (len && memchr(text, '\0', len))
        return dpas__fail(err, DPAS_EPARSE, "file",
                          "%s: contains a NUL byte; expected nccl-tests output", origin);
    dpas_nccl_log *g = calloc(1, sizeof *g);
    if (!g || !(g->origin = strdup(origin))) {
        free(g);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    reader r = {0};
    r.origin = origin, r.want = want, r.want_ranks = ranks;
    r.log = g, r.err = err;
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
        bool ours;
        rc = read_line(&r, line, phys, end, &ours);
        if (!rc && !ours)
            rc = foreign(&r, line, phys, end);
    }
    if (!rc)
        rc = end_table(&r, line);
    g->lines = line;
    free(r.tk.t);
    free(r.priv);
    free(r.rank_ids);
    free(r.pending_name);
    if (!rc && g->ntests == 0) {
        char q[120], what[96] = "";
        snprintf(what, sizeof what, "%s%stest%s", collective ? dpas_collective_name(want) : "",
                 collective ? " " : "", ranks ? " on " : "");
        if (ranks)
            snprintf(what + strlen(what), sizeof what - strlen(what), "%lld ranks",
                     (long long)ranks);
        if (g->unselected)
            rc = dpas__fail(err, DPAS_EINVAL, collective ? "collective" : "ranks",
                            "%s: no %s; the file has %zu test%s of other collectives or rank "
                            "counts",
                            origin, what, g->unselected, g->unselected == 1 ? "" : "s");
        else if (g->foreign_lines)
            rc = dpas__fail(err, DPAS_EPARSE, "file",
                            "%s: no nccl-tests rows found (expected lines of size, count, type, "
                            "..., time); %zu line%s not nccl-tests output, the first (line %d): "
                            "%s",
                            origin, g->foreign_lines, g->foreign_lines == 1 ? " is" : "s are",
                            g->first_foreign_line, dpas__quote(g->first_foreign, q, sizeof q));
        else
            rc = dpas__fail(err, DPAS_EPARSE, "file",
                            "%s: no nccl-tests rows found (expected lines of size, count, type, "
                            "..., time)",
                            origin);
    }
    if (rc) {
        dpas_nccl_log_free(g);
        return rc;
    }
    *out = g;
    return 0;
}

int dpas_nccl_read_file(const char *path, const char *collective, int64_t ranks,
                        dpas_nccl_log **out, dpas_error *err)
{
    char *text;
    size_t len;
    *out = NULL;
    int rc = dpas__read_file(path, "", 16u << 20, &text, &len, err);
    if (rc)
        return rc;
    rc = dpas_nccl_read(text, len, path, collective, ranks, out, err);
    free(text);
    return rc;
}

void dpas_nccl_log_free(dpas_nccl_log *g)
{
    if (!g)
        return;
    for (size_t i = 0; i < g->ntests; i++)
        test_release(&g->tests[i]);
    free(g->tests);
    free(g->origin);
    free(g->first_foreign);
    free(g);
}
