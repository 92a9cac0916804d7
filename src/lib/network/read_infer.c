/* SPDX-License-Identifier: Apache-2.0 */
/* Which of nccl-tests' programs can have printed a table. Facts from nccl-tests' src/<name>.cu
 * (NVIDIA/nccl-tests, 2017-2025): each program calls TimeTest with its op name and root, and its
 * GetBw sets busbw = algbw x a factor of the rank count n:
 *
 *   program         redop column         root   busbw/algbw
 *   all_reduce      the op (sum, ...)    -1     2(n-1)/n
 *   reduce_scatter  the op               -1     (n-1)/n
 *   reduce          the op               >= 0   1
 *   sendrecv        the op               -1     1
 *   all_gather      none (before 2022-09: empty)  -1    (n-1)/n
 *   alltoall(v)     none (before 2022-09: empty)  -1    (n-1)/n
 *   gather, scatter none (before 2022-09: empty)  >= 0  (n-1)/n
 *   broadcast       none (before 2022-09: empty)  >= 0  1
 *   hypercube       empty                -1     1
 *
 * and one more mark: since 2022-09 (the release that prints "none"), alltoall skips the data
 * check of its in-place run, so its in-place #wrong is N/A where the out-of-place one is a number
 * (sendrecv did the same in 2.17 and earlier); all_reduce, all_gather, reduce_scatter, broadcast and
 * reduce always check both runs when the check is on. */
#include "nccl.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum { F_AR, F_AG, F_ONE };

/* The programs' names: the collectives' (DPAS_COLLECTIVE_MAP), then those dpas does not model. */
#define PROGRAM_NAME(id, name) [DPAS__P_##id] = name,
static const char *const program_names[DPAS__P_COUNT] = {
    DPAS_COLLECTIVE_MAP(PROGRAM_NAME)[DPAS__P_HYPERCUBE] = "hypercube"};
#undef PROGRAM_NAME
/* alltoallv prints alltoall's columns: its name is read as alltoall's program */
#define ALLTOALLV "alltoallv"

static const struct {
    int redop; /* DPAS__REDOP_NONE or DPAS__REDOP_OP */
    int root;  /* DPAS__ROOT_NONE or DPAS__ROOT_SET */
    int factor;
} programs[DPAS__P_COUNT] = {
    [DPAS__P_ALL_REDUCE] = {DPAS__REDOP_OP, DPAS__ROOT_NONE, F_AR},
    [DPAS__P_ALL_GATHER] = {DPAS__REDOP_NONE, DPAS__ROOT_NONE, F_AG},
    [DPAS__P_REDUCE_SCATTER] = {DPAS__REDOP_OP, DPAS__ROOT_NONE, F_AG},
    [DPAS__P_BROADCAST] = {DPAS__REDOP_NONE, DPAS__ROOT_SET, F_ONE},
    [DPAS__P_REDUCE] = {DPAS__REDOP_OP, DPAS__ROOT_SET, F_ONE},
    [DPAS__P_ALLTOALL] = {DPAS__REDOP_NONE, DPAS__ROOT_NONE, F_AG},
    [DPAS__P_GATHER] = {DPAS__REDOP_NONE, DPAS__ROOT_SET, F_AG},
    [DPAS__P_SCATTER] = {DPAS__REDOP_NONE, DPAS__ROOT_SET, F_AG},
    [DPAS__P_SENDRECV] = {DPAS__REDOP_OP, DPAS__ROOT_NONE, F_ONE},
    [DPAS__P_HYPERCUBE] = {DPAS__REDOP_EMPTY, DPAS__ROOT_NONE, F_ONE},
};

/* ---- names ---------------------------------------------------------------------------------- */

/* Is t (lower case, without '_' and '-') the program's name without its '_'? */
static bool compact_is(const char *t, const char *name)
{
    for (; *name; name++)
        if (*name != '_' && *name != *t++)
            return false;
    return *t == '\0';
}

int dpas__nccl_program_of(const char *text, size_t len)
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
    for (int p = 0; p < DPAS__P_COUNT; p++)
        if (compact_is(t, program_names[p]))
            return p;
    return compact_is(t, ALLTOALLV) ? DPAS__P_ALLTOALL : -1;
}

static bool word_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

int dpas__nccl_command_program(const char *s, const char *end, const char **word, size_t *wlen)
{
    int found = -1;
    while (s < end) {
        while (s < end && !word_char(*s))
            s++;
        const char *w = s;
        while (s < end && word_char(*s))
            s++;
        size_t n = (size_t)(s - w);
        size_t stem = n > 9 && !memcmp(s - 9, "_perf_mpi", 9) ? n - 9
                      : n > 5 && !memcmp(s - 5, "_perf", 5)   ? n - 5
                                                              : 0;
        if (!stem)
            continue;
        for (int i = 0; i <= DPAS__P_COUNT; i++) { /* every program, then alltoallv */
            const char *name = i < DPAS__P_COUNT ? program_names[i] : ALLTOALLV;
            if (strlen(name) != stem || memcmp(w, name, stem))
                continue;
            int p = dpas__nccl_program_of(w, stem);
            if (found >= 0 && p != found)
                return -2;
            found = p;
            *word = w, *wlen = n;
        }
    }
    return found;
}

/* ---- the columns ---------------------------------------------------------------------------- */

static double factor_of(int f, double n)
{
    return f == F_ONE ? 1.0 : f == F_AR ? 2 * (n - 1) / n : (n - 1) / n;
}

/* Whether the factor lies in [lo, hi] at n ranks, or (n = 0) at some n >= 1. */
static bool factor_fits(int f, double lo, double hi, int64_t n)
{
    double eps = 1e-12;
    if (n > 0) {
        double v = factor_of(f, (double)n);
        return v >= lo - eps && v <= hi + eps;
    }
    if (f == F_ONE)
        return lo <= 1 + eps && hi >= 1 - eps;
    double top = f == F_AR ? 2.0 : 1.0; /* f(n) = top (1 - 1/n), rising from 0 at n = 1 */
    if (lo >= top)
        return false;
    double m = lo <= 0 ? 1.0 : ceil(top / (top - lo) - 1e-9);
    if (m < 1)
        m = 1;
    if (m > 1e12)
        return hi >= top * (1 - 1e-12);
    return factor_of(f, m) <= hi + eps;
}

unsigned dpas__nccl_candidates(const dpas__nccl_obs *o)
{
    unsigned set = 0;
    for (int p = 0; p < DPAS__P_COUNT; p++) {
        int r = programs[p].redop;
        bool redop_ok = o->redop == DPAS__REDOP_UNKNOWN ||
                        (o->redop == DPAS__REDOP_OP && r == DPAS__REDOP_OP) ||
                        (o->redop == DPAS__REDOP_NONE && r == DPAS__REDOP_NONE) ||
                        (o->redop == DPAS__REDOP_EMPTY && r != DPAS__REDOP_OP);
        bool root_ok = o->root == DPAS__ROOT_UNKNOWN || o->root == programs[p].root;
        bool factor_ok = !o->ratio || factor_fits(programs[p].factor, o->rlo, o->rhi, o->n);
        if (redop_ok && root_ok && factor_ok)
            set |= 1u << p;
    }
    if (o->inplace_check == DPAS__IP_UNCHECKED) /* none of the five that always check both */
        set &= ~((1u << DPAS__P_ALLTOALL) - 1u);
    else if (o->inplace_check == DPAS__IP_CHECKED && o->redop == DPAS__REDOP_NONE)
        set &= ~(1u << DPAS__P_ALLTOALL);
    return set;
}

void dpas__nccl_describe_set(unsigned set, char *buf, size_t cap)
{
    size_t len = 0;
    int count = 0, total = 0;
    for (int p = 0; p < DPAS__P_COUNT; p++)
        total += (set >> p) & 1;
    buf[0] = '\0';
    for (int p = 0; p < DPAS__P_COUNT && len < cap; p++) {
        if (!((set >> p) & 1))
            continue;
        count++;
        const char *sep = count == 1 ? "" : count == total ? " or " : ", ";
        int w = snprintf(buf + len, cap - len, "%s%s", sep, program_names[p]);
        if (w < 0 || (size_t)w >= cap - len) {
            dpas__mark_cut(buf, cap, (int)cap);
            return;
        }
        len += (size_t)w;
    }
}
