/* SPDX-License-Identifier: Apache-2.0 */
/* Counts from text: never a crash; a count read back from its decimal text is the same. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_text(data, size);
    uint64_t v;
    int64_t i;
    dpas_error e;
    if (dpas_parse_count("n", s, &v, &e) == 0) {
        PROPERTY(v <= (uint64_t)DPAS_MAX_COUNT, "%s -> %llu", s, (unsigned long long)v);
        char t[32];
        snprintf(t, sizeof t, "%llu", (unsigned long long)v);
        uint64_t v2;
        PROPERTY(dpas_parse_count("n", t, &v2, &e) == 0 && v2 == v, "%s round trip", s);
    } else {
        PROPERTY(e.message[0], "an empty message for \"%s\"", s);
    }
    if (dpas_parse_int("n", s, &i, &e) == 0) {
        char t[32];
        snprintf(t, sizeof t, "%lld", (long long)i);
        int64_t i2;
        PROPERTY(dpas_parse_int("n", t, &i2, &e) == 0 && i2 == i, "%s int round trip", s);
    }
    free(s);
    return 0;
}
