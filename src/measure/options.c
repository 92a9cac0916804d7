/* SPDX-License-Identifier: Apache-2.0 */
/* dpas-measure's options: every value parsed strictly (a number is the whole argument, finite,
 * in range), every option given is used or refused (an option given twice, an option that does
 * not apply), and errors name the option, the value and the rule. The options that are keys of
 * the library's request (--params, --model, --grad, --rule, --convention, --schedule, --f,
 * --iterations) go to its parser as a `dpas cost` request of dp_degree = the ranks, so that they
 * are checked as every front end checks them. Messages are printed by rank 0 only; every rank
 * parses the same argv. */
#define _POSIX_C_SOURCE 200809L
#include "measure.h"

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

void measure_say(const char *fmt, ...)
{
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        va_list ap;
        va_start(ap, fmt);
        fprintf(stderr, "dpas-measure: error: ");
        vfprintf(stderr, fmt, ap);
        fprintf(stderr, "\n");
        va_end(ap);
    }
}

static const char *help =
    "usage: mpirun [MPI OPTIONS] -np N dpas-measure [OPTIONS]\n"
    "\n"
    "Runs one aggregation schedule on N MPI ranks (one rank = one data-parallel replica) and\n"
    "reports predicted against measured bytes per rank, time per step and its local compute.\n"
    "\n"
    "  --params COUNT        gradient coordinates (1M, 4194304, 70.6e6, ...), or\n"
    "  --model NAME --scale K   a registry model's parameters divided by K\n"
    "  --grad fp32|bf16      element width on the wire (default fp32; kernels run in fp32)\n"
    "  --rule R              mean (default), median, trimmed_mean, meamed, sign_majority, krum,\n"
    "                        multi_krum, bulyan, centered_clipping\n"
    "  --convention NAME     blanchard (default) or byzfl, for krum and multi_krum\n"
    "  --schedule S          allreduce (default), allgather, sharded, sharded_distance\n"
    "  --f F                 Byzantine ranks the rule guards against (default: the most it can)\n"
    "  --byzantine K         the last K ranks send adversarial gradients\n"
    "  --attack A            signflip (default), scaled (x --attack-scale, default 100), alie,\n"
    "                        inf (every coordinate +-Inf) or nan (the last coordinate NaN)\n"
    "  --iters I             timed steps (default 5), after --warmup W (default 2)\n"
    "  --iterations T        centered_clipping iterations (default 10)\n"
    "  --verify yes|no       compare with the single-process kernel on rank 0 (default: yes\n"
    "                        when all gradients fit in 1 GiB)\n"
    "  --check-bytes PCT     exit 3 unless every rank's bytes are within PCT% of the prediction\n"
    "  --seed S              gradients' seed (default 1)\n"
    "  --calibration FILE    predict the step's time from nccl-tests output measured between\n"
    "                        the hosts (one rank per host; see --sweep): the all_reduce curve for\n"
    "                        allreduce and the sharded schedules, the all_gather curve for "
    "allgather\n"
    "  --intra-calibration FILE  the same for the links inside a host (all ranks on one host),\n"
    "                        needed when ranks share hosts (the hierarchical model)\n"
    "  --network-model M     default (the measured curve at its own scale, the nccl model\n"
    "                        elsewhere), nccl, empirical, piecewise or alpha_beta, as `dpas "
    "cost`;\n"
    "                        where ranks share\n"
    "                        hosts the hierarchical model is alpha-beta only\n"
    "  --sweep MIN..MAX      instead of a schedule: time all_reduce and all_gather over sizes\n"
    "                        MIN, 2 MIN, ... <= MAX bytes (K, M, G: 2^10, 2^20, 2^30) and print\n"
    "                        nccl-tests' table, which `dpas calibrate` reads\n"
    "  -o text|json|csv      output format (default text)\n"
    "\n"
    "Unless the environment says otherwise, dpas-measure asks OpenMPI for TCP (btl self,tcp),\n"
    "so that the kernel sees the bytes, and for the ring and pairwise algorithms dpas models.\n"
    "Exit status: 0 ok, 1 bad input, 3 a check failed (--check-bytes, ranks disagreeing on the\n"
    "aggregate, or the distributed result differing from the single-process kernel).\n";

/* A whole argument as a finite real number. */
static int parse_real(const char *name, const char *text, double *v)
{
    char *end = NULL;
    errno = 0;
    *v = text[0] ? strtod(text, &end) : 0;
    int ok = text[0] && end && !*end && errno == 0 && isfinite(*v);
    if (!ok)
        measure_say("%s must be a finite number, got \"%s\"", name, text);
    return ok ? 0 : 1;
}

/* A whole argument as an integer in [lo, hi]. */
static int parse_int_in(const char *name, const char *text, int64_t lo, int64_t hi, int64_t *v)
{
    dpas_error e;
    int rc = dpas_parse_int(name, text, v, &e);
    if (rc)
        measure_say("%s", e.message);
    else if (*v < lo || *v > hi) {
        measure_say("%s must be between %lld and %lld, got %lld", name, (long long)lo,
                    (long long)hi, (long long)*v);
        rc = 1;
    }
    return rc ? 1 : 0;
}

/* A byte size for --sweep: digits and an optional K, M or G (powers of 1024, as nccl-tests). */
static int parse_size(const char *text, size_t len, uint64_t *v)
{
    uint64_t x = 0, mul = 1;
    size_t i = 0;
    int ok = len > 0;
    for (; i < len && text[i] >= '0' && text[i] <= '9' && ok; i++)
        ok = !__builtin_mul_overflow(x, 10, &x) &&
             !__builtin_add_overflow(x, (uint64_t)(text[i] - '0'), &x);
    ok = ok && i > 0;
    if (ok && i + 1 == len) {
        char u = text[i];
        mul = u == 'K' || u == 'k'   ? 1ull << 10
              : u == 'M' || u == 'm' ? 1ull << 20
              : u == 'G' || u == 'g' ? 1ull << 30
                                     : 0;
        ok = mul != 0;
    } else if (ok) {
        ok = i == len;
    }
    ok = ok && !__builtin_mul_overflow(x, mul, v);
    return ok ? 0 : 1;
}

static int parse_sweep(const char *text, opts *o)
{
    const char *dots = strstr(text, "..");
    int rc = !dots || parse_size(text, (size_t)(dots - text), &o->sweep_min) ||
             parse_size(dots + 2, strlen(dots + 2), &o->sweep_max);
    if (rc)
        measure_say("--sweep must be MIN..MAX in bytes (e.g. 64K..16M), got \"%s\"", text);
    else if (o->sweep_min < 4 || o->sweep_min > o->sweep_max || o->sweep_max > (1ull << 31)) {
        measure_say("--sweep needs 4 <= MIN <= MAX <= 2G bytes, got \"%s\"", text);
        rc = 1;
    }
    return rc;
}

/* One word out of a list, or an error naming the choices. */
static int parse_word(const char *name, const char *text, const char *const *words, int *out)
{
    int found = -1;
    for (int i = 0; words[i] && found < 0; i++)
        if (!strcmp(text, words[i]))
            found = i;
    if (found < 0) {
        char list[160] = "";
        for (int i = 0; words[i]; i++)
            snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", i ? ", " : "",
                     words[i]);
        measure_say("%s must be one of %s, got \"%s\"", name, list, text);
    } else {
        *out = found;
    }
    return found < 0;
}

/* What was given, as text, until it is resolved. */
typedef struct given {
    const char *model, *params, *rule, *convention, *f, *iterations;
    uint64_t scale;
    int scale_given, attack_given, attack_scale_given;
    unsigned mask;           /* bit per option letter class, for refusing what does not apply */
    unsigned char seen[128]; /* options given, by their letter: a second one is refused */
} given;

enum { G_RUN = 1u, G_SWEEP = 2u, G_CAL = 4u, G_BF16 = 8u };

static const struct option long_opts[] = {{"params", 1, 0, 'p'},
                                          {"model", 1, 0, 'm'},
                                          {"scale", 1, 0, 'k'},
                                          {"grad", 1, 0, 'g'},
                                          {"rule", 1, 0, 'r'},
                                          {"convention", 1, 0, 'c'},
                                          {"schedule", 1, 0, 's'},
                                          {"f", 1, 0, 'f'},
                                          {"byzantine", 1, 0, 'b'},
                                          {"attack", 1, 0, 'a'},
                                          {"attack-scale", 1, 0, 'A'},
                                          {"iters", 1, 0, 'i'},
                                          {"warmup", 1, 0, 'w'},
                                          {"iterations", 1, 0, 'T'},
                                          {"verify", 1, 0, 'v'},
                                          {"check-bytes", 1, 0, 'C'},
                                          {"seed", 1, 0, 'S'},
                                          {"calibration", 1, 0, 'L'},
                                          {"intra-calibration", 1, 0, 'I'},
                                          {"network-model", 1, 0, 'N'},
                                          {"sweep", 1, 0, 'W'},
                                          {"output", 1, 0, 'o'},
                                          {"help", 0, 0, 'h'},
                                          {0, 0, 0, 0}};

/* The words of the options that take one. */
static const char *const w_grad[] = {"fp32", "bf16", NULL};
static const char *const w_attack[] = {"signflip", "scaled", "alie", "inf", "nan", NULL};
static const char *const w_yesno[] = {"no", "yes", NULL};
static const char *const w_format[] = {"text", "json", "csv", NULL};
static const char *const w_sched[] = {"allreduce", "allgather", "sharded", "sharded_distance",
                                      NULL};
static const dpas_schedule_id sched_ids[] = {DPAS_SCHED_ALLREDUCE, DPAS_SCHED_ALLGATHER,
                                             DPAS_SCHED_SHARDED, DPAS_SCHED_SHARDED_DISTANCE};

/* One option of the run (not the sweep). */
static int option_run(int opt, const char *arg, opts *o, given *g)
{
    dpas_error e;
    int k = 0, rc = 0;
    switch (opt) {
    case 'p': g->params = arg; break;
    case 'm': g->model = arg; break;
    case 'k':
        g->scale_given = 1;
        rc = dpas_parse_count("--scale", arg, &g->scale, &e) || g->scale == 0;
        if (rc)
            measure_say("--scale must be a whole number >= 1, got \"%s\"", arg);
        break;
    case 'g':
        rc = parse_word("--grad", arg, w_grad, &k);
        o->width = k ? 2 : 4;
        g->mask |= k ? G_BF16 : 0;
        break;
    case 'r': g->rule = arg; break;
    case 'c': g->convention = arg; break;
    case 's':
        rc = parse_word("--schedule", arg, w_sched, &k);
        o->schedule = sched_ids[k];
        break;
    case 'f': g->f = arg; break;
    case 'b': rc = parse_int_in("--byzantine", arg, 0, 1000000, &o->byzantine); break;
    case 'a':
        rc = parse_word("--attack", arg, w_attack, &k);
        o->attack = (attack_kind)k;
        g->attack_given = 1;
        break;
    case 'A':
        g->attack_scale_given = 1;
        rc = parse_real("--attack-scale", arg, &o->attack_scale);
        if (!rc && o->attack_scale == 0) {
            measure_say("--attack-scale must be a finite non-zero number, got \"%s\"", arg);
            rc = 1;
        }
        break;
    case 'T': g->iterations = arg; break;
    case 'v': rc = parse_word("--verify", arg, w_yesno, &o->verify); break;
    case 'C':
        rc = parse_real("--check-bytes", arg, &o->check_bytes);
        if (!rc && o->check_bytes < 0) {
            measure_say("--check-bytes must be a percentage >= 0, got \"%s\"", arg);
            rc = 1;
        }
        break;
    case 'S':
        rc = dpas_parse_count("--seed", arg, &o->seed, &e) ? (measure_say("%s", e.message), 1) : 0;
        break;
    case 'L': o->calibration = arg; break;
    case 'I': o->intra_calibration = arg; break;
    default: /* the library's names of its network models */
        rc = dpas_netmodel_kind_parse(arg, &k, &e)
                 ? (measure_say("--network-model: %s", e.message), 1)
                 : 0;
        o->network_model = k;
        break;
    }
    return rc;
}

/* Every option: the common ones here, the run's in option_run. */
static int option_one(int opt, const char *arg, opts *o, given *g)
{
    int rc = 0, k = 0;
    int64_t v = 0;
    if (opt > 0 && opt < 128 && g->seen[opt]++) { /* a second value: one would be ignored */
        for (const struct option *lo = long_opts; lo->name; lo++)
            if (lo->val == opt)
                measure_say("--%s is given twice; give it once", lo->name);
        return 1;
    }
    switch (opt) {
    case 'h': o->help = 1; break;
    case 'i':
        rc = parse_int_in("--iters", arg, 1, 1000000, &v);
        o->iters = (int)v;
        break;
    case 'w':
        rc = parse_int_in("--warmup", arg, 0, 1000000, &v);
        o->warmup = (int)v;
        break;
    case 'o':
        rc = parse_word("-o", arg, w_format, &k);
        o->format = (out_format)k;
        break;
    case 'W':
        rc = parse_sweep(arg, o);
        g->mask |= G_SWEEP;
        break;
    default:
        rc = option_run(opt, arg, o, g);
        g->mask |= opt == 'L' || opt == 'I' || opt == 'N' ? G_CAL : G_RUN;
        break;
    }
    return rc;
}

/* The run's keys as a `dpas cost` request on nranks replicas (one fleet node per rank, the
 * wire's width for gradients and checkpoints): the library checks each as every front end does;
 * its typed answer gives the parameters, the rule, f and the iterations. */
static int request(const given *g, int nranks, const dpas_rule **rule, int64_t *f,
                   int64_t *iterations, uint64_t *params, dpas_error *e)
{
    dpas_request *rq = NULL;
    dpas_registry *reg = NULL;
    char n[24];
    const char *width = g->mask & G_BF16 ? "bf16" : "fp32";
    snprintf(n, sizeof n, "%d", nranks);
    const char *keys[][2] = {{"dp_degree", n},
                             {"nodes", n},
                             {"accelerators_per_node", "1"},
                             {"gradient_bytes_per_param", width},
                             {"checkpoint_bytes_per_param", width},
                             {"workload", g->model},
                             {"parameters", g->params},
                             {"rule", g->rule ? g->rule : "mean"},
                             {"convention", g->convention},
                             {"f", g->f},
                             {"iterations", g->iterations}};
    int rc = dpas_request_new(DPAS_ANALYSIS_COST, &rq, e);
    for (size_t i = 0; !rc && i < sizeof keys / sizeof keys[0]; i++)
        if (keys[i][1])
            rc = dpas_request_set(rq, keys[i][0], keys[i][1], e);
    if (!rc && !(rc = dpas_registry_builtin(&reg, e)) && !(rc = dpas_request_resolve(rq, reg, e))) {
        const dpas_request_opts *o = dpas_request_opts_of(rq);
        *rule = o->cost.rules[0];
        *f = o->f;
        *iterations = o->cost.iterations;
        *params = dpas_request_scenario(rq)->parameters;
    }
    if (rc && dpas_request_missing(rq) == DPAS_KEY_WORKLOAD)
        dpas_error_set(e, rc, "parameters", "give --params COUNT or --model NAME [--scale K]");
    dpas_request_free(rq);
    dpas_registry_free(reg);
    return rc;
}

/* The gradient's size, the rule and its f. */
static int resolve_rule(const given *g, int nranks, opts *o)
{
    dpas_error e;
    int64_t m = 0;
    int rc = 1;
    if (g->scale_given && !g->model)
        measure_say("--scale divides a --model's parameters: give --model NAME too");
    else if (request(g, nranks, &o->rule, &o->f, &o->cc_iterations, &o->params, &e))
        measure_say("%s", e.message);
    else if (o->cc_iterations > 1000000)
        measure_say("--iterations must be <= 1000000 here, got %lld", (long long)o->cc_iterations);
    else if ((o->params /= g->scale) == 0)
        measure_say("--scale %llu leaves no coordinate of the model's parameters",
                    (unsigned long long)g->scale);
    else if (o->params > (uint64_t)INT32_MAX)
        measure_say("--params %llu exceeds what one MPI message holds here (2^31 - 1 elements): "
                    "scale the model down with --scale",
                    (unsigned long long)o->params);
    else
        rc = 0;
    if (!rc && o->f < 0) { /* by default the most the rule tolerates */
        dpas_rule_max_f(o->rule, nranks, &m, NULL);
        o->f = m < 0 ? 0 : m;
    }
    return rc;
}

/* Rule, schedule, f and the calibration options checked against each other and the ranks. */
static int resolve_run(const given *g, int nranks, opts *o)
{
    const char *why = NULL;
    int rc = 1;
    if (resolve_rule(g, nranks, o))
        ;
    else if (!dpas_schedule_realises(o->schedule, o->rule, &why))
        measure_say("schedule %s cannot realise %s: %s", dpas_schedule_name(o->schedule),
                    o->rule->name, why);
    else if (o->byzantine >= nranks)
        measure_say("--byzantine %lld must be below the rank count %d", (long long)o->byzantine,
                    nranks);
    else if ((g->attack_given || g->attack_scale_given) && o->byzantine == 0)
        measure_say("%s needs --byzantine K (K >= 1): with no Byzantine rank no attack runs",
                    g->attack_given ? "--attack" : "--attack-scale");
    else if (g->attack_scale_given && o->attack != ATTACK_SCALED)
        measure_say("--attack-scale is the factor of --attack scaled, not of %s", attack_name(o));
    else if (!dpas_rule_tolerates(o->rule, nranks, o->f))
        measure_say("%s (%s) needs %s, got n = %d ranks and f = %lld", o->rule->name,
                    o->rule->convention, o->rule->condition, nranks, (long long)o->f);
    else if ((o->schedule == DPAS_SCHED_SHARDED || o->schedule == DPAS_SCHED_SHARDED_DISTANCE) &&
             o->params < (uint64_t)nranks)
        measure_say("a sharded schedule needs at least one coordinate per rank: --params %llu < %d",
                    (unsigned long long)o->params, nranks);
    else if ((g->mask & G_CAL) && !o->calibration)
        measure_say("--intra-calibration and --network-model need --calibration FILE");
    else
        rc = 0;
    return rc;
}

int options_parse(int argc, char **argv, int nranks, opts *o)
{
    given g = {.scale = 1};
    int opt, rc = 0;
    *o = (opts){.width = 4,
                .schedule = DPAS_SCHED_ALLREDUCE,
                .warmup = 2,
                .iters = 5,
                .attack = ATTACK_SIGNFLIP,
                .attack_scale = 100,
                .seed = 1,
                .verify = -1,
                .check_bytes = -1};
    opterr = 0;
    optind = 1;
    while (!rc && (opt = getopt_long(argc, argv, "o:h", long_opts, NULL)) != -1) {
        if (opt == '?' || opt == ':') {
            measure_say("unknown option or missing value: \"%s\" (see: dpas-measure --help)",
                        argv[optind - 1]);
            rc = 1;
        } else {
            rc = option_one(opt, optarg, o, &g);
        }
    }
    if (rc || o->help)
        ;
    else if (optind < argc) {
        measure_say("unexpected argument \"%s\"", argv[optind]);
        rc = 1;
    } else if ((g.mask & G_SWEEP) && (g.mask & (G_RUN | G_CAL))) {
        measure_say(
            "--sweep times all_reduce and all_gather only: it takes --iters, --warmup and -o, "
            "not the options of a schedule");
        rc = 1;
    } else if (!(g.mask & G_SWEEP)) {
        rc = resolve_run(&g, nranks, o);
    } else if (nranks < 2 || o->sweep_min < 4 * (uint64_t)nranks) {
        measure_say(
            "--sweep needs at least 2 ranks and MIN >= 4 x ranks = %d bytes (one float per rank "
            "in all_gather), got %d ranks and MIN %llu",
            4 * nranks, nranks, (unsigned long long)o->sweep_min);
        rc = 1;
    }
    if (o->help) {
        int rank = 0;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        if (rank == 0)
            fputs(help, stdout);
    }
    return rc;
}

const char *attack_name(const opts *o) { return o->byzantine == 0 ? "none" : w_attack[o->attack]; }
