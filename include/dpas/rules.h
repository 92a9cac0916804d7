/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/rules.h — the catalogue of Byzantine-robust aggregation rules
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_RULES_H
#define DPAS_RULES_H

#include "dpas/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- robust aggregation rules -------------------------------------------------------------- */

/* Every resilience condition in the catalogue has the form n >= a*f + b (n replicas, f of them
 * Byzantine); "mean" tolerates none (a = 0: only f = 0). Where libraries disagree (Krum:
 * n >= 2f + 3 in Blanchard et al. and Garfield, 2f < n in ByzFL), each convention is a row of
 * its own and one is the rule's default. */
/* The conventions of the conditions, by name: the one name table (X-macro, as DPAS_FORMAT_MAP) of
 * dpas_rule.convention, read by the catalogue and the key table (the CLI's help, OpenAPI's enum). */
#define DPAS_RULE_CONVENTION_MAP(X)                                                                \
    X(STANDARD, "standard")   /* the libraries agree: the rule's one row */                        \
    X(BLANCHARD, "blanchard") /* Blanchard et al. 2017 and Garfield: Krum n >= 2f + 3 (default) */ \
    X(BYZFL, "byzfl")         /* ByzFL: Krum 2f < n */

/* The rules, by id: code dispatches on the id and on capability flags, never on a name. */
typedef enum dpas_rule_id {
    DPAS_RULE_MEAN = 0,
    DPAS_RULE_MEDIAN,
    DPAS_RULE_TRIMMED_MEAN,
    DPAS_RULE_MEAMED,
    DPAS_RULE_SIGN_MAJORITY,
    DPAS_RULE_KRUM,
    DPAS_RULE_MULTI_KRUM,
    DPAS_RULE_BULYAN,
    DPAS_RULE_BRUTE,
    DPAS_RULE_GEOMETRIC_MEDIAN,
    DPAS_RULE_CENTERED_CLIPPING,
    DPAS_RULE_NNM,
    DPAS_RULE_MONNA,
    DPAS_RULE_CAF,
    DPAS_RULE_SMEA,
    DPAS_RULE_BUCKETING,
    DPAS_RULE_CLIPPING,
    DPAS_RULE_ARC,
    DPAS_RULE_COUNT
} dpas_rule_id;

/* Capability flags of a rule (dpas_rule.caps). */
#define DPAS_RULE_CAP_SUMS 1u            /* reduces to a sum: an AllReduce realises it */
#define DPAS_RULE_CAP_COORDINATEWISE 2u  /* works coordinate by coordinate (shardable) */
#define DPAS_RULE_CAP_DISTANCES 4u       /* needs pairwise distances or norms of full gradients */
#define DPAS_RULE_CAP_ITERATIVE 8u       /* iterates over the gradients (T or L rounds) */
#define DPAS_RULE_CAP_SELECTS 16u        /* selects whole gradients (Krum family, MDA) */
#define DPAS_RULE_CAP_PREAGGREGATION 32u /* transforms the gradients for another rule (NNM) */
#define DPAS_RULE_CAP_NORMS                                                                        \
    64u /* needs only n scalars of full gradients (their norms, or their
                                 * distances to one of them), not all n(n-1)/2 distances */

typedef struct dpas_rule {
    dpas_rule_id id;
    const char *name;       /* the CLI name: "krum", "trimmed_mean", ... */
    const char *display;    /* "Krum" */
    const char *convention; /* "blanchard", "byzfl", or "standard" when all agree */
    int is_default;         /* the convention used when none is named */
    int a, b;               /* condition n >= a*f + b; a == 0: tolerates no Byzantine replica */
    const char *condition;  /* "n >= 2f + 3" */
    const char *compute;    /* "O(n^2 d)" */
    unsigned caps;          /* DPAS_RULE_CAP_* */
    int neighbour_drop;     /* Krum family: scores use k = n - f - neighbour_drop neighbours */
    const char *neighbours; /* Krum's neighbour count under this convention, or NULL */
    const char *source;
    const char *notes;
} dpas_rule;

DPAS_API size_t dpas_rule_count(void);
DPAS_API const dpas_rule *dpas_rule_at(size_t i);
/* Find a rule by name (aliases: "mda" for brute, "geomed" for geometric_median, "cc" for
 * centered_clipping, "signsgd" for sign_majority) under a convention (NULL: its default).
 * DPAS_ENOENT with the known names or conventions. */
DPAS_API int dpas_rule_find(const char *name, const char *convention, const dpas_rule **out,
                            dpas_error *err);
/* A rule as a command line names it: under `convention` where the rule has that convention, else
 * under its default (so "byzfl" picks ByzFL's Krum and leaves the median alone). A convention no
 * rule has is DPAS_ENOENT, as is an unknown rule. */
DPAS_API int dpas_rule_select(const char *name, const char *convention, const dpas_rule **out,
                              dpas_error *err);
/* The largest f the rule tolerates with n replicas; -1 when even f = 0 is not enough
 * (Krum needs n >= 3). n < 1 is DPAS_EINVAL. */
DPAS_API int dpas_rule_max_f(const dpas_rule *rule, int64_t n, int64_t *max_f, dpas_error *err);
/* The smallest n for f Byzantine replicas; -1 when no n suffices (mean with f > 0).
 * f < 0 is DPAS_EINVAL; overflow DPAS_ERANGE. */
DPAS_API int dpas_rule_min_n(const dpas_rule *rule, int64_t f, int64_t *min_n, dpas_error *err);
/* One row of the catalogue as asked for: max_f at n and min_n for f (-1: none, or not asked). */
typedef struct dpas_rule_row {
    const dpas_rule *rule;
    int64_t max_f;
    int64_t min_n;
} dpas_rule_row;

/* The catalogue's rows: n > 0 fills max_f, f >= 0 min_n (-1: not asked); convention: NULL for
 * each rule's default row, "all" for every row, or a convention name that replaces the default
 * where a rule has it. rows holds dpas_rule_count() entries. */
DPAS_API int dpas_rules_list(int64_t n, int64_t f, const char *convention, dpas_rule_row *rows,
                             size_t *nrows, dpas_error *err);

/* Does the rule tolerate f Byzantine replicas among n? */
DPAS_API int dpas_rule_tolerates(const dpas_rule *rule, int64_t n, int64_t f);

#ifdef __cplusplus
}
#endif
#endif
