/* SPDX-License-Identifier: Apache-2.0 */
/* Small helpers over cmocka for dpas's unit tests. Every expected value in the tests is written
 * by hand (from the seed, the registry facts or arithmetic shown beside it), never computed by
 * the code under test. */
#ifndef DPAS_TEST_CHECK_H
#define DPAS_TEST_CHECK_H

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "dpas/dpas.h"

/* err.message must contain needle. */
#define assert_msg_contains(err, needle)                                                       \
    do {                                                                                       \
        if (!strstr((err).message, (needle)))                                                  \
            fail_msg("message \"%s\" lacks \"%s\"", (err).message, (needle));                  \
    } while (0)

/* Doubles: equal to the last bit, or within a relative tolerance; a failure prints both values
 * with every digit. */
#define assert_double_exact(got, want)                                                         \
    do {                                                                                       \
        double g_ = (got), w_ = (want);                                                        \
        if (!(g_ == w_))                                                                       \
            fail_msg("%s = %.17g, expected %s = %.17g", #got, g_, #want, w_);                  \
    } while (0)

#define assert_double_near(got, want, rel)                                                     \
    do {                                                                                       \
        double g_ = (got), w_ = (want);                                                        \
        if (!(fabs(g_ - w_) <= (rel) * fabs(w_)))                                              \
            fail_msg("%s = %.17g, expected %s = %.17g (relative tolerance %g)", #got, g_,      \
                     #want, w_, (double)(rel));                                                \
    } while (0)

#define assert_rational(r, n, d)                                                               \
    do {                                                                                       \
        assert_int_equal((r).num, (n));                                                        \
        assert_int_equal((r).den, (d));                                                        \
    } while (0)

/* Scenarios.ReferenceJobAttackSurface as pinned in shared/reference/registry.md, by hand. */
static inline dpas_scenario reference_by_hand(void)
{
    dpas_scenario s = {0};
    s.workload = "Models.Language.GPT3";
    s.parameters = 175000000000ull;
    s.fleet = "Systems.Clusters.Training_1K";
    s.nodes = 128;
    s.accelerators_per_node = 8;
    s.dp_degree = 128;
    s.gradient_bytes_per_param = (dpas_rational){2, 1};
    s.checkpoint_bytes_per_param = (dpas_rational){14, 1};
    s.weight_bytes_per_param = (dpas_rational){2, 1};
    return s;
}

/* The built-in registry as a cmocka group fixture: REGISTRY_FIXTURE defines `reg`,
 * registry_setup and registry_teardown in the test file that uses it. */
#define REGISTRY_FIXTURE                                                                         \
    static dpas_registry *reg;                                                                 \
    static int registry_setup(void **state)                                                    \
    {                                                                                          \
        (void)state;                                                                           \
        dpas_error e = {0};                                                                    \
        if (dpas_registry_builtin(&reg, &e)) {                                                 \
            fprintf(stderr, "%s\n", e.message);                                                \
            return -1;                                                                         \
        }                                                                                      \
        return 0;                                                                              \
    }                                                                                          \
    static int registry_teardown(void **state)                                                 \
    {                                                                                          \
        (void)state;                                                                           \
        dpas_registry_free(reg);                                                               \
        return 0;                                                                              \
    }

#endif
