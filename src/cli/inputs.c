/* SPDX-License-Identifier: Apache-2.0 */
/* The commands over a request (show, eval, cost, inventory, memory, sweep, rules): their flags
 * are the library's key table, every key's flag for every command, so that a key an analysis
 * does not take is refused by the library as every front end refuses it; the positional NAME
 * or FILE is the scenario to start from. Nothing here checks a value: the CLI maps flags to keys
 * and the library decides. */
#include "cli.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The long options: -o, -h, the command's own, then every key that has a flag. */
static struct option *options_of(const cli_cmd *cmd)
{
    size_t nown = 0;
    while (cmd->own && cmd->own[nown].name)
        nown++;
    struct option *o = calloc(2 + nown + DPAS_KEY_COUNT + 1, sizeof *o), *p = o;
    if (!o)
        return NULL;
    *p++ = (struct option){"output", required_argument, 0, 'o'};
    *p++ = (struct option){"help", no_argument, 0, 'h'};
    for (size_t i = 0; i < nown; i++)
        *p++ = cmd->own[i];
    for (int k = 0; k < DPAS_KEY_COUNT; k++) {
        const char *flag = dpas_key_flag((dpas_key)k);
        if (flag)
            *p++ = (struct option){flag + 2,
                                   dpas_key_metavar((dpas_key)k) ? required_argument : no_argument,
                                   0, O_KEY + k};
    }
    return o;
}

/* Where the CLI lists the names a key takes: " (dpas list models)", " (dpas rules)". */
static void see_of(dpas_key k, FILE *f)
{
    const char *see = dpas_key_see(k);
    if (see)
        fprintf(f, " (dpas %s%s)", strcmp(see, "rules") ? "list " : "", see);
}

void cli_key_help(FILE *f, dpas_key k)
{
    const char *flag = dpas_key_flag(k), *mv = dpas_key_metavar(k);
    int w = fprintf(f, "  %s%s%s", flag, mv ? " " : "", mv ? mv : "");
    fprintf(f, "%*s %s", w < 30 ? 30 - w : 0, "", dpas_key_name(k));
    if (dpas_key_help(k))
        fprintf(f, ": %s", dpas_key_help(k));
    see_of(k, f);
    fprintf(f, "\n");
}

/* The help: usage, what the command does, its own options, then the keys it takes from the
 * key table (the flag, what it stands for, what it is). */
static char *help_of(const cli_cmd *cmd)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    if (!f)
        return NULL;
    fprintf(f, "usage: %s\n\n%s\n", cmd->usage, cmd->about);
    if (cmd->own_help)
        fprintf(f, "\n%s", cmd->own_help);
    /* the formats from the library's name table (DPAS_FORMAT_MAP), the first the default */
    fprintf(f, "  -o, --output FORMAT   ");
    for (int i = 0; dpas_format_name((dpas_format)i); i++)
        fprintf(f, "%s%s%s",
                i == 0                                   ? ""
                : dpas_format_name((dpas_format)(i + 1)) ? ", "
                                                         : " or ",
                dpas_format_name((dpas_format)i), i == 0 ? " (default)" : "");
    fprintf(f, "\n  -h, --help            this help\n\n");
    for (int pass = 0; pass < 2; pass++) {
        bool any = false;
        for (int k = 0; k < DPAS_KEY_COUNT; k++) {
            const char *flag = dpas_key_flag((dpas_key)k);
            bool input = dpas_key_flags((dpas_key)k) & DPAS_KEY_INPUT;
            if (!flag || input != (pass == 0) || !dpas_analysis_takes(cmd->analysis, (dpas_key)k))
                continue;
            if (!any)
                fprintf(f, "%s",
                        pass == 0 ? "scenario inputs (the key of a scenario file; flags "
                                    "override the NAME or FILE):\n"
                                  : "options:\n");
            any = true;
            cli_key_help(f, (dpas_key)k);
        }
        if (any)
            fprintf(f, "\n");
    }
    fprintf(f, "Messages name the keys (dp_degree); dpas list keys shows every key's flag.\n");
    return fclose(f) ? (free(text), NULL) : text;
}

/* "give --dp N, or dp_degree: in a scenario file": how to give a missing key on the CLI. */
static char *hint_of(dpas_key k)
{
    const char *flag = dpas_key_flag(k), *mv = dpas_key_metavar(k), *file = dpas_key_file(k);
    char *h = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&h, &n); /* as long as the key table's words: never cut */
    if (!f)
        return NULL;
    if (!flag)
        fprintf(f, "give %s: in a scenario file", file ? file : dpas_key_name(k));
    else
        fprintf(f, "give %s%s%s%s%s%s", flag, mv ? " " : "", mv ? mv : "", file ? ", or " : "",
                file ? file : "", file ? ": in a scenario file" : "");
    if (fclose(f)) {
        free(h);
        return NULL;
    }
    return h;
}

int cli_fail_request(cli *c, const dpas_request *rq, const dpas_error *err)
{
    int k = dpas_request_missing(rq);
    if (k < 0)
        return cli_fail(c, err);
    char *hint = hint_of((dpas_key)k);
    int rc = hint ? cli_fail_hint(c, err, hint) : cli_fail(c, err);
    free(hint);
    return rc;
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

static int positional(cli *c, const cli_cmd *cmd, int argc, char **argv, dpas_request *rq)
{
    dpas_error err = {0};
    int npos = argc - optind, rc;
    if (cmd->positional == POS_NONE && npos)
        return cli_usage(c, cmd->name, "%s takes no arguments, got \"%s\"", cmd->name,
                         argv[optind]);
    if (cmd->positional == POS_NAME && npos != 1)
        return npos ? cli_usage(c, cmd->name, "%s takes one scenario NAME, got %d", cmd->name, npos)
                    : cli_usage(c, cmd->name, "%s needs a scenario NAME", cmd->name);
    if (npos > 1)
        return cli_usage(c, cmd->name, "%s takes at most one %s, got %d", cmd->name,
                         cmd->positional == POS_FILE ? "FILE" : "NAME or FILE", npos);
    if (!npos)
        return 0;
    const char *p = argv[optind];
    if (!strcmp(p, "-") && cmd->positional != POS_NAME) { /* the scenario file on stdin */
        char *text;
        size_t len;
        if ((rc = cli_read_input(c, "the scenario file", 1u << 20, &text, &len)))
            return rc;
        size_t i = 0;
        while (i < len && (text[i] == ' ' || text[i] == '\t' || text[i] == '\n' || text[i] == '\r'))
            i++;
        rc = dpas_request_load_text(rq, text, len, i < len && text[i] == '{', "(standard input)",
                                    &err);
        free(text);
        return rc ? cli_fail(c, &err) : 0;
    }
    int file = cmd->positional == POS_FILE || (cmd->positional == POS_EITHER && is_file(p));
    rc = file ? dpas_request_load_file(rq, p, &err) : dpas_request_set(rq, "scenario", p, &err);
    return rc ? cli_fail(c, &err) : 0;
}

/* The keys given, in order, until the command's own options have said which analysis the
 * request is (a sweep is a plot when --plot or --chart is given). */
typedef struct pending {
    int key;
    const char *value; /* in argv */
} pending;

/* One option: a key kept for the request, or the command's own. */
static int take(cli *c, const cli_cmd *cmd, int opt, char **argv, pending *keys, size_t *nkeys)
{
    if (opt >= O_KEY && opt < O_KEY + DPAS_KEY_COUNT) {
        keys[(*nkeys)++] = (pending){opt - O_KEY, optarg ? optarg : "true"};
        return 0;
    }
    int rc =
        cmd->take && opt != '?' && opt != ':' ? cmd->take(c, cmd->ctx, opt, optarg) : CLI_OTHER;
    return rc == CLI_OTHER ? cli_bad_option(c, cmd->name, argv) : rc;
}

static int parse(cli *c, const cli_cmd *cmd, int argc, char **argv, pending *keys, size_t *nkeys)
{
    struct option *opts = options_of(cmd);
    char *help = opts ? help_of(cmd) : NULL;
    int opt, rc = 0;
    if (!help) {
        free(opts);
        return cli_usage(c, cmd->name, "out of memory");
    }
    cli_begin(c, opts);
    while (!rc && (opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int common = opt >= O_KEY ? CLI_OTHER : cli_common_option(c, cmd->name, opt, help);
        if (common == EXIT_OK)
            rc = -1; /* help printed */
        else if (common != CLI_OTHER)
            rc = common == CLI_NEXT ? 0 : common;
        else
            rc = take(c, cmd, opt, argv, keys, nkeys);
    }
    c->opts = NULL;
    free(opts);
    free(help);
    return rc;
}

int cli_request(cli *c, const cli_cmd *cmd, int argc, char **argv, dpas_request **rq,
                dpas_registry **reg)
{
    dpas_error err = {0};
    pending *keys = calloc((size_t)argc + 1, sizeof *keys); /* at most one key per argument */
    size_t nkeys = 0;
    int rc;
    *rq = NULL;
    *reg = NULL;
    if (!keys)
        return cli_usage(c, cmd->name, "out of memory");
    if ((rc = parse(c, cmd, argc, argv, keys, &nkeys))) {
        free(keys);
        return rc;
    }
    dpas_analysis a = cmd->choose ? cmd->choose(cmd->ctx) : cmd->analysis;
    rc = dpas_request_new(a, rq, &err);
    for (size_t i = 0; !rc && i < nkeys; i++)
        rc = dpas_request_set(*rq, dpas_key_name((dpas_key)keys[i].key), keys[i].value, &err);
    free(keys);
    if (rc)
        return cli_fail(c, &err);
    if ((rc = positional(c, cmd, argc, argv, *rq)))
        return rc;
    if (dpas_registry_builtin(reg, &err))
        return cli_fail(c, &err);
    if (dpas_request_resolve(*rq, *reg, &err))
        return cli_fail_request(c, *rq, &err);
    return 0;
}

void cli_print_warnings(cli *c, const dpas_report *r, int in_payload)
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
