/* The scenario inputs shared by show, eval, cost, inventory, memory and sweep: a named scenario,
 * a file and flags, resolved into one dpas_scenario through the library's input table. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Each input flag and the input it sets. */
static const struct {
    int opt;
    dpas_input input;
} flags[] = {
    {O_SCENARIO, DPAS_INPUT_SCENARIO},
    {O_MODEL, DPAS_INPUT_WORKLOAD},
    {O_PARAMS, DPAS_INPUT_PARAMETERS},
    {O_FLEET, DPAS_INPUT_FLEET},
    {O_NODES, DPAS_INPUT_NODES},
    {O_APN, DPAS_INPUT_ACCELERATORS_PER_NODE},
    {O_DP, DPAS_INPUT_DP_DEGREE},
    {O_GRAD, DPAS_INPUT_GRADIENT_WIDTH},
    {O_CKPT, DPAS_INPUT_CHECKPOINT_WIDTH},
    {O_WEIGHTS, DPAS_INPUT_WEIGHT_WIDTH},
    {O_NODE, DPAS_INPUT_NODE},
    {O_FABRIC, DPAS_INPUT_FABRIC},
};

int scen_input_of(int opt)
{
    for (size_t i = 0; i < sizeof flags / sizeof flags[0]; i++)
        if (flags[i].opt == opt)
            return (int)flags[i].input;
    return -1;
}

int scen_take(scen_args *a, int opt, const char *arg)
{
    int in = scen_input_of(opt);
    if (in < 0)
        return 0;
    a->given[in] = arg; /* cli_common_option has refused a repeat already */
    return 1;
}

int scen_check(cli *c, const char *cmd, const scen_args *a)
{
    if (a->given[DPAS_INPUT_WORKLOAD] && a->given[DPAS_INPUT_PARAMETERS])
        return cli_usage(c, cmd, "give --model or --params, not both");
    return 0;
}

/* A positional argument is a file when it looks like one, else a named scenario. */
static int is_file(const char *p)
{
    size_t n = strlen(p);
    struct stat st;
    if (strchr(p, '/') || (n > 5 && !strcmp(p + n - 5, ".yaml")) ||
        (n > 4 && !strcmp(p + n - 4, ".yml")) || (n > 5 && !strcmp(p + n - 5, ".json")))
        return 1;
    return stat(p, &st) == 0;
}

int scen_load(scen_args *a, int positional_kind, dpas_error *err)
{
    int rc = 0;
    if (!(a->spec = dpas_spec_new())) {
        err->code = DPAS_ENOMEM;
        snprintf(err->message, sizeof err->message, "out of memory");
        return err->code;
    }
    if ((rc = dpas_registry_builtin(&a->reg, err)))
        return rc;
    if (a->positional) {
        int file = positional_kind == SCEN_POS_FILE ||
                   (positional_kind == SCEN_POS_EITHER && is_file(a->positional));
        rc = file ? dpas_spec_load_file(a->spec, a->positional, err)
                  : dpas_spec_set_input(a->spec, DPAS_INPUT_SCENARIO, a->positional, "scenario",
                                        err);
        if (rc)
            return rc;
    }
    for (int in = 0; in < DPAS_INPUT_COUNT && !rc; in++) {
        const char *v = a->given[in];
        if (!v)
            continue;
        if (in == DPAS_INPUT_WEIGHT_WIDTH && !strcmp(v, "none"))
            v = NULL;
        rc = dpas_spec_set_input(a->spec, (dpas_input)in, v, dpas_input_flag((dpas_input)in), err);
    }
    if (rc || (rc = dpas_spec_resolve(a->spec, a->reg, &a->s, err)))
        return rc;
    a->label = dpas_spec_label(a->spec);
    return 0;
}

void scen_free(scen_args *a)
{
    dpas_spec_free(a->spec);
    dpas_registry_free(a->reg);
    a->spec = NULL;
    a->reg = NULL;
}

void scen_print_warnings(cli *c, const dpas_report *r, int in_payload)
{
    if (in_payload && c->format == DPAS_FORMAT_JSON) /* show and eval's JSON has "warnings" */
        return;
    for (unsigned bit = 1; bit && bit <= r->warnings; bit <<= 1) {
        if (r->warnings & bit) {
            char w[400];
            dpas_warning_message(r, bit, w, sizeof w);
            fprintf(c->err, "dpas: warning: %s\n", w);
        }
    }
}
