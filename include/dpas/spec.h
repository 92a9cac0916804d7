/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/spec.h — scenario inputs from files and text, resolved against a registry
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_SPEC_H
#define DPAS_SPEC_H

#include "dpas/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scenario files and rendering ------------------------------------------------------------ */

/* The inputs of a scenario: each has a name (its key in a request, dpas/request.h, and in
 * messages) and a key in a scenario file. How each front end spells an input is the request's
 * key table (dpas_key_flag, dpas_key_query, ...). */
typedef enum dpas_input {
    DPAS_INPUT_NAME = 0,              /* name (file only): the scenario's label */
    DPAS_INPUT_SCENARIO,              /* scenario: a named scenario to start from */
    DPAS_INPUT_WORKLOAD,              /* workload (also "model"): a registry model */
    DPAS_INPUT_WORKLOAD_NAME,         /* workload_name (file: workload.name) of an inline one */
    DPAS_INPUT_PARAMETERS,            /* parameters (file: workload.parameters): a count */
    DPAS_INPUT_FLEET,                 /* fleet: a registry fleet */
    DPAS_INPUT_FLEET_NAME,            /* fleet_name (file: fleet.name) of an inline fleet */
    DPAS_INPUT_NODES,                 /* nodes (file: fleet.nodes or fleet.count) */
    DPAS_INPUT_ACCELERATORS_PER_NODE, /* accelerators_per_node */
    DPAS_INPUT_NODE,                  /* node (file: fleet.node): a registry node */
    DPAS_INPUT_FABRIC,                /* fabric (file: fleet.fabric): a registry fabric */
    DPAS_INPUT_DP_DEGREE,             /* dp_degree */
    DPAS_INPUT_GRADIENT_WIDTH,        /* gradient_bytes_per_param */
    DPAS_INPUT_CHECKPOINT_WIDTH,      /* checkpoint_bytes_per_param */
    DPAS_INPUT_WEIGHT_WIDTH,          /* weight_bytes_per_param (optional) */
    DPAS_INPUT_COUNT
} dpas_input;

/* An input's name and its key in a scenario file are the key table's: dpas_key_name and
 * dpas_key_file of the key numbered as the input (dpas/request.h). */

/* The inputs of a scenario as read from text, before resolution. Any pointer may be NULL
 * (absent). Owned by whoever fills it; see dpas_spec_free. */
typedef struct dpas_spec dpas_spec;

DPAS_API dpas_spec *dpas_spec_new(void);
DPAS_API void dpas_spec_free(dpas_spec *spec);

/* Read a scenario file into spec, field by field; later calls and setters override earlier
 * values. A name ending in .json is JSON; .yaml or .yml is YAML (a flow mapping,
 * "{dp_degree: 8, ...}", included); any other is JSON when the text starts with '{' and parses
 * as JSON, else YAML. is_json for the text: 1 JSON, 0 YAML, -1 guess as for other names.
 * A file holds one YAML document: a second one, even empty or malformed, is DPAS_EPARSE (it
 * would otherwise be ignored). Two keys for one input (fleet.nodes and fleet.count) are
 * DPAS_EPARSE. Errors carry the file's line and column where the parser knows them (YAML
 * everywhere; JSON for malformed text; a JSON value has no position, and none is made up). */
DPAS_API int dpas_spec_load_file(dpas_spec *spec, const char *path, dpas_error *err);
DPAS_API int dpas_spec_load_text(dpas_spec *spec, const char *text, size_t len, int is_json,
                                 const char *origin, dpas_error *err);

/* Set one input from text (as a CLI flag would). */
DPAS_API int dpas_spec_set_input(dpas_spec *spec, dpas_input in, const char *value,
                                 const char *field, dpas_error *err);
/* The same by name: an input's key, its alias or its key in a scenario file ("dp_degree",
 * "model", "fleet.nodes", ...). `field` names the input in later messages; NULL uses its name.
 * A NULL value for "weight_bytes_per_param" removes the width (None). "workload" and
 * "parameters" replace each other, as do "fleet" and an inline fleet. Errors: DPAS_EINVAL for an unknown key. */
DPAS_API int dpas_spec_set(dpas_spec *spec, const char *key, const char *value, const char *field,
                           dpas_error *err);

/* Resolve a spec against a registry into scenario inputs and validate them
 * (dpas_scenario_validate). The scenario's strings are borrowed from spec and reg: keep both
 * alive while using it. Errors name the missing or bad input, with its file position when it
 * came from a file. */
DPAS_API int dpas_spec_resolve(dpas_spec *spec, const dpas_registry *reg, dpas_scenario *out,
                               dpas_error *err);

/* The label of the scenario: the file's "name", else the named scenario's full path (once
 * resolved), or NULL. */
DPAS_API const char *dpas_spec_label(const dpas_spec *spec);

#ifdef __cplusplus
}
#endif
#endif
