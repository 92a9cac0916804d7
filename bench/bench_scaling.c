/* SPDX-License-Identifier: Apache-2.0 */
/* How well a calibration transfers to a scale it did not measure (issues 19 and 27), on real
 * series of one cluster at several rank counts (tests/data/nccl-scaling and
 * tests/data/nccl-scaling-extra, READMEs there), scored per cluster family so that what is
 * learned on the other families (the band) is checked out of sample:
 *   leave one scale out: every file of a series at one scale is left out, the calibration is
 *     fitted on the others, and the left-out times are predicted at the left-out scale;
 *   from one file at about 4x the nodes: fitted on the files of one scale, predicted at a file
 *     of the same ranks per node and 3.5 to 4.5 times its nodes (the goal);
 *   from one file at about 4x the ranks, other GPUs per node: 3.5 to 4.5 times the ranks at
 *     other ranks per node (another axis, often across a regime; reported apart).
 * For each case: the median and worst |predicted - measured| / measured over the sizes >= 1 MiB,
 * the share of measured times inside the predicted band (sizes >= 1 MiB and all sizes), and the
 * median band width (high / low). Also the time of one calibration of the 2160-rank file.
 *
 * usage: bench_scaling DIR   (prints markdown tables) */
#include "dpas/dpas.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct series {
    const char *family; /* the cluster: leave-one-cluster-out leaves a family out */
    const char *name, *collective;
    const char *files[16];
} series;

/* Ranks per node given for a family, as a user gives --gpus-per-node (otherwise as the files
 * say): the NVLink domain where it spans hosts, which no log shows. OCI's GB300 runs put 16
 * hosts of 4 in each NVL72 rack (64 ranks a rack: its README), so NCCL's "node" is 64 ranks. */
static const struct {
    const char *family;
    int64_t per_node;
} given_per_node[] = {{"GB300 (OCI)", 64}};

static int64_t per_node_of(const series *S)
{
    for (size_t i = 0; i < sizeof given_per_node / sizeof *given_per_node; i++)
        if (!strcmp(given_per_node[i].family, S->family))
            return given_per_node[i].per_node;
    return 0;
}

static const series serieses[] = {
    {"Polaris",
     "Polaris NCCL 2.18",
     "all_reduce",
     {"polaris_nccl2.18_tuned_2nodes_8ranks_all_reduce.dat",
      "polaris_nccl2.18_tuned_8nodes_32ranks_all_reduce.dat",
      "polaris_nccl2.18_tuned_540nodes_2160ranks_all_reduce.dat"}},
    {"Polaris",
     "Polaris NCCL 2.18",
     "all_gather",
     {"polaris_nccl2.18_tuned_2nodes_8ranks_all_gather.dat",
      "polaris_nccl2.18_tuned_8nodes_32ranks_all_gather.dat",
      "polaris_nccl2.18_tuned_128nodes_512ranks_all_gather.dat",
      "polaris_nccl2.18_tuned_540nodes_2160ranks_all_gather.dat"}},
    {"Polaris",
     "Polaris NCCL 2.21",
     "all_reduce",
     {"polaris_nccl2.21_tuned_2nodes_8ranks_all_reduce.dat",
      "polaris_nccl2.21_tuned_8nodes_32ranks_all_reduce.dat",
      "../nccl-scaling-extra/polaris_nccl2.21_tuned_256nodes_1024ranks_all_reduce.dat",
      "polaris_nccl2.21_tuned_540nodes_2160ranks_all_reduce.dat"}},
    {"Polaris",
     "Polaris NCCL 2.21",
     "all_gather",
     {"../nccl-scaling-extra/polaris_nccl2.21_tuned_2nodes_8ranks_all_gather.dat",
      "../nccl-scaling-extra/polaris_nccl2.21_tuned_8nodes_32ranks_all_gather.dat",
      "../nccl-scaling-extra/polaris_nccl2.21_tuned_256nodes_1024ranks_all_gather.dat",
      "../nccl-scaling-extra/polaris_nccl2.21_tuned_540nodes_2160ranks_all_gather.dat"}},
#define H100(c)                                                                                    \
    {                                                                                              \
        "H100 (xxrjun)", "H100 x 1-10 nodes", c,                                                   \
        {                                                                                          \
            "xxrjun_h100_1node_x4gpus_five_tests.log", "xxrjun_h100_1node_x8gpus_five_tests.log",  \
                "xxrjun_h100_10nodes_x1gpus_five_tests.log",                                       \
                "xxrjun_h100_10nodes_x2gpus_five_tests.log",                                       \
                "xxrjun_h100_10nodes_x4gpus_five_tests.log",                                       \
                "xxrjun_h100_10nodes_x8gpus_five_tests.log"                                        \
        }                                                                                          \
    }
    H100("all_reduce"),
    H100("all_gather"),
    H100("reduce_scatter"),
    H100("alltoall"),
    H100("sendrecv"),
    {"MI325X (AAC11)",
     "MI325X x 1-8 nodes",
     "all_reduce",
     {"../nccl-scaling-extra/hisohara_mi325x_1node_x8_all_reduce_4G-16G.txt",
      "../nccl-scaling-extra/hisohara_mi325x_2nodes_x8_all_reduce_4G-16G.txt",
      "../nccl-scaling-extra/hisohara_mi325x_4nodes_x8_all_reduce_4G-16G.txt",
      "../nccl-scaling-extra/hisohara_mi325x_8nodes_x8_all_reduce_4G-16G.txt"}},
/* another H100 cluster of the same author (cnode2), NCCL 2.28: two nodes at 1, 4 and 8
     * GPUs each (three node pairs per scale: runs of one scale, merged) and one node */
#define C00(c)                                                                                     \
    {                                                                                              \
        "H100 (xxrjun cluster00)", "H100 cluster00 x 1-2 nodes", c,                                \
        {                                                                                          \
            "../nccl-scaling-extra/xxrjun_cluster00_h100_1node_x4gpus_cnode2-001.log",             \
                "../nccl-scaling-extra/xxrjun_cluster00_h100_1node_x8gpus_cnode2-001.log",         \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x1gpus_cnode2-001_cnode2-002.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x1gpus_cnode2-001_cnode2-005.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x1gpus_cnode2-001_cnode2-006.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x4gpus_cnode2-001_cnode2-002.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x4gpus_cnode2-001_cnode2-005.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x4gpus_cnode2-001_cnode2-006.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x8gpus_cnode2-001_cnode2-002.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x8gpus_cnode2-001_cnode2-005.log",                   \
                "../nccl-scaling-extra/"                                                           \
                "xxrjun_cluster00_h100_2nodes_x8gpus_cnode2-001_cnode2-006.log"                    \
        }                                                                                          \
    }
    C00("alltoall"),
    C00("sendrecv"),
/* OCI's reference documents (../nccl-scaling-public/README.md): GB300 NVL72 hosts of 4 at
     * 1, 2, 16 (one rack) and 32 (two racks) hosts; MI355X with Pollara NICs at 1, 2, 4 nodes */
#define OCI_GB300(c)                                                                               \
    {                                                                                              \
        "GB300 (OCI)", "GB300 x 1-32 hosts", c,                                                    \
        {                                                                                          \
            "../nccl-scaling-public/oci_gb300_1node_x4_" c ".log",                                 \
                "../nccl-scaling-public/oci_gb300_2nodes_x4_" c ".log",                            \
                "../nccl-scaling-public/oci_gb300_16nodes_x4_" c ".log",                           \
                "../nccl-scaling-public/oci_gb300_32nodes_x4_" c ".log"                            \
        }                                                                                          \
    }
    OCI_GB300("all_reduce"),
    OCI_GB300("alltoall"),
#define OCI_MI355X(c)                                                                              \
    {                                                                                              \
        "MI355X (OCI Pollara)", "MI355X x 1-4 nodes", c,                                           \
        {                                                                                          \
            "../nccl-scaling-public/oci_mi355x_pollara_1node_x8_" c "_8G-16G.log",                 \
                "../nccl-scaling-public/oci_mi355x_pollara_2nodes_x8_" c "_8G-16G.log",            \
                "../nccl-scaling-public/oci_mi355x_pollara_4nodes_x8_" c "_8G-16G.log"             \
        }                                                                                          \
    }
    OCI_MI355X("all_reduce"),
    OCI_MI355X("alltoall"),
};
#define NSERIES (sizeof serieses / sizeof *serieses)

/* Every scored point (sizes >= 1 MiB): which family and case kind, the default model's
 * ln(predicted / measured), the baselines' relative errors, the library's band. */
typedef struct point {
    int family, x4; /* the case kind: K_LOSO, K_NODES or K_RANKS */
    double ln_model, err_model, err_const, err_ab;
    bool inside;
    double width;
    double w_lo, w_hi; /* the library band's ln(t / low) and ln(high / t) */
    int bound;       /* +1: the library says the time is at least its prediction; -1: at most; 0 */
    bool cross;      /* transferred into a regime no file of the calibration measured */
    int cat;         /* of a bounded point: 1 between one node and several, 2 between 2 nodes and
                   more, 3 to ranks per node none measured; 0 not bounded */
    bool oos_inside; /* the band with constants learned on the other families (second pass) */
    double oos_width;
} point;
/* The case kinds: leave one scale out; from one file at about 4x the nodes (the same ranks per
 * node: the goal); from one file at about 4x the ranks at other ranks per node (the
 * rest of the 3.5x to 4.5x ranks pairs: another axis, often across a regime, reported apart) */
enum { K_LOSO = 0, K_NODES = 1, K_RANKS = 2, NKINDS = 3 };
static const char *const kind_names[NKINDS] = {
    "leave one scale out", "from one file at ~4x the nodes",
    "from one file at ~4x the ranks, other GPUs per node"};
static point pts[8192];
static size_t npts;
/* The second pass predicts every case again with the band's constants learned on the other
 * families (learned[family]); its points are the first pass's, in the same order (next_pt). */
static int pass;
static dpas_band_constants learned[16];
static size_t next_pt;
static const char *families[16];
static int nfamilies;
static int cur_family, cur_x4;

static int family_of(const char *f)
{
    for (int i = 0; i < nfamilies; i++)
        if (!strcmp(families[i], f))
            return i;
    families[nfamilies] = f;
    return nfamilies++;
}

static const char *dir;

/* A row's label: short table names and counts; one that does not fit stops the bench, uncut. */
static void label_fit(int written, size_t cap)
{
    if (written < 0 || (size_t)written >= cap) {
        fprintf(stderr, "bench_scaling: a row label is over %zu bytes\n", cap - 1);
        exit(1);
    }
}

static int load(const char *const *names, size_t n, const char *coll, int64_t per_node,
                dpas_netmodel **m)
{
    const char *paths[16];
    char buf[16][1024];
    if (n > 16)
        return -1;
    for (size_t i = 0; i < n; i++) {
        int w = snprintf(buf[i], sizeof buf[i], "%s/%s", dir, names[i]);
        if (w < 0 || (size_t)w >= sizeof buf[i]) { /* a path this long is refused, not cut */
            fprintf(stderr, "bench_scaling: the path %s/%s is over %zu bytes\n", dir, names[i],
                    sizeof buf[i] - 1);
            return -1;
        }
        paths[i] = buf[i];
    }
    dpas_calib_options opt = {.collective = coll, .per_node = per_node};
    dpas_error e = {0};
    if (dpas_netmodel_load_files(paths, n, &opt, m, &e)) {
        fprintf(stderr, "bench_scaling: %s\n", e.message);
        return -1;
    }
    return 0;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#define MAX_CASES 1024 /* cases per tally; more is refused, never dropped from the summary */
#define MAX_SIZES 4096 /* sizes >= 1 MiB in one curve */

/* A table too small for the series given stops the bench: a summary over part of the cases
 * would print as if it were all of them. */
static void too_many(const char *what, size_t limit)
{
    fprintf(stderr, "bench_scaling: more than %zu %s; raise the limit in bench_scaling.c\n", limit,
            what);
    exit(1);
}

typedef struct tally {
    size_t cases, within, n_all, in_all, unanswered;
    double meds[MAX_CASES], worsts[MAX_CASES], covers[MAX_CASES];
} tally;

/* Predict the measured curve `truth` from model m; print one row. */
static void score(const char *label, const dpas_netmodel *m, const dpas_curve *truth, double goal,
                  tally *t)
{
    dpas_scale at = {truth->ranks, truth->per_node};
    dpas_net_prediction *p = NULL;
    size_t np = 0;
    dpas_error e = {0};
    if (dpas_netmodel_predict_at(m, truth->bytes, truth->n, &at, 1, &p, &np, &e)) {
        if (pass == 0)
            printf("| %s | error: %s |\n", label, e.message);
        return;
    }
    if (pass == 1) { /* the same points, the band of the constants learned without the family */
        for (size_t i = 0; i < np && i < truth->n; i++) {
            if (truth->bytes[i] < (1u << 20) || next_pt >= npts)
                continue;
            double meas = truth->seconds[i];
            pts[next_pt].oos_inside = meas >= p[i].band_lo && meas <= p[i].band_hi;
            pts[next_pt++].oos_width = p[i].band_hi / p[i].band_lo;
        }
        dpas_free(p);
        return;
    }
    double err[MAX_SIZES], width[MAX_SIZES], errc[MAX_SIZES], errab[MAX_SIZES];
    size_t n = 0, in = 0, all = 0, in_all = 0;
    double steps, factor;
    dpas_collective_ring(truth->collective, truth->ranks, &steps, &factor, NULL);
    for (size_t i = 0; i < np && i < truth->n; i++) {
        double meas = truth->seconds[i], pred = p[i].time_s;
        bool inside = meas >= p[i].band_lo && meas <= p[i].band_hi;
        all++, in_all += inside;
        if (truth->bytes[i] < (1u << 20))
            continue;
        if (n >= MAX_SIZES)
            too_many("sizes >= 1 MiB in one curve", MAX_SIZES);
        err[n] = fabs(pred / meas - 1);
        width[n] = p[i].band_hi / p[i].band_lo;
        /* the constant-bus-bandwidth guess: size x bus factor / the peak busbw of the curve
         * measured nearest; the per-file alpha-beta line of that curve at the target's ranks */
        const dpas_curve *near = &m->curves[p[i].curve];
        errc[n] = fabs((double)truth->bytes[i] * factor / near->peak_busbw / meas - 1);
        errab[n] = fabs(p[i].seconds[DPAS_NETMODEL_ALPHA_BETA - 1] / meas - 1);
        if (npts >= sizeof pts / sizeof *pts)
            too_many("points", sizeof pts / sizeof *pts);
        pts[npts++] = (point){
            cur_family,
            cur_x4,
            log(pred / meas),
            err[n],
            errc[n],
            errab[n],
            inside,
            width[n],
            log(pred / p[i].band_lo),
            log(p[i].band_hi / pred),
            p[i].notes & DPAS_NETTIME_LOWER_BOUND   ? 1
            : p[i].notes & DPAS_NETTIME_UPPER_BOUND ? -1
                                                    : 0,
            (p[i].notes & DPAS_NETTIME_OTHER_REGIME) != 0,
            !(p[i].notes & (DPAS_NETTIME_LOWER_BOUND | DPAS_NETTIME_UPPER_BOUND))             ? 0
            : !(p[i].notes & DPAS_NETTIME_OTHER_REGIME)                                       ? 3
            : p[i].regime == DPAS_REGIME_ONE_NODE || p[i].from_regime == DPAS_REGIME_ONE_NODE ? 1
                                                                                              : 2,
            false,
            NAN};
        if (!(pred > 0)) { /* unanswered: counted, kept out of the medians */
            t->unanswered++;
            continue;
        }
        in += inside;
        n++;
    }
    dpas_free(p);
    double mc = median(errc, n), mab = median(errab, n);
    double worst = 0;
    for (size_t i = 0; i < n; i++)
        worst = fmax(worst, err[i]);
    double med = median(err, n), wmed = median(width, n);
    printf("| %s | %zu | %.1f%% | %.1f%% | %.1f%% | %.1f%% | %.0f%% | %.0f%% | x%.2f |\n", label, n,
           med * 100, mc * 100, mab * 100, worst * 100, n ? 100.0 * (double)in / (double)n : NAN,
           all ? 100.0 * (double)in_all / (double)all : NAN, wmed);
    if (t->cases >= MAX_CASES)
        too_many("cases in one tally", MAX_CASES);
    t->meds[t->cases] = med, t->worsts[t->cases] = worst;
    t->covers[t->cases] = n ? (double)in / (double)n : NAN;
    t->cases++, t->within += med <= goal, t->n_all += all, t->in_all += in_all;
}

static void summary(const char *what, tally *t, double goal)
{
    double meds[MAX_CASES], cov[MAX_CASES];
    size_t k = 0; /* the cases answered */
    for (size_t i = 0; i < t->cases; i++)
        if (isfinite(t->meds[i]))
            meds[k] = t->meds[i], cov[k++] = t->covers[i];
    printf("\n%s: %zu cases (%zu answered), %zu with median error <= %.0f%%; median of the "
           "medians %.1f%%; median share inside the band (>= 1 MiB) %.0f%%, over all sizes "
           "%.0f%%; %zu points >= 1 MiB unanswered\n\n",
           what, t->cases, k, t->within, goal * 100, median(meds, k) * 100, median(cov, k) * 100,
           t->n_all ? 100.0 * (double)t->in_all / (double)t->n_all : NAN, t->unanswered);
}

static const char *const head =
    "| series, held-out scale | sizes >= 1 MiB | median error | constant busbw | alpha-beta | "
    "worst | inside band (>= 1 MiB) | inside band (all) | median band |\n"
    "|---|---|---|---|---|---|---|---|---|\n";

/* q-quantile of v (sorts v) */
static double quantile(double *v, size_t n, double q)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp);
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    return i + 1 < n ? v[i] + (v[i + 1] - v[i]) * (pos - (double)i) : v[n - 1];
}

/* The band learned out of sample (leave one cluster out): the library's own band with its
 * constants (dpas_band_constants) learned on the points of every family but `skip` (-1: all):
 * the transfer floor, the 90th percentile of |ln(measured / predicted)| over the unbounded
 * points; per kind of bound (point.cat), the closed and open sides, the 5th and 90th
 * percentiles of ln(measured / predicted) oriented to the side the bound leaves open (a kind
 * no other family showed: 0, the band then the model's own uncertainty alone). The library
 * keeps its floors (its curve's noise, runs' spread, the model's undetermined parameters), so
 * a constant learned on few points narrows the band only down to them. */
static void learn_constants(int skip, dpas_band_constants *bc, size_t used[4])
{
    static double o[8192];
    size_t n = 0;
    for (size_t i = 0; i < npts; i++)
        if (pts[i].family != skip && pts[i].cat == 0 && isfinite(pts[i].ln_model))
            o[n++] = fabs(pts[i].ln_model);
    memset(bc, 0, sizeof *bc);
    bc->transfer_floor = n ? quantile(o, n, 0.9) : 0;
    used[0] = n;
    for (int q = 1; q < 4; q++) {
        n = 0;
        for (size_t i = 0; i < npts; i++)
            if (pts[i].family != skip && pts[i].bound && pts[i].cat == q &&
                isfinite(pts[i].ln_model))
                o[n++] = -pts[i].bound * pts[i].ln_model;
        bc->bound_near[q] = n ? fmax(0, -quantile(o, n, 0.05)) : 0;
        bc->bound_far[q] = n ? fmax(0, quantile(o, n, 0.9)) : 0;
        used[q] = n;
    }
}

static void print_constants(const dpas_band_constants *bc, const size_t used[4])
{
    static const char *const names[4] = {"", "one node / several", "2 nodes / more",
                                         "ranks per node"};
    printf(" floor (not bounded) %.3f (%zu points);", bc->transfer_floor, used[0]);
    for (int q = 1; q < 4; q++)
        printf(" %s: near %.3f, far %.3f (%zu points);", names[q], bc->bound_near[q],
               bc->bound_far[q], used[q]);
    printf("\n");
}

/* Per cluster family and case kind: the medians of the errors over its points (>= 1 MiB), the
 * library band's coverage and width; and the band learned out of sample on the OTHER
 * families' points (learn_constants, the second pass), its coverage and median width on
 * this family. */
static void by_family(void)
{
    static double a[8192], b[8192], c[8192], w[8192], lw[8192];
    printf("\n## By cluster family (leave one cluster out)\n\n"
           "| family | case | points (unanswered) | median error | constant busbw | alpha-beta | "
           "better than constant | library band: inside | median width | bounded or across "
           "regimes (points) | band learned on the other clusters: floor (not bounded) | inside | "
           "median width |\n"
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
    for (int f = 0; f < nfamilies; f++)
        for (int k = 0; k < NKINDS; k++) {
            size_t n = 0, in = 0, un = 0, nb = 0, cov = 0, cases = 0;
            for (size_t i = 0; i < npts; i++) {
                if (pts[i].x4 != k || pts[i].family != f)
                    continue;
                cases++;
                if (!isfinite(pts[i].ln_model)) {
                    un++;
                    continue;
                }
                a[n] = pts[i].err_model, b[n] = pts[i].err_const, c[n] = pts[i].err_ab;
                w[n] = pts[i].width, in += pts[i].inside;
                nb += pts[i].bound != 0 || pts[i].cross;
                cov += pts[i].oos_inside;
                lw[n] = pts[i].oos_width;
                n++;
            }
            if (!n) {
                printf("| %s | %s | %s |\n", families[f], kind_names[k],
                       un             ? "0 answered (no model from these files)"
                       : k == K_NODES ? "no case: no two scales of one ranks per node 3.5 to "
                                        "4.5 times the nodes apart"
                                      : "no case");
                continue;
            }
            double ma = median(a, n), mb = median(b, n), mc = median(c, n);
            printf(
                "| %s | %s | %zu (%zu) | %.1f%% | %.1f%% | %.1f%% | %.2fx | %.0f%% | x%.2f | %zu | "
                "%.3f | %.0f%% | x%.2f |\n",
                families[f], kind_names[k], n, un, ma * 100, mb * 100, mc * 100, mb / ma,
                100.0 * (double)in / (double)n, median(w, n), nb, learned[f].transfer_floor,
                100.0 * (double)cov / (double)n, median(lw, n));
        }
    size_t used[4];
    dpas_band_constants all;
    printf("\nBand constants learned on every family (the library ships its own: next line), "
           "ln; bounded: ln(measured / predicted) toward the open side, 5th and 90th "
           "percentiles:");
    learn_constants(-1, &all, used);
    print_constants(&all, used);
    const size_t none[4] = {0};
    printf("Shipped in the library (dpas_band_constants_shipped; points: not counted here):");
    print_constants(dpas_band_constants_shipped(), none);
    printf("\n");
    for (int f = 0; f < nfamilies; f++) {
        printf("Learned without %s:", families[f]);
        learn_constants(f, &learned[f], used);
        print_constants(&learned[f], used);
    }
    printf("\n");
}

/* Each file's scale for the collective (the file loaded alone): the runs of one scale are left
 * out, or used, together. */
static int file_scales(const series *S, size_t nf, dpas_scale *sc)
{
    for (size_t f = 0; f < nf; f++) {
        dpas_netmodel *m;
        if (load(&S->files[f], 1, S->collective, per_node_of(S), &m))
            return -1;
        sc[f] = (dpas_scale){m->curves[0].ranks, m->curves[0].per_node};
        dpas_netmodel_free(m);
    }
    return 0;
}

static bool same_scale(dpas_scale a, const dpas_curve *c)
{
    return a.ranks == c->ranks && a.per_node == c->per_node;
}

/* A series opened: its files counted, each file's scale, and the model of all of them. */
static int open_series(const series *S, size_t *nf, dpas_scale sc[16], dpas_netmodel **whole)
{
    *nf = 0;
    while (*nf < 16 && S->files[*nf])
        (*nf)++;
    cur_family = family_of(S->family);
    return file_scales(S, *nf, sc) || load(S->files, *nf, S->collective, per_node_of(S), whole) ? -1
                                                                                                : 0;
}

/* One case: the model of `names`, predicting the curve `truth`; in the second pass with the
 * band's constants learned without the series' family. */
static void run_case(const series *S, const char *const *names, size_t n, const dpas_curve *truth,
                     const char *label, double goal, tally *t)
{
    dpas_netmodel *m;
    if (load(names, n, S->collective, per_node_of(S), &m))
        return;
    if (pass == 1)
        m->band = &learned[cur_family];
    score(label, m, truth, goal, t);
    dpas_netmodel_free(m);
}

/* Every case of every kind, in one order (the second pass meets the first's points in it). */
static void run_cases(void)
{
    static const double goals[NKINDS] = {0.25, 0.30, 0.30};
    for (int kind = K_LOSO; kind < NKINDS; kind++) {
        tally t = {0};
        if (pass == 0)
            printf("## %c%s\n\n%s", 'L' + (kind != K_LOSO) * ('F' - 'L'), kind_names[kind] + 1,
                   head);
        cur_x4 = kind;
        for (size_t s = 0; s < NSERIES; s++) {
            const series *S = &serieses[s];
            size_t nf;
            dpas_scale sc[16];
            dpas_netmodel *whole;
            if (open_series(S, &nf, sc, &whole))
                continue;
            char label[256];
            const char *use[16];
            size_t nu = 0;
            for (size_t a = 0; a < whole->ncurves; a++)
                for (size_t b = 0; b < whole->ncurves; b++) {
                    const dpas_curve *from = &whole->curves[a], *to = &whole->curves[b];
                    nu = 0;
                    if (kind == K_LOSO) { /* every file but those measured at that scale */
                        if (a)
                            break;
                        for (size_t f = 0; f < nf; f++)
                            if (!same_scale(sc[f], to))
                                use[nu++] = S->files[f];
                        label_fit(snprintf(label, sizeof label, "%s %s, %lld x %lld", S->name,
                                           S->collective, (long long)(to->ranks / to->per_node),
                                           (long long)to->per_node),
                                  sizeof label);
                    } else { /* the files (runs) of one scale, 3.5-4.5x the ranks below */
                        double r = (double)to->ranks / (double)from->ranks;
                        bool same = to->per_node == from->per_node; /* r: the nodes' ratio */
                        if (r < 3.5 || r > 4.5 || same != (kind == K_NODES))
                            continue;
                        for (size_t f = 0; f < nf; f++)
                            if (same_scale(sc[f], from))
                                use[nu++] = S->files[f];
                        label_fit(snprintf(label, sizeof label, "%s %s, %lldx%lld from %lldx%lld",
                                           S->name, S->collective,
                                           (long long)(to->ranks / to->per_node),
                                           (long long)to->per_node,
                                           (long long)(from->ranks / from->per_node),
                                           (long long)from->per_node),
                                  sizeof label);
                    }
                    run_case(S, use, nu, to, label, goals[kind], &t);
                }
            dpas_netmodel_free(whole);
        }
        if (pass == 0)
            summary(kind_names[kind], &t, goals[kind]);
    }
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: bench_scaling DIR\n");
        return 2;
    }
    dir = argv[1];
    run_cases();
    size_t used[4];
    for (int f = 0; f < nfamilies; f++)
        learn_constants(f, &learned[f], used);
    pass = 1;
    run_cases();
    by_family();
    /* the time of one calibration of the 2160-rank file (median of 21) */
    double ms[21];
    for (int i = 0; i < 21; i++) {
        struct timespec t0, t1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        const char *f = "polaris_nccl2.18_tuned_540nodes_2160ranks_all_reduce.dat";
        dpas_netmodel *m;
        if (load(&f, 1, NULL, 0, &m))
            return 1;
        dpas_netmodel_free(m);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
    }
    printf("calibration of the 2160-rank file (read and fit): median %.1f ms of 21\n",
           median(ms, 21));
    /* a 10-file calibration (read and fit of every collective, with its leave-one-scale-out):
     * the six H100 five-test logs, an AWS p5 log, three Polaris files */
    static const char *const ten[] = {"xxrjun_h100_1node_x4gpus_five_tests.log",
                                      "xxrjun_h100_1node_x8gpus_five_tests.log",
                                      "xxrjun_h100_10nodes_x1gpus_five_tests.log",
                                      "xxrjun_h100_10nodes_x2gpus_five_tests.log",
                                      "xxrjun_h100_10nodes_x4gpus_five_tests.log",
                                      "xxrjun_h100_10nodes_x8gpus_five_tests.log",
                                      "aws_p5_h100_2nodes_16ranks_v2.20.3-1.log",
                                      "polaris_nccl2.18_tuned_8nodes_32ranks_all_reduce.dat",
                                      "polaris_nccl2.18_tuned_540nodes_2160ranks_all_reduce.dat",
                                      "polaris_nccl2.18_tuned_540nodes_2160ranks_all_gather.dat"};
    double cpu[5];
    for (int i = 0; i < 5; i++) {
        struct timespec t0, t1, c0, c1;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
        dpas_netmodel *m;
        if (load(ten, 10, NULL, 0, &m))
            return 1;
        dpas_netmodel_free(m);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c1);
        clock_gettime(CLOCK_MONOTONIC, &t1);
        ms[i] = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
        cpu[i] = (double)(c1.tv_sec - c0.tv_sec) * 1e3 + (double)(c1.tv_nsec - c0.tv_nsec) / 1e6;
    }
    /* the CPU time too: on a shared machine the wall time counts other processes' turns */
    printf("calibration of 10 files (read and fit): median %.1f ms wall, %.1f ms CPU, of 5\n",
           median(ms, 5), median(cpu, 5));
    return 0;
}
