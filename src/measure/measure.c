/* dpas-measure: runs a schedule of a robust aggregate on real MPI processes, with real gradient
 * buffers and the library's kernels, and reports the bytes each rank really sent (the kernel's
 * count of bytes handed to write/send, wchar in /proc/self/io) against dpas's prediction, time
 * per step, the rule's compute time, and how far Byzantine ranks move the aggregate.
 *
 * Exit status: 0 ok, 1 bad input, 3 a check failed (--check-bytes, ranks disagreeing on the
 * aggregate, or the distributed result differing from the single-process kernel). */
#define _POSIX_C_SOURCE 200809L
#include "dpas/dpas.h"

#include <getopt.h>
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { EXIT_OK = 0, EXIT_BAD = 1, EXIT_CHECK = 3 };
enum { ATTACK_NONE, ATTACK_SIGNFLIP, ATTACK_SCALED, ATTACK_ALIE };
enum { FMT_TEXT, FMT_JSON, FMT_CSV };

typedef struct opts {
    uint64_t params;
    int width; /* 4: fp32, 2: bf16 */
    const dpas_rule *rule;
    int schedule;
    int64_t f;
    int f_given;
    int warmup, iters;
    int64_t byzantine;
    int attack;
    double attack_scale;
    uint64_t seed;
    int verify; /* -1 auto */
    int format;
    double check_bytes; /* percent; < 0: no check */
    int64_t cc_iterations;
} opts;

static int rank_, nranks;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    if (rank_ != 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "dpas-measure: error: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* ---- deterministic gradients: any rank can regenerate any rank's gradient ---- */

static inline uint64_t mix(uint64_t z)
{
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static inline float unit(uint64_t h) { return (float)((double)(h >> 11) / 9007199254740992.0 * 2.0 - 1.0); }

/* Honest gradient of rank r at coordinate j: a shared base plus 10% noise of its own. */
static inline float honest(uint64_t seed, int r, size_t j)
{
    float base = unit(mix(seed ^ mix((uint64_t)j)));
    float noise = unit(mix(seed ^ mix((uint64_t)j ^ ((uint64_t)(r + 1) << 40))));
    return base + 0.1f * noise;
}

static int is_byzantine(const opts *o, int r) { return r >= nranks - (int)o->byzantine; }

/* Inverse of the standard normal CDF by bisection on erfc (for ALIE's z). */
static double inv_phi(double p)
{
    double lo = -40, hi = 40;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (0.5 * erfc(-mid / sqrt(2.0)) < p)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

/* The gradient rank r sends, coordinates [j0, j1). */
static void gradient(const opts *o, int r, size_t j0, size_t j1, float *out)
{
    if (!is_byzantine(o, r) || o->attack == ATTACK_NONE) {
        for (size_t j = j0; j < j1; j++)
            out[j - j0] = honest(o->seed, r, j);
        return;
    }
    if (o->attack == ATTACK_SIGNFLIP || o->attack == ATTACK_SCALED) {
        float s = o->attack == ATTACK_SIGNFLIP ? -1.0f : (float)o->attack_scale;
        for (size_t j = j0; j < j1; j++)
            out[j - j0] = s * honest(o->seed, r, j);
        return;
    }
    /* ALIE (Baruch et al., NeurIPS 2019): mu - z sigma over the honest gradients, with
     * s = floor(n/2 + 1) - f supporters and z = Phi^-1((n - s) / n). */
    int n = nranks, hon = n - (int)o->byzantine;
    double s = floor(n / 2.0 + 1) - (double)o->byzantine;
    double z = inv_phi((n - s) / n);
    for (size_t j = j0; j < j1; j++) {
        double m = 0, m2 = 0;
        for (int h = 0; h < hon; h++) {
            double v = honest(o->seed, h, j);
            m += v;
            m2 += v * v;
        }
        m /= hon;
        double var = m2 / hon - m * m;
        out[j - j0] = (float)(m - z * sqrt(var > 0 ? var : 0));
    }
}

/* ---- bf16 on the wire ---- */

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    if ((u & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((u >> 16) | 0x40u); /* quiet NaN */
    u += 0x7fffu + ((u >> 16) & 1u);          /* round to nearest even */
    return (uint16_t)(u >> 16);
}

static float from_bf16(uint16_t h)
{
    uint32_t u = (uint32_t)h << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void pack(const opts *o, const float *in, size_t n, void *out)
{
    if (o->width == 4)
        memcpy(out, in, n * 4);
    else
        for (size_t i = 0; i < n; i++)
            ((uint16_t *)out)[i] = to_bf16(in[i]);
}

static void unpack(const opts *o, const void *in, size_t n, float *out)
{
    if (o->width == 4)
        memcpy(out, in, n * 4);
    else
        for (size_t i = 0; i < n; i++)
            out[i] = from_bf16(((const uint16_t *)in)[i]);
}

static void bf16_sum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    uint16_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        b[i] = to_bf16(from_bf16(a[i]) + from_bf16(b[i]));
}

/* ---- measurement helpers ---- */

static long long wchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    if (!f)
        return -1;
    char line[128];
    long long v = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "wchar:", 6))
            v = atoll(line + 6);
    fclose(f);
    return v;
}

static uint64_t fnv1a(const void *p, size_t n)
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* ---- one step of each schedule ---- */

typedef struct ctx {
    const opts *o;
    size_t d;
    MPI_Datatype wire;
    MPI_Op sum;
    float *mine;         /* this rank's gradient, float */
    void *mine_w;        /* ... in the wire width */
    void *recv_w;        /* receive buffer, wire width */
    float *rows_f;       /* N rows as float */
    const float **rows;  /* row pointers */
    float *agg;          /* the aggregate, d floats */
    void *agg_w;         /* ... wire width */
    float *shard_out;
    int *counts, *displs, *rcounts, *rdispls;
    double *D, *tri;
    int64_t *sel;
    double compute_s;
} ctx;

static int kernel(ctx *c, const float *const *rows, size_t n, size_t d, float *out)
{
    dpas_agg_opts ao = {.f = c->o->f, .iterations = c->o->cc_iterations};
    dpas_error e;
    double t0 = MPI_Wtime();
    int rc = dpas_aggregate(c->o->rule, rows, n, d, &ao, out, NULL, NULL, &e);
    c->compute_s += MPI_Wtime() - t0;
    if (rc)
        say("%s", e.message);
    return rc;
}

static int step(ctx *c)
{
    const opts *o = c->o;
    const size_t d = c->d, w = (size_t)o->width;
    const int N = nranks;
    c->compute_s = 0;
    if (o->schedule == DPAS_SCHED_ALLREDUCE) {
        MPI_Allreduce(c->mine_w, c->recv_w, (int)d, c->wire, c->sum, MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        unpack(o, c->recv_w, d, c->agg);
        if (o->rule->id == DPAS_RULE_SIGN_MAJORITY) /* the sign of the sum of signs */
            for (size_t j = 0; j < d; j++)
                c->agg[j] = (float)((c->agg[j] > 0) - (c->agg[j] < 0));
        else
            for (size_t j = 0; j < d; j++)
                c->agg[j] /= (float)N;
        c->compute_s += MPI_Wtime() - t0;
        return 0;
    }
    if (o->schedule == DPAS_SCHED_ALLGATHER) {
        MPI_Allgather(c->mine_w, (int)d, c->wire, c->recv_w, (int)d, c->wire, MPI_COMM_WORLD);
        unpack(o, c->recv_w, d * (size_t)N, c->rows_f);
        for (int i = 0; i < N; i++)
            c->rows[i] = c->rows_f + (size_t)i * d;
        return kernel(c, c->rows, (size_t)N, d, c->agg);
    }
    /* sharded: all-to-all of shards, the rule on this rank's shard, all-gather of results */
    const size_t my = (size_t)c->counts[rank_];
    MPI_Alltoallv(c->mine_w, c->counts, c->displs, c->wire, c->recv_w, c->rcounts, c->rdispls,
                  c->wire, MPI_COMM_WORLD);
    unpack(o, c->recv_w, my * (size_t)N, c->rows_f);
    for (int i = 0; i < N; i++)
        c->rows[i] = c->rows_f + (size_t)i * my;
    int rc = 0;
    if (o->schedule == DPAS_SCHED_SHARDED) {
        rc = kernel(c, c->rows, (size_t)N, my, c->shard_out);
    } else if (o->rule->id == DPAS_RULE_CENTERED_CLIPPING) {
        /* the median of the shard, then each iteration one AllReduce of the N partial norms */
        dpas_agg_opts ao = {.f = o->f};
        const dpas_rule *median;
        dpas_rule_find("median", NULL, &median, NULL);
        double t0 = MPI_Wtime();
        dpas_aggregate(median, c->rows, (size_t)N, my, &ao, c->shard_out, NULL, NULL, NULL);
        c->compute_s += MPI_Wtime() - t0;
        double tau = 0;
        int64_t iters = o->cc_iterations > 0 ? o->cc_iterations : 10;
        for (int64_t it = 0; it < iters; it++) {
            t0 = MPI_Wtime();
            for (int i = 0; i < N; i++) {
                double s = 0;
                for (size_t j = 0; j < my; j++) {
                    double e = (double)c->rows[i][j] - (double)c->shard_out[j];
                    s += e * e;
                }
                c->tri[i] = s;
            }
            c->compute_s += MPI_Wtime() - t0;
            MPI_Allreduce(MPI_IN_PLACE, c->tri, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
            t0 = MPI_Wtime();
            for (int i = 0; i < N; i++)
                c->tri[i] = sqrt(c->tri[i]);
            if (it == 0) {
                memcpy(c->D, c->tri, (size_t)N * sizeof(double));
                qsort(c->D, (size_t)N, sizeof(double), cmpd);
                tau = N & 1 ? c->D[N / 2] : 0.5 * (c->D[N / 2 - 1] + c->D[N / 2]);
            }
            for (size_t j = 0; j < my; j++) {
                float s = 0.0f;
                for (int i = 0; i < N; i++) {
                    float cw = c->tri[i] > tau ? (float)(tau / c->tri[i]) : 1.0f;
                    s += cw * (c->rows[i][j] - c->shard_out[j]);
                }
                c->shard_out[j] += s / (float)N;
            }
            c->compute_s += MPI_Wtime() - t0;
        }
    } else {
        /* Krum family: partial squared distances of the shard, one AllReduce of the upper
         * triangle, the same selection everywhere, then this shard of the selected rows */
        double t0 = MPI_Wtime();
        memset(c->D, 0, (size_t)N * (size_t)N * sizeof(double));
        dpas_pairwise_sqdist_add(c->rows, (size_t)N, my, c->D);
        size_t t = 0;
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++)
                c->tri[t++] = c->D[(size_t)i * (size_t)N + (size_t)j];
        c->compute_s += MPI_Wtime() - t0;
        MPI_Allreduce(MPI_IN_PLACE, c->tri, (int)t, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        t = 0;
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                c->D[(size_t)i * (size_t)N + (size_t)j] = c->tri[t];
                c->D[(size_t)j * (size_t)N + (size_t)i] = c->tri[t++];
            }
        dpas_agg_opts ao = {.f = o->f};
        size_t nsel = 0;
        dpas_error e;
        rc = dpas_select(o->rule, c->D, (size_t)N, &ao, c->sel, &nsel, &e) ||
             dpas_aggregate_selected(o->rule, c->rows, (size_t)N, my, &ao, c->sel, nsel, c->shard_out, &e);
        if (rc)
            say("%s", e.message);
        c->compute_s += MPI_Wtime() - t0;
    }
    if (rc)
        return rc;
    /* all-gather of the aggregated shards, in the wire width */
    char *out_w = (char *)c->agg_w;
    pack(o, c->shard_out, my, out_w + (size_t)c->displs[rank_] * w);
    MPI_Allgatherv(MPI_IN_PLACE, 0, c->wire, c->agg_w, c->counts, c->displs, c->wire, MPI_COMM_WORLD);
    unpack(o, c->agg_w, d, c->agg);
    return 0;
}

/* ---- options ---- */

static const char *help =
    "usage: mpirun [MPI OPTIONS] -np N dpas-measure [OPTIONS]\n"
    "\n"
    "Runs one aggregation schedule on N MPI ranks (one rank = one data-parallel replica) and\n"
    "reports predicted against measured bytes per rank, time per step and the rule's compute.\n"
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
    "  --attack A            signflip (default), scaled (x --attack-scale, default 100) or alie\n"
    "  --iters I             timed steps (default 5), after --warmup W (default 2)\n"
    "  --iterations T        centered_clipping iterations (default 10)\n"
    "  --verify yes|no       compare with the single-process kernel on rank 0 (default: yes\n"
    "                        when all gradients fit in 1 GiB)\n"
    "  --check-bytes PCT     exit 3 unless every rank's bytes are within PCT%% of the prediction\n"
    "  --seed S              gradients' seed (default 1)\n"
    "  -o text|json|csv      output format (default text)\n"
    "\n"
    "Unless the environment says otherwise, dpas-measure asks OpenMPI for TCP (btl self,tcp),\n"
    "so that the kernel sees the bytes, and for the ring and pairwise algorithms dpas models.\n";

static int parse(int argc, char **argv, opts *o)
{
    static const struct option lo[] = {
        {"params", 1, 0, 'p'}, {"model", 1, 0, 'm'}, {"scale", 1, 0, 'k'}, {"grad", 1, 0, 'g'},
        {"rule", 1, 0, 'r'}, {"convention", 1, 0, 'c'}, {"schedule", 1, 0, 's'}, {"f", 1, 0, 'f'},
        {"byzantine", 1, 0, 'b'}, {"attack", 1, 0, 'a'}, {"attack-scale", 1, 0, 'A'},
        {"iters", 1, 0, 'i'}, {"warmup", 1, 0, 'w'}, {"iterations", 1, 0, 'T'},
        {"verify", 1, 0, 'v'}, {"check-bytes", 1, 0, 'C'}, {"seed", 1, 0, 'S'},
        {"output", 1, 0, 'o'}, {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    const char *model = NULL, *rule = "mean", *conv = NULL;
    uint64_t scale = 1;
    int64_t v;
    dpas_error e;
    *o = (opts){.width = 4, .schedule = DPAS_SCHED_ALLREDUCE, .warmup = 2, .iters = 5,
                .attack = ATTACK_SIGNFLIP, .attack_scale = 100, .seed = 1, .verify = -1,
                .check_bytes = -1};
    int opt;
    opterr = 0;
    while ((opt = getopt_long(argc, argv, "o:h", lo, NULL)) != -1) {
        switch (opt) {
        case 'h':
            if (rank_ == 0)
                fputs(help, stdout);
            return 2;
        case 'p':
            if (dpas_parse_count("--params", optarg, &o->params, &e))
                return say("%s", e.message), 1;
            break;
        case 'm': model = optarg; break;
        case 'k':
            if (dpas_parse_count("--scale", optarg, &scale, &e) || scale == 0)
                return say("--scale must be a whole number >= 1, got \"%s\"", optarg), 1;
            break;
        case 'g':
            if (!strcmp(optarg, "fp32"))
                o->width = 4;
            else if (!strcmp(optarg, "bf16"))
                o->width = 2;
            else
                return say("--grad must be fp32 or bf16, got \"%s\"", optarg), 1;
            break;
        case 'r': rule = optarg; break;
        case 'c': conv = optarg; break;
        case 's':
            o->schedule = dpas_schedule_from_name(optarg);
            if (o->schedule != DPAS_SCHED_ALLREDUCE && o->schedule != DPAS_SCHED_ALLGATHER &&
                o->schedule != DPAS_SCHED_SHARDED && o->schedule != DPAS_SCHED_SHARDED_DISTANCE)
                return say("--schedule must be allreduce, allgather, sharded or sharded_distance, "
                           "got \"%s\"", optarg), 1;
            break;
        case 'f':
        case 'b':
        case 'i':
        case 'w':
        case 'T':
            if (dpas_parse_int(opt == 'f' ? "--f" : opt == 'b' ? "--byzantine" : "--iters", optarg, &v, &e))
                return say("%s", e.message), 1;
            if (v < 0 || (opt == 'i' && v < 1) || (opt == 'T' && v < 1) || v > 1000000)
                return say("%s must be %s, got %lld", opt == 'f' ? "--f" : opt == 'b' ? "--byzantine"
                                                      : opt == 'i' ? "--iters" : opt == 'w' ? "--warmup" : "--iterations",
                           opt == 'i' || opt == 'T' ? "between 1 and 1000000" : "between 0 and 1000000",
                           (long long)v), 1;
            if (opt == 'f')
                o->f = v, o->f_given = 1;
            else if (opt == 'b')
                o->byzantine = v;
            else if (opt == 'i')
                o->iters = (int)v;
            else if (opt == 'w')
                o->warmup = (int)v;
            else
                o->cc_iterations = v;
            break;
        case 'a':
            if (!strcmp(optarg, "signflip"))
                o->attack = ATTACK_SIGNFLIP;
            else if (!strcmp(optarg, "scaled"))
                o->attack = ATTACK_SCALED;
            else if (!strcmp(optarg, "alie"))
                o->attack = ATTACK_ALIE;
            else
                return say("--attack must be signflip, scaled or alie, got \"%s\"", optarg), 1;
            break;
        case 'A':
            o->attack_scale = strtod(optarg, NULL);
            if (!isfinite(o->attack_scale) || o->attack_scale == 0)
                return say("--attack-scale must be a finite non-zero number, got \"%s\"", optarg), 1;
            break;
        case 'v':
            if (!strcmp(optarg, "yes"))
                o->verify = 1;
            else if (!strcmp(optarg, "no"))
                o->verify = 0;
            else
                return say("--verify must be yes or no, got \"%s\"", optarg), 1;
            break;
        case 'C':
            o->check_bytes = strtod(optarg, NULL);
            if (!(o->check_bytes >= 0))
                return say("--check-bytes must be a percentage >= 0, got \"%s\"", optarg), 1;
            break;
        case 'S':
            if (dpas_parse_count("--seed", optarg, &o->seed, &e))
                return say("%s", e.message), 1;
            break;
        case 'o':
            if (!strcmp(optarg, "text"))
                o->format = FMT_TEXT;
            else if (!strcmp(optarg, "json"))
                o->format = FMT_JSON;
            else if (!strcmp(optarg, "csv"))
                o->format = FMT_CSV;
            else
                return say("-o must be text, json or csv, got \"%s\"", optarg), 1;
            break;
        default:
            return say("unknown option or missing value: \"%s\" (see: dpas-measure --help)", argv[optind - 1]), 1;
        }
    }
    if (optind < argc)
        return say("unexpected argument \"%s\"", argv[optind]), 1;
    if (model) {
        dpas_registry *reg;
        const void *m;
        if (dpas_registry_builtin(&reg, &e))
            return say("%s", e.message), 1;
        if (dpas_registry_find(reg, DPAS_KIND_MODEL, model, &m, &e)) {
            dpas_registry_free(reg);
            return say("%s", e.message), 1;
        }
        uint64_t p = ((const dpas_model *)m)->parameters;
        dpas_registry_free(reg);
        if (!p)
            return say("model %s has no parameter count", model), 1;
        o->params = p / scale;
    }
    if (!o->params)
        return say("give --params COUNT or --model NAME [--scale K] (> 0 coordinates)"), 1;
    if (o->params > (uint64_t)INT32_MAX)
        return say("--params %llu exceeds what one MPI message holds here (2^31 - 1 elements): "
                   "scale the model down with --scale", (unsigned long long)o->params), 1;
    if (dpas_rule_select(rule, conv, &o->rule, &e))
        return say("%s", e.message), 1;
    const char *why;
    if (!dpas_schedule_realises(o->schedule, o->rule, &why))
        return say("schedule %s cannot realise %s: %s", dpas_schedule_name(o->schedule), o->rule->name, why), 1;
    if (o->byzantine >= nranks)
        return say("--byzantine %lld must be below the rank count %d", (long long)o->byzantine, nranks), 1;
    if (!o->f_given) {
        int64_t m;
        dpas_rule_max_f(o->rule, nranks, &m, NULL);
        o->f = m < 0 ? 0 : m;
    }
    if (!dpas_rule_tolerates(o->rule, nranks, o->f))
        return say("%s (%s) needs %s, got n = %d ranks and f = %lld", o->rule->name, o->rule->convention,
                   o->rule->condition, nranks, (long long)o->f), 1;
    if ((o->schedule == DPAS_SCHED_SHARDED || o->schedule == DPAS_SCHED_SHARDED_DISTANCE) &&
        o->params < (uint64_t)nranks)
        return say("a sharded schedule needs at least one coordinate per rank: --params %llu < %d",
                   (unsigned long long)o->params, nranks), 1;
    return 0;
}

/* ---- main ---- */

typedef struct rank_result {
    double predicted, measured, t_med, t_min, t_max, c_med;
    double checksum_hi, checksum_lo;
} rank_result;

int main(int argc, char **argv)
{
    /* Ask for what the byte accounting needs unless the user chose: TCP, so the kernel sees the
     * bytes, and the ring / pairwise algorithms that dpas's predictions describe. */
    setenv("OMPI_MCA_btl", "self,tcp", 0);
    setenv("OMPI_MCA_coll_tuned_use_dynamic_rules", "1", 0);
    setenv("OMPI_MCA_coll_tuned_allreduce_algorithm", "4", 0);
    setenv("OMPI_MCA_coll_tuned_allgather_algorithm", "4", 0);
    setenv("OMPI_MCA_coll_tuned_allgatherv_algorithm", "3", 0);
    setenv("OMPI_MCA_coll_tuned_alltoallv_algorithm", "2", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    opts o;
    int prc = parse(argc, argv, &o);
    if (prc) {
        MPI_Finalize();
        return prc == 2 ? EXIT_OK : EXIT_BAD;
    }
    const int N = nranks;
    const size_t d = (size_t)o.params, w = (size_t)o.width;
    ctx c = {.o = &o, .d = d};
    if (o.width == 4) {
        c.wire = MPI_FLOAT;
        c.sum = MPI_SUM;
    } else {
        MPI_Type_contiguous(2, MPI_BYTE, &c.wire);
        MPI_Type_commit(&c.wire);
        MPI_Op_create(bf16_sum, 1, &c.sum);
    }
    /* shards: the first d % N ranks take one coordinate more */
    c.counts = malloc((size_t)N * sizeof(int));
    c.displs = malloc((size_t)N * sizeof(int));
    c.rcounts = malloc((size_t)N * sizeof(int));
    c.rdispls = malloc((size_t)N * sizeof(int));
    for (int i = 0, off = 0; i < N; i++) {
        c.counts[i] = (int)(d / (size_t)N + ((size_t)i < d % (size_t)N));
        c.displs[i] = off;
        off += c.counts[i];
    }
    for (int i = 0; i < N; i++) {
        c.rcounts[i] = c.counts[rank_];
        c.rdispls[i] = i * c.counts[rank_];
    }
    size_t rows_elems = o.schedule == DPAS_SCHED_ALLGATHER ? d * (size_t)N
                        : o.schedule == DPAS_SCHED_ALLREDUCE ? d
                                                             : (size_t)c.counts[0] * (size_t)N;
    c.mine = malloc(d * sizeof(float));
    c.mine_w = malloc(d * w);
    c.recv_w = malloc(rows_elems * w);
    c.rows_f = malloc(rows_elems * sizeof(float));
    c.rows = malloc((size_t)N * sizeof(float *));
    c.agg = malloc(d * sizeof(float));
    c.agg_w = malloc(d * w);
    c.shard_out = malloc((size_t)c.counts[0] * sizeof(float));
    c.D = malloc((size_t)N * (size_t)N * sizeof(double));
    c.tri = malloc(((size_t)N * (size_t)N / 2 + (size_t)N + 1) * sizeof(double));
    c.sel = malloc((size_t)N * sizeof(int64_t));
    int ok = c.mine && c.mine_w && c.recv_w && c.rows_f && c.rows && c.agg && c.agg_w && c.shard_out &&
             c.D && c.tri && c.sel;
    int all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        say("out of memory for %zu coordinates on %d ranks", d, N);
        MPI_Finalize();
        return EXIT_BAD;
    }
    gradient(&o, rank_, 0, d, c.mine);
    if (o.schedule == DPAS_SCHED_ALLREDUCE && o.rule->id == DPAS_RULE_SIGN_MAJORITY)
        for (size_t j = 0; j < d; j++) /* a majority vote is the sign of a sum of signs */
            c.mine[j] = (float)((c.mine[j] > 0) - (c.mine[j] < 0));
    pack(&o, c.mine, d, c.mine_w);

    /* the prediction: the library's schedule bytes for this gradient and N replicas */
    dpas_scenario sc = {.parameters = o.params, .nodes = N, .accelerators_per_node = 1, .dp_degree = N,
                        .gradient_bytes_per_param = {(uint64_t)o.width, 1},
                        .checkpoint_bytes_per_param = {(uint64_t)o.width, 1}};
    dpas_traffic tr;
    dpas_error e;
    if (dpas_schedule_traffic(o.schedule, &sc, o.rule, o.cc_iterations > 0 ? o.cc_iterations : 10, &tr, &e)) {
        say("%s", e.message);
        MPI_Finalize();
        return EXIT_BAD;
    }
    const double predicted = dpas_bytes_to_double(tr.sent);

    int failed = 0;
    for (int it = 0; it < o.warmup; it++)
        failed |= step(&c);
    double *times = malloc((size_t)o.iters * sizeof(double)), *comp = malloc((size_t)o.iters * sizeof(double));
    double measured = 0;
    int visible = 1;
    for (int it = 0; it < o.iters && !failed; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        long long w0 = wchar();
        double t0 = MPI_Wtime();
        failed |= step(&c);
        double t1 = MPI_Wtime();
        long long w1 = wchar();
        times[it] = t1 - t0;
        comp[it] = c.compute_s;
        if (w0 < 0 || w1 < 0)
            visible = 0;
        measured += (double)(w1 - w0);
    }
    int any_failed;
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed) {
        MPI_Finalize();
        return EXIT_BAD;
    }
    measured /= o.iters;
    qsort(times, (size_t)o.iters, sizeof(double), cmpd);
    qsort(comp, (size_t)o.iters, sizeof(double), cmpd);
    uint64_t h = fnv1a(c.agg, d * sizeof(float));
    rank_result mine = {predicted, measured, times[o.iters / 2], times[0], times[o.iters - 1],
                        comp[o.iters / 2], (double)(h >> 32), (double)(h & 0xffffffffu)};
    rank_result *all = rank_ == 0 ? malloc((size_t)N * sizeof *all) : NULL;
    MPI_Gather(&mine, sizeof mine / sizeof(double), MPI_DOUBLE, all, sizeof mine / sizeof(double),
               MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int vis_all;
    MPI_Allreduce(&visible, &vis_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);

    int status = EXIT_OK;
    if (rank_ == 0) {
        /* agreement of the ranks */
        int consistent = 1;
        for (int i = 1; i < N; i++)
            consistent &= all[i].checksum_hi == all[0].checksum_hi && all[i].checksum_lo == all[0].checksum_lo;
        /* the transport hides the bytes when far fewer than predicted were written */
        double rmin = 1e300, rmax = 0;
        for (int i = 0; i < N; i++) {
            double r = all[i].predicted > 0 ? all[i].measured / all[i].predicted : 1.0;
            rmin = fmin(rmin, r);
            rmax = fmax(rmax, r);
        }
        int hidden = !vis_all || (predicted > 0 && rmax < 0.5);
        /* the single-process kernel over all N gradients, and the Byzantine effect */
        int do_verify = o.verify == 1 || (o.verify < 0 && (double)d * N * 4 <= (double)(1u << 30));
        int verified = -1;
        double max_diff = 0, dist_mean = NAN, dist_rule = NAN;
        if (do_verify) {
            float *X = malloc(d * (size_t)N * sizeof(float)), *ref = malloc(d * sizeof(float));
            const float **rows = malloc((size_t)N * sizeof(float *));
            if (X && ref && rows) {
                for (int i = 0; i < N; i++) {
                    gradient(&o, i, 0, d, X + (size_t)i * d);
                    if (o.width == 2) /* what travelled: bf16 */
                        for (size_t j = 0; j < d; j++)
                            X[(size_t)i * d + j] = from_bf16(to_bf16(X[(size_t)i * d + j]));
                    rows[i] = X + (size_t)i * d;
                }
                dpas_agg_opts ao = {.f = o.f, .iterations = o.cc_iterations};
                /* a sign vote sums small integers: exact on any schedule */
                int exact = (o.schedule != DPAS_SCHED_ALLREDUCE || o.rule->id == DPAS_RULE_SIGN_MAJORITY) &&
                            o.width == 4 && o.rule->id != DPAS_RULE_CENTERED_CLIPPING;
                dpas_aggregate(o.rule, rows, (size_t)N, d, &ao, ref, NULL, NULL, NULL);
                for (size_t j = 0; j < d; j++)
                    max_diff = fmax(max_diff, fabs((double)ref[j] - (double)c.agg[j]));
                double scale = 0;
                for (size_t j = 0; j < d; j++)
                    scale = fmax(scale, fabs((double)ref[j]));
                /* bit-identical where the arithmetic is the same; else within float rounding of
                 * sums taken in another order (and, for bf16, of the wire's rounding) */
                verified = exact ? memcmp(ref, c.agg, d * sizeof(float)) == 0
                                 : max_diff <= (o.width == 2 ? 2e-2 : 1e-4) * fmax(1.0, scale);
                /* how far the aggregate and the plain mean land from the honest mean */
                int hon = N - (int)o.byzantine;
                double nh = 0, dm = 0, dr = 0;
                for (size_t j = 0; j < d; j++) {
                    double hm = 0, am = 0;
                    for (int i = 0; i < N; i++) {
                        am += rows[i][j];
                        if (i < hon)
                            hm += rows[i][j];
                    }
                    hm /= hon;
                    am /= N;
                    nh += hm * hm;
                    dm += (am - hm) * (am - hm);
                    dr += ((double)c.agg[j] - hm) * ((double)c.agg[j] - hm);
                }
                dist_mean = sqrt(dm / nh);
                dist_rule = sqrt(dr / nh);
            }
            free(X), free(ref), free(rows);
        }
        int bytes_ok = o.check_bytes < 0 || (!hidden && fabs(rmin - 1) * 100 <= o.check_bytes &&
                                             fabs(rmax - 1) * 100 <= o.check_bytes);
        if (!consistent || verified == 0 || !bytes_ok)
            status = EXIT_CHECK;
        /* nccl-tests' bandwidths: algbw = S / t; busbw = algbw x the schedule's factor */
        double S = (double)d * (double)w, factor = 2.0 * (N - 1) / N;
        if (o.schedule == DPAS_SCHED_ALLGATHER)
            S *= N, factor = (double)(N - 1) / N;
        double tmed = all[0].t_med;
        for (int i = 1; i < N; i++)
            tmed = fmax(tmed, all[i].t_med); /* the slowest rank sets the step */
        double algbw = S / tmed / 1e9, busbw = algbw * factor;
        char cks[32];
        snprintf(cks, sizeof cks, "%08llx%08llx", (unsigned long long)all[0].checksum_hi,
                 (unsigned long long)all[0].checksum_lo);
        const char *attack = o.byzantine == 0 ? "none" : o.attack == ATTACK_SIGNFLIP ? "signflip"
                                                       : o.attack == ATTACK_SCALED  ? "scaled" : "alie";
        if (o.format == FMT_JSON) {
            printf("{\n  \"ranks\": %d,\n  \"params\": %zu,\n  \"width\": %d,\n  \"gradient_bytes\": %zu,\n"
                   "  \"rule\": \"%s\",\n  \"convention\": \"%s\",\n  \"schedule\": \"%s\",\n  \"f\": %lld,\n"
                   "  \"byzantine\": %lld,\n  \"attack\": \"%s\",\n  \"iterations\": %d,\n  \"warmup\": %d,\n"
                   "  \"isa\": \"%s\",\n  \"transport_visible\": %s,\n  \"predicted_bytes\": %.0f,\n  \"per_rank\": [",
                   N, d, o.width, d * w, o.rule->name, o.rule->convention, dpas_schedule_name(o.schedule),
                   (long long)o.f, (long long)o.byzantine, attack, o.iters, o.warmup, dpas_kernel_isa(),
                   hidden ? "false" : "true", predicted);
            for (int i = 0; i < N; i++) {
                printf("%s\n    {\"rank\": %d, \"predicted_bytes\": %.0f, ", i ? "," : "", i, all[i].predicted);
                if (hidden)
                    printf("\"measured_bytes\": null, \"ratio\": null, ");
                else
                    printf("\"measured_bytes\": %.0f, \"ratio\": %.6f, ", all[i].measured,
                           all[i].predicted > 0 ? all[i].measured / all[i].predicted : 1.0);
                printf("\"time_median_s\": %.6g, \"time_min_s\": %.6g, \"time_max_s\": %.6g, "
                       "\"compute_median_s\": %.6g}",
                       all[i].t_med, all[i].t_min, all[i].t_max, all[i].c_med);
            }
            printf("\n  ],\n  \"summary\": {\"ratio_min\": ");
            if (hidden)
                printf("null, \"ratio_max\": null");
            else
                printf("%.6f, \"ratio_max\": %.6f", rmin, rmax);
            printf(", \"time_median_s\": %.6g, \"algbw_GBps\": %.6g, \"busbw_GBps\": %.6g},\n"
                   "  \"checksum\": \"%s\",\n  \"consistent\": %s,\n  \"verified\": %s,\n"
                   "  \"max_abs_diff\": %.6g,\n",
                   tmed, algbw, busbw, cks, consistent ? "true" : "false",
                   verified < 0 ? "null" : verified ? "true" : "false", max_diff);
            if (isnan(dist_mean))
                printf("  \"distance_from_honest_mean\": null\n}\n");
            else
                printf("  \"distance_from_honest_mean\": {\"mean\": %.6g, \"rule\": %.6g}\n}\n", dist_mean, dist_rule);
        } else if (o.format == FMT_CSV) {
            printf("rank,predicted_bytes,measured_bytes,ratio,time_median_s,time_min_s,time_max_s,compute_median_s\n");
            for (int i = 0; i < N; i++) {
                if (hidden)
                    printf("%d,%.0f,,,", i, all[i].predicted);
                else
                    printf("%d,%.0f,%.0f,%.6f,", i, all[i].predicted, all[i].measured,
                           all[i].predicted > 0 ? all[i].measured / all[i].predicted : 1.0);
                printf("%.6g,%.6g,%.6g,%.6g\n", all[i].t_med, all[i].t_min, all[i].t_max, all[i].c_med);
            }
        } else {
            printf("dpas-measure  %d ranks, rule %s (%s, f = %lld), schedule %s, %zu coordinates x %zu B = %zu B per gradient\n",
                   N, o.rule->name, o.rule->convention, (long long)o.f, dpas_schedule_name(o.schedule), d, w, d * w);
            printf("%s; %d timed steps after %d warm-up; kernels %s\n",
                   hidden ? "bytes: the transport hides them from the kernel (shared memory?): run over "
                            "TCP (--mca btl self,tcp) to count them"
                          : "bytes: the kernel's count of bytes written (wchar), over TCP",
                   o.iters, o.warmup, dpas_kernel_isa());
            if (o.byzantine)
                printf("byzantine: the last %lld ranks send %s gradients\n", (long long)o.byzantine, attack);
            printf("\n%-5s %16s %16s %9s %12s %12s %12s %12s\n", "rank", "predicted_bytes", "measured_bytes",
                   "ratio", "median_s", "min_s", "max_s", "compute_s");
            for (int i = 0; i < N; i++) {
                if (hidden)
                    printf("%-5d %16.0f %16s %9s", i, all[i].predicted, "-", "-");
                else
                    printf("%-5d %16.0f %16.0f %9.5f", i, all[i].predicted, all[i].measured,
                           all[i].predicted > 0 ? all[i].measured / all[i].predicted : 1.0);
                printf(" %12.6f %12.6f %12.6f %12.6f\n", all[i].t_med, all[i].t_min, all[i].t_max, all[i].c_med);
            }
            if (!hidden)
                printf("\nmeasured / predicted: %.5f .. %.5f%s\n", rmin, rmax,
                       o.check_bytes >= 0 ? (bytes_ok ? "  (within --check-bytes)" : "  (OUTSIDE --check-bytes)") : "");
            printf("step: median %.6f s (slowest rank); algbw %.3f GB/s, busbw %.3f GB/s (nccl-tests' terms)\n",
                   tmed, algbw, busbw);
            printf("aggregate: checksum %s, %s on every rank", cks, consistent ? "identical" : "DIFFERENT");
            if (verified >= 0)
                printf("; %s the single-process kernel (max |diff| %.3g)\n",
                       verified ? "agrees with" : "DIFFERS from", max_diff);
            else
                printf("; not verified against the single-process kernel\n");
            if (!isnan(dist_mean) && o.byzantine)
                printf("distance from the honest mean (relative): mean %.4g, %s %.4g\n", dist_mean,
                       o.rule->name, dist_rule);
        }
        free(all);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(times), free(comp);
    free(c.mine), free(c.mine_w), free(c.recv_w), free(c.rows_f), free(c.rows), free(c.agg), free(c.agg_w);
    free(c.shard_out), free(c.D), free(c.tri), free(c.sel);
    free(c.counts), free(c.displs), free(c.rcounts), free(c.rdispls);
    if (o.width == 2) {
        MPI_Op_free(&c.sum);
        MPI_Type_free(&c.wire);
    }
    MPI_Finalize();
    return status;
}
