/* The scenario inputs shared by show, eval, cost, inventory and memory: a named scenario, a file
 * and flags, resolved into one dpas_scenario. */
#include "cli.h"

#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const struct scen_input scen_inputs[SCEN_NINPUTS] = {
    {O_SCENARIO, "scenario", "--scenario"}, {O_MODEL, "model", "--model"},
    {O_PARAMS, "params", "--params"},       {O_FLEET, "fleet", "--fleet"},
    {O_NODES, "nodes", "--nodes"},          {O_APN, "accelerators_per_node", "--accelerators-per-node"},
    {O_DP, "dp", "--dp"},                   {O_GRAD, "grad", "--grad"},
    {O_CKPT, "ckpt", "--ckpt"},             {O_WEIGHTS, "weights", "--weights"},
};

int scen_take(cli *c, const char *cmd, scen_args *a, int opt, const char *arg, int *rc)
{
    for (size_t i = 0; i < SCEN_NINPUTS; i++) {
        if (scen_inputs[i].opt != opt)
            continue;
        if (a->given[i])
            *rc = cli_usage(c, cmd, "%s is given twice", scen_inputs[i].flag);
        a->given[i] = arg;
        return 1;
    }
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

int scen_load(cli *c, const char *cmd, scen_args *a, int positional_kind, dpas_error *err)
{
    int rc;
    (void)c;
    (void)cmd;
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
        if (file)
            rc = dpas_spec_load_file(a->spec, a->positional, err);
        else
            rc = dpas_spec_set(a->spec, "scenario", a->positional, "scenario", err);
        if (rc)
            return rc;
    }
    for (size_t i = 0; i < SCEN_NINPUTS; i++) {
        if (!a->given[i])
            continue;
        const char *v = a->given[i];
        if (scen_inputs[i].opt == O_WEIGHTS && !strcmp(v, "none"))
            v = NULL;
        if ((rc = dpas_spec_set(a->spec, scen_inputs[i].key, v, scen_inputs[i].flag, err)))
            return rc;
    }
    if ((rc = dpas_spec_resolve(a->spec, a->reg, &a->s, err)))
        return rc;
    a->label = dpas_spec_label(a->spec);
    return 0;
}

void scen_free(scen_args *a)
{
    dpas_spec_free(a->spec);
    dpas_registry_free(a->reg);
}

void scen_print_warnings(cli *c, const dpas_report *r)
{
    if (c->format == DPAS_FORMAT_JSON)
        return;
    for (unsigned bit = 1; bit && bit <= r->warnings; bit <<= 1) {
        if (r->warnings & bit) {
            char w[400];
            dpas_warning_message(r, bit, w, sizeof w);
            fprintf(c->err, "dpas: warning: %s\n", w);
        }
    }
}
