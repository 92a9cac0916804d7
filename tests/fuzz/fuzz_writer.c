/* SPDX-License-Identifier: Apache-2.0 */
/* The table writer with random columns, cells and options, in every format. Properties beyond
 * "no crash", each checked by a reader that is not the writer:
 *   json      parses (jansson) as an array of one object per row; a byte count whose decimal does
 *             not terminate has "<column>_exact" beside it, holding its exact fraction, and the
 *             rounded number is within 1e-15 (relative) of that fraction;
 *   csv       every record (an RFC 4180 reader below) has one field per column;
 *   markdown  every line has one more unescaped '|' than there are columns, and one line per row
 *             (a newline in a cell is <br>);
 *   text      one line per row (control characters are escaped), aligned or streamed.
 * Input: an options byte, the column count and the row count, then per column a type, flags and
 * a name, then the cells (bytes the input lacks read as 0). */
#include "fuzz.h"

#include <jansson.h>
#include <math.h>

#include "../../src/lib/internal.h"

typedef struct reader {
    const uint8_t *p;
    size_t n;
} reader;

static uint8_t u8(reader *r)
{
    if (!r->n)
        return 0;
    r->n--;
    return *r->p++;
}

static uint64_t u64(reader *r)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | u8(r);
    return v;
}

/* A string of up to max bytes (a NUL ends it early: cells are C strings). */
static char *str(reader *r, size_t max)
{
    size_t l = u8(r) % (max + 1);
    char *s = malloc(l + 1);
    size_t k = 0;
    for (size_t i = 0; i < l; i++) {
        uint8_t c = u8(r);
        if (c)
            s[k++] = (char)c;
    }
    s[k] = '\0';
    return s;
}

typedef struct out {
    char *data;
    size_t len;
} out;

static int sink(void *ctx, const char *data, size_t len)
{
    out *o = ctx;
    char *p = realloc(o->data, o->len + len + 1);
    if (!p)
        abort();
    memcpy(p + o->len, data, len);
    o->len += len;
    p[o->len] = '\0';
    o->data = p;
    return 0;
}

/* RFC 4180 records: the field counts of each record, checked against ncols. */
static void check_csv(const char *s, size_t ncols, size_t records_expected)
{
    size_t records = 0, fields = 1;
    const char *p = s;
    while (*p) {
        if (*p == '"') { /* quoted: "" is a quote, the closing quote ends it */
            p++;
            for (;;) {
                PROPERTY(*p, "csv: an unclosed quote");
                if (*p == '"' && p[1] == '"') {
                    p += 2;
                    continue;
                }
                if (*p == '"') {
                    p++;
                    break;
                }
                p++;
            }
            PROPERTY(*p == ',' || *p == '\n' || !*p, "csv: text after a closing quote");
        } else {
            while (*p && *p != ',' && *p != '\n') {
                PROPERTY(*p != '"' && *p != '\r', "csv: a bare quote or CR in a field");
                p++;
            }
        }
        if (*p == ',') {
            fields++;
            p++;
        } else if (*p == '\n') {
            PROPERTY(fields == ncols, "csv: a record of %zu fields, %zu columns", fields, ncols);
            records++;
            fields = 1;
            p++;
        }
    }
    PROPERTY(records == records_expected, "csv: %zu records, expected %zu", records,
             records_expected);
}

static size_t lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void check_markdown(const char *s, size_t ncols, size_t lines_expected)
{
    size_t n = 0;
    const char *line = s;
    while (*line) {
        const char *end = strchr(line, '\n');
        PROPERTY(end, "markdown: an unterminated line");
        size_t pipes = 0;
        for (const char *p = line; p < end; p++) {
            if (*p == '\\' && p + 1 < end) {
                p++; /* an escaped character, \| or \\ */
                continue;
            }
            pipes += *p == '|';
        }
        PROPERTY(pipes == ncols + 1, "markdown: %zu separators in \"%.*s\", %zu columns", pipes,
                 (int)(end - line), line, ncols);
        n++;
        line = end + 1;
    }
    PROPERTY(n == lines_expected, "markdown: %zu lines, expected %zu", n, lines_expected);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    reader r = {data, size};
    uint8_t opt = u8(&r);
    dpas_writer_opts o = {0};
    o.format = (dpas_format)(opt & 3);
    o.stream = (opt >> 2) & 1;
    o.no_header = (opt >> 3) & 1;
    o.units = (dpas_units)((opt >> 4) % 3);
    o.width = (opt >> 6) * 5;
    size_t ncols = u8(&r) % 8 + 1, nrows = u8(&r) % 12;
    dpas_column cols[8];
    char *names[8];
    bool unique = true;
    for (size_t c = 0; c < ncols; c++) {
        cols[c].type = (dpas_col_type)(u8(&r) % 6);
        cols[c].flags = u8(&r) & 63;
        names[c] = str(&r, 12);
        cols[c].name = names[c];
        size_t l = strlen(names[c]);
        unique &= !(l >= 6 && !strcmp(names[c] + l - 6, "_exact"));
        for (size_t k = 0; k < l; k++) /* names looked up as written: plain ASCII only */
            unique &= names[c][k] >= 0x20 && names[c][k] < 0x7f && names[c][k] != '"' &&
                      names[c][k] != '\\';
        for (size_t k = 0; k < c; k++)
            unique &= strcmp(names[k], names[c]) != 0;
    }
    dpas_cell *cells = calloc(ncols * (nrows ? nrows : 1), sizeof *cells);
    char **texts = calloc(ncols * (nrows ? nrows : 1), sizeof *texts);
    for (size_t i = 0; i < nrows; i++)
        for (size_t c = 0; c < ncols; c++) {
            dpas_cell *v = &cells[i * ncols + c];
            uint8_t kind = u8(&r);
            if (kind % 11 == 0) {
                *v = dpas_cell_null();
                continue;
            }
            switch (cols[c].type) {
            case DPAS_COL_TEXT: *v = dpas_cell_text(texts[i * ncols + c] = str(&r, 40)); break;
            case DPAS_COL_INT: *v = dpas_cell_int((int64_t)u64(&r)); break;
            case DPAS_COL_UINT: *v = dpas_cell_uint(u64(&r)); break;
            case DPAS_COL_REAL: {
                uint64_t bits = u64(&r);
                double d;
                memcpy(&d, &bits, sizeof d);
                *v = dpas_cell_real(d); /* NaN and infinities included */
                break;
            }
            case DPAS_COL_BOOL: *v = dpas_cell_bool(u8(&r) & 1); break;
            default: { /* a byte count: a reduced fraction below 1 beside the whole part */
                uint64_t w = u64(&r), den = u64(&r) | 1, num = u64(&r);
                if (kind & 1)
                    den = (den % 1000) + 1; /* small denominators: 3, 7, 10, ... */
                num %= den;
                uint64_t g = dpas__gcd(num, den);
                if (!num)
                    den = 1;
                else
                    num /= g, den /= g;
                *v = dpas_cell_bytes((dpas_bytes){w, num, den});
                break;
            }
            }
        }
    out o_ = {0};
    dpas_writer *w;
    dpas_error e;
    int rc = dpas_writer_new(cols, ncols, &o, sink, &o_, &w, &e);
    PROPERTY(rc == 0, "writer_new: %s", e.message);
    for (size_t i = 0; i < nrows && !rc; i++)
        rc = dpas_writer_row(w, &cells[i * ncols], &e);
    if (!rc)
        rc = dpas_writer_end(w, &e);
    PROPERTY(rc == 0, "writer: %s", e.message);
    dpas_writer_free(w);
    const char *s = o_.data ? o_.data : "";
    size_t head = o.no_header ? 0 : 1;
    if (o.format == DPAS_FORMAT_JSON) {
        json_error_t je;
        json_t *j = json_loads(s, JSON_DECODE_INT_AS_REAL, &je);
        PROPERTY(j && json_is_array(j), "json does not parse: %s\n%s", je.text, s);
        PROPERTY(json_array_size(j) == nrows, "json: %zu rows, expected %zu",
                 json_array_size(j), nrows);
        for (size_t i = 0; i < nrows && unique; i++) {
            json_t *row = json_array_get(j, i);
            PROPERTY(json_is_object(row), "json: a row is not an object");
            for (size_t c = 0; c < ncols; c++) {
                const dpas_cell *v = &cells[i * ncols + c];
                if (cols[c].type != DPAS_COL_BYTES || v->null)
                    continue;
                char key[32];
                snprintf(key, sizeof key, "%s_exact", names[c]);
                json_t *x = json_object_get(row, key);
                bool rounded = !dpas_bytes_is_decimal(v->bytes);
                PROPERTY(!x == !rounded, "json: %s present %d, rounded %d", key, !!x, rounded);
                if (!x)
                    continue;
                /* the fraction, read back: (whole x den + num) / den */
                const char *f = json_string_value(x), *slash = f ? strchr(f, '/') : NULL;
                PROPERTY(slash, "json: %s is not a fraction", key);
                unsigned long long den = strtoull(slash + 1, NULL, 10);
                PROPERTY(den == v->bytes.frac_den, "json: %s has denominator %llu, not %llu", key,
                         den, (unsigned long long)v->bytes.frac_den);
                long double exact = (long double)v->bytes.whole +
                                    (long double)v->bytes.frac_num / v->bytes.frac_den;
                double shown = json_number_value(json_object_get(row, names[c]));
                PROPERTY(fabsl(shown - exact) <= 1e-15L * exact + 1e-18L,
                         "json: %s shows %.17g for %s", names[c], shown, f);
            }
        }
        json_decref(j);
    } else if (o.format == DPAS_FORMAT_CSV) {
        check_csv(s, ncols, nrows + head);
    } else if (o.format == DPAS_FORMAT_MARKDOWN) {
        check_markdown(s, ncols, nrows + (o.no_header ? 0 : 2));
    } else {
        PROPERTY(lines(s) == nrows + head, "text: %zu lines, expected %zu", lines(s), nrows + head);
    }
    free(o_.data);
    for (size_t i = 0; i < ncols * (nrows ? nrows : 1); i++)
        free(texts[i]);
    free(texts);
    free(cells);
    for (size_t c = 0; c < ncols; c++)
        free(names[c]);
    return 0;
}
