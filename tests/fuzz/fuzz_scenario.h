/* SPDX-License-Identifier: Apache-2.0 */
/* YAML and JSON scenario files: load, resolve against the built-in registry, evaluate, render;
 * never a crash; what renders as JSON parses as JSON with the seed's attributes. */
#include "fuzz.h"

#include <jansson.h>

static dpas_registry *reg;

static int fuzz_scenario(const uint8_t *data, size_t size, int is_json)
{
    if (!reg && dpas_registry_builtin(&reg, NULL))
        abort();
    dpas_spec *spec = dpas_spec_new();
    dpas_error e;
    dpas_scenario s;
    dpas_report r;
    if (dpas_spec_load_text(spec, (const char *)data, size, is_json, "fuzz", &e) == 0 &&
        dpas_spec_resolve(spec, reg, &s, &e) == 0 && dpas_evaluate(&s, &r, &e) == 0) {
        dpas_render_opts o = {.format = DPAS_FORMAT_JSON, .explain = 1, .label = dpas_spec_label(spec)};
        char *out = dpas_render_report(&s, &r, &o, &e);
        PROPERTY(out != NULL, "render: %s", e.message);
        json_error_t je;
        /* byte counts may exceed 2^63: read integers as reals (jansson stops at int64) */
        json_t *j = json_loads(out, JSON_DECODE_INT_AS_REAL, &je);
        PROPERTY(j != NULL, "rendered JSON does not parse: %s\n%s", je.text, out);
        json_t *a = json_object_get(j, "attributes");
        PROPERTY(json_object_size(a) == DPAS_ATTR_COUNT, "attributes");
        PROPERTY(json_number_value(json_object_get(a, "accelerators")) ==
                     (double)(s.nodes * s.accelerators_per_node),
                 "accelerators");
        json_decref(j);
        dpas_free(out);
        o.format = DPAS_FORMAT_TEXT;
        dpas_free(dpas_render_report(&s, &r, &o, &e));
    } else {
        PROPERTY(e.message[0], "an error without a message");
    }
    dpas_spec_free(spec);
    return 0;
}
