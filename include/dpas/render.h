/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/render.h — rendering reports, analyses and listings
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_RENDER_H
#define DPAS_RENDER_H

#include "dpas/evaluate.h"
#include "dpas/rules.h"
#include "dpas/schedules.h"
#include "dpas/inventory.h"
#include "dpas/cost.h"
#include "dpas/calibrate.h"
#include "dpas/table.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- rendering the analyses -------------------------------------------------------------------- */

/* The rule catalogue's rows (dpas_rules_list) as a table, with max_f and min_n columns when
 * asked for. Caller owns the string (dpas_free). */
DPAS_API char *dpas_render_rules(const dpas_rule_row *rows, size_t nrows, int with_max_f,
                                 int with_min_n, dpas_format format, dpas_error *err);
/* The columns dpas_render_rules writes (up to 10), their count returned: what a schema of its
 * rows is made from. */
DPAS_API size_t dpas_rules_columns(int with_max_f, int with_min_n, dpas_column cols[10]);

/* How cost rows are shown. */
typedef struct dpas_cost_view {
    dpas_format format;
    dpas_units units;  /* text: human byte counts */
    int all;           /* text: list the combinations that are not realisable too, with why */
    const char *label; /* the scenario's label, or NULL */
} dpas_cost_view;

/* Text: the step, the links and the realisable rows (bytes per worker, ratio to the ring
 * AllReduce, flat and hierarchical time); JSON: a document with every row and column; CSV and
 * markdown: every row and column. Caller owns the string (dpas_free). */
DPAS_API char *dpas_render_cost(const dpas_cost *c, const dpas_cost_view *v, dpas_error *err);

/* The inventory's rows (dpas_inventory): text with one human column in `units`, the other
 * formats with both SI and IEC. */
DPAS_API char *dpas_render_inventory(const dpas_inventory_row *rows, size_t nrows,
                                     dpas_format format, dpas_units units, const char *label,
                                     dpas_error *err);

/* A memory check (dpas_memory_check) as a table of quantities, or a JSON document. */
DPAS_API char *dpas_render_memory(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                                  const dpas_memory *m, dpas_format format, dpas_units units,
                                  const char *label, dpas_error *err);
/* "one replica's training state (2.8 TB, zero16) exceeds ..." for a check that does not fit. */
DPAS_API size_t dpas_memory_message(const dpas_scenario *s, const dpas_convention *c,
                                    int zero_stage, const dpas_memory *m, char *buf, size_t cap);

typedef struct dpas_render_opts {
    dpas_format format;
    dpas_units units;  /* for text and markdown */
    int explain;       /* add each attribute's equation with the numbers substituted */
    unsigned attrs;    /* bit per dpas_attr to show; 0 = all */
    const char *label; /* scenario label, or NULL */
} dpas_render_opts;

/* Render inputs and report. Returns a NUL-terminated string owned by the caller (dpas_free),
 * or NULL with err set (DPAS_EUNDEF when an attribute asked for by `attrs` is undefined). */
DPAS_API char *dpas_render_report(const dpas_scenario *s, const dpas_report *r,
                                  const dpas_render_opts *opts, dpas_error *err);

/* The attribute's equation with the inputs substituted ("dp_degree - 1 = 128 - 1 = 127"), as
 * --explain shows it; snprintf-style (the length the whole text needs). */
DPAS_API size_t dpas_report_explain(const dpas_scenario *s, const dpas_report *r, dpas_attr a,
                                    char *buf, size_t cap);

/* The sentence for one warning bit of a report ("dp_degree 96 does not divide ..."). */
DPAS_API size_t dpas_warning_message(const dpas_report *r, unsigned warning, char *buf, size_t cap);

/* Render an error as an RFC 9457 problem (application/problem+json) + "\n":
 *   {"type": "urn:dpas:error:EINVAL", "title": "invalid input", "status": 400,
 *    "detail": "dp_degree must be >= 1, got 0", "instance": "/api/v1/eval",
 *    "code": "EINVAL", "field": "dp_degree", "hint": "..."}
 * type names the code (dpas_err_name) and title is its title (dpas_err_title); status is the
 * HTTP status (0: the code's own, dpas_err_status); detail is the library's whole sentence;
 * instance, when not NULL, the resource asked for (the server's request path); code, field (when
 * there is one) and hint (when not NULL: a front end's own words on how to give what is missing,
 * "give --dp N") are extension members. */
DPAS_API char *dpas_render_error_json(const dpas_error *err, int status, const char *instance,
                                      const char *hint);

/* Render a listing: a registry kind, DPAS_LIST_PRECISIONS or DPAS_LIST_KEYS (every key of a
 * request: its CLI flag, query parameter, Python keyword and file key, and the analyses that
 * take it). */
DPAS_API char *dpas_render_list(const dpas_registry *reg, dpas_kind kind, dpas_format format,
                                dpas_error *err);
/* The columns dpas_render_list writes for kind (static storage), with their count; NULL (and 0)
 * for an unknown kind. */
DPAS_API const dpas_column *dpas_list_columns(dpas_kind kind, size_t *ncols);

/* ---- the fields of the JSON documents -------------------------------------------------------------- */

/* What a JSON document's field holds: a value of a column type, an object of fields, rows (an
 * array of objects of fields) or a list of sentences. */
typedef enum dpas_field_shape {
    DPAS_FIELD_VALUE = 0,
    DPAS_FIELD_OBJECT,
    DPAS_FIELD_ROWS,
    DPAS_FIELD_TEXTS,
    DPAS_FIELD_ATTRS /* an object of the attributes shown, by name (dpas_attr_name), each of its
                        attribute's kind (dpas_attr_kind), or of sub[0]'s type when sub is set */
} dpas_field_shape;
#define DPAS_FIELD_NULLABLE 1u /* may be null (no value, or not computed) */
#define DPAS_FIELD_OPTIONAL 2u /* written only for some inputs (a calibration, f, a compute rate) */
#define DPAS_FIELD_SIGNED 4u   /* BYTES: may be negative (a headroom past the capacity) */

/* One field: its name, its type (a value's, as a column's: a BYTES value is exact, with
 * "<name>_exact" beside it when its decimal does not terminate), its unit or NULL, and for an
 * object or rows the fields of the object or of a row. The renderers write their documents from
 * these tables, field by field, so a schema read from them is the document's. */
typedef struct dpas_field {
    const char *name;
    dpas_col_type type;
    dpas_field_shape shape;
    unsigned flags; /* DPAS_FIELD_* (and bits of the library's own above them) */
    const char *unit;
    const struct dpas_field *sub;
    size_t nsub;
} dpas_field;

/* The documents `-o json` writes from a field table. */
typedef enum dpas_doc {
    DPAS_DOC_EVAL = 0,
    DPAS_DOC_COST,
    DPAS_DOC_STEP,
    DPAS_DOC_MEMORY,
    DPAS_DOC_INVENTORY,
    DPAS_DOC_COUNT
} dpas_doc;

/* The fields of a document after its dpas_version and schema_version, in the order written
 * (static storage), their count in *n; NULL (and 0) for an unknown document. */
DPAS_API const dpas_field *dpas_doc_fields(dpas_doc d, size_t *n);

/* ---- rendering a calibration ------------------------------------------------------------------------------- */

/* The calibration as a report: per test, what was read and how its collective and rank count
 * were found, each model's parameters, the regimes, the residuals per size, then the
 * predictions (pred may be NULL). JSON: {"file", "lines", "foreign_lines", "tests": [...],
 * "fits": [{"collective", "ranks", "model", "alpha_s", "beta_bytes_per_s", "regimes" (piecewise),
 * "max_rel_residual", ...}], "predictions": [{"collective", "ranks", "bytes", "alpha_beta_s",
 * "piecewise_s", "empirical_s", ...}], "notes", "warnings"}, null where undefined. CSV: one row
 * per model and regime, or with predictions the predictions. */
DPAS_API char *dpas_render_netmodel(const dpas_netmodel *m, const dpas_net_prediction *pred,
                                    size_t npred, dpas_format format, dpas_error *err);
/* The notes (how each collective and rank count was found; with verbose, the lines skipped
 * and the first of them) and warnings, one "note: ..." or "warning: ..." line each, for a
 * front end's stderr. "" when there are none. */
DPAS_API char *dpas_netmodel_notes(const dpas_netmodel *m, const dpas_net_prediction *pred,
                                   size_t npred, int verbose, dpas_error *err);
/* Measured time against each model over the size, log-log, every test: SVG text, or a PNG
 * file through cairo (DPAS_EINVAL without cairo). */
DPAS_API char *dpas_netmodel_svg(const dpas_netmodel *m, dpas_error *err);
DPAS_API int dpas_netmodel_png(const dpas_netmodel *m, const char *path, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
