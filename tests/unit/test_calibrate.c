/* SPDX-License-Identifier: Apache-2.0 */
/* Calibration from nccl-tests: the reader (on the seven real logs in tests/data/nccl-real and on
 * small texts written here), the three models, predictions and the JSON. Expected values are
 * read from the logs by hand (the collective and rank counts are in tests/data/nccl-real's
 * README; peak busbw is the largest out-of-place busbw of each log), or computed by hand from
 * the alpha-beta formula in the comments; none comes from the code under test. */
#include "check.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define REAL DPAS_TEST_DATA "/nccl-real/"

static dpas_nccl_log *read_text(const char *text, const char *coll, int64_t ranks)
{
    dpas_nccl_log *g = NULL;
    dpas_error e = {0};
    if (dpas_nccl_read(text, strlen(text), "t.txt", coll, ranks, &g, &e))
        fail_msg("read failed: %s", e.message);
    return g;
}

static dpas_error read_error(const char *text, const char *coll, int64_t ranks)
{
    dpas_nccl_log *g = NULL;
    dpas_error e = {0};
    if (!dpas_nccl_read(text, strlen(text), "t.txt", coll, ranks, &g, &e)) {
        dpas_nccl_log_free(g);
        fail_msg("read did not fail: %s", text);
    }
    assert_null(g);
    assert_true(e.message[0] != '\0');
    return e;
}

static dpas_netmodel *load_as(const char *name, const char *coll)
{
    char path[512];
    snprintf(path, sizeof path, "%s%s", REAL, name);
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_load(path, coll, 0, &m, &e))
        fail_msg("%s: %s", name, e.message);
    return m;
}

static dpas_netmodel *load(const char *name) { return load_as(name, NULL); }

static void assert_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.10g, want %.10g within %g", got, want, rel);
}

/* ---- the seven real logs -------------------------------------------------------------------- */

typedef struct real_log {
    const char *file;
    int collective;
    int64_t ranks;
    int collective_from, ranks_from;
    size_t sizes;
    uint64_t min_bytes, max_bytes;
    double peak_busbw_gbs; /* the largest out-of-place busbw column value */
    size_t foreign;        /* lines that are not nccl-tests output */
    size_t prefixed;       /* nccl-tests lines with a launcher prefix */
    const char *given;     /* --collective, when the file cannot tell */
} real_log;

/* By hand from the files (and their README): 01 has Rank lines but no "Collective test
 * starting" line; 02 adds kubectl's "Defaulted container" and two ssh warnings; 03 and 04 are
 * srun --label output without Rank lines (busbw/algbw 78.33/41.78 = 1.8748 and 487.09/259.78 =
 * 1.8750 give 2/(2 - 1.875) = 16); 05 is mpirun --tag-output (483.05/276.03 = 1.7500: 8 ranks);
 * 06 is nccl-tests 2.18 with one size; 07 has no '#' and no name, and ran without the data
 * check (#wrong N/A): its columns fit all_gather and alltoall alike, so it needs --collective
 * all_gather (188.54/201.11 = 0.93750 = 15/16 for all_gather's (n-1)/n: 16). Every file starts
 * with a "# source:" line, not nccl-tests'. */
static const real_log logs[] = {
    {"01_ztan_h100_16ranks_all_reduce.txt", DPAS_COLL_ALL_REDUCE, 16, DPAS_NCCL_BUS_RATIO,
     DPAS_NCCL_RANK_LINES, 31, 8, 8589934592ull, 338.82, 1, 0, NULL},
    {"02_oci_a100_16ranks_all_reduce_kubectl.txt", DPAS_COLL_ALL_REDUCE, 16, DPAS_NCCL_BUS_RATIO,
     DPAS_NCCL_RANK_LINES, 31, 8, 8589934592ull, 237.94, 4, 0, NULL},
    {"03_aws_p4de_2nodes_all_reduce_srun_label.txt", DPAS_COLL_ALL_REDUCE, 16,
     DPAS_NCCL_BUS_RATIO, DPAS_NCCL_BUS_RATIO, 29, 8, 2147483648ull, 78.33, 1, 31, NULL},
    {"04_aws_p5_2nodes_all_reduce_srun_label.txt", DPAS_COLL_ALL_REDUCE, 16, DPAS_NCCL_BUS_RATIO,
     DPAS_NCCL_BUS_RATIO, 32, 8, 17179869184ull, 487.09, 1, 34, NULL},
    {"05_aws_batch_p5_all_reduce_mpi_tag_output.txt", DPAS_COLL_ALL_REDUCE, 8,
     DPAS_NCCL_BUS_RATIO, DPAS_NCCL_BUS_RATIO, 32, 8, 17179869184ull, 483.05, 1, 37, NULL},
    {"06_gb10_2ranks_all_gather_one_size.txt", DPAS_COLL_ALL_GATHER, 2, DPAS_NCCL_TEST_NAME,
     DPAS_NCCL_RANK_LINES, 1, 17179869184ull, 17179869184ull, 22.94, 1, 0, NULL},
    {"07_dstack_a3mega_2nodes_all_gather_no_hash.txt", DPAS_COLL_ALL_GATHER, 16, DPAS_NCCL_GIVEN,
     DPAS_NCCL_BUS_RATIO, 11, 8388608, 8589934592ull, 188.54, 3, 0, "all_gather"},
};
#define NLOGS (sizeof logs / sizeof logs[0])

static void test_real_logs_read(void **state)
{
    (void)state;
    for (size_t i = 0; i < NLOGS; i++) {
        const real_log *L = &logs[i];
        dpas_netmodel *m = load_as(L->file, L->given);
        if (m->ncurves != 1 || m->logs[0]->ntests != 1)
            fail_msg("%s: %zu tests", L->file, m->ncurves);
        const dpas_curve *cv = &m->curves[0];
        const dpas_nccl_test *t = cv->test;
        if (cv->collective != L->collective || cv->ranks != L->ranks)
            fail_msg("%s: %s on %lld ranks", L->file, dpas_collective_name(cv->collective),
                     (long long)cv->ranks);
        assert_int_equal(t->collective_from, L->collective_from);
        assert_int_equal(t->ranks_from, L->ranks_from);
        assert_int_equal(cv->n, L->sizes);
        assert_int_equal(cv->bytes[0], L->min_bytes);
        assert_int_equal(cv->bytes[cv->n - 1], L->max_bytes);
        assert_near(cv->peak_busbw, L->peak_busbw_gbs * 1e9, 1e-12);
        assert_int_equal(m->logs[0]->foreign_lines, L->foreign);
        assert_int_equal(m->logs[0]->first_foreign_line, 1);
        assert_true(!strncmp(m->logs[0]->first_foreign, "# source: https://github.com/", 29));
        assert_int_equal(m->logs[0]->prefixed_lines, L->prefixed);
        assert_int_equal(t->warnings, 0);
        dpas_netmodel_free(m);
    }
    /* 07 as it is: refused, the message naming the fix */
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_load(REAL "07_dstack_a3mega_2nodes_all_gather_no_hash.txt",
                                        NULL, 0, &m, &e),
                     DPAS_EINVAL);
    assert_msg_contains(e, "fit all_gather or alltoall");
    assert_msg_contains(e, "#wrong N/A (the data check was off)");
    assert_msg_contains(e, "give collective all_gather");
}

/* Individual values, read by hand: 01 line 25 is 8 B in 135.8 us, line 55 8 GiB in 47535 us;
 * 05's prefix is mpirun's; 06's only row is 16 GiB in 374425 us. */
static void test_real_log_values(void **state)
{
    (void)state;
    dpas_netmodel *m = load("01_ztan_h100_16ranks_all_reduce.txt");
    const dpas_nccl_test *t = m->curves[0].test;
    assert_int_equal(t->header_line, 23);
    assert_int_equal(t->points[0].line, 25);
    assert_int_equal(t->points[0].bytes, 8);
    assert_near(t->points[0].seconds, 135.8e-6, 1e-12);
    assert_int_equal(t->points[30].line, 55);
    assert_near(t->points[30].seconds, 47535e-6, 1e-12);
    assert_int_equal(t->rank_lines, 16);
    assert_string_equal(t->type, "float");
    assert_string_equal(t->redop, "sum");
    dpas_netmodel_free(m);

    m = load("05_aws_batch_p5_all_reduce_mpi_tag_output.txt");
    assert_int_equal(m->logs[0]->prefix, DPAS_NCCL_PREFIX_MPIRUN);
    dpas_netmodel_free(m);
    m = load("03_aws_p4de_2nodes_all_reduce_srun_label.txt");
    assert_int_equal(m->logs[0]->prefix, DPAS_NCCL_PREFIX_SRUN);
    dpas_netmodel_free(m);

    m = load("06_gb10_2ranks_all_gather_one_size.txt");
    assert_string_equal(m->curves[0].test->name, "all_gather_perf");
    assert_near(m->curves[0].seconds[0], 374425e-6, 1e-12);
    dpas_netmodel_free(m);
}

/* For the sweeps that reach 1 GiB, the large-size beta (the last piecewise regime's) is within
 * 5% of the log's peak busbw; the single alpha-beta line is not (14-21% below, the issue). */
static void test_real_large_beta(void **state)
{
    (void)state;
    for (size_t i = 0; i < NLOGS; i++) {
        const real_log *L = &logs[i];
        if (L->max_bytes < (1ull << 30) || L->sizes < 2) /* a sweep that reaches 1 GiB */
            continue;
        dpas_netmodel *m = load_as(L->file, L->given);
        const dpas_curve *cv = &m->curves[0];
        const dpas_fit *pw = &cv->fits[DPAS_NETMODEL_PIECEWISE - 1];
        const dpas_fit *ab = &cv->fits[DPAS_NETMODEL_ALPHA_BETA - 1];
        assert_true(pw->defined && ab->defined);
        double peak = L->peak_busbw_gbs * 1e9;
        double dev = pw->beta / peak - 1, dev_ab = ab->beta / peak - 1;
        print_message("%.2s: peak busbw %.2f GB/s; large-size beta %.2f GB/s (%+.1f%%), %zu "
                      "regimes; one alpha-beta line %.2f GB/s (%+.1f%%)\n",
                      L->file, L->peak_busbw_gbs, pw->beta / 1e9, 100 * dev, pw->nregimes,
                      ab->beta / 1e9, 100 * dev_ab);
        if (!(fabs(dev) <= 0.05))
            fail_msg("%s: beta %g vs peak busbw %g", L->file, pw->beta, peak);
        /* each regime: alpha >= 0, beta > 0, regimes in order and covering every size */
        size_t next = 0;
        for (size_t r = 0; r < pw->nregimes; r++) {
            assert_true(pw->regimes[r].alpha >= 0 && pw->regimes[r].beta > 0);
            assert_int_equal(pw->regimes[r].first, next);
            assert_true(pw->regimes[r].count >= DPAS_PIECEWISE_MIN_SIZES);
            next += pw->regimes[r].count;
        }
        assert_int_equal(next, cv->n);
        dpas_netmodel_free(m);
    }
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Leave out every third size from 64 KiB up (64 KiB, 512 KiB, 4 MiB, ...: the first, fourth,
 * ... size >= 64 KiB), fit the rest and predict the left-out sizes with the empirical model:
 * median error <= 5%, worst <= 20% (the logs jump by up to 24% between neighbours where NCCL
 * switches protocol, e.g. log 04 at 64 KiB). */
static void test_real_leave_out(void **state)
{
    (void)state;
    for (size_t i = 0; i < NLOGS; i++) {
        const real_log *L = &logs[i];
        if (L->sizes < 4)
            continue;
        dpas_netmodel *m = load_as(L->file, L->given);
        const dpas_curve *cv = &m->curves[0];
        uint64_t keep_b[64], out_b[64];
        double keep_t[64], out_t[64];
        size_t nk = 0, no = 0, j = 0;
        assert_true(cv->n <= 64);
        for (size_t k = 0; k < cv->n; k++) {
            if (cv->bytes[k] >= 65536 && j++ % 3 == 0) {
                out_b[no] = cv->bytes[k], out_t[no++] = cv->seconds[k];
            } else {
                keep_b[nk] = cv->bytes[k], keep_t[nk++] = cv->seconds[k];
            }
        }
        dpas_netmodel *part = NULL;
        dpas_error e = {0};
        if (dpas_netmodel_from_points(cv->collective, cv->ranks, keep_b, keep_t, nk, &part, &e))
            fail_msg("%s: %s", L->file, e.message);
        double err[64];
        for (size_t k = 0; k < no; k++) {
            dpas_net_time t;
            if (dpas_netmodel_time(part, cv->collective, DPAS_NETMODEL_EMPIRICAL,
                                   (double)out_b[k], 0, &t, &e))
                fail_msg("%s: %s", L->file, e.message);
            err[k] = fabs(t.seconds - out_t[k]) / out_t[k];
        }
        qsort(err, no, sizeof err[0], cmp_double);
        double median = no % 2 ? err[no / 2] : (err[no / 2 - 1] + err[no / 2]) / 2;
        print_message("%.2s: %zu sizes left out, empirical error median %.1f%%, worst %.1f%%\n",
                      L->file, no, 100 * median, 100 * err[no - 1]);
        if (!(median <= 0.05 && err[no - 1] <= 0.20))
            fail_msg("%s: median %g worst %g", L->file, median, err[no - 1]);
        dpas_netmodel_free(part);
        dpas_netmodel_free(m);
    }
}

/* ---- the order of the files ----------------------------------------------------------------- */

#define SCALING DPAS_TEST_DATA "/nccl-scaling/"

static dpas_netmodel *load_order(const char *const *names, const size_t *order, size_t n)
{
    char buf[4][512];
    const char *paths[4];
    for (size_t i = 0; i < n; i++) {
        snprintf(buf[i], sizeof buf[i], "%s%s", SCALING, names[order[i]]);
        paths[i] = buf[i];
    }
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_load_files(paths, n, NULL, &m, &e))
        fail_msg("%s", e.message);
    return m;
}

/* Two models of the same files are the same bits: each collective's fitted parameters and
 * leave-one-scale-out errors, and the default model's time and band (and every model's time)
 * at measured and unmeasured scales. A consistency test of our own code against itself: the
 * property is that the answer is a function of the set of files. */
static void assert_same_model(const dpas_netmodel *a, const dpas_netmodel *b)
{
    assert_int_equal(a->nscalefits, b->nscalefits);
    for (size_t i = 0; i < a->nscalefits; i++) {
        const dpas_scale_fit *fa = &a->scalefits[i], *fb = NULL;
        for (size_t j = 0; j < b->nscalefits; j++)
            if (b->scalefits[j].collective == fa->collective)
                fb = &b->scalefits[j];
        assert_non_null(fb);
        assert_int_equal(fa->defined, fb->defined);
        assert_int_equal(fa->determined, fb->determined);
        assert_memory_equal(&fa->p, &fb->p, sizeof fa->p);
        assert_int_equal(fa->loro_points, fb->loro_points);
        assert_memory_equal(&fa->loro_median, &fb->loro_median, sizeof(double));
        assert_memory_equal(&fa->loro_q90, &fb->loro_q90, sizeof(double));
        assert_memory_equal(&fa->insample_median, &fb->insample_median, sizeof(double));
    }
    static const uint64_t sizes[] = {4096, 1u << 20, 64u << 20, 1u << 30, (uint64_t)16 << 30};
    static const dpas_scale at[] = {{8, 8}, {4, 4}, {16, 8}, {80, 8}, {64, 2}, {2048, 4}};
    dpas_net_prediction *pa = NULL, *pb = NULL;
    size_t na = 0, nb = 0;
    dpas_error e = {0};
    if (dpas_netmodel_predict_at(a, sizes, 5, at, 6, &pa, &na, &e) ||
        dpas_netmodel_predict_at(b, sizes, 5, at, 6, &pb, &nb, &e))
        fail_msg("%s", e.message);
    assert_int_equal(na, nb);
    for (size_t k = 0; k < na; k++) {
        const dpas_net_prediction *x = &pa[k], *y = NULL;
        for (size_t j = 0; j < nb; j++) /* the same question (rows follow the collectives) */
            if (pb[j].collective == x->collective && pb[j].bytes == x->bytes &&
                pb[j].at.ranks == x->at.ranks && pb[j].at.per_node == x->at.per_node)
                y = &pb[j];
        assert_non_null(y);
        assert_memory_equal(&x->time_s, &y->time_s, sizeof(double));
        assert_memory_equal(&x->band_lo, &y->band_lo, sizeof(double));
        assert_memory_equal(&x->band_hi, &y->band_hi, sizeof(double));
        assert_memory_equal(x->seconds, y->seconds, sizeof x->seconds);
        assert_int_equal(x->basis, y->basis);
        assert_int_equal(x->notes, y->notes);
    }
    dpas_free(pa), dpas_free(pb);
}

/* Issue 27: `--calibration A,B` and `B,A` gave different times (the bandwidth no curve
 * measured was taken from the first file's ranks per node). Every order of the files gives the
 * same model, bit for bit: two single-node files (4 and 8 GPUs; the network's bandwidth is
 * assumed from them), and three files of one cluster at 1 and 10 nodes. */
static void test_order_independent(void **state)
{
    (void)state;
    static const char *const one[] = {"xxrjun_h100_1node_x4gpus_five_tests.log",
                                      "xxrjun_h100_1node_x8gpus_five_tests.log"};
    static const size_t o2[2][2] = {{0, 1}, {1, 0}};
    dpas_netmodel *ref = load_order(one, o2[0], 2), *m = load_order(one, o2[1], 2);
    assert_same_model(ref, m);
    dpas_netmodel_free(ref), dpas_netmodel_free(m);
    static const char *const three[] = {"xxrjun_h100_1node_x8gpus_five_tests.log",
                                        "xxrjun_h100_10nodes_x2gpus_five_tests.log",
                                        "xxrjun_h100_1node_x4gpus_five_tests.log"};
    static const size_t o3[6][3] = {{0, 1, 2}, {0, 2, 1}, {1, 0, 2},
                                    {1, 2, 0}, {2, 0, 1}, {2, 1, 0}};
    ref = load_order(three, o3[0], 3);
    for (size_t k = 1; k < 6; k++) {
        m = load_order(three, o3[k], 3);
        assert_same_model(ref, m);
        dpas_netmodel_free(m);
    }
    dpas_netmodel_free(ref);
}

/* Log 06 has one size: no line can be fitted, and that is said; the empirical model still
 * answers at that size (the measurement) and nowhere else. */
static void test_real_single_size(void **state)
{
    (void)state;
    dpas_netmodel *m = load("06_gb10_2ranks_all_gather_one_size.txt");
    const dpas_curve *cv = &m->curves[0];
    for (int k = 0; k < 2; k++) {
        assert_false(cv->fits[k].defined);
        if (!strstr(cv->fits[k].reason, "1 distinct size (17179869184 B); a fit needs at least 2"))
            fail_msg("reason: %s", cv->fits[k].reason);
    }
    dpas_net_time t;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_GATHER, DPAS_NETMODEL_DEFAULT,
                                        17179869184.0, 0, &t, &e), 0);
    assert_int_equal(t.kind, DPAS_NETMODEL_EMPIRICAL);
    assert_near(t.seconds, 0.374425, 1e-12);
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_GATHER, DPAS_NETMODEL_EMPIRICAL,
                                        1073741824.0, 0, &t, &e), DPAS_EUNDEF);
    assert_msg_contains(e, "one size (17179869184 B)");
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_GATHER, DPAS_NETMODEL_ALPHA_BETA,
                                        17179869184.0, 0, &t, &e), DPAS_EUNDEF);
    assert_msg_contains(e, "a fit needs at least 2");
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, DPAS_NETMODEL_DEFAULT, 1e6, 0,
                                        &t, &e), DPAS_ENOENT);
    dpas_netmodel_free(m);
}

/* ---- the models on curves made by hand ------------------------------------------------------ */

/* all_reduce on 8 ranks, alpha 5 us, beta 25e9 B/s: t = 14 x 5e-6 + 1.75 x s / 25e9 exactly. */
static void test_alpha_beta_exact(void **state)
{
    (void)state;
    uint64_t b[20];
    double t[20];
    for (int i = 0; i < 20; i++) {
        b[i] = 64ull << i;
        t[i] = 14 * 5e-6 + 1.75 * (double)b[i] / 25e9;
    }
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_from_points(DPAS_COLL_ALL_REDUCE, 8, b, t, 20, &m, &e), 0);
    const dpas_curve *cv = &m->curves[0];
    for (int k = 0; k < 2; k++) {
        assert_near(cv->fits[k].alpha, 5e-6, 1e-9);
        assert_near(cv->fits[k].beta, 25e9, 1e-9);
        assert_true(cv->fits[k].max_rel_residual < 1e-9);
    }
    assert_int_equal(cv->fits[DPAS_NETMODEL_PIECEWISE - 1].nregimes, 1);
    /* the empirical model's leave-one-out is exact inside (the line through two neighbours) */
    assert_true(cv->fits[DPAS_NETMODEL_EMPIRICAL - 1].max_rel_residual < 1e-9);
    /* 1 MiB on 16 ranks with the ring's steps and factor (the alpha_beta and piecewise lines'
     * transfer): 30 x 5e-6 + 1.875 x 1048576 / 25e9 = 1.5e-4 + 7.86432e-5 s */
    dpas_net_time r;
    for (int k = DPAS_NETMODEL_ALPHA_BETA; k <= DPAS_NETMODEL_PIECEWISE; k++) {
        assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, k, 1048576, 16, &r, &e), 0);
        assert_near(r.seconds, 2.286432e-4, 1e-9);
        assert_true(r.rescaled);
        assert_int_equal(r.basis, DPAS_BASIS_TRANSFERRED);
        assert_false(r.extrapolated);
    }
    /* 64 GiB on 8 ranks: outside the sizes; the default answers with the nccl model through the
     * largest measured size. The points lie on one line, so the model's shape continues it:
     * 7e-5 + 1.75 x 68719476736 / 25e9 = 4.81043337152 s, within 1% */
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, DPAS_NETMODEL_DEFAULT,
                                        68719476736.0, 0, &r, &e), 0);
    assert_int_equal(r.kind, DPAS_NETMODEL_NCCL);
    assert_int_equal(r.basis, DPAS_BASIS_EXTRAPOLATED_SIZE);
    assert_true(r.extrapolated);
    assert_near(r.seconds, 4.81043337152, 1e-2);
    assert_true(r.band_lo < r.seconds && r.seconds < r.band_hi);
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, DPAS_NETMODEL_EMPIRICAL,
                                        68719476736.0, 0, &r, &e), 0);
    assert_near(r.seconds, 4.81043337152, 1e-9);
    /* one rank: nothing to move */
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, 0, 1e6, 1, &r, &e), 0);
    assert_true(r.seconds == 0);
    /* bad queries */
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, 0, 0, 0, &r, &e), DPAS_EINVAL);
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, 0, NAN, 0, &r, &e), DPAS_EINVAL);
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, 9, 1, 0, &r, &e), DPAS_EINVAL);
    assert_int_equal(dpas_netmodel_time(m, DPAS_COLL_BROADCAST, 0, 1, 0, &r, &e), DPAS_ENOENT);
    dpas_netmodel_free(m);
}

/* Two regimes made by hand: below 1 MiB alpha 2 us and beta 5e9, from 1 MiB alpha 20 us and
 * beta 2e11 (all_gather on 4 ranks: 3 steps, factor 3/4). The piecewise fit finds the break
 * and both lines; a single line cannot. */
static void test_piecewise_two_regimes(void **state)
{
    (void)state;
    uint64_t b[24];
    double t[24];
    for (int i = 0; i < 24; i++) {
        b[i] = 1024ull << i; /* 1 KiB .. 8 GiB */
        bool big = b[i] >= (1u << 20);
        t[i] = 3 * (big ? 20e-6 : 2e-6) + 0.75 * (double)b[i] / (big ? 2e11 : 5e9);
    }
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_from_points(DPAS_COLL_ALL_GATHER, 4, b, t, 24, &m, &e), 0);
    const dpas_fit *pw = &m->curves[0].fits[DPAS_NETMODEL_PIECEWISE - 1];
    assert_int_equal(pw->nregimes, 2);
    assert_int_equal(pw->regimes[0].from_bytes, 1024);
    assert_int_equal(pw->regimes[0].to_bytes, 524288);
    assert_int_equal(pw->regimes[1].from_bytes, 1048576);
    assert_near(pw->regimes[0].alpha, 2e-6, 1e-9);
    assert_near(pw->regimes[0].beta, 5e9, 1e-9);
    assert_near(pw->regimes[1].alpha, 20e-6, 1e-9);
    assert_near(pw->regimes[1].beta, 2e11, 1e-9);
    assert_near(pw->beta, 2e11, 1e-9);
    assert_true(pw->max_rel_residual < 1e-9);
    assert_true(m->curves[0].fits[0].max_rel_residual > 0.1);
    dpas_netmodel_free(m);
}

/* Repeated sizes are merged by their geometric mean: 100 us and 400 us give 200 us. */
static void test_repeated_sizes(void **state)
{
    (void)state;
    uint64_t b[] = {1024, 2048, 1024, 4096};
    double t[] = {100e-6, 150e-6, 400e-6, 300e-6};
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_from_points(DPAS_COLL_ALL_REDUCE, 2, b, t, 4, &m, &e), 0);
    assert_int_equal(m->curves[0].n, 3);
    assert_near(m->curves[0].seconds[0], 200e-6, 1e-12);
    dpas_netmodel_free(m);
    assert_int_equal(dpas_netmodel_from_points(DPAS_COLL_ALL_REDUCE, 2, b, t, 0, &m, &e),
                     DPAS_EINVAL);
    double bad[] = {1e-6, NAN, 1e-6, 1e-6};
    assert_int_equal(dpas_netmodel_from_points(DPAS_COLL_ALL_REDUCE, 2, b, bad, 4, &m, &e),
                     DPAS_EINVAL);
}

/* ---- the reader on small texts -------------------------------------------------------------- */

#define HDR "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
#define UNITS "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
/* all_reduce on 4 ranks (factor 1.5): algbw = size / time, busbw = 1.5 x algbw */
#define ROW1 "     1048576        262144     float     sum      -1    100.0   10.49   15.73      0    100.0   10.49   15.73      0\n"
#define ROW2 "     2097152        524288     float     sum      -1    150.0   13.98   20.97      0    150.0   13.98   20.97      0\n"
#define ROW3 "     4194304       1048576     float     sum      -1    250.0   16.78   25.17      0    250.0   16.78   25.17      0\n"

static void test_prefixes(void **state)
{
    (void)state;
    static const char *const prefixes[] = {"0: ", "  3: ", "[1,0]<stdout>:", "[1,0]<stderr>:",
                                           "[pod/nccl-worker-0/nccl] ", "node-a1.cluster: ",
                                           "2024-05-01T12:00:00.123456789Z ",
                                           "[pod/w/c] 0: "};
    static const int kinds[] = {DPAS_NCCL_PREFIX_SRUN,    DPAS_NCCL_PREFIX_SRUN,
                                DPAS_NCCL_PREFIX_MPIRUN,  DPAS_NCCL_PREFIX_MPIRUN,
                                DPAS_NCCL_PREFIX_KUBECTL, DPAS_NCCL_PREFIX_HOST,
                                DPAS_NCCL_PREFIX_TIMESTAMP, DPAS_NCCL_PREFIX_KUBECTL};
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        char text[2048];
        const char *p = prefixes[i];
        snprintf(text, sizeof text, "%s" HDR "%s" UNITS "%s" ROW1 "%s" ROW2 "%s" ROW3, p, p, p, p,
                 p);
        dpas_nccl_log *g = read_text(text, NULL, 0);
        assert_int_equal(g->ntests, 1);
        assert_int_equal(g->tests[0].npoints, 3);
        assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
        assert_int_equal(g->tests[0].ranks, 4); /* 2/(2 - 1.5) */
        assert_int_equal(g->prefixed_lines, 5);
        assert_int_equal(g->prefix, kinds[i]);
        assert_int_equal(g->foreign_lines, 0);
        dpas_nccl_log_free(g);
    }
}

/* Foreign lines (NCCL INFO, launcher notices) are skipped and counted, even inside the table;
 * the first is kept whole; a comment that mentions size, time and Rank is not read. */
static void test_foreign_lines(void **state)
{
    (void)state;
    const char *text = "Warning: Permanently added 'node' (ED25519) to the list of known hosts.\n"
                       "# size count type time: my notes; Rank 3 device 0 was slow\n"
                       "#  Rank 3 device 0 was slow\n"
                       HDR UNITS ROW1
                       "node:1234:1234 [0] NCCL INFO comm 0x5 rank 0 nranks 4 - Init COMPLETE\n"
                       ROW2 "NCCL WARN something\n" ROW3;
    dpas_nccl_log *g = read_text(text, NULL, 0);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->tests[0].npoints, 3);
    assert_int_equal(g->tests[0].rank_lines, 0);
    assert_int_equal(g->tests[0].ranks_from, DPAS_NCCL_BUS_RATIO);
    assert_int_equal(g->foreign_lines, 5);
    assert_int_equal(g->first_foreign_line, 1);
    assert_string_equal(g->first_foreign,
                        "Warning: Permanently added 'node' (ED25519) to the list of known hosts.");
    dpas_nccl_log_free(g);
}

/* CRLF line ends, no '#', blank lines, and N/A in #wrong. */
static void test_crlf_no_hash(void **state)
{
    (void)state;
    const char *text =
        "nThread 1 nGpus 1 minBytes 8 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20\r\n"
        "\r\n"
        "      size         count      type   redop    root     time   algbw   busbw #wrong     "
        "time   algbw   busbw #wrong\r\n"
        "     8388608        131072     float    none      -1    166.6   50.34   47.19    N/A    "
        "164.1   51.11   47.92    N/A\r\n"
        "    16777216        262144     float    none      -1    204.6   82.01   76.89    N/A    "
        "203.8   82.30   77.16    N/A\r\n"
        "Out of bounds values : 0 OK\r\n";
    /* 76.89/82.01 < 1 and redop none: all_gather or alltoall, #wrong N/A cannot tell */
    dpas_error e = read_error(text, NULL, 0);
    assert_msg_contains(e, "fit all_gather or alltoall");
    dpas_nccl_log *g = read_text(text, "all_gather", 0);
    assert_int_equal(g->ntests, 1);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(t->ranks, 16); /* 1/(1 - 0.9376) */
    assert_int_equal(t->points[1].line, 5);
    assert_near(t->points[1].seconds, 204.6e-6, 1e-12);
    assert_int_equal(t->wrong_rows, 0);
    assert_int_equal(g->foreign_lines, 0);
    dpas_nccl_log_free(g);
}

/* Error positions count every physical line, blank ones too. */
static void test_error_positions(void **state)
{
    (void)state;
    dpas_error e = read_error("# x\n\n" HDR "\n\n          64            16     float     sum"
                              "      -1    fast    0.00    0.00      0\n", NULL, 0);
    assert_int_equal(e.line, 6);
    assert_int_equal(e.column, 57); /* "fast" after 10+2+12+2+5+5+5+3+6+2+4 = 56 characters */
    assert_msg_contains(e, "t.txt:6:57: time must be a number > 0 (us), got \"fast\"");
    e = read_error("\n\n          64            16     float     sum      -1    1.0\n", NULL, 0);
    assert_int_equal(e.line, 3);
    assert_msg_contains(e, "a data row before nccl-tests' column header");
    e = read_error(HDR ROW1 "# Out of bounds values : 0 OK\n" ROW2, NULL, 0);
    assert_int_equal(e.line, 4);
    assert_msg_contains(e, "after the table that ended at line 3");
    e = read_error(HDR "     1048576\n", NULL, 0); /* a cut row */
    assert_msg_contains(e, "t.txt:2: a data row of 1 fields");
    e = read_error(HDR "     1048576        262144     float\n", NULL, 0);
    assert_msg_contains(e, "t.txt:2: a data row of 3 fields, but the column header (line 1) "
                           "puts the time in column 6");
    e = read_error(HDR "    99999999999999999999        262144     float     sum      -1    1.0\n",
                   NULL, 0);
    assert_msg_contains(e, "t.txt:2:5: size must be a whole number of bytes, got "
                           "\"99999999999999999999\"");
    /* a time in ms read as us would make algbw 1000 times off */
    e = read_error(HDR "     1048576        262144     float     sum      -1    0.1000   10.49   "
                       "15.73      0\n", NULL, 0);
    assert_msg_contains(e, "the time is not in us");
}

static void test_no_rows(void **state)
{
    (void)state;
    dpas_error e = read_error("", NULL, 0);
    assert_msg_contains(e, "t.txt: no nccl-tests rows found");
    e = read_error("hello\nworld\n", NULL, 0);
    assert_msg_contains(e, "2 lines are not nccl-tests output, the first (line 1): \"hello\"");
    e = read_error(HDR UNITS, NULL, 0);
    assert_msg_contains(e, "no nccl-tests rows found");
    dpas_nccl_log *g = NULL;
    assert_int_equal(dpas_nccl_read("a\0b", 3, "t.txt", NULL, 0, &g, &e), DPAS_EPARSE);
    assert_msg_contains(e, "NUL byte");
}

/* Several tests in one file, each with its name and Rank lines; --collective and --ranks
 * choose among them. */
#define RUN(name, ranklines)                                                                     \
    "# Collective test starting: " name "\n"                                                     \
    "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5\n"   \
    "#\n# Using devices\n" ranklines "#\n"
#define RANK(n) "#  Rank  " #n " Group  0 Pid   100 on host device  " #n " [0x01] GPU\n"
#define AG1 "     1048576         65536     float    none      -1    100.0   10.49    7.87    N/A    100.0   10.49    7.87    N/A\n"
#define AG2 "     2097152        131072     float    none      -1    150.0   13.98   10.49    N/A    150.0   13.98   10.49    N/A\n"
#define AG3 "     4194304        262144     float    none      -1    250.0   16.78   12.58    N/A    250.0   16.78   12.58    N/A\n"

static const char multi[] = RUN("all_reduce_perf", RANK(0) RANK(1) RANK(2) RANK(3))
    HDR UNITS ROW1 ROW2 ROW3 "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 20.6\n#\n"
    "# Collective test concluded: all_reduce_perf\n"
    RUN("all_gather_perf", RANK(0) RANK(1) RANK(2) RANK(3)) HDR UNITS AG1 AG2 AG3
    "# Collective test concluded: all_gather_perf\n";

static void test_several_tests(void **state)
{
    (void)state;
    dpas_nccl_log *g = read_text(multi, NULL, 0);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_TEST_NAME);
    assert_int_equal(g->tests[0].ranks_from, DPAS_NCCL_RANK_LINES);
    assert_int_equal(g->tests[1].collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(g->tests[1].ranks, 4);
    assert_int_equal(g->tests[1].ratio_ranks, 4); /* 12.58/16.78 = 0.749: (n-1)/n, n = 4 */
    assert_int_equal(g->foreign_lines, 0);
    dpas_nccl_log_free(g);
    g = read_text(multi, "all_gather", 0);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->unselected, 1);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_GATHER);
    dpas_nccl_log_free(g);
    dpas_error e = read_error(multi, "broadcast", 0);
    assert_msg_contains(e, "t.txt: no broadcast test; the file has 2 tests of other collectives");
    e = read_error(multi, NULL, 8);
    assert_msg_contains(e, "t.txt: no test on 8 ranks; the file has 2 tests");
    e = read_error(multi, "all_gather", 8);
    assert_msg_contains(e, "t.txt: no all_gather test on 8 ranks; the file has 2 tests");
}

/* Older layouts: v1 (2017: bytes N type op, time in ms, no units line), 2019 (error column,
 * no root), and 2.19's per-iteration and timestamp columns. */
static void test_old_and_new_layouts(void **state)
{
    (void)state;
    /* v1: 1 MiB in 0.100 ms: algbw 10.49 GB/s */
    const char *v1 = "# nThread 1 nGpus 4 minBytes 1048576 maxBytes 4194304 step: 2(factor)\n"
                     "#   Rank  0 on host device  0 [0x01] GPU\n"
                     "#   Rank  1 on host device  1 [0x02] GPU\n"
                     "#       bytes             N    type      op     time  algbw  busbw      res"
                     "     time  algbw  busbw      res\n"
                     "     1048576        262144   float     sum    0.100  10.49  10.49    0e+00"
                     "    0.100  10.49  10.49    0e+00\n"
                     "     2097152        524288   float     sum    0.150  13.98  13.98    0e+00"
                     "    0.150  13.98  13.98    0e+00\n";
    dpas_nccl_log *g = read_text(v1, "all_reduce", 0);
    assert_int_equal(g->tests[0].ranks, 2);
    assert_near(g->tests[0].points[0].seconds, 100e-6, 1e-12);
    dpas_nccl_log_free(g);
    /* without --collective: busbw/algbw = 1 and no root column (all_reduce on 2 ranks or an
     * older reduce_scatter): cannot tell */
    dpas_error e = read_error(v1, NULL, 0);
    assert_msg_contains(e, "cannot tell which collective this is");
    assert_int_equal(e.line, 5);

    const char *y2019 = "#       size         count    type   redop     time   algbw   busbw  error"
                        "     time   algbw   busbw  error\n"
                        "#        (B)    (elements)                     (us)  (GB/s)  (GB/s)"
                        "            (us)  (GB/s)  (GB/s)\n"
                        "     1048576        262144   float     sum    100.0   10.49   18.35"
                        "  1e-06    100.0   10.49   18.35  1e-06\n";
    g = read_text(y2019, NULL, 0);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->tests[0].ranks, 8); /* 18.35/10.49 = 1.7493: 2/(2 - 1.75) */
    assert_int_equal(g->tests[0].wrong_rows, 0);
    dpas_nccl_log_free(g);

    const char *v219 =
        "# nccl-tests version 2.19.6 nccl-headers=22809 nccl-library=22809\n"
        "# Collective test starting: reduce_scatter_perf\n"
        "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1048576 step: 2(factor) warmup iters: 1 "
        "iters: 20 agg iters: 1 validation: 1 graph: 0 unalign: 0\n"
        "#       size         count      type   redop    root     time   algbw   busbw  #wrong"
        "    i_min    i_max    i_p99    i_cv%     time   algbw   busbw  #wrong    i_min    i_max"
        "    i_p99    i_cv%           timestamp\n"
        "     1048576        131072     float     sum      -1    100.0   10.49    5.24       2"
        "     99.0    101.0    101.0     0.50    100.0   10.49    5.24       0     99.0    101.0"
        "    101.0     0.50 2025-01-01 12:00:00\n"
        "     2097152        262144     float     sum      -1    150.0   13.98    6.99       0"
        "    149.0    151.0    151.0     0.50    150.0   13.98    6.99       0    149.0    151.0"
        "    151.0     0.50 2025-01-01 12:00:01\n";
    g = read_text(v219, NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->collective, DPAS_COLL_REDUCE_SCATTER);
    assert_int_equal(t->collective_from, DPAS_NCCL_TEST_NAME);
    assert_int_equal(t->ranks, 2); /* 6.99/13.98 = 0.5: 1/(1 - 0.5) */
    assert_int_equal(t->wrong_rows, 1);
    assert_true(t->warnings & DPAS_NCCL_WARN_WRONG);
    dpas_nccl_log_free(g);

    /* a test dpas does not model, alone in its file */
    e = read_error("# Collective test starting: hypercube_perf\n" HDR AG1, NULL, 0);
    assert_msg_contains(e, "t.txt: no table dpas can read: the test \"hypercube_perf\" (line 2) "
                           "is not a collective dpas models; calibrate from an all_reduce");
}

/* The CSV layout, and a launcher prefix with a comma that does not make a line CSV. */
static void test_csv(void **state)
{
    (void)state;
    const char *csv = "name,gpus,size,count,type,time,algbw,busbw\n"
                      "all_reduce,16,1048576,262144,float,100.0,10.49,19.66\n"
                      "all_reduce,16,2097152,524288,float,150.0,13.98,26.21\n"
                      "all_gather,8,1048576,32768,float,100.0,10.49,9.18\n";
    dpas_nccl_log *g = read_text(csv, NULL, 0);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_CSV_COLUMN);
    assert_int_equal(g->tests[0].ranks, 16);
    assert_int_equal(g->tests[1].collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(g->tests[1].ranks, 8);
    assert_int_equal(g->tests[0].csv_ranks, 16);
    dpas_nccl_log_free(g);
    /* a column the numbers contradict: busbw/algbw 19.66 / 10.49 = 1.874 is 2(n-1)/n at n = 16,
     * not 8 (1.75); the numbers win, and the column's own 8 is kept for the warning */
    g = read_text("name,gpus,size,count,type,time,algbw,busbw\n"
                  "all_reduce,8,1048576,262144,float,100.0,10.49,19.66\n",
                  NULL, 0);
    assert_int_equal(g->tests[0].ranks, 16);
    assert_int_equal(g->tests[0].csv_ranks, 8);
    assert_true(g->tests[0].warnings & DPAS_NCCL_WARN_RANKS_DISAGREE);
    dpas_nccl_log_free(g);
    dpas_error e = read_error("name,gpus,size,time\nall_reduce,x,1024,1.0\n", NULL, 0);
    assert_msg_contains(e, "t.txt:2:12: the ranks column must be a whole number");
}

static void test_parse_size(void **state)
{
    (void)state;
    static const struct { const char *text; uint64_t want; } ok[] = {
        {"4096", 4096},           {"16MiB", 16777216},       {"16 MiB", 16777216},
        {"1GB", 1000000000},      {"1.5 GiB", 1610612736},   {"64k", 64000},
        {"64KiB", 65536},         {"2e3", 2000},             {"0.5kB", 500},
        {"8 B", 8},               {"1 byte", 1},             {"9223372036854775807", INT64_MAX},
    };
    dpas_error e = {0};
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        uint64_t v = 0;
        if (dpas_parse_size_bytes("s", ok[i].text, &v, &e))
            fail_msg("%s: %s", ok[i].text, e.message);
        assert_int_equal(v, ok[i].want);
    }
    uint64_t v;
    assert_int_equal(dpas_parse_size_bytes("s", "8EiB", &v, &e), DPAS_EPARSE); /* no EiB */
    assert_int_equal(dpas_parse_size_bytes("s", "8PiB", &v, &e), 0);
    assert_int_equal(v, 9007199254740992ull);
    assert_int_equal(dpas_parse_size_bytes("s", "0", &v, &e), DPAS_EINVAL);
    assert_int_equal(dpas_parse_size_bytes("s", "-1", &v, &e), DPAS_EINVAL);
    assert_int_equal(dpas_parse_size_bytes("s", "1.5", &v, &e), DPAS_EINVAL);
    assert_msg_contains(e, "whole number of bytes");
    assert_int_equal(dpas_parse_size_bytes("s", "9223372036854775808", &v, &e), DPAS_ERANGE);
    assert_int_equal(dpas_parse_size_bytes("s", "1e300", &v, &e), DPAS_ERANGE);
    assert_int_equal(dpas_parse_size_bytes("s", "12 XB", &v, &e), DPAS_EPARSE);
    assert_int_equal(dpas_parse_size_bytes("s", "MiB", &v, &e), DPAS_EPARSE);
    assert_int_equal(dpas_parse_size_bytes("s", "", &v, &e), DPAS_EPARSE);
    assert_int_equal(dpas_parse_size_bytes("s", "nan", &v, &e), DPAS_EPARSE);
}

static void test_collective_names(void **state)
{
    (void)state;
    dpas_collective c = DPAS_COLL_UNKNOWN;
    dpas_error e = {0};
    static const char *const names[] = {"all_reduce", "allreduce", "AllReduce",
                                        "all_reduce_perf", "./build/all_reduce_perf_mpi"};
    for (size_t i = 0; i < 5; i++) {
        assert_int_equal(dpas_collective_parse(names[i], &c, &e), 0);
        assert_int_equal(c, DPAS_COLL_ALL_REDUCE);
    }
    assert_int_equal(dpas_collective_parse("reduce", &c, &e), 0);
    assert_int_equal(c, DPAS_COLL_REDUCE);
    assert_int_equal(dpas_collective_parse("alltoall_perf", &c, &e), 0);
    assert_int_equal(c, DPAS_COLL_ALLTOALL);
    assert_int_equal(dpas_collective_parse("SendRecv", &c, &e), 0);
    assert_int_equal(c, DPAS_COLL_SENDRECV);
    /* alltoallv shares alltoall's columns, not its algbw (not size / time): not read */
    assert_int_equal(dpas_collective_parse("alltoallv", &c, &e), DPAS_EINVAL);
    assert_int_equal(dpas_collective_parse("hypercube", &c, &e), DPAS_EINVAL);
    assert_msg_contains(e, "collective must be one of all_reduce, all_gather, reduce_scatter, "
                           "broadcast, reduce, alltoall, gather, scatter or sendrecv, got "
                           "\"hypercube\"");
    double steps, factor;
    assert_int_equal(dpas_collective_ring(DPAS_COLL_ALL_REDUCE, 16, &steps, &factor, &e), 0);
    assert_true(steps == 30 && factor == 1.875);
    assert_int_equal(dpas_collective_ring(DPAS_COLL_ALL_GATHER, 16, &steps, &factor, &e), 0);
    assert_true(steps == 15 && factor == 0.9375);
    assert_int_equal(dpas_collective_ring(DPAS_COLL_BROADCAST, 16, &steps, &factor, &e), 0);
    assert_true(steps == 15 && factor == 1);
    /* nccl-tests' src/alltoall.cu, gather.cu, scatter.cu: busbw = algbw x (n-1)/n;
     * src/sendrecv.cu: busbw = algbw (one send and one receive per rank) */
    assert_int_equal(dpas_collective_ring(DPAS_COLL_ALLTOALL, 16, &steps, &factor, &e), 0);
    assert_true(steps == 15 && factor == 0.9375);
    assert_int_equal(dpas_collective_ring(DPAS_COLL_GATHER, 16, &steps, &factor, &e), 0);
    assert_true(steps == 15 && factor == 0.9375);
    assert_int_equal(dpas_collective_ring(DPAS_COLL_SCATTER, 16, &steps, &factor, &e), 0);
    assert_true(steps == 15 && factor == 0.9375);
    assert_int_equal(dpas_collective_ring(DPAS_COLL_SENDRECV, 16, &steps, &factor, &e), 0);
    assert_true(steps == 1 && factor == 1);
    dpas_netmodel_kind k;
    assert_int_equal(dpas_netmodel_kind_parse("piecewise", &k, &e), 0);
    assert_int_equal(k, DPAS_NETMODEL_PIECEWISE);
    assert_int_equal(dpas_netmodel_kind_parse("linear", &k, &e), DPAS_EINVAL);
}

/* The JSON is valid whatever the file's name and lines hold, with null where undefined. */
static void test_json_valid(void **state)
{
    (void)state;
    const char *text = "\xff\"quoted\\ \t\x01 line\n" HDR ROW1;
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_from_text(text, strlen(text), "we\"ird\xc3(name", NULL, 0, &m,
                                             &e), 0);
    uint64_t sizes[] = {1048576, 1ull << 40};
    dpas_net_prediction *p = NULL;
    size_t np = 0;
    assert_int_equal(dpas_netmodel_predict(m, sizes, 2, &p, &np, &e), 0);
    assert_int_equal(np, 2);
    char *js = dpas_render_netmodel(m, p, np, DPAS_FORMAT_JSON, &e);
    assert_non_null(js);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    if (!root)
        fail_msg("invalid JSON: %s\n%s", je.text, js);
    json_t *fit = json_array_get(json_object_get(root, "fits"), 0);
    assert_true(json_is_null(json_object_get(fit, "alpha_s"))); /* one size */
    json_t *pr = json_array_get(json_object_get(root, "predictions"), 0);
    assert_true(json_is_null(json_object_get(pr, "alpha_beta_s")));
    assert_true(json_is_null(json_object_get(pr, "nccl_s"))); /* one size: undefined */
    assert_near(json_real_value(json_object_get(pr, "empirical_s")), 100e-6, 1e-9);
    assert_string_equal(json_string_value(json_object_get(pr, "time_basis")), "measured");
    json_t *file = json_array_get(json_object_get(root, "files"), 0);
    assert_true(json_is_string(json_object_get(file, "file")));
    assert_true(json_is_string(json_object_get(file, "first_foreign")));
    json_decref(root);
    dpas_free(js);
    for (int f = 0; f < 4; f++)
        if (f != DPAS_FORMAT_JSON)
            dpas_free(dpas_render_netmodel(m, p, np, f, &e));
    dpas_free(p);
    dpas_netmodel_free(m);
}


/* Several runs of one scale are one curve: each size's time the median over the runs, the
 * spread max / min kept. By hand: 1 MiB {100, 110, 130} us -> 110, spread 1.3; 2 MiB {150, 160,
 * 150} -> 150, 160/150; 4 MiB {250, 260, 300} -> 260, 300/250 = 1.2. */
#define TROW(size, count, t)                                                                      \
    "  " size "  " count "     float     sum      -1    " t "   10.49   15.73      0    " t       \
    "   10.49   15.73      0\n"
#define RUN4(t1, t2, t3)                                                                           \
    RUN("all_reduce_perf", RANK(0) RANK(1) RANK(2) RANK(3))                                        \
    HDR UNITS TROW("1048576", "262144", t1) TROW("2097152", "524288", t2)                          \
        TROW("4194304", "1048576", t3) "# Out of bounds values : 0 OK\n"
/* 8 ranks: busbw/algbw = 18.36 / 10.49 = 1.7502, 2(n-1)/n = 1.75 at n = 8 only */
#define RUN8                                                                                       \
    RUN("all_reduce_perf", RANK(0) RANK(1) RANK(2) RANK(3) RANK(4) RANK(5) RANK(6) RANK(7))        \
    HDR UNITS                                                                                      \
    "     1048576        262144     float     sum      -1    120.0   10.49   18.36      0    "     \
    "120.0   10.49   18.36      0\n"                                                               \
    "     2097152        524288     float     sum      -1    180.0   10.49   18.36      0    "     \
    "180.0   10.49   18.36      0\n"                                                               \
    "     4194304       1048576     float     sum      -1    300.0   10.49   18.36      0    "     \
    "300.0   10.49   18.36      0\n"                                                               \
    "     8388608       2097152     float     sum      -1    550.0   10.49   18.36      0    "     \
    "550.0   10.49   18.36      0\n"

static const char *const run_texts[] = {RUN4("100.0", "150.0", "250.0"),
                                        RUN4("110.0", "160.0", "260.0"),
                                        RUN4("130.0", "150.0", "300.0"), RUN8};
static const char *const run_names[] = {"a.txt", "b.txt", "c.txt", "d.txt"};

static dpas_netmodel *model_of(const size_t *order, size_t n)
{
    const char *texts[4], *names[4];
    size_t lens[4];
    for (size_t i = 0; i < n; i++) {
        texts[i] = run_texts[order[i]];
        names[i] = run_names[order[i]];
        lens[i] = strlen(texts[i]);
    }
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_from_texts(texts, lens, names, n, NULL, &m, &e))
        fail_msg("%s", e.message);
    return m;
}

static void test_runs_merged(void **state)
{
    (void)state;
    size_t order[] = {2, 0, 1};
    dpas_netmodel *m = model_of(order, 3);
    assert_int_equal(m->ncurves, 1);
    const dpas_curve *cv = &m->curves[0];
    assert_int_equal(cv->runs, 3);
    assert_int_equal(cv->ranks, 4);
    assert_int_equal(cv->n, 3);
    assert_near(cv->seconds[0], 110e-6, 1e-12);
    assert_near(cv->seconds[1], 150e-6, 1e-12);
    assert_near(cv->seconds[2], 260e-6, 1e-12);
    assert_near(cv->run_spread[0], 1.3, 1e-12);
    assert_near(cv->run_spread[1], 160.0 / 150.0, 1e-12);
    assert_near(cv->run_spread[2], 1.2, 1e-12);
    assert_string_equal(m->logs[cv->log]->origin, "a.txt"); /* the first by name */
    /* the band of a measured size holds every run: the median 110 us times and over the spread
     * 1.3 (the runs' slowest over fastest there), [110 / 1.3, 110 x 1.3] us */
    dpas_net_time t;
    dpas_error e = {0};
    if (dpas_netmodel_time(m, DPAS_COLL_ALL_REDUCE, DPAS_NETMODEL_DEFAULT, (double)cv->bytes[0], 4,
                           &t, &e))
        fail_msg("%s", e.message);
    assert_int_equal(t.basis, DPAS_BASIS_MEASURED);
    assert_near(t.seconds, 110e-6, 1e-12);
    assert_true(t.band_lo <= 110e-6 / 1.3 * (1 + 1e-12));
    assert_true(t.band_hi >= 110e-6 * 1.3 * (1 - 1e-12));
    dpas_netmodel_free(m);
    /* two runs: the mean of the middle two, 105 us at 1 MiB */
    size_t two[] = {1, 0};
    m = model_of(two, 2);
    assert_int_equal(m->curves[0].runs, 2);
    assert_near(m->curves[0].seconds[0], 105e-6, 1e-12);
    dpas_netmodel_free(m);
    /* one run: no spread */
    size_t one[] = {0};
    m = model_of(one, 1);
    assert_int_equal(m->curves[0].runs, 1);
    assert_null(m->curves[0].run_spread);
    dpas_netmodel_free(m);
}

/* Issue 29 class 4: an undefined fit always carries a reason. A curve on 1 rank (as a log whose
 * busbw is 0 reads) is fitted by no model but the empirical curve: each other model says why. */
static void test_undefined_has_reason(void **state)
{
    (void)state;
    uint64_t b[6];
    double t[6];
    for (int i = 0; i < 6; i++)
        b[i] = 1024ull << (2 * i), t[i] = 10e-6 * (i + 1);
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_from_points(DPAS_COLL_ALL_REDUCE, 1, b, t, 6, &m, &e))
        fail_msg("%s", e.message);
    for (int k = 0; k < DPAS_NETMODEL_KINDS; k++) {
        const dpas_fit *f = &m->curves[0].fits[k];
        if (!f->defined && !f->reason[0])
            fail_msg("model %s undefined with no reason", dpas_netmodel_kind_name(k + 1));
    }
    assert_false(m->curves[0].fits[DPAS_NETMODEL_NCCL - 1].defined);
    dpas_netmodel_free(m);
}

static bool same_bits(const void *a, const void *b, size_t n) { return !memcmp(a, b, n); }

/* Every order of four files (24) gives the same model, bit for bit (a consistency test: the
 * model against itself in another order). */
static void test_order_independent_runs(void **state)
{
    (void)state;
    size_t base[] = {0, 1, 2, 3};
    dpas_netmodel *ref = model_of(base, 4);
    assert_int_equal(ref->ncurves, 2); /* 4 ranks (3 runs) and 8 ranks */
    size_t perm[4] = {0, 1, 2, 3};
    for (int k = 0; k < 24; k++) {
        /* the k-th permutation by the factorial number system */
        size_t pool[4] = {0, 1, 2, 3}, left = 4;
        int r = k;
        for (size_t i = 0; i < 4; i++) {
            int f = 1;
            for (size_t j = 1; j < left; j++)
                f *= (int)j;
            size_t at = (size_t)(r / f);
            r %= f;
            perm[i] = pool[at];
            for (size_t j = at; j + 1 < left; j++)
                pool[j] = pool[j + 1];
            left--;
        }
        dpas_netmodel *m = model_of(perm, 4);
        assert_int_equal(m->ncurves, ref->ncurves);
        for (size_t c = 0; c < m->ncurves; c++) {
            const dpas_curve *a = &m->curves[c], *b = &ref->curves[c];
            assert_int_equal(a->ranks, b->ranks);
            assert_int_equal(a->runs, b->runs);
            assert_int_equal(a->n, b->n);
            assert_true(same_bits(a->seconds, b->seconds, a->n * sizeof *a->seconds));
            assert_true(same_bits(a->bytes, b->bytes, a->n * sizeof *a->bytes));
            assert_string_equal(m->logs[a->log]->origin, ref->logs[b->log]->origin);
            for (int f = 0; f < DPAS_NETMODEL_KINDS; f++)
                assert_true(same_bits(a->fits[f].predicted, b->fits[f].predicted,
                                      a->n * sizeof(double)));
        }
        assert_int_equal(m->nscalefits, ref->nscalefits);
        for (size_t i = 0; i < m->nscalefits; i++) {
            assert_true(same_bits(&m->scalefits[i].p, &ref->scalefits[i].p,
                                  sizeof m->scalefits[i].p));
            assert_true(same_bits(&m->scalefits[i].loro_median, &ref->scalefits[i].loro_median,
                                  sizeof(double)));
        }
        dpas_netmodel_free(m);
    }
    dpas_netmodel_free(ref);
}

/* ---- topology regimes ----------------------------------------------------------------------- */

/* A curve of all_reduce at `at` whose times are size x bus factor / busbw exactly (a linear
 * curve: its leave-one-out interpolation errors are 0), sizes 256 MiB to 4 GiB. */
static dpas_netmodel *bw_curve(dpas_scale at, double busbw)
{
    uint64_t b[5];
    double t[5], n = (double)at.ranks, f = 2 * (n - 1) / n;
    for (int i = 0; i < 5; i++)
        b[i] = (uint64_t)1 << (28 + i), t[i] = f * (double)b[i] / busbw;
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_from_points_at(DPAS_COLL_ALL_REDUCE, at, b, t, 5, &m, &e))
        fail_msg("%s", e.message);
    return m;
}

static dpas_net_time time_at(const dpas_netmodel *m, int kind, double bytes, int64_t ranks,
                             int64_t per_node)
{
    dpas_net_time t;
    dpas_error e = {0};
    if (dpas_netmodel_time_at(m, DPAS_COLL_ALL_REDUCE, kind, bytes, (dpas_scale){ranks, per_node},
                              &t, &e))
        fail_msg("%s", e.message);
    return t;
}

/* ln(time / band_lo) and ln(band_hi / time), each within 1e-9 of the hand value */
static void assert_band(const dpas_net_time *t, double below, double above)
{
    if (!(fabs(log(t->seconds / t->band_lo) - below) < 1e-9 &&
          fabs(log(t->band_hi / t->seconds) - above) < 1e-9))
        fail_msg("band ln %.12g below, %.12g above; want %.12g, %.12g",
                 log(t->seconds / t->band_lo), log(t->band_hi / t->seconds), below, above);
}

/* The regime of a scale, which regime a time rests on, the bound the model gives when no curve
 * measured the regime asked (or the ranks per node asked, kappa not determined), and that
 * bound's one-sided band. The band's sides by hand from the rules of query.c (documented in
 * docs/calibration.md, "Basis and band"): closed side max(0.1, the kind's near, the curve's
 * noise 0); open side max(h, the kind's far), h = max(0.35 x distance, 0.319) with one scale
 * measured; far 3.280 between one node and several, 0.375 between 2 nodes and more, 0.504 to
 * other ranks per node; near 0.101 between one node and several, 0.537 between 2 nodes and
 * more, 0.078 (below the 0.1 floor) to other ranks per node. */
static void test_regime_bounds(void **state)
{
    (void)state;
    const double x = 1073741824.0;
    dpas_netmodel *one = bw_curve((dpas_scale){4, 4}, 100e9); /* 1 node x 4 */
    dpas_net_time t = time_at(one, 0, x, 4, 4);
    assert_int_equal(t.regime, DPAS_REGIME_ONE_NODE);
    assert_int_equal(t.from_regime, DPAS_REGIME_ONE_NODE);
    assert_int_equal(t.notes & (DPAS_NETTIME_OTHER_REGIME | DPAS_NETTIME_LOWER_BOUND |
                                DPAS_NETTIME_UPPER_BOUND),
                     0);
    /* 2 x 4 from one node: the network no faster than the links, the time at least this */
    t = time_at(one, 0, x, 8, 4);
    assert_int_equal(t.regime, DPAS_REGIME_TWO_NODES);
    assert_int_equal(t.from_regime, DPAS_REGIME_ONE_NODE);
    assert_true(t.notes & DPAS_NETTIME_OTHER_REGIME);
    assert_true(t.notes & DPAS_NETTIME_LOWER_BOUND);
    assert_false(t.notes & DPAS_NETTIME_UPPER_BOUND);
    assert_band(&t, 0.101, 3.280);
    /* 3 x 4: more nodes, still from the one node */
    t = time_at(one, 0, x, 12, 4);
    assert_int_equal(t.regime, DPAS_REGIME_MORE_NODES);
    assert_int_equal(t.from_regime, DPAS_REGIME_ONE_NODE);
    assert_true(t.notes & DPAS_NETTIME_LOWER_BOUND);
    assert_string_equal(dpas_net_regime_name(t.regime), "more_nodes");
    dpas_netmodel_free(one);

    dpas_netmodel *two = bw_curve((dpas_scale){16, 8}, 50e9); /* 2 nodes x 8 */
    /* one node of 8 from 2 nodes: the links at least as fast as the cards, at most this */
    t = time_at(two, 0, x, 8, 8);
    assert_int_equal(t.regime, DPAS_REGIME_ONE_NODE);
    assert_int_equal(t.from_regime, DPAS_REGIME_TWO_NODES);
    assert_true(t.notes & DPAS_NETTIME_UPPER_BOUND);
    assert_band(&t, 3.280, 0.101);
    /* 4 x 8 from 2 x 8: NCCL's 2-node bandwidth (its graph's intra-node speed) an upper bound
     * on more nodes', the time at least this; distance ln 2, h = max(0.35 ln 2 = 0.243, 0.319)
     * = 0.319 < far 0.375 */
    t = time_at(two, 0, x, 32, 8);
    assert_int_equal(t.regime, DPAS_REGIME_MORE_NODES);
    assert_int_equal(t.from_regime, DPAS_REGIME_TWO_NODES);
    assert_true(t.notes & DPAS_NETTIME_LOWER_BOUND);
    assert_band(&t, 0.537, 0.375);
    /* 4 x 16: also more per node than measured (kappa 1, which the cards never outgrow: at
     * least this too); distance ln 2 + ln 2, h = 0.35 x 1.386294 = 0.485203 > 0.375 */
    t = time_at(two, 0, x, 64, 16);
    assert_true(t.notes & DPAS_NETTIME_LOWER_BOUND);
    assert_band(&t, 0.537, 0.35 * 2 * log(2.0));
    /* 2 x 4: the regime measured, fewer per node (at most this), a ranks-per-node bound;
     * open side max(h = 0.319, far 0.504) */
    t = time_at(two, 0, x, 8, 4);
    assert_int_equal(t.regime, DPAS_REGIME_TWO_NODES);
    assert_int_equal(t.from_regime, DPAS_REGIME_TWO_NODES);
    assert_false(t.notes & DPAS_NETTIME_OTHER_REGIME);
    assert_true(t.notes & DPAS_NETTIME_UPPER_BOUND);
    assert_band(&t, 0.504, 0.1);
    dpas_netmodel_free(two);
}

/* Between one node and several, the open side of the band is never narrower than the span
 * physics allows for the regime no curve measured (query.c physical_span): a node's network at
 * least 25 GB/s (one 200 Gb/s card), a node's bus bandwidth at most 900 GB/s (NVLink 5 each
 * way). By hand: one node of 8 at busbw 800 GB/s, asked at 2 x 8: the network assumed as fast
 * as the links, so the time can be up to 800 / 25 = 32x it: ln 32 = 3.4657 > the learned far
 * 3.280. Two nodes of 8 at 20 GB/s, asked on one node: its links assumed as fast, so the time
 * can be down to 20 / 900 of it: ln 45 = 3.8067. Within 0.02: the fitted bandwidths (the nccl
 * model's Simple protocol over 256 MiB - 4 GiB, no latency in the times) are within 2%. */
static void test_band_physical_span(void **state)
{
    (void)state;
    const double x = 1073741824.0;
    dpas_netmodel *one = bw_curve((dpas_scale){8, 8}, 800e9);
    dpas_net_time t = time_at(one, 0, x, 16, 8);
    assert_true(t.notes & DPAS_NETTIME_LOWER_BOUND);
    double above = log(t.band_hi / t.seconds), below = log(t.seconds / t.band_lo);
    if (!(fabs(above - log(32.0)) < 0.02 && below >= 0.101 - 1e-12 && below < 0.2))
        fail_msg("band ln %.6g below, %.6g above; want >= 0.101, ~%.6g", below, above, log(32.0));
    dpas_netmodel_free(one);
    dpas_netmodel *two = bw_curve((dpas_scale){16, 8}, 20e9);
    t = time_at(two, 0, x, 8, 8);
    assert_true(t.notes & DPAS_NETTIME_UPPER_BOUND);
    above = log(t.band_hi / t.seconds), below = log(t.seconds / t.band_lo);
    if (!(fabs(below - log(45.0)) < 0.02 && above >= 0.101 - 1e-12 && above < 0.2))
        fail_msg("band ln %.6g below, %.6g above; want ~%.6g, >= 0.101", below, above, log(45.0));
    dpas_netmodel_free(two);
}

/* Two nodes and more are fitted apart: files at 2 x 4 (busbw 40 GB/s) and 8 x 4 (20 GB/s),
 * times size x factor / busbw. By hand: at 4 nodes, between the two log-linearly in the node
 * count, w = ln(4/2) / ln(8/2) = 1/2, busbw sqrt(40 x 20) = 28.28 GB/s; at 32 nodes, beyond
 * the node counts measured above 2, the 8-node 20 GB/s held (no trend from 2 to 8 carried on).
 * One bandwidth over both files (the model before the regimes) gives their geometric mean,
 * 28.28, at 32 nodes too. Checked on the nccl model's time at 1 GiB (its latency, about 50 us,
 * is 0.1% of 86 ms): within 2%. */
#define HDR_LINE                                                                                   \
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     "     \
    "time   algbw   busbw #wrong\n"                                                               \
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            "     \
    "(us)  (GB/s)  (GB/s)\n"
static void test_two_node_regime(void **state)
{
    (void)state;
    uint64_t b[5];
    double t2[5], t8[5];
    for (int i = 0; i < 5; i++) {
        b[i] = (uint64_t)1 << (28 + i);
        t2[i] = 2 * 7.0 / 8 * (double)b[i] / 40e9;
        t8[i] = 2 * 31.0 / 32 * (double)b[i] / 20e9;
    }
    static char a[16384], c[16384];
    const char *texts[2] = {a, c}, *names[2] = {"two.txt", "eight.txt"};
    size_t lens[2];
    for (int k = 0; k < 2; k++) {
        char *o = k ? c : a;
        int ranks = k ? 32 : 8;
        size_t l = (size_t)snprintf(o, 16384, "# Collective test starting: all_reduce_perf\n#\n");
        for (int r = 0; r < ranks; r++) /* 4 ranks per host */
            l += (size_t)snprintf(o + l, 16384 - l,
                                  "#  Rank %2d Group  0 Pid %d on node%02d device %d [0x01] GPU\n", r,
                                  100 + r, r / 4, r % 4);
        l += (size_t)snprintf(o + l, 16384 - l, "#\n" HDR_LINE);
        for (int i = 0; i < 5; i++) {
            double tus = (k ? t8[i] : t2[i]) * 1e6, alg = (double)b[i] / (tus * 1e3);
            double bus = alg * 2 * (ranks - 1.0) / ranks;
            l += (size_t)snprintf(o + l, 16384 - l,
                                  "%12llu %12llu float sum -1 %.9g %.6g %.6g 0 %.9g %.6g %.6g 0\n",
                                  (unsigned long long)b[i], (unsigned long long)b[i] / 4, tus,
                                  alg, bus, tus, alg, bus);
        }
        lens[k] = l;
    }
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_from_texts(texts, lens, names, 2, NULL, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m->ncurves, 2);
    assert_true(m->scalefits[0].determined & DPAS_SCALEFIT_TWO_NODE);
    const double x = 1073741824.0;
    dpas_net_time t = time_at(m, DPAS_NETMODEL_NCCL, x, 16, 4); /* 4 nodes */
    assert_near(2 * 15.0 / 16 * x / t.seconds, sqrt(40e9 * 20e9), 0.02);
    assert_int_equal(t.regime, DPAS_REGIME_MORE_NODES);
    assert_false(t.notes & DPAS_NETTIME_OTHER_REGIME);
    t = time_at(m, DPAS_NETMODEL_NCCL, x, 128, 4); /* 32 nodes */
    assert_near(2 * 127.0 / 128 * x / t.seconds, 20e9, 0.02);
    dpas_netmodel_free(m);
}

/* Files that kept only a few sizes (the MI325X series: 4, 8 and 16 GiB per node count) are
 * modelled: two sizes suffice (a latency and a bandwidth), one does not. Three bandwidth-bound
 * sizes on 2 x 8 ranks at a bus bandwidth of 350 GB/s carried to 8 x 8: NCCL's 2-node regime
 * at its intra-node speed, more nodes at most that fast, so the time is the ring's
 * 2 (64 - 1) / 64 x 16 GiB / 350 GB/s = 0.096637 s by hand, plus the ring's hop latencies
 * (2 x 7 network hops and 112 NVLink hops at NCCL's 14 us and 0.24 x it: 0.57 ms, 0.6%),
 * flagged as a lower bound (time_at_least) from another regime. */
static void test_few_sizes(void **state)
{
    (void)state;
    uint64_t b[3];
    double t[3];
    for (int i = 0; i < 3; i++)
        b[i] = (uint64_t)4 << (30 + i), t[i] = 2 * 15.0 / 16 * (double)b[i] / 350e9;
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_from_points_at(DPAS_COLL_ALL_REDUCE, (dpas_scale){16, 8}, b, t, 3, &m, &e))
        fail_msg("%s", e.message);
    assert_true(m->scalefits[0].defined);
    dpas_net_time r = time_at(m, DPAS_NETMODEL_DEFAULT, 17179869184.0, 64, 8);
    assert_near(r.seconds, 2 * 63.0 / 64 * 17179869184.0 / 350e9, 0.012);
    assert_int_equal(r.basis, DPAS_BASIS_TRANSFERRED);
    assert_true(r.notes & DPAS_NETTIME_OTHER_REGIME);
    assert_true(r.notes & DPAS_NETTIME_LOWER_BOUND);
    dpas_netmodel_free(m);
    /* one size: no model (its time is a latency or a bandwidth, never both) */
    if (dpas_netmodel_from_points_at(DPAS_COLL_ALL_REDUCE, (dpas_scale){16, 8}, b, t, 1, &m, &e))
        fail_msg("%s", e.message);
    assert_false(m->scalefits[0].defined);
    assert_non_null(strstr(m->scalefits[0].reason, "needs at least 2"));
    dpas_netmodel_free(m);
}

/* The NVLink domain is the node of the model, its size what gpus_per_node says: a GB200 NVL72
 * rack's log (Rank lines of 4 GPUs per host tray, 72 ranks) read with gpus_per_node 72 is one
 * node (the one-node regime, 72 ranks in it), and 144 ranks at 72 per node are NCCL's 2-node
 * case, not 36 trays; without the key the trays are the nodes (18 of them). */
static void test_nvlink_domain(void **state)
{
    (void)state;
    static char o[32768];
    size_t l = (size_t)snprintf(o, sizeof o, "# Collective test starting: all_reduce_perf\n#\n");
    for (int r = 0; r < 72; r++)
        l += (size_t)snprintf(o + l, sizeof o - l,
                              "#  Rank %2d Group  0 Pid %d on tray%02d device %d [0x01] GPU\n", r,
                              100 + r, r / 4, r % 4);
    l += (size_t)snprintf(o + l, sizeof o - l, "#\n" HDR_LINE);
    for (int i = 0; i < 5; i++) {
        uint64_t x = (uint64_t)1 << (26 + 2 * i);
        double tus = 2 * 71.0 / 72 * (double)x / 700e9 * 1e6, alg = (double)x / (tus * 1e3);
        double bus = alg * 2 * 71.0 / 72;
        l += (size_t)snprintf(o + l, sizeof o - l,
                              "%12llu %12llu float sum -1 %.9g %.6g %.6g 0 %.9g %.6g %.6g 0\n",
                              (unsigned long long)x, (unsigned long long)x / 4, tus, alg, bus, tus,
                              alg, bus);
    }
    const char *texts[1] = {o}, *names[1] = {"nvl72.txt"};
    size_t lens[1] = {l};
    dpas_calib_options opt = {.per_node = 72};
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    if (dpas_netmodel_from_texts(texts, lens, names, 1, &opt, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m->curves[0].per_node, 72);
    dpas_net_time t = time_at(m, DPAS_NETMODEL_DEFAULT, 1073741824.0, 72, 72);
    assert_int_equal(t.regime, DPAS_REGIME_ONE_NODE);
    assert_int_equal(t.basis, DPAS_BASIS_MEASURED);
    t = time_at(m, DPAS_NETMODEL_DEFAULT, 1073741824.0, 144, 72);
    assert_int_equal(t.regime, DPAS_REGIME_TWO_NODES);
    assert_int_equal(t.from_regime, DPAS_REGIME_ONE_NODE);
    dpas_netmodel_free(m);
    if (dpas_netmodel_from_texts(texts, lens, names, 1, NULL, &m, &e))
        fail_msg("%s", e.message);
    assert_int_equal(m->curves[0].per_node, 4);
    dpas_netmodel_free(m);
}

/* What crosses the network (ncclmodel.c, net_share): an alltoall sends (n - g) / n of each
 * rank's buffer off its node over that rank's share of the network, a sendrecv one rank's
 * buffer per node; neither grows with the GPUs per node as a ring does. Measured on 2 nodes x 1
 * (busbw 13.5 GB/s alltoall, 15 GB/s sendrecv), carried to 2 x 4 with the per-rank network
 * kept (kappa 1, the ring's assumption): by hand, alltoall's busbw 13.5 x (8 - 1) / (8 - 4) =
 * 23.625 GB/s, its time (7/8) x 16 GiB / 23.625 GB/s = 0.63634 s; sendrecv's 16 GiB / 15 GB/s
 * = 1.14532 s (the ring's rule, 4x the network, would give a quarter of each). */
static void test_network_share(void **state)
{
    (void)state;
    const int colls[2] = {DPAS_COLL_ALLTOALL, DPAS_COLL_SENDRECV};
    const double busbw[2] = {13.5e9, 15e9}, factor[2] = {0.5, 1};
    const double want[2] = {7.0 / 8 * 17179869184.0 / 23.625e9, 17179869184.0 / 15e9};
    for (int c = 0; c < 2; c++) {
        uint64_t b[5];
        double t[5];
        for (int i = 0; i < 5; i++)
            b[i] = (uint64_t)1 << (30 + i), t[i] = factor[c] * (double)b[i] / busbw[c];
        dpas_netmodel *m = NULL;
        dpas_error e = {0};
        if (dpas_netmodel_from_points_at(colls[c], (dpas_scale){2, 1}, b, t, 5, &m, &e))
            fail_msg("%s", e.message);
        dpas_net_time r;
        if (dpas_netmodel_time_at(m, colls[c], DPAS_NETMODEL_NCCL, 17179869184.0,
                                  (dpas_scale){8, 4}, &r, &e))
            fail_msg("%s", e.message);
        assert_near(r.seconds, want[c], 0.01);
        dpas_netmodel_free(m);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_logs_read),     cmocka_unit_test(test_real_log_values),
        cmocka_unit_test(test_real_large_beta),    cmocka_unit_test(test_real_leave_out),
        cmocka_unit_test(test_real_single_size),   cmocka_unit_test(test_alpha_beta_exact),
        cmocka_unit_test(test_piecewise_two_regimes), cmocka_unit_test(test_repeated_sizes),
        cmocka_unit_test(test_prefixes),           cmocka_unit_test(test_foreign_lines),
        cmocka_unit_test(test_crlf_no_hash),       cmocka_unit_test(test_error_positions),
        cmocka_unit_test(test_no_rows),            cmocka_unit_test(test_several_tests),
        cmocka_unit_test(test_old_and_new_layouts), cmocka_unit_test(test_csv),
        cmocka_unit_test(test_parse_size),         cmocka_unit_test(test_collective_names),
        cmocka_unit_test(test_json_valid),
        cmocka_unit_test(test_runs_merged),
        cmocka_unit_test(test_undefined_has_reason),
        cmocka_unit_test(test_order_independent),
        cmocka_unit_test(test_order_independent_runs),
        cmocka_unit_test(test_regime_bounds),
        cmocka_unit_test(test_band_physical_span),
        cmocka_unit_test(test_two_node_regime),
        cmocka_unit_test(test_few_sizes),
        cmocka_unit_test(test_nvlink_domain),
        cmocka_unit_test(test_network_share),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
