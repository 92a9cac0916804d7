/* SPDX-License-Identifier: Apache-2.0 */
/* Internals shared by the library's modules. Not installed. */
#ifndef DPAS_INTERNAL_H
#define DPAS_INTERNAL_H

#include "dpas/dpas.h"
#include "dpas/table.h"

#include <stdarg.h>
#include <stdbool.h>

#define DPAS__PRINTF(a, b) __attribute__((format(printf, a, b)))

/* The key a sweep input is (sweep.c's table of the inputs a sweep varies). */
dpas_key dpas__sweep_input_key(dpas_sweep_input in);

/* Fill err (when not NULL) and return code. */
int dpas__fail(dpas_error *err, int code, const char *field, const char *fmt, ...)
    DPAS__PRINTF(4, 5);
/* After snprintf wrote `needed` bytes' worth into buf[cap]: when they did not fit, end buf with
 * "..." on a whole character, so a cut message says it was cut. */
void dpas__mark_cut(char *buf, size_t cap, int needed);
/* Same, with a file position. */
int dpas__fail_at(dpas_error *err, int code, const char *field, int line, int col, const char *fmt,
                  ...) DPAS__PRINTF(6, 7);

/* A growable string. On allocation failure it sets oom and further appends are ignored. */
typedef struct dpas__buf {
    char *data;
    size_t len, cap;
    bool oom;
} dpas__buf;

void dpas__buf_append(dpas__buf *b, const char *s, size_t n);
void dpas__buf_puts(dpas__buf *b, const char *s);
void dpas__buf_printf(dpas__buf *b, const char *fmt, ...) DPAS__PRINTF(2, 3);
/* The conventions' names (DPAS_RULE_CONVENTION_MAP) as constants a static table can hold:
 * dpas__conv_STANDARD, dpas__conv_BLANCHARD, dpas__conv_BYZFL. */
#define DPAS__CONV_NAME(id, name) static const char dpas__conv_##id[] = name;
DPAS_RULE_CONVENTION_MAP(DPAS__CONV_NAME)
#undef DPAS__CONV_NAME
/* Item i of n of a list in a sentence: "a", "a or b", "a, b or c" (its separator, then name). */
void dpas__buf_list_item(dpas__buf *b, size_t i, size_t n, const char *name);
/* s as a JSON string literal, quotes included. */
void dpas__buf_json_str(dpas__buf *b, const char *s);
/* The schema of the JSON documents (objects) the renderers write; raised when a field changes
 * meaning or goes away (a new field does not raise it). */
#define DPAS__JSON_SCHEMA_VERSION 2
/* ---- render/fields.c: documents written from their field tables (dpas_doc_fields) ---- */
/* A field's condition of the library's own: the renderer writes it (an OPTIONAL one) only when
 * the document has the feature (bits of dpas_field.flags above the public ones). */
#define DPAS__FIELD_IF(bit) ((unsigned)(bit) << 8)
#define DPAS__FIELD_ABSENT 1 /* a field callback's answer: this document does not write it */
/* The value of field f: a VALUE's in *cell, another shape's JSON appended to sub; returns 0,
 * DPAS__FIELD_ABSENT, or an error code (set in the caller's err). */
typedef int (*dpas__field_fn)(const dpas_field *f, dpas_cell *cell, dpas__buf *sub, void *ctx);
/* The fields as one JSON object: on lines indented by ind ("" at the top), or inline with ind
 * NULL; a top-level document (head) starts with dpas_version and schema_version. */
int dpas__json_fields(dpas__buf *b, const dpas_field *f, size_t n, const char *ind, bool head,
                      dpas__field_fn value, void *ctx);
/* The columns of a row table whose conditions (DPAS__FIELD_IF bits) are in have, in order. */
size_t dpas__field_columns(const dpas_field *f, size_t n, unsigned have, dpas_column *cols);
/* The field tables of the renderers (their files). */
extern const dpas_field dpas__memory_fields[], dpas__step_fields[], dpas__cost_fields[],
    dpas__inventory_fields[], dpas__eval_fields[];
extern const size_t dpas__memory_nfields, dpas__step_nfields, dpas__cost_nfields,
    dpas__inventory_nfields, dpas__eval_nfields;

/* ---- render/bytes.c ---- */
/* The decimal of a byte count (dpas_format_bytes_exact: exact when it terminates, else rounded). */
void dpas__buf_bytes_exact(dpas__buf *b, dpas_bytes v);
/* The byte count as text, marked when rounded: "350000000000", or, for a count whose decimal does
 * not terminate, "1.333333333333333333 (rounded; exactly 4/3)"; unit (e.g. " B", or "") goes
 * after the number. */
void dpas__buf_bytes_marked(dpas__buf *b, dpas_bytes v, const char *unit);
/* A JSON member for a byte count: "key": 1.333333333333333333, and, when the decimal does not
 * terminate, the exact value beside it: , "key_exact": "4/3". */
void dpas__buf_json_bytes(dpas__buf *b, const char *key, dpas_bytes v);
/* A sink (dpas_sink_fn) that appends to the dpas__buf ctx. */
int dpas__sink_buf(void *ctx, const char *data, size_t len);

/* A column flag of the library's own: the cell's text is a JSON literal already (a number
 * printed by the caller, true, false), written bare in JSON and as it is elsewhere. */
#define DPAS__COL_RAW (1u << 30)

/* UTF-8 (base/text.c): the length of the well-formed sequence at p, or 0; the code points of s
 * (an invalid byte counts as one, as its U+FFFD does). */
size_t dpas__utf8_len(const unsigned char *p);
size_t dpas__utf8_width(const char *s);
/* s escaped for format (dpas/table.h says how), appended to b. */
void dpas__escape(dpas__buf *b, int format, const char *s);
/* s as XML text. */
void dpas__escape_xml(dpas__buf *b, const char *s);

/* Hand the string to the caller (NULL and err set on allocation failure). */
char *dpas__buf_finish(dpas__buf *b, dpas_error *err);

/* The one rule for printing a real (base/shortest.c): the shortest text that reads back as the
 * same double ("1.984375", "0.1", "1.4777777777777778e-05"), laid out as %g at that many digits
 * and a whole number below 1e16 in full; with python_style a whole value gets ".0" as Python's
 * repr does ("64.0"). */
size_t dpas__fmt_double(double v, bool python_style, char *buf, size_t cap);

uint64_t dpas__gcd(uint64_t a, uint64_t b);

/* 128-bit unsigned arithmetic for exact products (GCC and Clang). */
__extension__ typedef unsigned __int128 dpas__u128;

/* Case-insensitive ASCII comparison. */
int dpas__strcasecmp(const char *a, const char *b);

/* Read a regular file of at most max bytes into *text (NUL-terminated, the caller frees).
 * `what` prefixes the path in messages ("scenario file "). */
int dpas__read_file(const char *path, const char *what, size_t max, char **text, size_t *len,
                    dpas_error *err);

/* Quote text for a message, truncated and with non-printable bytes escaped. */
const char *dpas__quote(const char *text, char *buf, size_t cap);
/* A count that must be at least 1 (parameters, tokens, a batch): dpas_parse_count, with one
 * refusal for 0 and for a negative value alike, "tokens must be >= 1, got -5" (a negative one was
 * "must be >= 0", a bound the key does not have). */
int dpas__parse_count_positive(const char *field, const char *text, uint64_t *out, dpas_error *err);

/* Is this the name of a convention some rule of the catalogue has? */
bool dpas__convention_known(const char *convention);
/* 0 for NULL or a known convention (or "all" when all), else DPAS_ENOENT naming them. */
int dpas__convention_check(const char *convention, bool all, dpas_error *err);

/* Where a memory check says it would fit: "; fits from dp_degree N, or with ZeRO stage Z, or at
 * dp_degree <= D", or that nothing does (render/analysis.c). */
void dpas__memory_where(const dpas_memory *m, int zero, dpas__buf *out);
/* A memory check's own fields (activations, total, optimizer, smallest_dp_degree...) as JSON
 * members, each line started with indent, without the braces' newline (render/analysis.c). */
int dpas__memory_json(dpas__buf *b, const dpas_memory *m, const char *indent);
/* The fields of a step's "memory" object (render/step.c), written from a memory check. */
extern const dpas_field dpas__step_memory_fields[];
extern const size_t dpas__step_memory_nfields;
/* The registry model a resolved spec's workload is (NULL: parameters given). */
const dpas_model *dpas__spec_model(const dpas_spec *spec);
/* dpas_spec_resolve, telling which input is missing when that is the error (else -1). */
int dpas__spec_resolve(dpas_spec *spec, const dpas_registry *reg, dpas_scenario *out, int *missing,
                       dpas_error *err);
/* dpas_schedule_traffic and dpas_schedule_time of a scenario already validated (and a known
 * schedule): an analysis validates its scenario once, not once a row. */
int dpas__schedule_traffic(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                           int64_t iterations, dpas_traffic *out, dpas_error *err);
int dpas__schedule_time(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                        int64_t iterations, dpas_topology topo, const dpas_links *links,
                        double *seconds, dpas_error *err);

/* One rule under one schedule, as dpas_cost_compute and a sweep's point compute it: what the
 * row needs besides the scenario. */
typedef struct dpas__cost_ctx {
    int64_t dp_degree, steps, iterations, f;
    double compute_rate;     /* the roofline's FLOP/s (0: no FLOP bound) */
    double memory_bandwidth; /* ... and bytes/s (0: no memory bound); both 0: no compute time */
    double gradient_bytes;   /* one replica's gradient, for the bytes the rule moves */
    dpas_links links;
    int have_links, have_intra; /* times are known; hierarchical ones too */
    const dpas_netmodel *net;   /* flat times from a calibration's curves, or NULL */
    int net_kind;
    double allreduce_bytes; /* per step, for the ratio (0: N = 1) */
    int zero;               /* the ZeRO stage whose parameter gathers the rows add (0: none) */
} dpas__cost_ctx;
/* The links of the scenario's fleet, the inter-node ones replaced by a calibration's (cal); and
 * the AllReduce's bytes. */
int dpas__cost_ctx_init(const dpas_scenario *s, const dpas_links *cal, dpas__cost_ctx *ctx,
                        dpas_error *err);
/* The row of rule (NULL: none, a sweep of a schedule alone) under r->schedule, for a scenario
 * already validated. */
int dpas__cost_row(const dpas_scenario *s, const dpas__cost_ctx *ctx, const dpas_rule *rule,
                   dpas_cost_row *r, dpas_error *err);

/* ZeRO's bytes and time beyond a schedule's (analysis/step.c), for stage `zero` (0: none):
 * (N-1)/N of the weights (the gradient width without one) per parameter all-gather beyond the
 * schedule's own (stage 1, 2: after the step, less the schedule's gather of gradient shards
 * where it has one; stage 3: one more, in forward, hidden by forward_s but for 1/buckets of it;
 * forward_s NAN: not hidden). *bytes (one step's) grows by the bytes; *seconds is the time, on
 * ring all-gathers over x's links. */
int dpas__zero_extra(const dpas_scenario *s, const dpas__cost_ctx *x, int zero,
                     dpas_schedule_id sched, double forward_s, uint64_t buckets, dpas_bytes *bytes,
                     double *seconds, dpas_error *err);

/* dpas_schedule_time_net of a scenario already validated (a cost's rows: validated once). */
int dpas__schedule_time_net(dpas_schedule_id sched, const dpas_scenario *s, const dpas_rule *rule,
                            int64_t iterations, const dpas_netmodel *m, int kind,
                            const dpas_links *links, dpas_net_step *out, dpas_error *err);

/* dpas_evaluate of a scenario already validated: the attributes, without validating again
 * (a byte count past 2^64 is still DPAS_ERANGE). */
int dpas__evaluate(const dpas_scenario *s, dpas_report *r, dpas_error *err);

/* count × width × p / q, exact. DPAS_ERANGE when the result or its fraction overflows. */
int dpas__bytes_scaled(uint64_t count, dpas_rational width, uint64_t p, uint64_t q, dpas_bytes *out,
                       dpas_error *err);
/* b x k, exact. */
int dpas__bytes_times(dpas_bytes b, uint64_t k, dpas_bytes *out, dpas_error *err);
/* On failure (rc != 0) rename err's field to `field` and prefix its message with "field: ";
 * returns rc. */
int dpas__bytes_field(int rc, const char *field, dpas_error *err);
/* a / b correctly rounded to a double (ties to even); b > 0. */
double dpas__ratio(uint64_t a, uint64_t b);
/* -1, 0 or 1 as a < b, a == b, a > b. */
int dpas__bytes_cmp(dpas_bytes a, dpas_bytes b);
/* |a - b|, exact. */
int dpas__bytes_absdiff(dpas_bytes a, dpas_bytes b, dpas_bytes *out, dpas_error *err);
/* a + b, exact. */
int dpas__bytes_add(dpas_bytes a, dpas_bytes b, dpas_bytes *out, dpas_error *err);

/* A table of text cells rendered as aligned text, JSON (an array of objects), CSV or Markdown.
 * An empty cell is null in JSON. */
#define DPAS__MAXCOLS 16
#define DPAS__CELL 192
#define DPAS__CELL_PLUS 0x40 /* a number cell's last byte: text shows its sign (calibrate.c) */
enum { DPAS__STR = 0, DPAS__NUM = 1, DPAS__BOOL = 2 };
typedef struct dpas__table {
    int ncols;
    const char *head[DPAS__MAXCOLS];
    int type[DPAS__MAXCOLS]; /* DPAS__STR, DPAS__NUM (right-aligned, bare in JSON), DPAS__BOOL */
    size_t nrows, cap;
    char (*cells)[DPAS__MAXCOLS][DPAS__CELL];
    bool oom;
} dpas__table;

/* A new zeroed row, or NULL (and t->oom) when out of memory. */
char (*dpas__table_row(dpas__table *t))[DPAS__CELL];
/* Render the table into b (an out-of-memory table marks b) and free its cells. */
void dpas__table_emit(dpas__table *t, int format, dpas__buf *b);
void dpas__table_render(const dpas__table *t, int format, dpas__buf *b);

#endif
