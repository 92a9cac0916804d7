/* SPDX-License-Identifier: Apache-2.0 */
/* The catalogue of Byzantine-robust aggregation rules: resilience conditions n >= a*f + b with
 * their sources, where libraries disagree one row per convention, and compute estimates. */
#include "../internal.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Capability shorthands for the table below. */
#define SUMS DPAS_RULE_CAP_SUMS
#define CW DPAS_RULE_CAP_COORDINATEWISE
#define DIST DPAS_RULE_CAP_DISTANCES
#define ITER DPAS_RULE_CAP_ITERATIVE
#define SEL DPAS_RULE_CAP_SELECTS
#define PRE DPAS_RULE_CAP_PREAGGREGATION
#define NORMS DPAS_RULE_CAP_NORMS

static const dpas_rule rules[] = {
    {DPAS_RULE_MEAN, "mean", "Mean (plain AllReduce)", dpas__conv_STANDARD, 1, 0, 1,
     "none: f = 0 only", "O(nd)", SUMS | CW, 0, NULL,
     "Blanchard et al., NeurIPS 2017 (no linear combination tolerates one Byzantine worker)",
     "one bad replica moves the mean anywhere"},
    {DPAS_RULE_MEDIAN, "median", "Coordinate-wise median", dpas__conv_STANDARD, 1, 2, 1, "n > 2f",
     "O(nd) selection", CW, 0, NULL, "Yin et al., ICML 2018; breakdown point 1/2",
     "even n: the mean of the two middle values"},
    {DPAS_RULE_TRIMMED_MEAN, "trimmed_mean", "Coordinate-wise trimmed mean", dpas__conv_STANDARD, 1,
     2, 1, "n > 2f", "O(nd log n)", CW, 0, NULL, "Yin et al., ICML 2018",
     "drops the f largest and f smallest values of each coordinate"},
    {DPAS_RULE_MEAMED, "meamed", "Mean around the median (Meamed)", dpas__conv_STANDARD, 1, 2, 1,
     "n > 2f", "O(nd log n)", CW, 0, NULL, "Xie et al., 2018 (Phocas, Meamed); ByzFL",
     "mean of the n - f values closest to the median"},
    {DPAS_RULE_SIGN_MAJORITY, "sign_majority", "Sign majority vote (signSGD)", dpas__conv_STANDARD,
     1, 2, 1, "n > 2f", "O(nd)", SUMS | CW, 0, NULL,
     "Bernstein et al., signSGD with Majority Vote, ICLR 2019",
     "robust while fewer than half the workers are adversarial; 1 bit per coordinate"},
    {DPAS_RULE_KRUM, "krum", "Krum", dpas__conv_BLANCHARD, 1, 2, 3, "n >= 2f + 3", "O(n^2 d)",
     DIST | SEL, 2, "n - f - 2", "Blanchard et al., NeurIPS 2017; Garfield; calicarpa/krum",
     "default: the bound of the paper that defines Krum"},
    {DPAS_RULE_KRUM, "krum", "Krum", dpas__conv_BYZFL, 0, 2, 1, "2f < n", "O(n^2 d)", DIST | SEL, 1,
     "n - f - 1", "ByzFL", "ByzFL checks only 2f < n and scores with n - f - 1 neighbours"},
    {DPAS_RULE_MULTI_KRUM, "multi_krum", "Multi-Krum", dpas__conv_BLANCHARD, 1, 2, 3, "n >= 2f + 3",
     "O(n^2 d)", DIST | SEL, 2, "n - f - 2",
     "Blanchard et al., NeurIPS 2017; El Mhamdi et al., ICML 2018; Garfield",
     "averages the m best-scored gradients"},
    {DPAS_RULE_MULTI_KRUM, "multi_krum", "Multi-Krum", dpas__conv_BYZFL, 0, 2, 1, "2f < n",
     "O(n^2 d)", DIST | SEL, 1, "n - f - 1", "ByzFL", "ByzFL's bound and neighbour count"},
    {DPAS_RULE_BULYAN, "bulyan", "Bulyan", dpas__conv_STANDARD, 1, 4, 3, "n >= 4f + 3", "O(n^2 d)",
     DIST | SEL, 2, NULL, "El Mhamdi et al., ICML 2018; Garfield; calicarpa/krum; AggregaThor",
     "Krum selection of n - 2f, then a trimmed mean of the 2f-trimmed selection "
     "(a wrong check of this bound was flwrlabs/flower PR #1891)"},
    {DPAS_RULE_BRUTE, "brute", "Brute / minimum diameter averaging (MDA)", dpas__conv_STANDARD, 1,
     2, 1, "n >= 2f + 1", "exponential in n", DIST | SEL, 0, NULL, "Garfield (MDA); ByzFL (2f < n)",
     "averages the n - f gradients of smallest diameter"},
    {DPAS_RULE_GEOMETRIC_MEDIAN, "geometric_median", "Geometric median (RFA, Weiszfeld)",
     dpas__conv_STANDARD, 1, 2, 1, "2f < n", "O(T n d)", DIST | ITER, 0, NULL,
     "Pillutla et al., Robust Aggregation for Federated Learning, 2019",
     "T Weiszfeld iterations, each needing the n distances to the iterate"},
    {DPAS_RULE_CENTERED_CLIPPING, "centered_clipping", "Centered clipping", dpas__conv_STANDARD, 1,
     2, 1, "2f < n (theory needs small f/n)", "O(L n d)", DIST | ITER, 0, NULL,
     "Karimireddy et al., ICML 2021",
     "L clipping iterations on full-gradient norms; BTARD clips per shard instead"},
    /* The bound is the paper's (its robustness results assume n > 2f); ByzFL's NNM checks only
     * f < n (byzfl/aggregators/preaggregators.py: "f must be smaller than len(vectors)"). */
    {DPAS_RULE_NNM, "nnm", "Nearest neighbour mixing (pre-aggregation)", dpas__conv_STANDARD, 1, 2,
     1, "2f < n", "O(n^2 d)", DIST | PRE, 0, NULL,
     "Allouah et al., AISTATS 2023 (n > 2f); ByzFL's NNM checks only f < n",
     "replaces each gradient by the mean of its n - f nearest (itself included) before another "
     "rule, whose own condition applies too"},
    {DPAS_RULE_MONNA, "monna", "Mean of nearest neighbours (MoNNA)", dpas__conv_STANDARD, 1, 2, 1,
     "2f < n", "O(nd)", DIST | SEL | NORMS, 0, NULL,
     "Farhadkhani et al., Robust collaborative learning with linear gradient overhead, ICML "
     "2023; ByzFL",
     "the mean of the n - f gradients nearest to gradient idx (a trusted one, 0 by default), "
     "itself included: n distances"},
    {DPAS_RULE_CAF, "caf", "Covariance-bound agnostic filter (CAF)", dpas__conv_STANDARD, 1, 2, 1,
     "2f < n", "O(n^2 d + f n^3)", DIST, 0, NULL,
     "Allouah, Guerraoui and Stephan, Towards Trustworthy Federated Learning with Untrusted "
     "Participants, ICML 2025; ByzFL",
     "filters weights along the top eigenvector of the weighted covariance until they sum to "
     "n - 2f; the weighted mean of least top eigenvalue (from the n x n distances, exactly)"},
    {DPAS_RULE_SMEA, "smea", "Smallest maximum eigenvalue averaging (SMEA)", dpas__conv_STANDARD, 1,
     2, 1, "2f < n", "O(n^2 d + C(n, f) n^3)", DIST | SEL, 0, NULL,
     "Allouah et al., On the Privacy-Robustness-Utility Trilemma in Distributed Learning, ICML "
     "2023; ByzFL",
     "the mean of the n - f gradients whose covariance has the least top eigenvalue; examines "
     "every subset"},
    /* The pre-aggregations below use f only through the rule that follows them (bucketing,
     * clipping) or assume a Byzantine minority (ARC's analysis); ByzFL checks s >= 1, c >= 0
     * and, for ARC, f <= n. */
    {DPAS_RULE_BUCKETING, "bucketing", "Bucketing (pre-aggregation)", dpas__conv_STANDARD, 1, 1, 1,
     "f < n", "O(nd)", CW | PRE, 0, NULL,
     "Karimireddy, He and Jaggi, Byzantine-Robust Learning on Heterogeneous Datasets via "
     "Bucketing, ICLR 2022; ByzFL",
     "the mean of each of ceil(n/s) buckets of s gradients in a seeded random order; the rule "
     "after it runs on the buckets, with f of them Byzantine at most"},
    {DPAS_RULE_CLIPPING, "clipping", "Static clipping (pre-aggregation)", dpas__conv_STANDARD, 1, 1,
     1, "f < n", "O(nd)", DIST | NORMS | PRE, 0, NULL, "ByzFL's Clipping",
     "scales each gradient whose norm exceeds c down to norm c (c = 2 by default)"},
    {DPAS_RULE_ARC, "arc", "Adaptive robust clipping (ARC, pre-aggregation)", dpas__conv_STANDARD,
     1, 2, 1, "2f < n", "O(nd)", DIST | NORMS | PRE, 0, NULL,
     "Allouah et al., The Vital Role of Gradient Clipping in Byzantine-Resilient Distributed "
     "Learning, 2024 (arXiv:2405.14432); ByzFL checks only f <= n",
     "clips the floor(2 f (n - f) / n) largest gradients to the norm of the next largest"},
};
#define NRULES (sizeof rules / sizeof rules[0])

size_t dpas_rule_count(void) { return NRULES; }
const dpas_rule *dpas_rule_at(size_t i) { return i < NRULES ? &rules[i] : NULL; }

static const struct {
    const char *alias, *name;
} aliases[] = {
    {"mda", "brute"},
    {"geomed", "geometric_median"},
    {"rfa", "geometric_median"},
    {"cc", "centered_clipping"},
    {"signsgd", "sign_majority"},
    {"trmean", "trimmed_mean"},
    {"multikrum", "multi_krum"},
};

int dpas_rule_find(const char *name, const char *convention, const dpas_rule **out, dpas_error *err)
{
    char q[96];
    if (!name)
        name = "";
    for (size_t i = 0; i < sizeof aliases / sizeof aliases[0]; i++)
        if (!dpas__strcasecmp(name, aliases[i].alias))
            name = aliases[i].name;
    bool known = false;
    for (size_t i = 0; i < NRULES; i++) {
        if (dpas__strcasecmp(name, rules[i].name))
            continue;
        known = true;
        if (convention ? !dpas__strcasecmp(convention, rules[i].convention) : rules[i].is_default) {
            *out = &rules[i];
            return 0;
        }
    }
    if (known) {
        char list[200] = "";
        for (size_t i = 0; i < NRULES; i++)
            if (!dpas__strcasecmp(name, rules[i].name)) {
                size_t l = strlen(list);
                snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", rules[i].convention);
            }
        return dpas__fail(err, DPAS_ENOENT, "convention",
                          "rule %s has no convention %s; it has: %s", name,
                          dpas__quote(convention, q, sizeof q), list);
    }
    char list[400] = "";
    for (size_t i = 0; i < NRULES; i++) {
        if (i && !strcmp(rules[i].name, rules[i - 1].name))
            continue;
        size_t l = strlen(list);
        snprintf(list + l, sizeof list - l, "%s%s", l ? ", " : "", rules[i].name);
    }
    return dpas__fail(err, DPAS_ENOENT, "rule", "unknown rule %s; expected one of %s",
                      dpas__quote(name, q, sizeof q), list);
}

bool dpas__convention_known(const char *convention)
{
    for (size_t i = 0; convention && i < NRULES; i++)
        if (!dpas__strcasecmp(convention, rules[i].convention))
            return true;
    return false;
}

int dpas__convention_check(const char *convention, bool all, dpas_error *err)
{
    char q[96];
    if (!convention || dpas__convention_known(convention) || (all && !strcmp(convention, "all")))
        return 0;
    return dpas__fail(err, DPAS_ENOENT, "convention",
                      "unknown convention %s; expected standard, blanchard%s byzfl%s",
                      dpas__quote(convention, q, sizeof q), all ? "," : " or",
                      all ? " or all" : "");
}

int dpas_rule_select(const char *name, const char *convention, const dpas_rule **out,
                     dpas_error *err)
{
    int rc;
    if ((rc = dpas__convention_check(convention, false, err)))
        return rc;
    /* the convention where the rule has one by that name, else the rule's default */
    if (convention && !dpas_rule_find(name, convention, out, NULL))
        return 0;
    return dpas_rule_find(name, NULL, out, err);
}

int dpas_rule_max_f(const dpas_rule *r, int64_t n, int64_t *max_f, dpas_error *err)
{
    if (n < 1)
        return dpas__fail(err, DPAS_EINVAL, "n", "n must be >= 1, got %lld", (long long)n);
    if (n < r->b)
        *max_f = -1;
    else if (r->a == 0)
        *max_f = 0;
    else
        *max_f = (n - r->b) / r->a;
    return 0;
}

int dpas_rule_min_n(const dpas_rule *r, int64_t f, int64_t *min_n, dpas_error *err)
{
    if (f < 0)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    if (r->a == 0) {
        *min_n = f == 0 ? r->b : -1;
        return 0;
    }
    int64_t v;
    if (__builtin_mul_overflow(f, (int64_t)r->a, &v) ||
        __builtin_add_overflow(v, (int64_t)r->b, &v))
        return dpas__fail(err, DPAS_ERANGE, "f", "f = %lld is too large", (long long)f);
    *min_n = v;
    return 0;
}

int dpas_rule_tolerates(const dpas_rule *r, int64_t n, int64_t f)
{
    int64_t m = -1;
    return f >= 0 && !dpas_rule_max_f(r, n, &m, NULL) && m >= f;
}

double dpas_rule_flops(const dpas_rule *r, int64_t n, uint64_t d, int64_t iterations)
{
    double N = (double)n, D = (double)d, T = iterations > 0 ? (double)iterations : 1.0;
    double lg = 1;
    while ((double)(1ll << (int)lg) < N && lg < 62)
        lg++;
    switch (r->id) {
    case DPAS_RULE_MEAN:
    case DPAS_RULE_SIGN_MAJORITY: return N * D;
    case DPAS_RULE_MEDIAN: return 2 * N * D; /* selection: about two passes over the n values */
    case DPAS_RULE_TRIMMED_MEAN:
    case DPAS_RULE_MEAMED: return N * D * lg; /* sort per coordinate */
    case DPAS_RULE_KRUM:
    case DPAS_RULE_MULTI_KRUM:
    case DPAS_RULE_NNM:
    case DPAS_RULE_BRUTE:
        return 3 * N * (N - 1) / 2 * D; /* pairwise squared distances: sub, mul, add */
    case DPAS_RULE_BULYAN: return 3 * N * (N - 1) / 2 * D + N * D * lg;
    case DPAS_RULE_GEOMETRIC_MEDIAN:
    case DPAS_RULE_CENTERED_CLIPPING:
        return T * 4 * N * D; /* per iteration: n distances to the iterate and a weighted sum */
    case DPAS_RULE_MONNA: return 3 * N * D + N * D; /* n distances to one row, a mean */
    case DPAS_RULE_CAF:
    case DPAS_RULE_SMEA: return 3 * N * (N - 1) / 2 * D + N * D; /* distances, a mean */
    case DPAS_RULE_BUCKETING: return N * D;                      /* the buckets' means */
    case DPAS_RULE_CLIPPING:
    case DPAS_RULE_ARC: return 3 * N * D; /* the norms, the scaling */
    case DPAS_RULE_COUNT: break;
    }
    return N * D;
}

double dpas_rule_passes(const dpas_rule *r, int64_t n, int64_t iterations)
{
    double T = iterations > 0 ? (double)iterations : 1.0, N = n > 0 ? (double)n : 1.0;
    switch (r->id) {
    case DPAS_RULE_MEAN:
    case DPAS_RULE_SIGN_MAJORITY:
    case DPAS_RULE_MEDIAN: /* a sorting network per column, in registers */
    case DPAS_RULE_TRIMMED_MEAN: /* likewise: one read of each coordinate's n values */ return 1;
    case DPAS_RULE_MEAMED: return 2; /* the median, then the n - f values nearest it */
    case DPAS_RULE_KRUM:
    case DPAS_RULE_BRUTE: return 1 + 1 / N; /* the distances, then the one chosen row */
    case DPAS_RULE_MULTI_KRUM:              /* the distances, then the mean of up to n rows */
    case DPAS_RULE_BULYAN:                  /* ... then the trimmed mean of the selection */
    case DPAS_RULE_MONNA:                   /* n distances to one row, the mean of n - f */
    case DPAS_RULE_CAF:                     /* the distances, the weighted mean */
    case DPAS_RULE_SMEA: return 2;          /* the distances, the chosen subset's mean */
    case DPAS_RULE_GEOMETRIC_MEDIAN:
    case DPAS_RULE_CENTERED_CLIPPING: return 2 * T; /* distances to the iterate, a weighted sum */
    case DPAS_RULE_NNM:      /* distances, the mixing (pieces in cache), n rows written */
    case DPAS_RULE_CLIPPING: /* the norms, the scaling read, n rows written */
    case DPAS_RULE_ARC:
    case DPAS_RULE_BUCKETING: return 3; /* dpas_preaggregate: two reads and n rows written */
    case DPAS_RULE_COUNT: break;
    }
    return 1;
}

double dpas_roofline_time(double flops, double bytes, double peak, double bandwidth,
                          const char **bound)
{
    double tc = peak > 0 ? flops / peak : NAN, tm = bandwidth > 0 ? bytes / bandwidth : NAN;
    const char *b = NULL;
    double t = NAN;
    if (!isnan(tm) && !(tc > tm))
        t = tm, b = "memory";
    else if (!isnan(tc))
        t = tc, b = "compute";
    if (bound)
        *bound = b;
    return t;
}

/* The named convention where the rule has it, else the rule's default; "all": every row. */
static bool rule_shown(size_t i, const char *convention)
{
    const dpas_rule *r = &rules[i];
    if (convention && !strcmp(convention, "all"))
        return true;
    if (!convention)
        return r->is_default;
    bool has = false;
    for (size_t j = 0; j < NRULES; j++)
        if (rules[j].id == r->id && !dpas__strcasecmp(rules[j].convention, convention))
            has = true;
    return has ? !dpas__strcasecmp(r->convention, convention) : r->is_default;
}

int dpas_rules_list(int64_t n, int64_t f, const char *convention, dpas_rule_row *rows,
                    size_t *nrows, dpas_error *err)
{
    *nrows = 0;
    int rc;
    if ((rc = dpas__convention_check(convention, true, err)))
        return rc;
    if (n == 0 || n < -1)
        return dpas__fail(err, DPAS_EINVAL, "n", "n must be >= 1, got %lld", (long long)n);
    if (f < -1)
        return dpas__fail(err, DPAS_EINVAL, "f", "f must be >= 0, got %lld", (long long)f);
    for (size_t i = 0; i < NRULES; i++) {
        if (!rule_shown(i, convention))
            continue;
        dpas_rule_row *r = &rows[(*nrows)++];
        r->rule = &rules[i];
        r->max_f = r->min_n = -1;
        if (n > 0)
            dpas_rule_max_f(r->rule, n, &r->max_f, NULL);
        if (f >= 0 && (rc = dpas_rule_min_n(r->rule, f, &r->min_n, err)))
            return rc;
    }
    return 0;
}
