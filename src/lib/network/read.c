/* SPDX-License-Identifier: Apache-2.0 */
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
#include "nccl.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- collectives ---------------------------------------------------------------------------- */

/* The names are the header's table (DPAS_COLLECTIVE_MAP). */
#define COLL_NAME(id, name) [DPAS_COLL_##id] = name,
static const char *const coll_names[DPAS_COLL_COUNT] = {DPAS_COLLECTIVE_MAP(COLL_NAME)};
#undef COLL_NAME

/* The program a name stands for when dpas reads its table: one of dpas_collective, or -1.
 * alltoallv shares alltoall's columns but not its algbw (not size / time): not read. */
static int read_program(const char *text, size_t len)
{
    int p = dpas__nccl_program_of(text, len);
    if (p < 0 || p >= DPAS_COLL_COUNT)
        return -1;
    if (p == DPAS_COLL_ALLTOALL) {
        /* the program's own name (after the last '/' of a path), its '_' and '-' dropped: a
         * name longer than t is no nccl-tests program, and alltoallv is in its first letters */
        size_t i = len;
        while (i > 0 && text[i - 1] != '/')
            i--;
        char t[32];
        size_t k = 0;
        for (; i < len && k < sizeof t - 1; i++)
            if (text[i] != '_' && text[i] != '-')
                t[k++] = (char)(text[i] >= 'A' && text[i] <= 'Z' ? text[i] - 'A' + 'a' : text[i]);
        t[k] = '\0';
        if (strstr(t, "alltoallv"))
            return -1;
    }
    return p;
}

const char *dpas_collective_name(dpas_collective coll)
{
    return coll >= 0 && coll < DPAS_COLL_COUNT ? coll_names[coll] : NULL;
}

int dpas_collective_parse(const char *text, dpas_collective *coll, dpas_error *err)
{
    char q[96];
    int c = text ? read_program(text, strlen(text)) : -1;
    if (c >= 0) {
        *coll = (dpas_collective)c;
        return 0;
    }
    dpas__buf b = {0};
    for (int i = 0; i < DPAS_COLL_COUNT; i++)
        dpas__buf_list_item(&b, (size_t)i, DPAS_COLL_COUNT, coll_names[i]);
    int rc = dpas__fail(err, DPAS_EINVAL, "collective", "collective must be one of %s, got %s",
                        b.data ? b.data : "", dpas__quote(text ? text : "", q, sizeof q));
    free(b.data);
    return rc;
}

int dpas_collective_ring(dpas_collective coll, int64_t n, double *steps, double *factor,
                         dpas_error *err)
{
    if (coll < 0 || coll >= DPAS_COLL_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "collective", "unknown collective %d", coll);
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "ranks", "ranks must be >= 1, got %lld", (long long)n);
    double m = (double)(n - 1);
    switch (coll) {
    case DPAS_COLL_ALL_REDUCE: *steps = 2 * m, *factor = 2 * m / (double)n; break;
    case DPAS_COLL_ALL_GATHER:
    case DPAS_COLL_REDUCE_SCATTER:
    case DPAS_COLL_ALLTOALL:
    case DPAS_COLL_GATHER:
    case DPAS_COLL_SCATTER: *steps = m, *factor = m / (double)n; break;
    case DPAS_COLL_SENDRECV: *steps = n > 1 ? 1.0 : 0.0, *factor = n > 1 ? 1.0 : 0.0; break;
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

/* One more token (the array doubles as it fills); -1 when out of memory. */
static int tok_push(toks *tk, const char *s, size_t n)
{
    if (tk->n == tk->cap) {
        size_t cap = tk->cap ? tk->cap * 2 : 32;
        tok *t = realloc(tk->t, cap * sizeof *t);
        if (!t)
            return -1;
        tk->t = t, tk->cap = cap;
    }
    tk->t[tk->n].s = s;
    tk->t[tk->n++].n = n;
    return 0;
}

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
        if (tok_push(tk, b, (size_t)(s - b)))
            return -1;
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
        if (tok_push(tk, b, (size_t)(e - b)))
            return -1;
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

/* ---- the reader ----------------------------------------------------------------------------- */

enum {
    C_SIZE,
    C_COUNT,
    C_TYPE,
    C_REDOP,
    C_ROOT,
    C_TIME,    /* out-of-place time */
    C_TIME_IP, /* in-place time */
    C_ALGBW,
    C_BUSBW,
    C_WRONG,    /* out-of-place #wrong */
    C_WRONG_IP, /* in-place #wrong */
    C_NAME,
    C_RANKS,
    C_NCOLS
};

/* What the reader keeps of a test beside the public struct. */
typedef struct tpriv {
    double algbw, busbw, ea, eb; /* the row with the largest algbw (its digits the most precise) */
    int line;
    int has_root;
    long long root;
    double ilo, ihi; /* busbw/algbw: what every row's rounding allows (the intersection) */
    size_t nratio;   /* rows in it */
    int iv_empty;    /* the rows allow no common value */
    size_t wrong_rows, ip_checked, ip_unchecked, ip_off; /* rows with both #wrong columns */
    int has_redop_col;
    int name_from;     /* dpas_nccl_source of t->name */
    int name_line;     /* the command line that named it (DPAS_NCCL_COMMAND) */
    int64_t csv_ranks; /* the CSV ranks column, 0 when none */
    int64_t min_ranks; /* the largest rank id its Rank lines name, plus 1 (0: no lines): a run
                          that shows rank 5 had at least 6 ranks, whatever lines are missing */
    /* the count column: in the tables of all_gather, reduce_scatter, alltoall, gather and
     * scatter nccl-tests prints each rank's element count, so size = count x the type's bytes x
     * the ranks on every row (e.g. 524288 B, 1024 float: 128 ranks) */
    int64_t cnt_n;    /* size / (count x type bytes), the same on every row read so far */
    size_t cnt_rows;  /* rows that gave it */
    int cnt_conflict; /* a row whose size is no whole multiple, or that gives another value */
    size_t cap;       /* of the test's points */
    int64_t pat[32];  /* the reader's t_pat and t_npat for its Rank lines */
    int npat;
} tpriv;

/* Where a table's columns are. */
typedef struct layout {
    int col[C_NCOLS];
    size_t need;     /* fields a row needs to reach size and time */
    double time_div; /* printed time / time_div = seconds: 1e6 (us) or 1e3 (v1's ms) */
    int csv;
} layout;

typedef struct rank_ent {
    int64_t id;
    int64_t device; /* the "device D" of its line, -1 when none */
    char *host;     /* NULL when the line names none */
    size_t seq;     /* order in the file */
} rank_ent;

typedef struct reader {
    const char *origin;
    int want; /* the caller's collective, -1 when none */
    int64_t want_ranks;
    dpas_nccl_log *log;
    tpriv *priv;
    size_t cap, skip_cap;
    dpas_error *err;
    /* context of the run being set up */
    char *pending_name; /* "# Collective test starting: NAME" */
    char *cmd_name;     /* a command line or banner naming a program */
    int cmd_line;
    rank_ent *ranks;
    size_t nranks, rank_cap, rank_seq;
    int facts_done;  /* t_rank_lines .. are those of ranks[] */
    int elided_line; /* a line of dots among the Rank lines ("#  ..."), 0 when none */
    /* the open table */
    int table; /* 0: none; else a serial number */
    int tables;
    layout L;
    int header_line;
    size_t table_first; /* its tests: log->tests[table_first ..] */
    int ended_line;     /* where the last table ended, for messages */
    size_t skipping;    /* 1 + its index in log->skipped when the table is skipped unread */
    int64_t t_rank_lines, t_nodes, t_rpn, t_rpn_min, t_rpn_max; /* its Rank lines */
    int t_partial, t_elided_line;
    int64_t t_min_ranks;   /* the largest rank id of its Rank lines plus 1; 0 when none */
    int64_t t_pat[32];     /* partial lines: the ranks per node their hosts and devices allow */
    int t_npat;            /* entries of t_pat; 0 when none or too many to list */
    dpas_error unreadable; /* the first test skipped as unreadable: its error (code 0: none) */
    char *t_name;          /* its name, and where the name came from */
    int t_name_from, t_name_line;
    const dpas__lline *cur; /* the line being read */
    toks tk;
} reader;

static int oom(reader *r) { return dpas__fail(r->err, DPAS_ENOMEM, "", "out of memory"); }

/* The physical line and column of p, a pointer into the current line. */
static void pos(const reader *r, const char *p, int *line, int *col)
{
    dpas__lline_pos(r->cur, (size_t)(p - r->cur->text), line, col);
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_rank(const void *a, const void *b)
{
    const rank_ent *x = a, *y = b;
    if (x->id != y->id)
        return x->id < y->id ? -1 : 1;
    return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_host(const void *a, const void *b)
{
    const char *x = *(char *const *)a, *y = *(char *const *)b;
    return strcmp(x, y);
}

static void forget_ranks(reader *r)
{
    for (size_t i = 0; i < r->nranks; i++)
        free(r->ranks[i].host);
    r->nranks = 0;
    r->facts_done = 0;
    r->elided_line = 0;
}

/* Partial Rank lines ("#  Rank 0 ... on A device 0", "#  Rank 1 ... on A device 1", "...",
 * "#  Rank 62 ... on B device 2", "#  Rank 63 ... on B device 3") still say how many ranks a node
 * holds when the run placed them as mpirun and srun do by default, G consecutive ranks a node and
 * rank r on device r mod G: every G with each shown rank's device r mod G, and two shown ranks on
 * one host exactly when they are in one block of G (at least two hosts and two devices shown).
 * The G that also divide the rank count are chosen among when the count is known (finish_test). */
static void rank_pattern(reader *r)
{
    int64_t top = r->ranks[r->nranks - 1].id; /* G <= top: two hosts, so two blocks */
    bool two_hosts = false, two_devices = false;
    for (size_t i = 0; i < r->nranks; i++) {
        if (r->ranks[i].device < 0)
            return;
        two_hosts |= strcmp(r->ranks[i].host, r->ranks[0].host) != 0;
        two_devices |= r->ranks[i].device != r->ranks[0].device;
    }
    /* one device shown on every line: each rank may see only its own GPU (CUDA_VISIBLE_DEVICES
     * or srun --gpus-per-task), as device 0; the devices then say nothing of the node */
    if (!two_hosts || !two_devices || top > 1000000 || r->nranks > 256)
        return;
    for (int64_t g = 1; g <= top; g++) {
        bool ok = true;
        for (size_t i = 0; i < r->nranks && ok; i++) /* the devices first: few g pass */
            ok = r->ranks[i].device == r->ranks[i].id % g;
        for (size_t i = 0; i < r->nranks && ok; i++) {
            const rank_ent *a = &r->ranks[i];
            for (size_t j = i + 1; j < r->nranks && ok; j++) {
                const rank_ent *b = &r->ranks[j];
                ok = (a->id / g == b->id / g) == !strcmp(a->host, b->host);
            }
        }
        if (!ok)
            continue;
        if (r->t_npat == (int)(sizeof r->t_pat / sizeof r->t_pat[0])) {
            r->t_npat = 0; /* too many to tell */
            return;
        }
        r->t_pat[r->t_npat++] = g;
    }
}

/* What the Rank lines of the run say: distinct ranks, and, when every line names its host, the
 * nodes (distinct hosts) and ranks per node. */
static int rank_facts(reader *r)
{
    if (r->facts_done) /* the same Rank lines as the last table's */
        return 0;
    r->facts_done = 1;
    r->t_rank_lines = r->t_nodes = r->t_rpn = r->t_rpn_min = r->t_rpn_max = 0;
    r->t_partial = 0, r->t_elided_line = 0, r->t_min_ranks = 0;
    if (!r->nranks)
        return 0;
    qsort(r->ranks, r->nranks, sizeof *r->ranks, cmp_rank);
    char **hosts = malloc(r->nranks * sizeof *hosts);
    if (!hosts)
        return oom(r);
    size_t n = 0;
    bool all_hosts = true;
    for (size_t i = 0; i < r->nranks; i++) {
        if (i && r->ranks[i].id == r->ranks[i - 1].id)
            continue; /* the same rank twice: its first line counts */
        all_hosts &= r->ranks[i].host != NULL;
        hosts[n++] = r->ranks[i].host;
    }
    r->t_rank_lines = (int64_t)n;
    /* elided, or ids that skip some: the lines do not count the ranks (ids sorted: the last is
     * the largest) */
    r->t_elided_line = r->elided_line;
    r->t_partial = r->elided_line || r->ranks[r->nranks - 1].id + 1 != (int64_t)n;
    r->t_min_ranks = r->ranks[r->nranks - 1].id + 1;
    r->t_npat = 0;
    if (r->t_partial && all_hosts)
        rank_pattern(r);
    if (all_hosts) {
        qsort(hosts, n, sizeof *hosts, cmp_host);
        int64_t lo = INT64_MAX, hi = 0, run = 0;
        for (size_t i = 0; i < n; i++) {
            run++;
            if (i + 1 == n || strcmp(hosts[i], hosts[i + 1])) {
                r->t_nodes++;
                lo = run < lo ? run : lo, hi = run > hi ? run : hi;
                run = 0;
            }
        }
        r->t_rpn_min = lo, r->t_rpn_max = hi;
        r->t_rpn = lo == hi ? lo : 0;
    }
    free(hosts);
    return 0;
}

/* The rank count busbw/algbw gives for a collective: the only whole n >= 2 whose factor lies
 * within the rounding of the printed numbers; 0 when none or several. */
static int64_t ranks_from_ratio(int coll, double rlo, double rhi)
{
    double lo, hi;
    /* n = 1: nccl-tests prints busbw 0 (factor 0); the next count, 2, has factor 1 or 1/2 */
    if ((coll == DPAS_COLL_ALL_REDUCE && rlo <= 0 && rhi < 1) ||
        ((coll == DPAS_COLL_ALL_GATHER || coll == DPAS_COLL_REDUCE_SCATTER) && rlo <= 0 &&
         rhi < 0.5))
        return 1;
    if (coll == DPAS_COLL_ALL_REDUCE) { /* r = 2(n-1)/n, n = 2/(2-r) */
        if (rhi <= 1 || rlo >= 2)
            return 0;
        lo = 2 / (2 - rlo);
        hi = rhi >= 2 ? INFINITY : 2 / (2 - rhi);
    } else if (coll == DPAS_COLL_ALL_GATHER || coll == DPAS_COLL_REDUCE_SCATTER ||
               coll == DPAS_COLL_ALLTOALL || coll == DPAS_COLL_GATHER ||
               coll == DPAS_COLL_SCATTER) { /* (n-1)/n */
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

static int add_skip(reader *r, const char *name, int reason, int line, size_t rows, const char *why)
{
    dpas_nccl_log *g = r->log;
    if (g->nskipped == r->skip_cap) {
        size_t cap = r->skip_cap ? r->skip_cap * 2 : 4;
        dpas_nccl_skipped *s = realloc(g->skipped, cap * sizeof *s);
        if (!s)
            return oom(r);
        g->skipped = s, r->skip_cap = cap;
    }
    dpas_nccl_skipped *s = &g->skipped[g->nskipped];
    memset(s, 0, sizeof *s);
    g->nskipped++; /* counted at once: what was allocated is freed with the log */
    if ((name && !(s->name = strdup(name))) || !(s->why = strdup(why ? why : "")))
        return oom(r);
    s->reason = reason, s->line = line, s->rows = rows;
    return 0;
}

/* What a finished test's columns say, for dpas__nccl_candidates. */
static dpas__nccl_obs observe(dpas_nccl_test *t, const tpriv *p)
{
    dpas__nccl_obs o = {0};
    o.redop = !t->redop                   ? DPAS__REDOP_UNKNOWN
              : !t->redop[0]              ? DPAS__REDOP_EMPTY
              : !strcmp(t->redop, "none") ? DPAS__REDOP_NONE
                                          : DPAS__REDOP_OP;
    o.root = !p->has_root ? DPAS__ROOT_UNKNOWN : p->root >= 0 ? DPAS__ROOT_SET : DPAS__ROOT_NONE;
    if (p->line && p->algbw > p->ea) { /* the row with the largest algbw, for the report */
        t->bus_ratio = p->busbw / p->algbw;
        t->ratio_line = p->line;
    }
    if (p->nratio && !p->iv_empty) {
        o.ratio = 1, o.rlo = p->ilo, o.rhi = p->ihi;
    } else if (p->line && p->algbw > p->ea) {
        o.ratio = 1;
        o.rlo = (p->busbw - p->eb) / (p->algbw + p->ea);
        o.rhi = (p->busbw + p->eb) / (p->algbw - p->ea);
    }
    o.n = t->rank_lines;
    if (p->wrong_rows)
        o.inplace_check = p->ip_checked == p->wrong_rows     ? DPAS__IP_CHECKED
                          : p->ip_unchecked == p->wrong_rows ? DPAS__IP_UNCHECKED
                          : p->ip_off == p->wrong_rows       ? DPAS__IP_OFF
                                                             : DPAS__IP_UNKNOWN;
    return o;
}

/* The observations in words: "busbw/algbw = 1 (line 40), redop sum, root -1, on 10 ranks (Rank
 * lines)". */
static void describe_obs(const dpas_nccl_test *t, const tpriv *p, const dpas__nccl_obs *o,
                         char *buf, size_t cap)
{
    dpas__buf b = {0};
    if (isfinite(t->bus_ratio))
        dpas__buf_printf(&b, "busbw/algbw = %.4g (line %d)", t->bus_ratio, t->ratio_line);
    else
        dpas__buf_puts(&b, "busbw/algbw unreadable (no row has an algbw above its rounding)");
    if (o->redop != DPAS__REDOP_UNKNOWN)
        dpas__buf_printf(&b, ", redop %s", t->redop[0] ? t->redop : "(empty)");
    else
        dpas__buf_puts(&b, ", no redop column");
    if (p->has_root)
        dpas__buf_printf(&b, ", root %lld", p->root);
    else
        dpas__buf_puts(&b, ", no root column");
    if (o->n)
        dpas__buf_printf(&b, ", %lld Rank lines", (long long)o->n);
    if (o->inplace_check == DPAS__IP_OFF)
        dpas__buf_puts(&b, ", #wrong N/A (the data check was off)");
    else if (o->inplace_check == DPAS__IP_UNCHECKED)
        dpas__buf_puts(&b, ", in-place #wrong N/A (that run was not checked)");
    int n = snprintf(buf, cap, "%s", b.oom || !b.data ? "?" : b.data);
    dpas__mark_cut(buf, cap, n);
    free(b.data);
}

/* The collective of a finished test: from its name, the caller's choice, or the columns; a
 * table the columns cannot tell is refused, never guessed. 0 decided, 1 left out (not the
 * caller's choice), 2 skipped (not a collective dpas models), or an error. */
static int decide_collective(reader *r, dpas_nccl_test *t, tpriv *p, const dpas__nccl_obs *obs)
{
    const char *o = r->origin;
    int first = t->points[0].line;
    dpas__nccl_obs ob = *obs;
    unsigned set = dpas__nccl_candidates(&ob);
    if (!set && ob.n) { /* the Rank lines and the ratio disagree: the ratio alone */
        ob.n = 0;
        set = dpas__nccl_candidates(&ob);
    }
    unsigned modelled = set & DPAS__P_MODELLED, other = set & ~DPAS__P_MODELLED;
    char what[160], fits[120], q[96];
    describe_obs(t, p, obs, what, sizeof what);
    dpas__nccl_describe_set(set, fits, sizeof fits);
    int named = t->name ? read_program(t->name, strlen(t->name)) : -1;
    if (t->name && named < 0) { /* a CSV name column */
        int rc = add_skip(r, t->name, DPAS_NCCL_SKIP_UNMODELLED, t->header_line, t->npoints, "");
        return rc ? rc : 2;
    }
    if (named >= 0) {
        t->collective = named;
        t->collective_from = p->name_from;
        if (!((set >> named) & 1)) {
            if (p->name_from == DPAS_NCCL_COMMAND)
                return dpas__fail_at(
                    r->err, DPAS_EINVAL, "collective", first, 1,
                    "%s:%d: line %d names %s, but this table's columns (%s) fit %s%s; give "
                    "collective if line %d is this table's command",
                    o, first, p->name_line, dpas__quote(t->name, q, sizeof q), what,
                    set ? "" : "no collective", set ? fits : "", p->name_line);
            t->warnings |= DPAS_NCCL_WARN_NAME_DISAGREE;
        }
        return r->want >= 0 && named != r->want;
    }
    if (r->want >= 0 && (!set || ((set >> r->want) & 1))) {
        t->collective = r->want;
        t->collective_from = DPAS_NCCL_GIVEN;
        return 0;
    }
    if (!modelled && other) {
        int rc =
            add_skip(r, fits, DPAS_NCCL_SKIP_LOOKS_UNMODELLED, t->header_line, t->npoints, what);
        return rc ? rc : 2;
    }
    if (r->want >= 0)
        return 1;
    if (modelled && !(modelled & (modelled - 1)) && !other) {
        for (int c = 0; c < DPAS_COLL_COUNT; c++)
            if ((modelled >> c) & 1)
                t->collective = c;
        t->collective_from = DPAS_NCCL_BUS_RATIO;
        return 0;
    }
    if (!set)
        return dpas__fail_at(r->err, DPAS_EINVAL, "collective", first, 1,
                             "%s:%d: cannot tell which collective this is: its columns (%s) fit "
                             "none of nccl-tests' collectives; say which it is (collective)",
                             o, first, what);
    char others[120] = "";
    if (other)
        dpas__nccl_describe_set(other, others, sizeof others);
    if (modelled & (modelled - 1)) {
        /* "collective all_gather or collective alltoall": at most DPAS_COLL_COUNT names of at
         * most 14 characters, each with 15 more: fits */
        char give[DPAS_COLL_COUNT * 32] = "";
        size_t len = 0;
        for (int c = 0; c < DPAS_COLL_COUNT; c++)
            if ((modelled >> c) & 1)
                len += (size_t)snprintf(give + len, sizeof give - len, "%scollective %s",
                                        len ? " or " : "", dpas_collective_name(c));
        return dpas__fail_at(r->err, DPAS_EINVAL, "collective", first, 1,
                             "%s:%d: cannot tell which collective this is: no name (\"# Collective "
                             "test starting\" or a *_perf command line above it), and its columns "
                             "(%s) fit %s; give %s, or add the line \"# Collective test "
                             "starting: NAME_perf\" above its table as nccl-tests prints it",
                             o, first, what, fits, give);
    }
    const char *m = "?";
    for (int c = 0; c < DPAS_COLL_COUNT; c++)
        if ((modelled >> c) & 1)
            m = dpas_collective_name(c);
    return dpas__fail_at(r->err, DPAS_EINVAL, "collective", first, 1,
                         "%s:%d: cannot tell which collective this is: no name (\"# Collective "
                         "test starting\" or a *_perf command line above it), and its columns "
                         "(%s) fit %s; if it is %s %s, give collective %s, or add the line \"# "
                         "Collective test starting: %s_perf\" above its table (dpas does not "
                         "model %s)",
                         o, first, what, fits, m[0] == 'a' ? "an" : "a", m, m, m, others);
}

/* The rank count the count column gives (see tpriv), when busbw/algbw could not decide one and
 * no whole Rank lines counted them: every row's size is count x type bytes x the same n, n >= 2,
 * n at least the largest rank a Rank line names plus 1, and n's bus factor within what every
 * row's busbw/algbw allows. Only for the collectives whose count is per rank; 0 otherwise. */
static int64_t count_ranks(const dpas_nccl_test *t, const tpriv *p, const dpas__nccl_obs *obs)
{
    int c = t->collective;
    if (c != DPAS_COLL_ALL_GATHER && c != DPAS_COLL_REDUCE_SCATTER && c != DPAS_COLL_ALLTOALL &&
        c != DPAS_COLL_GATHER && c != DPAS_COLL_SCATTER)
        return 0;
    if (!p->cnt_rows || p->cnt_conflict || p->cnt_n < 2 || p->cnt_n < p->min_ranks)
        return 0;
    if (obs->ratio) { /* the factor (n-1)/n */
        double v = (double)(p->cnt_n - 1) / (double)p->cnt_n;
        if (v < obs->rlo - 1e-12 || v > obs->rhi + 1e-12)
            return 0;
    }
    return p->cnt_n;
}

/* Decide a finished test's collective and rank count: 0 kept, 1 left out (it does not match the
 * caller's choice), 2 skipped (noted in log->skipped), or an error. */
static int finish_test(reader *r, dpas_nccl_test *t, tpriv *p)
{
    const char *o = r->origin;
    if (!t->npoints) {
        int rc = add_skip(r, t->name, DPAS_NCCL_SKIP_ZERO_ONLY, t->header_line, t->zero_rows, "");
        return rc ? rc : 2;
    }
    int first = t->points[0].line;
    dpas__nccl_obs obs = observe(t, p);
    int rc = decide_collective(r, t, p, &obs);
    if (rc)
        return rc;
    /* the rank count: busbw/algbw when it decides one (nccl-tests computed busbw from the true
     * count, so no line the numbers contradict is believed), else the Rank lines when they are
     * whole, else a CSV column; ranks given fill in what the file cannot tell, and replace a
     * count from lines the numbers could not confirm (partial, or one line) */
    /* rows whose busbw/algbw allow no common value contradict each other: no row's count is
     * believed over the others' (the Rank lines, a CSV column or ranks given decide, or none) */
    if (obs.ratio && !p->iv_empty)
        t->ratio_ranks = ranks_from_ratio(t->collective, obs.rlo, obs.rhi);
    t->csv_ranks = p->csv_ranks;
    int64_t listed = t->rank_lines > 0 ? t->rank_lines : p->csv_ranks;
    int listed_from = t->rank_lines > 0 ? DPAS_NCCL_RANK_LINES : DPAS_NCCL_CSV_COLUMN;
    bool doubtful = t->rank_lines_partial || (t->rank_lines == 1 && !t->ratio_ranks);
    if (t->rank_lines_partial)
        t->warnings |= DPAS_NCCL_WARN_RANK_LINES_PARTIAL;
    if (t->ratio_ranks) { /* when whole lines agree, they are named as the source */
        t->ranks = t->ratio_ranks;
        t->ranks_from =
            listed == t->ratio_ranks && !t->rank_lines_partial ? listed_from : DPAS_NCCL_BUS_RATIO;
        if (listed > 0 && listed != t->ratio_ranks && !t->rank_lines_partial)
            t->warnings |= DPAS_NCCL_WARN_RANKS_DISAGREE;
    } else if (listed > 0 && !doubtful) {
        t->ranks = listed;
        t->ranks_from = listed_from;
    } else if ((t->ranks = count_ranks(t, p, &obs)) > 0) {
        t->ranks_from = DPAS_NCCL_COUNT_COLUMN;
    }
    if (r->want_ranks > 0) {
        /* a Rank line of id k says the run had at least k + 1 ranks, whatever lines are
         * missing: a count given to fill in what the file cannot tell is refused below it (a
         * count the file decides is chosen among, or passed over, as ranks N chooses tests) */
        if (!t->ranks_from && r->want_ranks < p->min_ranks)
            return dpas__fail_at(r->err, DPAS_EINVAL, "ranks", first, 1,
                                 "%s:%d: ranks %lld is given, but this %s test's \"#  Rank\" "
                                 "lines name rank %lld: the run had at least %lld ranks",
                                 o, first, (long long)r->want_ranks,
                                 dpas_collective_name(t->collective), (long long)(p->min_ranks - 1),
                                 (long long)p->min_ranks);
        if (!t->ranks_from) {
            if (listed > 0 && listed != r->want_ranks && !t->rank_lines_partial)
                t->warnings |= DPAS_NCCL_WARN_RANKS_GIVEN;
            t->ranks = r->want_ranks;
            t->ranks_from = DPAS_NCCL_GIVEN;
        } else if (t->ranks != r->want_ranks) {
            return 1;
        }
    }
    if (!t->ranks_from && doubtful) {
        char lines[96], atleast[96] = "";
        if (t->rank_lines_partial || p->min_ranks > 1)
            snprintf(atleast, sizeof atleast, "; at least %lld, as its lines name rank %lld",
                     (long long)p->min_ranks, (long long)(p->min_ranks - 1));
        else
            snprintf(atleast, sizeof atleast, "; ranks 1 if it ran on one GPU");
        if (t->rank_lines_partial && t->elided_line)
            snprintf(lines, sizeof lines, "its \"#  Rank\" lines are elided (line %d)",
                     t->elided_line);
        else if (t->rank_lines_partial)
            snprintf(lines, sizeof lines, "its %lld \"#  Rank\" line%s skip%s ids",
                     (long long)t->rank_lines, t->rank_lines == 1 ? "" : "s",
                     t->rank_lines == 1 ? "s" : "");
        else
            snprintf(lines, sizeof lines, "it shows one \"#  Rank\" line");
        return dpas__fail_at(r->err, DPAS_EINVAL, "ranks", first, 1,
                             "%s:%d: cannot tell the number of ranks of this %s test: %s, and "
                             "busbw/algbw %s; give ranks N (the ranks of the run%s)",
                             o, first, dpas_collective_name(t->collective), lines,
                             t->collective == DPAS_COLL_BROADCAST ||
                                     t->collective == DPAS_COLL_REDUCE
                                 ? "is 1 at any rank count for it"
                             : !obs.ratio  ? "cannot be read: no row has a busbw and an algbw "
                                             "above their rounding"
                             : p->iv_empty ? "differs between rows: no rank count fits every row"
                                           : "fits no single rank count at the printed precision",
                             atleast);
    }
    if (!t->ranks_from)
        return dpas__fail_at(r->err, DPAS_EINVAL, "ranks", first, 1,
                             "%s:%d: cannot tell the number of ranks of this %s test (no \"#  "
                             "Rank\" lines, and busbw/algbw %s); give ranks N",
                             o, first, dpas_collective_name(t->collective),
                             t->collective == DPAS_COLL_BROADCAST ||
                                     t->collective == DPAS_COLL_REDUCE ||
                                     t->collective == DPAS_COLL_SENDRECV
                                 ? "is 1 at any rank count for it"
                             : !obs.ratio  ? "cannot be read: no row has a busbw and an algbw "
                                             "above their rounding"
                             : p->iv_empty ? "differs between rows: no rank count fits every row"
                                           : "fits no single rank count at the printed "
                                             "precision");
    /* partial Rank lines whose hosts and devices allow one ranks-per-node that divides the
     * count into two nodes or more: the nodes (rank_pattern) */
    if (t->rank_lines_partial && t->ranks > 1 && p->npat > 0) {
        int64_t g = 0;
        int found = 0;
        for (int i = 0; i < p->npat; i++)
            if (p->pat[i] < t->ranks && t->ranks % p->pat[i] == 0)
                g = p->pat[i], found++;
        if (found == 1) {
            t->nodes = t->ranks / g;
            t->ranks_per_node = t->ranks_per_node_min = t->ranks_per_node_max = g;
            t->nodes_from = DPAS_NCCL_RANK_LINES;
        }
    }
    /* a size measured twice (a repeated sweep): merged when fitted */
    uint64_t *sizes = malloc(t->npoints * sizeof *sizes);
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

/* Close the open table: settle its tests, and drop those not read. */
static int end_table(reader *r, int line)
{
    if (!r->table)
        return 0;
    dpas_nccl_log *g = r->log;
    size_t keep = r->table_first;
    for (size_t i = r->table_first; i < g->ntests; i++) {
        int rc = r->skipping ? 2 : finish_test(r, &g->tests[i], &r->priv[i]);
        if (rc == DPAS_EINVAL && r->err &&
            (!strcmp(r->err->field, "ranks") || !strcmp(r->err->field, "collective"))) {
            /* a test that cannot be told: skipped with its reason, so the others are read; a
             * file of only such tests gives the first reason (dpas_nccl_read) */
            dpas_nccl_test *t = &g->tests[i];
            if (!r->unreadable.code)
                r->unreadable = *r->err;
            rc = add_skip(r, t->name, DPAS_NCCL_SKIP_UNREADABLE, t->header_line, t->npoints,
                          r->err->message);
            *r->err = (dpas_error){0};
            if (!rc)
                rc = 2;
        }
        if (rc < 0)
            return rc;
        if (rc) {
            g->unselected += rc == 1;
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
    r->skipping = 0;
    r->ended_line = line;
    free(r->t_name);
    r->t_name = NULL;
    return 0;
}

static void reset_run(reader *r)
{
    free(r->pending_name);
    free(r->cmd_name);
    r->pending_name = r->cmd_name = NULL;
    forget_ranks(r);
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
    if (g->ntests - r->table_first >= DPAS_NCCL_MAX_TESTS_PER_TABLE) {
        int pl, pc;
        pos(r, r->tk.t[0].s, &pl, &pc);
        return dpas__fail_at(r->err, DPAS_ERANGE, "file", pl, 1,
                             "%s:%d: more than %d tests (types, operations%s) in the table of "
                             "line %d",
                             r->origin, pl, DPAS_NCCL_MAX_TESTS_PER_TABLE,
                             r->L.csv ? ", names, rank counts" : "", r->header_line);
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
    t->collective = DPAS_COLL_UNKNOWN;
    t->bus_ratio = NAN;
    t->header_line = r->header_line;
    if (!r->L.csv) {
        t->rank_lines = r->t_rank_lines;
        t->nodes = r->t_nodes;
        t->ranks_per_node = r->t_rpn;
        t->ranks_per_node_min = r->t_rpn_min;
        t->ranks_per_node_max = r->t_rpn_max;
        t->nodes_from = r->t_nodes ? DPAS_NCCL_RANK_LINES : DPAS_NCCL_UNKNOWN;
        t->rank_lines_partial = r->t_partial;
        t->elided_line = r->t_elided_line;
        p->min_ranks = r->t_min_ranks;
        p->npat = r->t_npat;
        memcpy(p->pat, r->t_pat, sizeof p->pat);
        if (r->t_partial) { /* hosts of some ranks only: no node count */
            t->nodes = t->ranks_per_node = t->ranks_per_node_min = t->ranks_per_node_max = 0;
            t->nodes_from = DPAS_NCCL_UNKNOWN;
        }
    }
    p->has_redop_col = r->L.col[C_REDOP] >= 0;
    p->csv_ranks = csv_ranks;
    p->ilo = -INFINITY, p->ihi = INFINITY;
    if ((has_type && !(t->type = dup_tok(type))) || (has_redop && !(t->redop = dup_tok(redop))))
        return oom(r);
    if (r->L.csv && has_name) {
        if (!(t->name = dup_tok(name)))
            return oom(r);
        p->name_from = DPAS_NCCL_CSV_COLUMN;
    } else if (!r->L.csv && r->t_name) {
        if (!(t->name = strdup(r->t_name)))
            return oom(r);
        p->name_from = r->t_name_from;
        p->name_line = r->t_name_line;
    }
    *out = t, *pout = p;
    return 0;
}

static const char *time_unit_name(double div) { return div == 1e3 ? "ms" : "us"; }

/* "#wrong" as printed: 1 a number, 2 N/A, 0 absent or anything else. */
static int wrong_kind(const toks *tk, int col)
{
    if (col < 0 || (size_t)col >= tk->n)
        return 0;
    double w;
    if (tok_double(tk->t[col], &w, NULL))
        return 1;
    return tok_is(tk->t[col], "N/A") ? 2 : 0;
}

/* Facts of one data row that tell the collective: busbw/algbw with its rounding, the root,
 * the #wrong columns. */
static void row_facts(reader *r, tpriv *p, const int *col, int line, double alg, double bus,
                      double ea, double eb)
{
    const tok *f = r->tk.t;
    size_t nf = r->tk.n;
    if (isfinite(alg) && isfinite(bus) && alg > ea) {
        double lo = (bus - eb) / (alg + ea), hi = (bus + eb) / (alg - ea);
        p->ilo = lo > p->ilo ? lo : p->ilo;
        p->ihi = hi < p->ihi ? hi : p->ihi;
        p->iv_empty |= p->ilo > p->ihi;
        p->nratio++;
        if (!p->line || alg > p->algbw)
            p->algbw = alg, p->busbw = bus, p->ea = ea, p->eb = eb, p->line = line;
    }
    double root;
    if (!p->has_root && col[C_ROOT] >= 0 && (size_t)col[C_ROOT] < nf &&
        tok_double(f[col[C_ROOT]], &root, NULL) && root == floor(root) && fabs(root) < 1e9) {
        p->has_root = 1;
        p->root = (long long)root;
    }
    int wo = wrong_kind(&r->tk, col[C_WRONG]), wi = wrong_kind(&r->tk, col[C_WRONG_IP]);
    if (wo && wi) {
        p->wrong_rows++;
        p->ip_checked += wo == 1 && wi == 1;
        p->ip_unchecked += wo == 1 && wi == 2;
        p->ip_off += wo == 2 && wi == 2;
    }
}

/* The columns of this row: the table's, less one after an empty redop field. nccl-tests before
 * 2022-09 printed "" as the op of all_gather, broadcast, alltoall, gather and scatter, and
 * hypercube still does; "%6s" of "" is blanks, so such a row has one field fewer and a number
 * where the op goes. Returns the fields a row needs. */
static size_t row_columns(const reader *r, int *col, bool *empty_redop)
{
    memcpy(col, r->L.col, sizeof r->L.col);
    *empty_redop = false;
    int k = col[C_REDOP];
    if (r->L.csv || k < 0 || (size_t)k >= r->tk.n)
        return r->L.need;
    char c = r->tk.t[k].s[0];
    if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
        return r->L.need;
    *empty_redop = true;
    for (int i = 0; i < C_NCOLS; i++)
        if (col[i] > k)
            col[i]--;
    return (size_t)col[C_TIME] + 1;
}

/* Errors of a row's field k, at its column. */
#define FIELD_FAIL(code, field, k, ...)                                                            \
    do {                                                                                           \
        int pl_, pc_;                                                                              \
        pos(r, f[col[k]].s, &pl_, &pc_);                                                           \
        char b_[64];                                                                               \
        snprintf(b_, sizeof b_, "%.*s", (int)(f[col[k]].n < 60 ? f[col[k]].n : 60), f[col[k]].s);  \
        return dpas__fail_at(r->err, code, field, pl_, pc_, "%s:%d:%d: " __VA_ARGS__);             \
    } while (0)

/* The size of a row: a whole number of bytes up to DPAS_NCCL_MAX_BYTES (0: a row to skip). */
static int row_size(reader *r, const int *col, uint64_t *size)
{
    const char *o = r->origin;
    tok *f = r->tk.t;
    char q[96];
    if (!tok_u64(f[col[C_SIZE]], size))
        FIELD_FAIL(DPAS_EPARSE, "size", C_SIZE, "size must be a whole number of bytes, got %s", o,
                   pl_, pc_, dpas__quote(b_, q, sizeof q));
    if (*size > DPAS_NCCL_MAX_BYTES)
        FIELD_FAIL(DPAS_ERANGE, "size", C_SIZE,
                   "size %s B is above 2^50 B (1 PiB), more than any GPU holds; is the row "
                   "damaged?",
                   o, pl_, pc_, b_);
    return 0;
}

/* The time of column k (C_TIME, or C_TIME_IP: NaN when the row has none), checked against what
 * a clock and a network can produce. Seconds are the printed decimal divided by 10^6 (or 10^3):
 * division by an exact power of ten gives the double nearest the printed value. */
static int row_time(reader *r, const int *col, int k, uint64_t size, double *seconds)
{
    const char *o = r->origin;
    tok *f = r->tk.t;
    char q[96];
    const char *what = k == C_TIME ? "time" : "in-place time";
    *seconds = NAN;
    if (k != C_TIME && (col[k] < 0 || (size_t)col[k] >= r->tk.n))
        return 0;
    double t;
    const char *unit = time_unit_name(r->L.time_div);
    if (!tok_double(f[col[k]], &t, NULL) || !(t > 0))
        FIELD_FAIL(DPAS_EPARSE, "time", k, "%s must be a number > 0 (%s), got %s", o, pl_, pc_,
                   what, unit, dpas__quote(b_, q, sizeof q));
    *seconds = t / r->L.time_div;
    if (*seconds < DPAS_NCCL_MIN_SECONDS)
        FIELD_FAIL(DPAS_ERANGE, "time", k,
                   "%s %s %s is below 1 ns, which no clock measures and no collective takes; "
                   "is the row damaged?",
                   o, pl_, pc_, what, b_, unit);
    if (*seconds > DPAS_NCCL_MAX_SECONDS)
        FIELD_FAIL(DPAS_ERANGE, "time", k,
                   "%s %s %s is above a day for one collective; is the row damaged?", o, pl_, pc_,
                   what, b_, unit);
    double rate = (double)size / *seconds;
    if (rate > DPAS_NCCL_MAX_BYTES_PER_S)
        FIELD_FAIL(DPAS_ERANGE, "time", k,
                   "%llu B in %s %s is %.3g B/s, above 1 PB/s (500 times NVLink 5's 1.8 TB/s): "
                   "no network moves that; is the row damaged?",
                   o, pl_, pc_, (unsigned long long)size, b_, unit, rate);
    return 0;
}

/* algbw is size / time in every collective dpas models: a time in another unit than the header
 * says is 1000 times off, and a program whose algbw is not size / time (hypercube, alltoallv) is
 * not one dpas reads. */
static int row_algbw(reader *r, const int *col, uint64_t size, double seconds, double alg)
{
    const char *o = r->origin;
    tok *f = r->tk.t;
    if (!isfinite(alg) || alg < 1.0)
        return 0;
    double implied = (double)size / seconds / 1e9;
    if (implied <= 10 * alg && implied >= alg / 10)
        return 0;
    const char *unit = time_unit_name(r->L.time_div);
    double x = implied / alg;
    if ((x > 100 && x < 1e4) || (x < 1e-2 && x > 1e-4))
        FIELD_FAIL(DPAS_EPARSE, "time", C_TIME,
                   "the time %s %s and the size %llu B give %.4g GB/s, but the row's algbw is %g "
                   "GB/s: the time is not in %s",
                   o, pl_, pc_, b_, unit, (unsigned long long)size, implied, alg, unit);
    FIELD_FAIL(DPAS_EPARSE, "time", C_TIME,
               "the time %s %s and the size %llu B give %.4g GB/s, but the row's algbw is %g "
               "GB/s: algbw is size / time in every collective dpas models (is this a hypercube "
               "or alltoallv table, or a damaged row?)",
               o, pl_, pc_, b_, unit, (unsigned long long)size, implied, alg);
}

/* Bytes of one element of a type nccl-tests names (its src/common.cu), 0 when unknown. */
static uint64_t type_bytes(tok t)
{
    static const struct {
        const char *name;
        uint64_t bytes;
    } types[] = {{"int8", 1},  {"uint8", 1},    {"f8e4m3", 1}, {"f8e5m2", 1},
                 {"half", 2},  {"bfloat16", 2}, {"int32", 4},  {"uint32", 4},
                 {"float", 4}, {"int64", 8},    {"uint64", 8}, {"double", 8}};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
        if (tok_is(t, types[i].name))
            return types[i].bytes;
    return 0;
}

/* What a row's count column says of the ranks when the count is per rank (see tpriv). */
static void row_count(reader *r, tpriv *p, const int *col, uint64_t size)
{
    const tok *f = r->tk.t;
    size_t nf = r->tk.n;
    uint64_t count, tb;
    if (col[C_COUNT] < 0 || (size_t)col[C_COUNT] >= nf || col[C_TYPE] < 0 ||
        (size_t)col[C_TYPE] >= nf || !tok_u64(f[col[C_COUNT]], &count) || !count ||
        !(tb = type_bytes(f[col[C_TYPE]])))
        return;
    if (count > size / tb || size % (count * tb)) {
        p->cnt_conflict = 1;
        return;
    }
    uint64_t q = size / (count * tb);
    if (q > 1000000000) {
        p->cnt_conflict = 1;
        return;
    }
    if (p->cnt_rows && p->cnt_n != (int64_t)q)
        p->cnt_conflict = 1;
    p->cnt_n = (int64_t)q;
    p->cnt_rows++;
}

/* One data row of the open table (its tokens in r->tk). */
static int data_row(reader *r, int line)
{
    const char *o = r->origin;
    tok *f = r->tk.t;
    size_t nf = r->tk.n;
    char q[96];
    int col[C_NCOLS];
    bool empty_redop;
    size_t need = row_columns(r, col, &empty_redop);
    if (nf < need)
        return dpas__fail_at(r->err, DPAS_EPARSE, "file", line, 1,
                             "%s:%d: a data row of %zu fields, but the column header (line %d) "
                             "puts the time in column %d",
                             o, line, nf, r->header_line, r->L.col[C_TIME] + 1);
    uint64_t size;
    double seconds = NAN, inplace = NAN;
    int rc = row_size(r, col, &size);
    if (!rc && size)
        rc = row_time(r, col, C_TIME, size, &seconds);
    if (!rc && size)
        rc = row_time(r, col, C_TIME_IP, size, &inplace);
    if (rc)
        return rc;
    double alg = NAN, bus = NAN, ea = 0, eb = 0;
    if (col[C_ALGBW] >= 0 && (size_t)col[C_ALGBW] < nf && tok_double(f[col[C_ALGBW]], &alg, &ea) &&
        alg < 0)
        alg = NAN;
    if (col[C_BUSBW] >= 0 && (size_t)col[C_BUSBW] < nf && tok_double(f[col[C_BUSBW]], &bus, &eb) &&
        bus < 0)
        bus = NAN;
    if (size && (rc = row_algbw(r, col, size, seconds, alg)))
        return rc;
    bool wrong = false;
    if (col[C_WRONG] >= 0 && (size_t)col[C_WRONG] < nf) {
        double w;
        /* "#wrong" counts wrong elements ("N/A" without the data check) */
        wrong = tok_double(f[col[C_WRONG]], &w, NULL) && w > 0;
    }
    tok none = {"", 0};
    bool has_type = col[C_TYPE] >= 0 && (size_t)col[C_TYPE] < nf;
    bool has_redop = empty_redop || (col[C_REDOP] >= 0 && (size_t)col[C_REDOP] < nf);
    tok redop = empty_redop ? none : has_redop ? f[col[C_REDOP]] : none;
    bool has_name = col[C_NAME] >= 0 && (size_t)col[C_NAME] < nf && f[col[C_NAME]].n;
    int64_t csv_ranks = 0;
    if (col[C_RANKS] >= 0 && (size_t)col[C_RANKS] < nf) {
        uint64_t v;
        if (!tok_u64(f[col[C_RANKS]], &v) || v < 1 || v > 1000000000)
            FIELD_FAIL(DPAS_EINVAL, "ranks", C_RANKS,
                       "the ranks column must be a whole number from 1 to 10^9, got %s", o, pl_,
                       pc_, dpas__quote(b_, q, sizeof q));
        csv_ranks = (int64_t)v;
    }
    dpas_nccl_test *test = NULL;
    tpriv *p = NULL;
    rc = test_for(r, has_type ? f[col[C_TYPE]] : none, has_type, redop, has_redop,
                  has_name ? f[col[C_NAME]] : none, has_name, csv_ranks, &test, &p);
    if (rc)
        return rc;
    if (size == 0) { /* all_gather and alltoall print these when the per-rank count rounds to 0 */
        if (!test->zero_rows++)
            test->zero_row_line = line;
        return 0;
    }
    if (test->npoints == p->cap) {
        size_t cap = p->cap ? p->cap * 2 : 32;
        dpas_nccl_point *pts = realloc(test->points, cap * sizeof *pts);
        if (!pts)
            return oom(r);
        test->points = pts;
        p->cap = cap;
    }
    test->points[test->npoints++] = (dpas_nccl_point){.bytes = size,
                                                      .seconds = seconds,
                                                      .algbw = alg * 1e9,
                                                      .busbw = bus * 1e9,
                                                      .seconds_inplace = inplace,
                                                      .line = line,
                                                      .wrong = wrong};
    test->wrong_rows += wrong;
    row_facts(r, p, col, line, alg, bus, ea, eb);
    row_count(r, p, col, size);
    return 0;
}
#undef FIELD_FAIL

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
            k = L->col[C_TIME] < 0 ? C_TIME : C_TIME_IP; /* out-of-place, then in-place */
        else if (tok_is(f[i], "algbw"))
            k = C_ALGBW;
        else if (tok_is(f[i], "busbw"))
            k = C_BUSBW;
        else if (tok_is(f[i], "#wrong") || tok_is(f[i], "wrong"))
            k = L->col[C_WRONG] < 0 ? C_WRONG : C_WRONG_IP; /* out-of-place, then in-place */
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
    L->time_div = tok_is(f[0], "bytes") ? 1e3 : 1e6; /* v1 printed milliseconds */
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
    L->time_div = 1e6;
    L->csv = 1;
    return true;
}

/* Close the open table and open a new one with layout L, named by the run's "# Collective test
 * starting" line or, failing it, by a command line or banner above it. A table named as a test
 * dpas does not model is skipped unread. */
static int start_table(reader *r, const layout *L, int line)
{
    int rc = end_table(r, line);
    if (rc)
        return rc;
    r->L = *L;
    r->header_line = line;
    r->table = ++r->tables;
    r->table_first = r->log->ntests;
    if (L->csv)
        return 0;
    if ((rc = rank_facts(r)))
        return rc;
    const char *name = r->pending_name ? r->pending_name : r->cmd_name;
    if (!name)
        return 0;
    if (!(r->t_name = strdup(name)))
        return oom(r);
    r->t_name_from = r->pending_name ? DPAS_NCCL_TEST_NAME : DPAS_NCCL_COMMAND;
    r->t_name_line = r->pending_name ? 0 : r->cmd_line;
    free(r->cmd_name); /* a command names one table */
    r->cmd_name = NULL;
    if (read_program(r->t_name, strlen(r->t_name)) >= 0)
        return 0;
    if ((rc = add_skip(r, r->t_name, DPAS_NCCL_SKIP_UNMODELLED, line, 0, "")))
        return rc;
    r->skipping = r->log->nskipped;
    return 0;
}

/* Remember the first foreign line, whole; a line that names a nccl-tests program (a command
 * line, a banner) names the next table. */
static int foreign(reader *r, int line, const char *s, const char *end)
{
    dpas_nccl_log *g = r->log;
    const char *w = NULL;
    size_t wn = 0;
    int prog = dpas__nccl_command_program(s, end, &w, &wn);
    if (prog != -1) {
        free(r->cmd_name);
        r->cmd_name = NULL;
        if (prog >= 0) {
            if (!(r->cmd_name = malloc(wn + 1)))
                return oom(r);
            memcpy(r->cmd_name, w, wn);
            r->cmd_name[wn] = '\0';
            r->cmd_line = line;
        }
    }
    if (g->foreign_lines++)
        return 0;
    g->first_foreign_line = line;
    size_t n = (size_t)(end - s);
    if (!(g->first_foreign = malloc(n + 1)))
        return oom(r);
    memcpy(g->first_foreign, s, n);
    g->first_foreign[n] = '\0';
    return 0;
}

/* A run of three or more dots, or the ellipsis character, alone or in brackets: "...",
 * "[...]", "(...)", "\xe2\x80\xa6" (U+2026). */
static bool is_dots(tok t)
{
    size_t b = 0, e = t.n;
    if (e >= 2 && ((t.s[0] == '[' && t.s[e - 1] == ']') || (t.s[0] == '(' && t.s[e - 1] == ')')))
        b++, e--;
    if (e - b == 3 && !memcmp(t.s + b, "\xe2\x80\xa6", 3))
        return true;
    if (e - b < 3)
        return false;
    for (size_t i = b; i < e; i++)
        if (t.s[i] != '.')
            return false;
    return true;
}

/* "Rank R Group G Pid P on HOST device D [BUS] NAME", or without Group, or (2017) "Rank R on
 * HOST device D [BUS] NAME": *ours = false when it is not one. */
static int rank_line(reader *r, int line, bool *ours)
{
    const tok *f = r->tk.t;
    size_t nf = r->tk.n, on = 0;
    bool device = false;
    for (size_t i = 2; i < nf; i++) {
        device |= tok_is(f[i], "device");
        if (!on && tok_is(f[i], "on"))
            on = i;
    }
    uint64_t id;
    if (!device || !on || !tok_u64(f[1], &id) || id > (uint64_t)INT64_MAX) {
        *ours = false;
        return 0;
    }
    int rc = end_table(r, line);
    if (rc)
        return rc;
    if (r->facts_done) /* Rank lines after a table: a new run's (so each line is counted once) */
        forget_ranks(r);
    if (r->nranks == r->rank_cap) {
        size_t cap = r->rank_cap ? r->rank_cap * 2 : 16;
        rank_ent *a = realloc(r->ranks, cap * sizeof *a);
        if (!a)
            return oom(r);
        r->ranks = a, r->rank_cap = cap;
    }
    rank_ent *e = &r->ranks[r->nranks];
    e->id = (int64_t)id;
    e->seq = r->rank_seq++;
    e->host = NULL;
    e->device = -1;
    for (size_t i = on + 1; i + 1 < nf; i++) {
        uint64_t d;
        if (tok_is(f[i], "device") && tok_u64(f[i + 1], &d) && d <= (uint64_t)INT64_MAX) {
            e->device = (int64_t)d;
            break;
        }
    }
    if (on + 1 < nf && !tok_is(f[on + 1], "device") && !(e->host = dup_tok(f[on + 1])))
        return oom(r);
    r->nranks++;
    return 0;
}

/* One logical line: *ours = false when it is not one of nccl-tests' lines. */
static int read_line(reader *r, const dpas__lline *l, bool *ours)
{
    dpas_nccl_log *g = r->log;
    r->cur = l;
    int line = l->segs[0].line;
    const char *b = l->text, *e = l->text + l->len;
    int prefix = dpas__nccl_strip_prefixes(&b, e);
    if (l->prefix)
        prefix = l->prefix;
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
        forget_ranks(r); /* a new run: its own Rank lines follow */
    } else if (nf >= 4 && tok_is(f[0], "Rank") && tok_digits(f[1]) &&
               (tok_is(f[2], "Group") || tok_is(f[2], "Pid") || tok_is(f[2], "on"))) {
        rc = rank_line(r, line, ours);
    } else if (r->nranks && !r->facts_done && is_dots(f[0])) {
        if (!r->elided_line) /* "#  ..." among the Rank lines: some were left out */
            r->elided_line = line;
    } else if (nf == 2 && tok_is(f[0], "Using") && tok_is(f[1], "devices")) {
        rc = end_table(r, line);
    } else if (column_header(&r->tk, &L)) {
        rc = start_table(r, &L, line);
    } else if (tok_is(f[0], "(B)") || tok_is(f[0], "out-of-place")) {
        for (size_t i = 0; i < nf && r->table && !r->L.csv; i++) {
            if (tok_is(f[i], "(ms)"))
                r->L.time_div = 1e3;
            else if (tok_is(f[i], "(us)"))
                r->L.time_div = 1e6;
        }
    } else if (nf >= 3 &&
               ((tok_is(f[0], "Out") && tok_is(f[1], "of") && tok_is(f[2], "bounds")) ||
                (tok_is(f[0], "Avg") && tok_is(f[1], "bus") && tok_is(f[2], "bandwidth")))) {
        rc = end_table(r, line);
        reset_run(r); /* the run is over: its name and Rank lines are not the next one's */
    } else if (!hash && tok_digits(f[0]) &&
               ((r->table && !r->L.csv) ||
                (nf >= 2 && tok_digits(f[1]) && !memchr(b, ',', (size_t)(e - b))))) {
        /* a data row: inside a table any line that starts with a whole number (a cut or damaged
         * row is an error, not a foreign line); outside, one that starts with two */
        if (r->skipping)
            g->skipped[r->skipping - 1].rows++;
        else if (r->table && !r->L.csv)
            rc = data_row(r, line);
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
            rc = data_row(r, line);
        else
            *ours = false;
    } else {
        *ours = false;
    }
    if (!rc && *ours && prefix && !g->prefixed_lines++)
        g->prefix = prefix;
    return rc;
}

static int on_line(void *ctx, const dpas__lline *l)
{
    reader *r = ctx;
    bool ours;
    int rc = read_line(r, l, &ours);
    if (!rc && !ours)
        rc = foreign(r, l->segs[0].line, l->text, l->text + l->len);
    return rc;
}

/* Why a file gave no test, as an error. */
static int no_test(reader *r, const char *collective, int want, int64_t ranks)
{
    dpas_nccl_log *g = r->log;
    const char *origin = r->origin;
    dpas_error *err = r->err;
    char q[120], what[96] = "";
    snprintf(what, sizeof what, "%s%stest%s", collective ? dpas_collective_name(want) : "",
             collective ? " " : "", ranks ? " on " : "");
    if (ranks)
        snprintf(what + strlen(what), sizeof what - strlen(what), "%lld ranks", (long long)ranks);
    if (g->unselected)
        return dpas__fail(err, DPAS_EINVAL, collective ? "collective" : "ranks",
                          "%s: no %s; the file has %zu test%s of other collectives or rank "
                          "counts",
                          origin, what, g->unselected, g->unselected == 1 ? "" : "s");
    if (g->nskipped) {
        const dpas_nccl_skipped *s = &g->skipped[0];
        char first[320];
        int n;
        if (s->reason == DPAS_NCCL_SKIP_UNMODELLED)
            n = snprintf(first, sizeof first,
                         "the test %s (line %d) is not a collective dpas models",
                         dpas__quote(s->name, q, sizeof q), s->line);
        else if (s->reason == DPAS_NCCL_SKIP_LOOKS_UNMODELLED)
            n = snprintf(first, sizeof first,
                         "the columns of the table at line %d (%s) fit only %s", s->line, s->why,
                         s->name);
        else
            n = snprintf(first, sizeof first, "the table at line %d has only rows of size 0",
                         s->line);
        dpas__mark_cut(first, sizeof first, n);
        return dpas__fail(err, DPAS_EINVAL, "collective",
                          "%s: no table dpas can read: %s%s; calibrate from an all_reduce, "
                          "all_gather, reduce_scatter, broadcast, reduce, alltoall, gather, "
                          "scatter or sendrecv test",
                          origin, first,
                          g->nskipped == 1   ? ""
                          : g->nskipped == 2 ? " (and 1 other table)"
                                             : " (and other tables)");
    }
    if (g->foreign_lines)
        return dpas__fail(err, DPAS_EPARSE, "file",
                          "%s: no nccl-tests rows found (expected a column header and lines of "
                          "size, count, type, ..., time; a run that failed prints none); %zu "
                          "line%s not nccl-tests output, the first (line %d): %s",
                          origin, g->foreign_lines, g->foreign_lines == 1 ? " is" : "s are",
                          g->first_foreign_line, dpas__quote(g->first_foreign, q, sizeof q));
    return dpas__fail(err, DPAS_EPARSE, "file",
                      "%s: no nccl-tests rows found (expected a column header and lines of size, "
                      "count, type, ..., time)",
                      origin);
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
    dpas_error own = {0}; /* the reader looks at an error's field: it needs one */
    if (!err)
        err = &own;
    r.origin = origin, r.want = want, r.want_ranks = ranks;
    r.log = g, r.err = err;
    int lines = 0;
    int rc = dpas__nccl_lines(text ? text : "", len, origin, on_line, &r, &lines, &g->inline_tags,
                              &g->joined_lines, err);
    if (!rc)
        rc = end_table(&r, lines);
    g->lines = lines;
    free(r.tk.t);
    free(r.priv);
    forget_ranks(&r);
    free(r.ranks);
    free(r.pending_name);
    free(r.cmd_name);
    free(r.t_name);
    if (!rc && g->ntests == 0 && r.unreadable.code && !g->unselected) {
        *err = r.unreadable; /* every test unreadable: the first one's reason, as alone */
        rc = r.unreadable.code;
    } else if (!rc && g->ntests == 0) {
        rc = no_test(&r, collective, want, ranks);
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
    for (size_t i = 0; i < g->nskipped; i++)
        free(g->skipped[i].name), free(g->skipped[i].why);
    free(g->skipped);
    free(g->tests);
    free(g->origin);
    free(g->first_foreign);
    free(g);
}
