/* SPDX-License-Identifier: Apache-2.0 */
/* dpas-measure's options: every value parsed strictly (a number is the whole argument, finite,
 * in range), every option given is used or refused (an option given twice, an option that does
 * not apply), and errors name the option, the value and the rule. The options that are keys of
 * the library's request are read from its key table (the keys marked DPAS_KEY_MEASURE: their
 * flags, metavars and help); they go to its parser as a `dpas cost` request of dp_degree = the
 * ranks, so that they are checked as every front end checks them (the gradient's width, the
 * schedule, the calibration and its model are also read here, where they mean the run's). Messages are printed by rank 0 only; every rank
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

static const char *help_head =
    "usage: mpirun [MPI OPTIONS] -np N dpas-measure [OPTIONS]\n"
    "\n"
    "Runs one aggregation schedule on N MPI ranks (one rank = one data-parallel replica) and\n"
    "reports predicted against measured bytes per rank, time per step and its local compute.\n"
    "\n"
    "keys (the library's key table: the run is a `dpas cost` request on N replicas):\n";

/* What a key means here beyond its line in the key table. */
static const struct {
    dpas_key key;
    const char *note;
} notes[] = {
    {DPAS_KEY_PARAMETERS, "the gradient's coordinates (or --model NAME --scale K)"},
    {DPAS_KEY_GRADIENT_WIDTH, "here fp32 (default) or bf16 on the wire; kernels run in fp32"},
    {DPAS_KEY_RULE, "here one rule, mean by default"},
    {DPAS_KEY_SCHEDULE, NULL}, /* the schedules it runs, from runs[] below */
    {DPAS_KEY_F, "default: the most the rule tolerates on N ranks"},
    {DPAS_KEY_CALIBRATION, "here one file, measured between the hosts (one rank per host; see "
                           "--sweep): predicts the step's time"},
    {DPAS_KEY_NETWORK_MODEL, "where ranks share hosts the hierarchical model is alpha-beta only"},
};

static const char *help_tail =
    "\n"
    "options of dpas-measure:\n"
    "  --scale K                    a registry model's parameters divided by K (with --model)\n"
    "  --byzantine K                the last K ranks send adversarial gradients\n"
    "  --attack A                   signflip (default), scaled (x --attack-scale, default 100),\n"
    "                               alie, inf (every coordinate +-Inf) or nan (the last\n"
    "                               coordinate NaN)\n"
    "  --iters I                    timed steps (default 5), after --warmup W (default 2)\n"
    "  --verify yes|no              compare with the single-process kernel on rank 0 (default:\n"
    "                               yes when all gradients fit in 1 GiB)\n"
    "  --check-bytes PCT            exit 3 unless every rank's bytes are within PCT% of the\n"
    "                               prediction\n"
    "  --seed S                     gradients' seed (default 1)\n"
    "  --intra-calibration FILE     nccl-tests output for the links inside a host (all ranks on\n"
    "                               one host), needed when ranks share hosts\n"
    "  --sweep MIN..MAX             instead of a schedule: time all_reduce and all_gather over\n"
    "                               sizes MIN, 2 MIN, ... <= MAX bytes (K, M, G: 2^10, 2^20,\n"
    "                               2^30) and print nccl-tests' table, which `dpas calibrate`\n"
    "                               reads\n"
    "  -o text|json|csv             output format (default text); JSON begins with\n"
    "                               dpas_version and schema_version\n"
    "\n"
    "Unless the environment says otherwise, dpas-measure asks OpenMPI for TCP (btl self,tcp),\n"
    "so that the kernel sees the bytes, and for the ring and pairwise algorithms dpas models.\n"
    "Exit status: 0 ok, 1 bad input, 3 a check failed (--check-bytes, ranks disagreeing on the\n"
    "aggregate, or the distributed result differing from the single-process kernel).\n";

/* The keys dpas-measure takes: those of the key table marked for it. */
static int is_measure_key(int k) { return (dpas_key_flags((dpas_key)k) & DPAS_KEY_MEASURE) != 0; }

/* The schedules dpas-measure runs (names from the library's table), the first the default. */
static const dpas_schedule_id runs[] = {DPAS_SCHED_ALLREDUCE, DPAS_SCHED_ALLGATHER,
                                        DPAS_SCHED_SHARDED, DPAS_SCHED_SHARDED_DISTANCE};

static void print_help(FILE *f)
{
    fputs(help_head, f);
    for (int k = 0; k < DPAS_KEY_COUNT; k++) {
        if (!is_measure_key(k))
            continue;
        const char *mv = dpas_key_metavar((dpas_key)k);
        int w = fprintf(f, "  %s%s%s", dpas_key_flag((dpas_key)k), mv ? " " : "", mv ? mv : "");
        fprintf(f, "%*s %s: %s", w < 30 ? 30 - w : 0, "", dpas_key_name((dpas_key)k),
                dpas_key_help((dpas_key)k));
        for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
            if (notes[i].key == (dpas_key)k && notes[i].note)
                fprintf(f, "; %s", notes[i].note);
            else if (notes[i].key == (dpas_key)k) {
                fputs("; here one of", f);
                for (size_t j = 0; j < sizeof runs / sizeof runs[0]; j++)
                    fprintf(f, "%s %s%s",
                            j ? (j + 1 < sizeof runs / sizeof runs[0] ? "," : " or") : "",
                            dpas_schedule_name(runs[j]), j ? "" : " (default)");
            }
        fputc('\n', f);
    }
    fputs(help_tail, f);
}

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

enum { O_KEY = 256 }; /* a key's option: O_KEY + its dpas_key */

/* What was given, as text, until it is resolved. */
typedef struct given {
    const char *keys[DPAS_KEY_COUNT]; /* the keys given, as text, for the cost request */
    uint64_t scale;
    int scale_given, attack_given, attack_scale_given;
    unsigned mask; /* bit per option letter class, for refusing what does not apply */
    unsigned char seen[O_KEY + DPAS_KEY_COUNT]; /* options given: a second one is refused */
} given;

enum { G_RUN = 1u, G_SWEEP = 2u, G_CAL = 4u, G_BF16 = 8u };

static const struct option own_opts[] = {{"scale", 1, 0, 'k'},  {"byzantine", 1, 0, 'b'},
                                         {"attack", 1, 0, 'a'}, {"attack-scale", 1, 0, 'A'},
                                         {"iters", 1, 0, 'i'},  {"warmup", 1, 0, 'w'},
                                         {"verify", 1, 0, 'v'}, {"check-bytes", 1, 0, 'C'},
                                         {"seed", 1, 0, 'S'},   {"intra-calibration", 1, 0, 'I'},
                                         {"sweep", 1, 0, 'W'},  {"output", 1, 0, 'o'},
                                         {"help", 0, 0, 'h'}};
enum { NOWN = sizeof own_opts / sizeof own_opts[0] };

/* The long options: dpas-measure's own, then each key of the table it takes, by its flag. */
static void long_options(struct option *o)
{
    size_t n = 0;
    for (size_t i = 0; i < NOWN; i++)
        o[n++] = own_opts[i];
    for (int k = 0; k < DPAS_KEY_COUNT; k++)
        if (is_measure_key(k))
            o[n++] = (struct option){dpas_key_flag((dpas_key)k) + 2,
                                     dpas_key_metavar((dpas_key)k) ? 1 : 0, 0, O_KEY + k};
    o[n] = (struct option){0, 0, 0, 0};
}

/* The words of the options that take one. */
static const char *const w_grad[] = {"fp32", "bf16", NULL};
static const char *const w_attack[] = {"signflip", "scaled", "alie", "inf", "nan", NULL};
static const char *const w_yesno[] = {"no", "yes", NULL};
static const char *const w_format[] = {"text", "json", "csv", NULL};

/* A key's option: the run's width, schedule and calibration are read here too; every key goes
 * to the cost request as given (but the calibration and its model, which are the run's). */
static int option_key(dpas_key k, const char *arg, opts *o, given *g)
{
    dpas_error e;
    int i = 0, rc = 0;
    char name[64];
    snprintf(name, sizeof name, "%s", dpas_key_flag(k));
    g->mask |= k == DPAS_KEY_CALIBRATION || k == DPAS_KEY_NETWORK_MODEL ? G_CAL : G_RUN;
    switch (k) {
    case DPAS_KEY_GRADIENT_WIDTH: /* fp32 or bf16: the run's width, and the request's */
        rc = parse_word(name, arg, w_grad, &i);
        o->width = i ? 2 : 4;
        g->mask |= i ? G_BF16 : 0;
        return rc;
    case DPAS_KEY_SCHEDULE: { /* the library's names; dpas-measure runs the schedules of runs[] */
        dpas_schedule_id id;
        if (dpas_schedule_parse(name, arg, &id, &e)) {
            measure_say("%s", e.message);
            return 1;
        }
        size_t j = 0;
        while (j < sizeof runs / sizeof runs[0] && runs[j] != id)
            j++;
        if (j == sizeof runs / sizeof runs[0]) {
            char list[160] = "";
            for (size_t q = 0; q < sizeof runs / sizeof runs[0]; q++)
                snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s", q ? ", " : "",
                         dpas_schedule_name(runs[q]));
            measure_say("%s %s: dpas-measure runs %s (dpas cost models the others)", name, arg,
                        list);
            return 1;
        }
        o->schedule = id;
        break;
    }
    case DPAS_KEY_CALIBRATION: o->calibration = arg; return 0;
    case DPAS_KEY_NETWORK_MODEL: /* the library's names of its network models */
        rc =
            dpas_netmodel_kind_parse(arg, &i, &e) ? (measure_say("%s: %s", name, e.message), 1) : 0;
        o->network_model = i;
        return rc;
    default: break;
    }
    g->keys[k] = arg;
    return rc;
}

/* One option of the run (not the sweep). */
static int option_run(int opt, const char *arg, opts *o, given *g)
{
    dpas_error e;
    int k = 0, rc = 0;
    if (opt >= O_KEY)
        return option_key((dpas_key)(opt - O_KEY), arg, o, g);
    switch (opt) {
    case 'k':
        g->scale_given = 1;
        rc = dpas_parse_count("--scale", arg, &g->scale, &e) || g->scale == 0;
        if (rc)
            measure_say("--scale must be a whole number >= 1, got \"%s\"", arg);
        break;
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
    default: /* 'I' */ o->intra_calibration = arg; break;
    }
    return rc;
}

/* Every option: the common ones here, the run's in option_run. */
static int option_one(int opt, const char *arg, opts *o, given *g)
{
    int rc = 0, k = 0;
    int64_t v = 0;
    if (opt > 0 && opt < O_KEY + DPAS_KEY_COUNT && g->seen[opt]++) { /* one would be ignored */
        if (opt >= O_KEY)
            measure_say("%s is given twice; give it once", dpas_key_flag((dpas_key)(opt - O_KEY)));
        for (size_t i = 0; i < NOWN; i++)
            if (own_opts[i].val == opt)
                measure_say("--%s is given twice; give it once", own_opts[i].name);
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
        g->mask |= opt == 'I' ? G_CAL : opt < O_KEY ? G_RUN : 0;
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
    const char *fixed[][2] = {{"dp_degree", n},
                              {"nodes", n},
                              {"accelerators_per_node", "1"},
                              {"gradient_bytes_per_param", width},
                              {"checkpoint_bytes_per_param", width}};
    int rc = dpas_request_new(DPAS_ANALYSIS_COST, &rq, e);
    for (size_t i = 0; !rc && i < sizeof fixed / sizeof fixed[0]; i++)
        rc = dpas_request_set(rq, fixed[i][0], fixed[i][1], e);
    for (int k = 0; !rc && k < DPAS_KEY_COUNT; k++) /* every key given, as given */
        if (g->keys[k] && k != DPAS_KEY_GRADIENT_WIDTH)
            rc = dpas_request_set(rq, dpas_key_name((dpas_key)k), g->keys[k], e);
    if (!rc && !g->keys[DPAS_KEY_RULE])
        rc = dpas_request_set(rq, "rule", "mean", e);
    if (!rc && !(rc = dpas_registry_builtin(&reg, e)) && !(rc = dpas_request_resolve(rq, reg, e))) {
        const dpas_request_opts *o = dpas_request_opts_of(rq);
        if (o->cost.nrules != 1) { /* the run aggregates with one rule: another'd be ignored */
            rc = dpas_error_set(e, DPAS_EINVAL, "rule",
                                "--rule takes one rule here (a run aggregates with one), got %zu",
                                o->cost.nrules);
        } else {
            *rule = o->cost.rules[0];
            *f = o->f;
            *iterations = o->cost.iterations;
            *params = dpas_request_scenario(rq)->parameters;
        }
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
    if (g->scale_given && !g->keys[DPAS_KEY_WORKLOAD])
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
    struct option long_opts[NOWN + DPAS_KEY_COUNT + 1];
    long_options(long_opts);
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
            print_help(stdout);
    }
    return rc;
}

const char *attack_name(const opts *o) { return o->byzantine == 0 ? "none" : w_attack[o->attack]; }
