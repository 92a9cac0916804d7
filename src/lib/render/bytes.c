/* SPDX-License-Identifier: Apache-2.0 */
/* Byte counts as the renderers print them: the exact decimal, marked when it had to be rounded,
 * and a JSON member with the exact fraction beside it. Built on units.c's text of a byte count
 * and the base's buffers. */
#include "../internal.h"

#include <stdlib.h>

void dpas__buf_bytes_exact(dpas__buf *b, dpas_bytes v)
{
    char t[112]; /* enough for any byte count (dpas/units.h) */
    size_t n = dpas_format_bytes_exact(v, t, sizeof t);
    dpas__buf_append(b, t, n < sizeof t ? n : sizeof t - 1);
}

void dpas__buf_bytes_marked(dpas__buf *b, dpas_bytes v, const char *unit)
{
    dpas__buf_bytes_exact(b, v);
    dpas__buf_puts(b, unit ? unit : "");
    if (!dpas_bytes_is_decimal(v)) {
        char f[64];
        dpas_format_bytes_fraction(v, f, sizeof f);
        dpas__buf_printf(b, " (rounded; exactly %s)", f);
    }
}

void dpas__buf_json_bytes(dpas__buf *b, const char *key, dpas_bytes v)
{
    dpas__buf_json_str(b, key);
    dpas__buf_puts(b, ": ");
    dpas__buf_bytes_exact(b, v);
    if (!dpas_bytes_is_decimal(v)) {
        char f[64];
        dpas__buf k = {0};
        dpas__buf_puts(&k, key);
        dpas__buf_puts(&k, "_exact");
        dpas_format_bytes_fraction(v, f, sizeof f);
        dpas__buf_puts(b, ", ");
        if (k.oom)
            b->oom = true;
        else
            dpas__buf_json_str(b, k.data);
        dpas__buf_puts(b, ": ");
        dpas__buf_json_str(b, f);
        free(k.data);
    }
}
