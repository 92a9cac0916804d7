/* SPDX-License-Identifier: Apache-2.0 */
/* The library's identity for bindings: its version and the sizes of its public structs. */
#include "../internal.h"

#include <string.h>

size_t dpas_sizeof(const char *t)
{
    static const struct {
        const char *name;
        size_t size;
    } sizes[] = {
        {"dpas_error", sizeof(dpas_error)},
        {"dpas_output", sizeof(dpas_output)},
        {"dpas_rational", sizeof(dpas_rational)},
        {"dpas_bytes", sizeof(dpas_bytes)},
        {"dpas_scenario", sizeof(dpas_scenario)},
        {"dpas_report", sizeof(dpas_report)},
        {"dpas_value", sizeof(dpas_value)},
        {"dpas_model", sizeof(dpas_model)},
        {"dpas_hardware", sizeof(dpas_hardware)},
        {"dpas_node", sizeof(dpas_node)},
        {"dpas_fabric", sizeof(dpas_fabric)},
        {"dpas_fleet", sizeof(dpas_fleet)},
        {"dpas_named_scenario", sizeof(dpas_named_scenario)},
        {"dpas_cost_opts", sizeof(dpas_cost_opts)},
        {"dpas_rule", sizeof(dpas_rule)},
        {"dpas_render_opts", sizeof(dpas_render_opts)},
        {"dpas_cost", sizeof(dpas_cost)},
        {"dpas_cost_row", sizeof(dpas_cost_row)},
        {"dpas_cost_view", sizeof(dpas_cost_view)},
        {"dpas_rule_row", sizeof(dpas_rule_row)},
        {"dpas_inventory_row", sizeof(dpas_inventory_row)},
        {"dpas_memory", sizeof(dpas_memory)},
        {"dpas_links", sizeof(dpas_links)},
        {"dpas_convention", sizeof(dpas_convention)},
        {"dpas_request_opts", sizeof(dpas_request_opts)},
        {"dpas_cell", sizeof(dpas_cell)},
        {"dpas_column", sizeof(dpas_column)},
        {"dpas_sweep_tally", sizeof(dpas_sweep_tally)},
        {"dpas_series", sizeof(dpas_series)},
        {"dpas_plot_spec", sizeof(dpas_plot_spec)},
        {"dpas_sweep_figure", sizeof(dpas_sweep_figure)},
        {"dpas_writer_opts", sizeof(dpas_writer_opts)},
    };
    for (size_t i = 0; t && i < sizeof sizes / sizeof sizes[0]; i++)
        if (!strcmp(t, sizes[i].name))
            return sizes[i].size;
    return 0;
}

const char *dpas_version(void) { return DPAS_VERSION; }

/* The name tables of the formats and of the units (DPAS_FORMAT_MAP, DPAS_UNITS_MAP). */
#define NAME_OF(id, name) name,
static const char *const format_names[] = {DPAS_FORMAT_MAP(NAME_OF)};
static const char *const units_names[] = {DPAS_UNITS_MAP(NAME_OF)};
#undef NAME_OF
_Static_assert(sizeof format_names / sizeof *format_names == DPAS_FORMAT_COUNT, "a format each");
_Static_assert(sizeof units_names / sizeof *units_names == DPAS_UNITS_COUNT, "a name each");

/* names are read in any case (JSON as json), as rules and schedules are (issue 29) */
static int index_of(const char *const *names, int n, const char *name)
{
    for (int i = 0; name && i < n; i++)
        if (!dpas__strcasecmp(name, names[i]))
            return i;
    return -1;
}

const char *dpas_format_name(dpas_format f)
{
    return (unsigned)f < DPAS_FORMAT_COUNT ? format_names[f] : NULL;
}
int dpas_format_from_name(const char *name)
{
    return index_of(format_names, DPAS_FORMAT_COUNT, name);
}
const char *dpas_units_name(dpas_units u)
{
    return (unsigned)u < DPAS_UNITS_COUNT ? units_names[u] : NULL;
}
int dpas_units_from_name(const char *name) { return index_of(units_names, DPAS_UNITS_COUNT, name); }

int dpas_json_schema_version(void) { return DPAS__JSON_SCHEMA_VERSION; }
