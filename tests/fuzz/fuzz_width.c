/* SPDX-License-Identifier: Apache-2.0 */
/* Widths from text: never a crash; a width read back from its own formatting is the same
 * rational; a byte count of a width agrees with the product computed another way. */
#include "fuzz.h"

__extension__ typedef unsigned __int128 u128;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *s = fuzz_text(data, size);
    dpas_rational w;
    dpas_error e;
    int rc = dpas_parse_width("w", s, &w, &e);
    if (rc == 0) {
        PROPERTY(w.num > 0 && w.den > 0, "%s -> %llu/%llu", s, (unsigned long long)w.num,
                 (unsigned long long)w.den);
        char t[128];
        dpas_format_width(w, t, sizeof t);
        dpas_rational w2;
        PROPERTY(dpas_parse_width("w", t, &w2, &e) == 0 && w2.num == w.num && w2.den == w.den,
                 "\"%s\" -> \"%s\" does not read back (%s)", s, t, e.message);
        /* bytes of P parameters: whole x den + frac_num x (den / frac_den) == P x num */
        uint64_t P = 1;
        for (size_t i = 0; i < size; i++)
            P = P * 31 + data[i];
        P %= (uint64_t)DPAS_MAX_COUNT;
        dpas_bytes b;
        if (dpas_bytes_of(P, w, &b, &e) == 0) {
            PROPERTY(b.frac_den > 0 && b.frac_num < b.frac_den && w.den % b.frac_den == 0, "fraction");
            u128 lhs = (u128)b.whole * w.den + (u128)b.frac_num * (w.den / b.frac_den);
            PROPERTY(lhs == (u128)P * w.num, "bytes of %llu x %s", (unsigned long long)P, s);
        } else {
            PROPERTY(e.code == DPAS_ERANGE && (u128)P * w.num / w.den > UINT64_MAX,
                     "a range error on a product that fits");
        }
    } else {
        PROPERTY(rc == DPAS_EPARSE || rc == DPAS_EINVAL || rc == DPAS_ERANGE, "code %d", rc);
        PROPERTY(e.message[0] && strlen(e.message) < sizeof e.message, "an empty message");
    }
    free(s);
    return 0;
}
