/* Small helpers over cmocka for dpas's unit tests. Every expected value in the tests is written
 * by hand (from the seed, the registry facts or arithmetic shown beside it), never computed by
 * the code under test. */
#ifndef DPAS_TEST_CHECK_H
#define DPAS_TEST_CHECK_H

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

#define assert_rational(r, n, d)                                                               \
    do {                                                                                       \
        assert_int_equal((r).num, (n));                                                        \
        assert_int_equal((r).den, (d));                                                        \
    } while (0)

#endif
