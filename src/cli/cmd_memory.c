/* dpas memory: does one replica's training state fit the memory of its accelerators? */
#include "cli.h"

#include <stdlib.h>
#include <string.h>

static const char *memory_help =
    "usage: dpas memory [NAME|FILE] [INPUT FLAGS] [--state NAME] [--zero 0|1|2|3] [-o FORMAT]\n"
    "\n"
    "Does one replica's training state fit the memory of its accelerators? Exit 0 when it\n"
    "fits, 2 (a physics violation, with the numbers) when it does not.\n"
    "\n"
    "  --state NAME          zero16 (default), megatron18, or any convention of dpas inventory\n"
    "  --zero STAGE          ZeRO stage 1, 2 or 3 partitions the zero16 state across replicas\n"
    "                        (Rajbhandari et al. 2019); default 0\n"
    "  -o, --output FORMAT   text (default), json, csv or markdown\n"
    "      --units UNITS     si (default) or iec\n"
    "\n"
    "inputs (as dpas eval):\n" SCEN_INPUT_HELP;

int cmd_memory(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {{"output", required_argument, 0, 'o'},
                                         {"help", no_argument, 0, 'h'},
                                         SCEN_LONG_OPTIONS,
                                         {"units", required_argument, 0, O_UNITS},
                                         {"state", required_argument, 0, O_STATE},
                                         {"zero", required_argument, 0, O_ZERO},
                                         {0, 0, 0, 0}};
    scen_args a = {0};
    dpas_units units = DPAS_UNITS_SI;
    const char *state = "zero16";
    int64_t zero = 0;
    dpas_error err = {0};
    int opt, rc = 0;
    cli_begin(c, opts);
    while (!rc && (opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int common = cli_common_option(c, "memory", opt, memory_help);
        if (common != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        if (scen_take(&a, opt, optarg))
            continue;
        switch (opt) {
        case O_UNITS: rc = cli_parse_units(c, "memory", optarg, &units); break;
        case O_STATE: state = optarg; break;
        case O_ZERO:
            if (dpas_parse_int("--zero", optarg, &zero, &err))
                rc = cli_fail(c, &err);
            else if (zero < 0 || zero > 3)
                rc = cli_usage(c, "memory", "--zero must be 0, 1, 2 or 3, got %lld",
                               (long long)zero);
            break;
        default: rc = cli_bad_option(c, "memory", argv);
        }
    }
    if (rc)
        return rc;
    if (argc - optind > 1)
        return cli_usage(c, "memory", "memory takes at most one NAME or FILE, got %d",
                         argc - optind);
    a.positional = argc - optind ? argv[optind] : NULL;
    if ((rc = scen_check(c, "memory", &a)))
        return rc;
    const dpas_convention *convention = NULL;
    if (dpas_convention_find(state, &convention, &err))
        return cli_fail(c, &err);
    dpas_report r;
    dpas_memory m;
    char *out = NULL;
    if ((rc = scen_load(&a, SCEN_POS_EITHER, &err)) || (rc = dpas_evaluate(&a.s, &r, &err)) ||
        (rc = dpas_memory_check(&a.s, convention, (int)zero, &m, &err)))
        goto fail;
    if (!m.fits) {
        err.code = DPAS_EPHYSICS;
        snprintf(err.field, sizeof err.field, "memory");
        dpas_memory_message(&a.s, convention, (int)zero, &m, err.message, sizeof err.message);
        goto fail;
    }
    if (!(out = dpas_render_memory(&a.s, convention, (int)zero, &m, (dpas_format)c->format, units,
                                   a.label, &err)))
        goto fail;
    scen_print_warnings(c, &r, 0);
    rc = cli_emit(c, out);
    scen_free(&a);
    return rc;
fail:
    scen_free(&a);
    return cli_fail(c, &err);
}
