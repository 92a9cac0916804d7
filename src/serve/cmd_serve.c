/* SPDX-License-Identifier: Apache-2.0 */
/* dpas serve: the command that runs the server until SIGINT or SIGTERM. */
#include "../cli/cli.h"
#include "serve.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *serve_help =
    "usage: dpas serve [--bind ADDR] [--port N] [--threads N] [--timeout S] [--quiet]\n"
    "                  [--allow-host NAMES] [--allow-origin ORIGINS] [--workers N] [--queue N]\n"
    "                  [--cpu-limit S]\n"
    "\n"
    "The calculator in a browser and an HTTP JSON API over the same library: open\n"
    "http://127.0.0.1:8080/ for the page; /api/v1/eval, cost, rules, inventory, memory,\n"
    "sweep, plot.svg, calibrate (POST), scenarios/NAME and registry/KIND answer with the\n"
    "objects of 'dpas COMMAND -o json' (GET /api/v1 lists them, /api/v1/openapi.json\n"
    "describes them; docs/serve.md has the details).\n"
    "\n"
    "  --bind ADDR     a numeric IPv4 or IPv6 address to listen on (default 127.0.0.1; any\n"
    "                  other than loopback is warned about: there is no authentication)\n"
    "  --port N        TCP port (default 8080; 0 picks a free one)\n"
    "  --threads N     I/O threads, each serving many connections and answering the cheap\n"
    "                  requests (default: the CPUs, at most 64)\n"
    "  --timeout S     seconds a request may take to arrive, and an idle connection may stay\n"
    "                  open (default 10)\n"
    "  --quiet         no access log (one line per request on stderr otherwise)\n"
    "  --allow-host NAMES  host names (comma-separated) to answer to beyond the --bind\n"
    "                  address (and localhost on loopback): any other Host is refused (421)\n"
    "  --allow-origin ORIGINS  origins (http://NAME[:PORT], comma-separated) whose pages may\n"
    "                  read the answers; any other cross-origin request is refused (403)\n"
    "  --workers N     heavy requests (calibrate, sweep, plot.svg, and any with a\n"
    "                  calibration part) run at once, each in a process of its own\n"
    "                  (default: the CPUs, at most 64)\n"
    "  --queue N       heavy requests that may wait beyond those; more are refused (503)\n"
    "                  (default 16)\n"
    "  --cpu-limit S   seconds of CPU a heavy request may use (default 10); beyond, 503\n"
    "  -o json         errors as JSON objects on stdout (the server writes nothing else there)\n"
    "  -h, --help      this help\n"
    "\n"
    "It prints 'listening on http://ADDR:PORT/' on stderr when ready; SIGINT or SIGTERM stop\n"
    "it cleanly.\n";

/* Long options only; their values are letters so that the CLI's repeat check covers them. */
enum {
    S_BIND = 'b',
    S_PORT = 'p',
    S_THREADS = 't',
    S_TIMEOUT = 'T',
    S_QUIET = 'q',
    S_ALLOW_HOST = 'H',
    S_ALLOW_ORIGIN = 'O',
    S_WORKERS = 'w',
    S_QUEUE = 'Q',
    S_CPU = 'C'
};

static int loopback(const char *addr)
{
    return !strncmp(addr, "127.", 4) || !strcmp(addr, "::1") || !strncmp(addr, "::ffff:127.", 11);
}

static int int_option(cli *c, const char *flag, const char *v, int64_t lo, int64_t hi, int *out)
{
    dpas_error err;
    int64_t x;
    memset(&err, 0, sizeof err);
    if (dpas_parse_int(flag, v, &x, &err))
        return cli_fail(c, &err);
    if (x < lo || x > hi)
        return cli_usage(c, "serve", "%s must be between %lld and %lld, got %lld", flag,
                         (long long)lo, (long long)hi, (long long)x);
    *out = (int)x;
    return 0;
}

/* Seconds as a decimal number, whole argument, within [lo, hi]. */
static int seconds_option(cli *c, const char *flag, const char *v, double lo, double hi,
                          double *out)
{
    char *end = NULL;
    errno = 0;
    double x = *v ? strtod(v, &end) : 0;
    if (!*v || !end || *end || errno || !isfinite(x) || x < lo || x > hi)
        return cli_usage(c, "serve", "%s must be a number of seconds from %g to %g, got \"%s\"",
                         flag, lo, hi, v);
    *out = x;
    return 0;
}

int cmd_serve(cli *c, int argc, char **argv)
{
    static const struct option opts[] = {{"help", no_argument, 0, 'h'},
                                         {"output", required_argument, 0, 'o'},
                                         {"bind", required_argument, 0, S_BIND},
                                         {"port", required_argument, 0, S_PORT},
                                         {"threads", required_argument, 0, S_THREADS},
                                         {"timeout", required_argument, 0, S_TIMEOUT},
                                         {"quiet", no_argument, 0, S_QUIET},
                                         {"allow-host", required_argument, 0, S_ALLOW_HOST},
                                         {"allow-origin", required_argument, 0, S_ALLOW_ORIGIN},
                                         {"workers", required_argument, 0, S_WORKERS},
                                         {"queue", required_argument, 0, S_QUEUE},
                                         {"cpu-limit", required_argument, 0, S_CPU},
                                         {0, 0, 0, 0}};
    if (argc == 2 && !strcmp(argv[1], "--lane-job")) /* the heavy lane's process (lane.c) */
        return srv_lane_job();
    if (argc == 2 && !strcmp(argv[1], "--lane-probe"))
        return srv_lane_probe();
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int cpus = ncpu < 1 ? 1 : ncpu > SRV_MAX_THREADS ? SRV_MAX_THREADS : (int)ncpu;
    srv_options o = {.bind = "127.0.0.1",
                     .port = 8080,
                     .timeout = SRV_DEFAULT_TIMEOUT,
                     .threads = cpus,
                     .workers = cpus < SRV_MAX_WORKERS ? cpus : SRV_MAX_WORKERS,
                     .queue = 16,
                     .cpu_limit = SRV_DEFAULT_CPU_LIMIT,
                     .log = c->err};
    int opt, rc;
    cli_begin(c, opts);
    while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
        int common = cli_common_option(c, "serve", opt, serve_help); /* -h, -o, repeats */
        if (common != CLI_OTHER) {
            if (common != CLI_NEXT)
                return common;
            continue;
        }
        switch (opt) {
        case S_BIND: o.bind = !strcmp(optarg, "localhost") ? "127.0.0.1" : optarg; break;
        case S_PORT:
            if ((rc = int_option(c, "--port", optarg, 0, 65535, &o.port)))
                return rc;
            break;
        case S_THREADS:
            if ((rc = int_option(c, "--threads", optarg, 1, SRV_MAX_THREADS, &o.threads)))
                return rc;
            break;
        case S_TIMEOUT:
            if ((rc = int_option(c, "--timeout", optarg, 1, 3600, &o.timeout)))
                return rc;
            break;
        case S_QUIET: o.quiet = 1; break;
        case S_ALLOW_HOST: o.allow_hosts = optarg; break; /* checked by srv_start */
        case S_ALLOW_ORIGIN: o.allow_origins = optarg; break;
        case S_WORKERS:
            if ((rc = int_option(c, "--workers", optarg, 1, SRV_MAX_WORKERS, &o.workers)))
                return rc;
            break;
        case S_QUEUE:
            if ((rc = int_option(c, "--queue", optarg, 0, SRV_MAX_QUEUE, &o.queue)))
                return rc;
            break;
        case S_CPU:
            if ((rc = seconds_option(c, "--cpu-limit", optarg, 0.001, 3600, &o.cpu_limit)))
                return rc;
            break;
        default: return cli_bad_option(c, "serve", argv);
        }
    }
    if (optind < argc)
        return cli_usage(c, "serve", "serve takes no arguments, got \"%s\"", argv[optind]);

    /* SIGINT and SIGTERM are blocked in every thread (the pool inherits the mask) and taken by
     * sigtimedwait below; SIGPIPE is ignored so that a closed log pipe is an error, not death. */
    sigset_t stop, old_mask;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, &old_mask);
    struct sigaction ign, old_pipe;
    memset(&ign, 0, sizeof ign);
    ign.sa_handler = SIG_IGN;
    sigaction(SIGPIPE, &ign, &old_pipe);

    dpas_error err;
    int port = 0;
    memset(&err, 0, sizeof err);
    srv_server *S = srv_start(&o, &port, &err);
    if (!S) {
        sigaction(SIGPIPE, &old_pipe, NULL);
        pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
        return cli_fail(c, &err);
    }
    int v6 = strchr(o.bind, ':') != NULL;
    if (!loopback(o.bind))
        fprintf(c->err,
                "dpas: warning: listening on %s, beyond loopback: anyone who can reach it "
                "can use this server (no authentication, no TLS)\n",
                o.bind);
    fprintf(c->err, "dpas: listening on http://%s%s%s:%d/\n", v6 ? "[" : "", o.bind, v6 ? "]" : "",
            port);
    fflush(c->err);
    int sig;
    for (;;) {
        struct timespec tick = {0, 200 * 1000 * 1000};
        sig = sigtimedwait(&stop, NULL, &tick);
        if (sig == SIGINT || sig == SIGTERM)
            break;
        srv_watch(S);
    }
    fprintf(c->err, "dpas: %s: stopping\n", sig == SIGINT ? "SIGINT" : "SIGTERM");
    srv_stop(S);
    sigaction(SIGPIPE, &old_pipe, NULL);
    pthread_sigmask(SIG_SETMASK, &old_mask, NULL);
    return EXIT_OK;
}
