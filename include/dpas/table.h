/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/table.h — the one table writer: typed columns rendered as text, JSON, CSV or markdown.
 * Part of the public API; include "dpas/dpas.h".
 *
 * Every analysis returns rows of typed values; this writer is the only code that turns them into
 * text. It escapes for each format (labels are user text: tabs, quotes, `|`, newlines and invalid
 * UTF-8 all come out well-formed), streams to a sink row by row, and has no limit on columns, cell
 * length or row length.
 *
 * Escaping, per format:
 *   text      a backslash as \\, control characters as \t \n \r \xNN, line and paragraph
 *             separators (U+0085, U+2028, U+2029) and bidirectional controls as \uNNNN, invalid
 *             UTF-8 as U+FFFD; columns aligned by code points (rows held until the end), or at
 *             fixed widths (the wider of `width` and the header) when streaming
 *   json      an array of objects (or a document around it: `document`); strings valid UTF-8 (invalid bytes as U+FFFD), control
 *             characters escaped; a null cell and a non-finite real are null; every number
 *             reads back as a finite double (a G10 real near DBL_MAX is printed in full)
 *   csv       RFC 4180: a cell with a comma, quote, CR, LF or an edge space is quoted, quotes
 *             doubled; invalid UTF-8 as U+FFFD; null is an empty cell
 *   markdown  `\` `|` `` ` `` `*` `[` `]` escaped with a backslash, `_` too at a word's edge,
 *             `<` `&` as &lt; &amp;, a newline as <br>, other control characters, line separators
 *             and bidirectional controls as U+FFFD: a label is text, never a link or emphasis
 */
#ifndef DPAS_TABLE_H
#define DPAS_TABLE_H

#include "dpas/units.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dpas_col_type {
    DPAS_COL_TEXT = 0, /* cell.text */
    DPAS_COL_INT,      /* cell.i */
    DPAS_COL_REAL,     /* cell.real: shortest text that reads back as the same double, in
                          every format (dpas_format_real) */
    DPAS_COL_BYTES,    /* cell.bytes: exact decimal; one that does not terminate (4/3) is rounded
                          to 18 decimals and marked: text, markdown and CSV show
                          "1.333333333333333333 (rounded; exactly 4/3)", JSON the number and a
                          member "<column>_exact": "4/3" after it */
    DPAS_COL_BOOL,     /* cell.boolean: true / false */
    DPAS_COL_UINT,     /* cell.u */
} dpas_col_type;

/* Column flags: how text and markdown show a value (JSON and CSV always carry the exact one). */
#define DPAS_COL_HUMAN 1u        /* BYTES: "350 GB" in the writer's units */
#define DPAS_COL_G6 2u           /* REAL: 6 significant digits in text and markdown */
#define DPAS_COL_G10 4u          /* REAL: 10 significant digits in text and markdown (sweeps) */
#define DPAS_COL_LEFT 8u         /* text: align left even when the column holds numbers */
#define DPAS_COL_EXACT_HUMAN 16u /* BYTES: "350000000000 (350 GB)" in text and markdown */
#define DPAS_COL_RIGHT 32u       /* text and markdown: align right, as numbers are */

typedef struct dpas_column {
    const char *name; /* JSON key, CSV and markdown header, text header */
    dpas_col_type type;
    unsigned flags; /* DPAS_COL_* */
} dpas_column;

typedef struct dpas_cell {
    int null;         /* no value: null in JSON, empty in CSV and markdown, null_text in text */
    const char *text; /* borrowed, any bytes */
    int64_t i;
    uint64_t u;
    double real;
    dpas_bytes bytes;
    int boolean;
} dpas_cell;

/* Cell constructors. */
static inline dpas_cell dpas_cell_text(const char *t)
{
    dpas_cell c = {0};
    c.text = t;
    c.null = t == NULL;
    return c;
}
static inline dpas_cell dpas_cell_int(int64_t i)
{
    dpas_cell c = {0};
    c.i = i;
    return c;
}
static inline dpas_cell dpas_cell_uint(uint64_t u)
{
    dpas_cell c = {0};
    c.u = u;
    return c;
}
static inline dpas_cell dpas_cell_real(double r)
{
    dpas_cell c = {0};
    c.real = r;
    return c;
}
static inline dpas_cell dpas_cell_bytes(dpas_bytes b)
{
    dpas_cell c = {0};
    c.bytes = b;
    return c;
}
static inline dpas_cell dpas_cell_bool(int v)
{
    dpas_cell c = {0};
    c.boolean = v;
    return c;
}
static inline dpas_cell dpas_cell_null(void)
{
    dpas_cell c = {0};
    c.null = 1;
    return c;
}

/* Where the output goes: len bytes of data. Returns 0, or a negative DPAS_E* code (DPAS_EIO
 * for a failed write), which the writer returns from then on. */
typedef int (*dpas_sink_fn)(void *ctx, const char *data, size_t len);

typedef struct dpas_writer_opts {
    dpas_format format;
    dpas_units units;      /* DPAS_COL_HUMAN bytes */
    int stream;            /* text: fixed column widths, nothing held (sweeps of millions) */
    int width;             /* text, stream: the width of every column; 0 = 16 */
    const char *null_text; /* text: what a null cell shows; NULL = "-" */
    int no_header;         /* csv, text, markdown: leave the header out */
    int document;          /* json: the rows as a whole document, {"dpas_version": ...,
                              "schema_version": ..., "rows": [...]}, rather than a bare array
                              (an object has room for more members: paging, a total) */
} dpas_writer_opts;

typedef struct dpas_writer dpas_writer;

/* A writer of ncols columns (the array and its names are borrowed: keep them alive). The header
 * is written with the first row or at dpas_writer_end. Errors: DPAS_ENOMEM, DPAS_EINVAL. */
DPAS_API int dpas_writer_new(const dpas_column *cols, size_t ncols, const dpas_writer_opts *o,
                             dpas_sink_fn sink, void *ctx, dpas_writer **out, dpas_error *err);
/* One row of ncols cells. */
DPAS_API int dpas_writer_row(dpas_writer *w, const dpas_cell *cells, dpas_error *err);
/* Finish the table (JSON: close the array, or the document, with no newline after it; text:
 * write the held rows). */
DPAS_API int dpas_writer_end(dpas_writer *w, dpas_error *err);
DPAS_API void dpas_writer_free(dpas_writer *w);

/* The escaped forms the writer uses, for text outside tables (headers, notes, documents).
 * Each appends to a sink; returns 0 or the sink's error. */
DPAS_API int dpas_write_escaped(dpas_format format, const char *text, dpas_sink_fn sink, void *ctx);
/* text as a JSON string literal, quotes included. */
DPAS_API int dpas_write_json_string(const char *text, dpas_sink_fn sink, void *ctx);
/* A real as a JSON number by the writer's one rule: the shortest text that reads back to the
 * same double; null when it is not finite. */
DPAS_API int dpas_write_json_real(double v, dpas_sink_fn sink, void *ctx);
/* text as XML character data or attribute value (& < > " ' escaped, valid UTF-8, characters XML
 * 1.0 forbids as U+FFFD). */
DPAS_API int dpas_write_xml_text(const char *text, dpas_sink_fn sink, void *ctx);

#ifdef __cplusplus
}
#endif
#endif
