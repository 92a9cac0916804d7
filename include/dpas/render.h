/* dpas/render.h — rendering reports, analyses and listings
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_RENDER_H
#define DPAS_RENDER_H

#include "dpas/evaluate.h"
#include "dpas/rules.h"
#include "dpas/schedules.h"
#include "dpas/inventory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- rendering the analyses -------------------------------------------------------------------- */

/* The rule catalogue as a table: with n > 0 a "max_f" column, with f >= 0 a "min_n" column.
 * convention: NULL for each rule's default row, "all" for every row, or a convention name that
 * replaces the default where a rule has it. */
DPAS_API char *dpas_render_rules(int64_t n, int64_t f, const char *convention, int format,
                                 dpas_error *err);

typedef struct dpas_cost_opts {
    const dpas_rule *const *rules; /* the rules to cost, or NULL for every default rule */
    size_t nrules;
    unsigned schedules;   /* bit per dpas_schedule_id; 0 = all */
    int64_t iterations;   /* of iterative rules (geometric median, centered clipping); 0 = 10 */
    int64_t steps;        /* bytes and times for this many steps; 0 = 1 */
    int64_t f;            /* Byzantine replicas to tolerate, -1 = not asked */
    double compute_rate;  /* FLOP/s per worker for the rule's own compute; 0 = not computed */
    int all;              /* text: list the combinations that are not realisable too */
    int format, units;
    const char *label;
    const dpas_links *links; /* inter-node alpha and beta to use instead of the fabric's (a
                                calibration), or NULL; intra-node still from the fleet's node */
    const char *links_source; /* where they come from, for the output */
} dpas_cost_opts;

/* rule x schedule: realisable or why not, max f at dp_degree, bytes per worker (exact), ratio to
 * the ring AllReduce, time per step flat and hierarchical (when the fleet's links are known). */
DPAS_API char *dpas_render_cost(const dpas_scenario *s, const dpas_cost_opts *o, dpas_error *err);

DPAS_API char *dpas_render_inventory(const dpas_scenario *s, int format, int units,
                                     const char *label, dpas_error *err);

DPAS_API char *dpas_render_memory(const dpas_scenario *s, const dpas_convention *c, int zero_stage,
                                  const dpas_memory *m, int format, int units, const char *label,
                                  dpas_error *err);
/* "one replica's training state (2.8 TB, zero16) exceeds ..." for a check that does not fit. */
DPAS_API size_t dpas_memory_message(const dpas_scenario *s, const dpas_convention *c,
                                    int zero_stage, const dpas_memory *m, char *buf, size_t cap);

typedef struct dpas_render_opts {
    int format;        /* dpas_format */
    int units;         /* dpas_units, for text and markdown */
    int explain;       /* add each attribute's equation with the numbers substituted */
    unsigned attrs;    /* bit per dpas_attr to show; 0 = all */
    const char *label; /* scenario label, or NULL */
} dpas_render_opts;

/* Render inputs and report. Returns a NUL-terminated string owned by the caller (dpas_free),
 * or NULL with err set (DPAS_EUNDEF when an attribute asked for by `attrs` is undefined). */
DPAS_API char *dpas_render_report(const dpas_scenario *s, const dpas_report *r,
                                  const dpas_render_opts *opts, dpas_error *err);

/* The sentence for one warning bit of a report ("dp_degree 96 does not divide ..."). */
DPAS_API size_t dpas_warning_message(const dpas_report *r, unsigned warning, char *buf, size_t cap);

/* Render a mlsysim-style error object {"status":"error","title":...,"reason":...} + "\n". */
DPAS_API char *dpas_render_error_json(const dpas_error *err);

/* Render a registry listing (kind, or -1 for precisions). */
DPAS_API char *dpas_render_list(const dpas_registry *reg, int kind, int format, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
