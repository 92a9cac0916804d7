/* SPDX-License-Identifier: Apache-2.0 */
/* The request layer's internals: the request as given and as resolved, and what every part of
 * a resolution shares (request_inputs.c), below request.c (keys, options, the resolution),
 * request_sweep.c (a sweep's axes and metrics) and request_run.c (the analyses). */
#ifndef DPAS_REQUEST_INPUTS_H
#define DPAS_REQUEST_INPUTS_H

#include "../internal.h"

/* Whether rule r uses key k: 1 or 0 for a key only some rules use (convention: the rules with
 * conventions; iterations: the iterative rules), -1 for any other key. From the key table. */
int dpas__key_used_by(dpas_key k, const dpas_rule *r);

/* A key as given: its text (a list's items joined at commas), or a REPEAT key's items. */
typedef struct dpas__given {
    bool set;
    bool items; /* built item by item (dpas_request_add) */
    char *text;
    char **paths;
    size_t npaths;
} dpas__given;

struct dpas_request {
    dpas_analysis analysis;
    dpas__given v[DPAS_KEY_COUNT];
    dpas_spec *spec; /* the scenario file or base inputs, then the keys */
    bool resolved;
    int missing;
    const dpas_registry *reg;
    /* the typed request */
    dpas_scenario scenario;
    dpas_report report;
    const char *label;
    dpas_request_opts opts;
    const dpas_rule **rules; /* opts.cost.rules (owned) */
    dpas_netmodel *net;      /* the calibration's model (owned) */
    dpas_links links;        /* ... and its inter-node link */
    char *links_source;      /* the calibration's files or texts, named (owned) */
    /* calibrations given as text (dpas_request_calibration_text; owned copies) */
    char **cal_texts, **cal_origins;
    size_t *cal_lens, ncal_texts;
    /* calibrate: what to read (collective, ranks, gpus_per_node, test) and predict (owned) */
    dpas_calib_options calib;
    size_t *tests;
    uint64_t *sizes;
    size_t nsizes;
    dpas_scale *at;
    size_t nat;
    dpas_sweep sweep;    /* its axes are owned */
    dpas_step_opts step; /* a step's options (its cost: opts.cost's) */
    char *placeholder[DPAS_INPUT_COUNT];
};

/* A key's text as given, or NULL. */
static inline const char *text_of(const dpas_request *rq, dpas_key k)
{
    return rq->v[k].set ? rq->v[k].text : NULL;
}

/* Set a missing key for the front end's hint and fail with the message. */
int dpas__request_missing(dpas_request *rq, dpas_key k, dpas_error *err, const char *fmt, ...)
    DPAS__PRINTF(4, 5);
/* A comma-separated list, split in a copy (items[0] owns it: free(items[0]), free(items)); no
 * empty item and no item twice (field names the list in messages). */
int dpas__request_split(const char *field, const char *text, char ***items, size_t *n,
                        dpas_error *err);
/* Apply the keys that are scenario inputs to the spec (override[k], when not NULL, replaces a
 * key's text: a sweep's placeholders), resolve and validate the scenario. */
int dpas__request_scenario(dpas_request *rq, char *const *override, dpas_error *err);
/* Resolve a sweep or plot request: its axes, the scenario of the inputs that do not vary, the
 * fixed rule and schedule, the metrics, the plot's y. */
int dpas__request_sweep(dpas_request *rq, dpas_error *err);
/* A step's own options (tokens, global_batch, sequence, mfu, bucket_bytes, precision, zero),
 * and parallelism and offload refused with why for what dpas does not model: request_step.c. */
int dpas__step_opts(dpas_request *rq, dpas_error *err);

#endif
