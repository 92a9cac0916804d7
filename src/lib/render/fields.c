/* SPDX-License-Identifier: Apache-2.0 */
/* The JSON documents written from their field tables (dpas_doc_fields): each renderer keeps one
 * table of its document's fields and gives the value of each by the field; this file writes them
 * in the table's order, and the server's response schemas read the same tables. */
#include "../internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void value_json(dpas__buf *b, const dpas_field *f, const dpas_cell *v)
{
    char t[112];
    if (v->null || (f->type == DPAS_COL_REAL && !isfinite(v->real)) ||
        (f->type == DPAS_COL_TEXT && !v->text)) {
        dpas__buf_puts(b, "null");
        return;
    }
    switch (f->type) {
    case DPAS_COL_TEXT: dpas__buf_json_str(b, v->text); return;
    case DPAS_COL_INT: dpas__buf_printf(b, "%lld", (long long)v->i); return;
    case DPAS_COL_UINT: dpas__buf_printf(b, "%llu", (unsigned long long)v->u); return;
    case DPAS_COL_BOOL: dpas__buf_puts(b, v->boolean ? "true" : "false"); return;
    case DPAS_COL_REAL:
        dpas__buf_append(b, t, dpas__fmt_double(v->real, false, t, sizeof t));
        return;
    case DPAS_COL_BYTES: { /* a negative count (SIGNED): the cell's boolean */
        const char *sign = (f->flags & DPAS_FIELD_SIGNED) && v->boolean ? "-" : "";
        dpas_format_bytes_exact(v->bytes, t, sizeof t);
        dpas__buf_printf(b, "%s%s", sign, t);
        if (!dpas_bytes_is_decimal(v->bytes)) {
            char q[64];
            dpas_format_bytes_fraction(v->bytes, q, sizeof q);
            dpas__buf_puts(b, ", ");
            dpas__buf k = {0};
            dpas__buf_printf(&k, "%s_exact", f->name);
            if (k.oom)
                b->oom = true;
            else
                dpas__buf_json_str(b, k.data);
            free(k.data);
            dpas__buf_printf(b, ": \"%s%s\"", sign, q);
        }
        return;
    }
    }
}

int dpas__json_fields(dpas__buf *b, const dpas_field *f, size_t n, const char *ind, bool head,
                      dpas__field_fn value, void *ctx)
{
    const char *sep_ind = ind ? ind : "";
    bool first = true;
    dpas__buf_puts(b, ind ? "{\n" : "{");
    if (head) {
        dpas__buf_puts(b, "  \"dpas_version\": ");
        dpas__buf_json_str(b, DPAS_VERSION);
        dpas__buf_printf(b, ",\n  \"schema_version\": %d", DPAS__JSON_SCHEMA_VERSION);
        first = false;
    }
    for (size_t i = 0; i < n; i++) {
        dpas_cell cell = {0};
        dpas__buf sub = {0};
        int rc = value(&f[i], &cell, &sub, ctx);
        if (rc == DPAS__FIELD_ABSENT) {
            free(sub.data);
            continue;
        }
        if (rc) {
            free(sub.data);
            return rc;
        }
        if (ind)
            dpas__buf_printf(b, "%s%s  ", first ? "" : ",\n", sep_ind);
        else
            dpas__buf_puts(b, first ? "" : ", ");
        first = false;
        dpas__buf_json_str(b, f[i].name);
        dpas__buf_puts(b, ": ");
        if (f[i].shape == DPAS_FIELD_VALUE)
            value_json(b, &f[i], &cell);
        else if (sub.oom)
            b->oom = true;
        else if (sub.data)
            dpas__buf_append(b, sub.data, sub.len);
        else
            dpas__buf_puts(b, "null");
        free(sub.data);
    }
    if (ind)
        dpas__buf_printf(b, "\n%s}", ind);
    else
        dpas__buf_puts(b, "}");
    return 0;
}

size_t dpas__field_columns(const dpas_field *f, size_t n, unsigned have, dpas_column *cols)
{
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned cond = f[i].flags >> 8;
        if (!cond || (cond & have))
            cols[k++] = (dpas_column){f[i].name, f[i].type, 0};
    }
    return k;
}

const dpas_field *dpas_doc_fields(dpas_doc d, size_t *n)
{
    static const struct {
        const dpas_field *f;
        const size_t *n;
    } docs[DPAS_DOC_COUNT] = {
        [DPAS_DOC_EVAL] = {dpas__eval_fields, &dpas__eval_nfields},
        [DPAS_DOC_COST] = {dpas__cost_fields, &dpas__cost_nfields},
        [DPAS_DOC_STEP] = {dpas__step_fields, &dpas__step_nfields},
        [DPAS_DOC_MEMORY] = {dpas__memory_fields, &dpas__memory_nfields},
        [DPAS_DOC_INVENTORY] = {dpas__inventory_fields, &dpas__inventory_nfields},
    };
    bool ok = (unsigned)d < DPAS_DOC_COUNT;
    if (n)
        *n = ok ? *docs[d].n : 0;
    return ok ? docs[d].f : NULL;
}
