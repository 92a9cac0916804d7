/* dpas/spec.h — scenario inputs from files and text, resolved against a registry
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_SPEC_H
#define DPAS_SPEC_H

#include "dpas/registry.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- scenario files and rendering ------------------------------------------------------------ */

/* The inputs of a scenario as read from text, before resolution. Any pointer may be NULL
 * (absent). Owned by whoever fills it; see dpas_spec_free. */
typedef struct dpas_spec dpas_spec;

DPAS_API dpas_spec *dpas_spec_new(void);
DPAS_API void dpas_spec_free(dpas_spec *spec);

/* Read a scenario file (YAML, or JSON when the name ends in .json or the text starts with '{')
 * into spec, field by field; later calls and setters override earlier values. */
DPAS_API int dpas_spec_load_file(dpas_spec *spec, const char *path, dpas_error *err);
DPAS_API int dpas_spec_load_text(dpas_spec *spec, const char *text, size_t len, int is_json,
                                 const char *origin, dpas_error *err);

/* Set one input from text (as a CLI flag would). Keys: "name", "scenario", "model", "params",
 * "fleet", "nodes", "accelerators_per_node", "node", "fabric", "dp", "grad", "ckpt",
 * "weights". `field` names the input in later messages ("--dp"); NULL uses the seed's name.
 * A NULL value for "weights" removes the width (None). "model" and "params" replace each other,
 * as do "fleet" and an inline fleet. Errors: DPAS_EINVAL for an unknown key. */
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
