/* SPDX-License-Identifier: Apache-2.0 */
/* Shared by the fuzz targets: libFuzzer's entry point, and a property check that aborts (so
 * libFuzzer reports it as a crash with the input) when a property of dpas does not hold. */
#ifndef DPAS_FUZZ_H
#define DPAS_FUZZ_H

#include "dpas/dpas.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define PROPERTY(cond, ...)                                                                      \
    do {                                                                                       \
        if (!(cond)) {                                                                         \
            fprintf(stderr, "property failed: %s: ", #cond);                                   \
            fprintf(stderr, __VA_ARGS__);                                                      \
            fprintf(stderr, "\n");                                                             \
            abort();                                                                           \
        }                                                                                      \
    } while (0)

/* The input as a NUL-terminated string (owned by the caller). */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *s = malloc(size + 1);
    if (!s)
        abort();
    memcpy(s, data, size);
    s[size] = '\0';
    return s;
}

#endif
