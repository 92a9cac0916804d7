/* SPDX-License-Identifier: Apache-2.0 */
/* The helpers every command shares: errors and usage messages, the options every command has,
 * lists of names, and the payload written to stdout with its errors checked. */
#include "cli.h"

#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cli_fail_hint(cli *c, const dpas_error *err, const char *hint)
{
    if (c->err_json || c->format == DPAS_FORMAT_JSON) {
        /* an RFC 9457 problem, its status the HTTP one of the exit code: 400 for 1 (a file that
         * cannot be read, EIO, is the user's too), 422 for 2; 500 out of memory */
        char *j = dpas_render_error_json(err, err->code == DPAS_EIO ? 400 : 0, NULL, hint);
        if (j)
            fputs(j, c->out);
        dpas_free(j);
    } else if (hint) {
        fprintf(c->err, "dpas: error: %s (%s)\n", err->message, hint);
    } else {
        fprintf(c->err, "dpas: error: %s\n", err->message);
    }
    return err->code == DPAS_EPHYSICS ? EXIT_PHYSICS : EXIT_BAD_INPUT;
}

int cli_fail(cli *c, const dpas_error *err) { return cli_fail_hint(c, err, NULL); }

int cli_usage(cli *c, const char *cmd, const char *fmt, ...)
{
    dpas_error e = {0};
    char *msg = NULL;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(NULL, 0, fmt, ap); /* the whole message, however long, then the hint */
    va_end(ap);
    if (n >= 0 && (msg = malloc((size_t)n + 1))) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    dpas_error_set(&e, DPAS_EINVAL, "", "%s (see: dpas %s%s--help)", msg ? msg : "out of memory",
                   cmd ? cmd : "", cmd && *cmd ? " " : "");
    free(msg);
    return cli_fail(c, &e);
}

/* The CLI's own options that belong to one command, to say so when another is given them (a
 * key of a request is the library's to refuse). */
static const struct {
    const char *name, *cmd;
} owners[] = {
    {"--all", "cost"},
    {"--plot", "sweep"},
    {"--chart", "sweep"},
    {"--no-chart", "sweep"},
};

int cli_bad_option(cli *c, const char *cmd, char **argv)
{
    if (optopt == 0 && optind > 0) {
        const char *a = argv[optind - 1];
        size_t l = strcspn(a, "=");
        for (size_t i = 0; i < sizeof owners / sizeof owners[0]; i++)
            if (strlen(owners[i].name) == l && !strncmp(a, owners[i].name, l) &&
                strcmp(owners[i].cmd, cmd))
                return cli_usage(c, cmd, "%s is an option of dpas %s, not of %s", owners[i].name,
                                 owners[i].cmd, cmd);
    }
    if (optopt == 'o')
        return cli_usage(c, cmd, "-o needs a value");
    if (optopt >= O_FIRST)
        return cli_usage(c, cmd, "%s needs a value", argv[optind - 1]);
    if (optopt > 0 && optopt < 256) /* a short option, perhaps inside a cluster such as -xo */
        return cli_usage(c, cmd, "unknown option \"-%c\"", optopt);
    return cli_usage(c, cmd, "unknown option \"%s\"", argv[optind - 1]);
}

void cli_begin(cli *c, const struct option *opts)
{
    c->opts = opts;
    c->nseen = 0;
    opterr = 0;
    optind = 0; /* 0: glibc re-initialises getopt fully (the CLI may run many times in a process) */
}

/* The option's name as the user wrote it: "--dp", "-o". */
static void option_name(const cli *c, int opt, char *buf, size_t cap)
{
    for (const struct option *o = c->opts; o && o->name; o++)
        if (o->val == opt) {
            snprintf(buf, cap, "--%s", o->name);
            return;
        }
    snprintf(buf, cap, "-%c", opt > 0 && opt < 256 ? opt : '?');
}

int cli_common_option(cli *c, const char *cmd, int opt, const char *help)
{
    if (opt == '?' || opt == ':')
        return CLI_OTHER;
    /* an option given twice would be used once and ignored once: an error on every command
     * (whatever its value; a request's keys are the library's to refuse) */
    for (size_t i = 0; i < c->nseen; i++)
        if (c->seen[i] == opt) {
            char name[64];
            option_name(c, opt, name, sizeof name);
            return cli_usage(c, cmd, "%s is given twice", name);
        }
    if (c->nseen < sizeof c->seen / sizeof c->seen[0])
        c->seen[c->nseen++] = opt;
    if (opt == 'h') {
        fputs(help, c->out);
        return EXIT_OK;
    }
    if (opt == 'o') {
        int rc = cli_parse_format(c, cmd, optarg);
        return rc ? rc : CLI_NEXT;
    }
    return CLI_OTHER;
}

/* "a, b or c": the names of a name table (name(i) NULL past the last), for a message. */
/* "a, b or c" of a name table, whole (a new string; NULL when out of memory). */
static char *names_of(const char *(*name)(int))
{
    size_t need = 1;
    for (int i = 0; name(i); i++)
        need += strlen(name(i)) + 4;
    char *buf = malloc(need);
    if (!buf)
        return NULL;
    size_t o = 0;
    buf[0] = '\0';
    for (int i = 0; name(i); i++)
        o += (size_t)snprintf(buf + o, need - o, "%s%s",
                              i == 0        ? ""
                              : name(i + 1) ? ", "
                                            : " or ",
                              name(i));
    return buf;
}
static const char *format_at(int i) { return dpas_format_name((dpas_format)i); }
static const char *units_at(int i) { return dpas_units_name((dpas_units)i); }

int cli_parse_format(cli *c, const char *cmd, const char *v)
{
    int i = !strcasecmp(v, "md") ? DPAS_FORMAT_MARKDOWN : dpas_format_from_name(v);
    if (i >= 0) {
        c->format = i;
        c->err_json = i == DPAS_FORMAT_JSON;
        return 0;
    }
    char q[96], *names = names_of(format_at);
    int rc = cli_usage(c, cmd, "--output must be %s, got %s", names ? names : "a known format",
                       dpas_quote(v, q, sizeof q));
    free(names);
    return rc;
}

int cli_parse_units(cli *c, const char *cmd, const char *v, dpas_units *units)
{
    int u = dpas_units_from_name(v);
    if (u >= 0) {
        *units = (dpas_units)u;
        return 0;
    }
    char q[96], *names = names_of(units_at);
    int rc = cli_usage(c, cmd, "--units must be %s, got %s", names ? names : "si, iec or bytes",
                       dpas_quote(v, q, sizeof q));
    free(names);
    return rc;
}

int cli_write_failed(cli *c)
{
    dpas_error e = {.code = DPAS_EIO};
    snprintf(e.message, sizeof e.message, "cannot write the output: %s",
             ferror(c->out) ? "write error" : "closed");
    fprintf(c->err, "dpas: error: %s\n", e.message); /* stdout is what failed */
    return EXIT_BAD_INPUT;
}

int cli_sink(void *ctx, const char *data, size_t len)
{
    cli *c = ctx;
    return len && fwrite(data, 1, len, c->out) != len ? DPAS_EIO : 0;
}

int cli_emit(cli *c, char *payload)
{
    if (!payload) {
        dpas_error e = {.code = DPAS_ENOMEM};
        snprintf(e.message, sizeof e.message, "out of memory");
        return cli_fail(c, &e);
    }
    size_t n = strlen(payload);
    int bad = fwrite(payload, 1, n, c->out) != n || fflush(c->out) || ferror(c->out);
    dpas_free(payload);
    return bad ? cli_write_failed(c) : EXIT_OK;
}

int cli_read_input(cli *c, const char *what, size_t max, char **text, size_t *len)
{
    *text = NULL;
    if (!c->in)
        return cli_usage(c, "", "%s cannot be read from standard input here (\"-\")", what);
    char *buf = malloc(max + 1);
    if (!buf)
        return cli_usage(c, "", "out of memory reading %s from standard input", what);
    size_t n = 0;
    while (n <= max) { /* one byte past the limit, to tell a longer input */
        size_t r = fread(buf + n, 1, max + 1 - n, c->in);
        if (!r)
            break;
        n += r;
    }
    if (ferror(c->in) || n > max) {
        free(buf);
        return n > max ? cli_usage(c, "", "%s on standard input is larger than %zu MiB (the limit)",
                                   what, max >> 20)
                       : cli_usage(c, "", "cannot read %s from standard input", what);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return 0;
}
