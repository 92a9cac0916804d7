/* SPDX-License-Identifier: Apache-2.0 */
/* The nccl-tests reader on every real log the project holds (tests/data/nccl-real and
 * tests/data/nccl-scaling, copied byte for byte from public repositories; sources in their
 * READMEs) and on small texts written here for each thing the reader must take or refuse.
 * Expected values are written by hand from the files' own lines (counted rows, Rank lines and
 * their hosts, "# Collective test starting" names) or from the READMEs, never from the reader. */
#include "check.h"

#include <jansson.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

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
    assert_non_null(strchr(e.message, ':'));
    assert_null(strchr(e.message, '\n')); /* one line */
    return e;
}

static void assert_near(double got, double want, double rel)
{
    if (!(fabs(got - want) <= rel * fabs(want)))
        fail_msg("got %.10g, want %.10g within %g", got, want, rel);
}

/* ---- every real file -------------------------------------------------------------------------- */

typedef struct want_test {
    int collective;
    int64_t ranks, nodes, ranks_per_node; /* nodes 0: the file does not say */
    size_t sizes, zero_rows;
    int header_line;
} want_test;

typedef struct real_file {
    const char *path;    /* under tests/data */
    const char *given;   /* --collective the file needs, or NULL */
    const char *refused; /* as it is (without `given`): part of the one-line reason, or NULL */
    size_t ntests;
    want_test t[5];
    size_t nskipped;
    const char *skipped[2]; /* their names */
    int skipped_line[2];
} real_file;

#define AR DPAS_COLL_ALL_REDUCE
#define AG DPAS_COLL_ALL_GATHER
#define RS DPAS_COLL_REDUCE_SCATTER
#define A2A DPAS_COLL_ALLTOALL
#define SR DPAS_COLL_SENDRECV

/* By hand from the files:
 * - nccl-real (its README): 01 and 02 have 16 Rank lines on two hosts (8 each); 03, 04 (srun
 *   --label) and 05 (mpirun --tag-output) have no Rank lines, their rank counts come from
 *   busbw/algbw (README); 06 has 2 Rank lines on two hosts; 07 has no name and no data check
 *   (#wrong N/A): all_gather (README) or alltoall alike, so it needs --collective.
 * - Polaris: "Rank" lines 4 per host (x3006c0s1b1n0 ...), 8 / 32 / 512 / 2160 of them; all_reduce
 *   tables have 29 rows (4 B to 1 GiB); all_gather tables start with rows of size 0 (5, 7, 11 and
 *   14 of them at 8, 32, 512 and 2160 ranks: the per-rank count of 4 B .. 4 KiB rounds to 0)
 *   before 24, 22, 18 and 15 rows of size > 0. The 512-rank all_reduce run failed ("start failed
 *   on x3006c0s1b1n0: CXI alloc failed ...", its two lines are the whole file).
 * - xxrjun: five tests per file, named by "# Collective test starting", 10 rows each, Rank lines
 *   on 10 hosts (cnode3-002 .. cnode3-011) with 1, 2, 4 or 8 each, or on one host with 4 or 8;
 *   all five read (alltoall_perf and sendrecv_perf too, at the header lines listed).
 * - AWS p5: 16 Rank lines on test-nccl-worker-0 and -1 (8 each), one table of 32 rows (8 B to
 *   16 GiB) under mpirun tags, inside the rows in v2.20.3-1 and v2.22.3-1. */
#define NOSKIP 0, {NULL, NULL}, {0, 0}
static const real_file files[] = {
    {"nccl-real/01_ztan_h100_16ranks_all_reduce.txt", NULL, NULL, 1, {{AR, 16, 2, 8, 31, 0, 23}}, NOSKIP},
    {"nccl-real/02_oci_a100_16ranks_all_reduce_kubectl.txt", NULL, NULL, 1,
     {{AR, 16, 2, 8, 31, 0, 26}}, NOSKIP},
    {"nccl-real/03_aws_p4de_2nodes_all_reduce_srun_label.txt", NULL, NULL, 1,
     {{AR, 16, 0, 0, 29, 0, 2}}, NOSKIP},
    {"nccl-real/04_aws_p5_2nodes_all_reduce_srun_label.txt", NULL, NULL, 1,
     {{AR, 16, 0, 0, 32, 0, 2}}, NOSKIP},
    {"nccl-real/05_aws_batch_p5_all_reduce_mpi_tag_output.txt", NULL, NULL, 1,
     {{AR, 8, 0, 0, 32, 0, 3}}, NOSKIP},
    {"nccl-real/06_gb10_2ranks_all_gather_one_size.txt", NULL, NULL, 1, {{AG, 2, 2, 1, 1, 0, 11}}, NOSKIP},
    {"nccl-real/07_dstack_a3mega_2nodes_all_gather_no_hash.txt", "all_gather",
     "fit all_gather or alltoall; give collective all_gather or collective alltoall", 1,
     {{AG, 16, 0, 0, 11, 0, 6}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_2nodes_8ranks_all_reduce.dat", NULL, NULL, 1,
     {{AR, 8, 2, 4, 29, 0, 14}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_8nodes_32ranks_all_reduce.dat", NULL, NULL, 1,
     {{AR, 32, 8, 4, 29, 0, 38}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_128nodes_512ranks_all_reduce.dat", NULL,
     "no nccl-tests rows found (expected a column header and lines of size, count, type, ..., "
     "time; a run that failed prints none); 2 lines are not nccl-tests output, the first (line "
     "1): \"start failed on x3006c0s1b1n0: CXI alloc failed on cxi0",
     0, {{0, 0, 0, 0, 0, 0, 0}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_540nodes_2160ranks_all_reduce.dat", NULL, NULL, 1,
     {{AR, 2160, 540, 4, 29, 0, 2166}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_2nodes_8ranks_all_gather.dat", NULL, NULL, 1,
     {{AG, 8, 2, 4, 24, 5, 14}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_8nodes_32ranks_all_gather.dat", NULL, NULL, 1,
     {{AG, 32, 8, 4, 22, 7, 38}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_128nodes_512ranks_all_gather.dat", NULL, NULL, 1,
     {{AG, 512, 128, 4, 18, 11, 518}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.18_tuned_540nodes_2160ranks_all_gather.dat", NULL, NULL, 1,
     {{AG, 2160, 540, 4, 15, 14, 2166}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.21_tuned_2nodes_8ranks_all_reduce.dat", NULL, NULL, 1,
     {{AR, 8, 2, 4, 29, 0, 14}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.21_tuned_8nodes_32ranks_all_reduce.dat", NULL, NULL, 1,
     {{AR, 32, 8, 4, 29, 0, 38}}, NOSKIP},
    {"nccl-scaling/polaris_nccl2.21_tuned_540nodes_2160ranks_all_reduce.dat", NULL, NULL, 1,
     {{AR, 2160, 540, 4, 29, 0, 2166}}, NOSKIP},
    {"nccl-scaling/xxrjun_h100_10nodes_x1gpus_five_tests.log", NULL, NULL, 5,
     {{AR, 10, 10, 1, 10, 0, 20}, {AG, 10, 10, 1, 10, 0, 57},
      {RS, 10, 10, 1, 10, 0, 94}, {A2A, 10, 10, 1, 10, 0, 131},
      {SR, 10, 10, 1, 10, 0, 168}},
     NOSKIP},
    {"nccl-scaling/xxrjun_h100_10nodes_x2gpus_five_tests.log", NULL, NULL, 5,
     {{AR, 20, 10, 2, 10, 0, 30}, {AG, 20, 10, 2, 10, 0, 77},
      {RS, 20, 10, 2, 10, 0, 124}, {A2A, 20, 10, 2, 10, 0, 171},
      {SR, 20, 10, 2, 10, 0, 218}},
     NOSKIP},
    {"nccl-scaling/xxrjun_h100_10nodes_x4gpus_five_tests.log", NULL, NULL, 5,
     {{AR, 40, 10, 4, 10, 0, 50}, {AG, 40, 10, 4, 10, 0, 117},
      {RS, 40, 10, 4, 10, 0, 184}, {A2A, 40, 10, 4, 10, 0, 251},
      {SR, 40, 10, 4, 10, 0, 318}},
     NOSKIP},
    {"nccl-scaling/xxrjun_h100_10nodes_x8gpus_five_tests.log", NULL, NULL, 5,
     {{AR, 80, 10, 8, 10, 0, 90}, {AG, 80, 10, 8, 10, 0, 197},
      {RS, 80, 10, 8, 10, 0, 304}, {A2A, 80, 10, 8, 10, 0, 411},
      {SR, 80, 10, 8, 10, 0, 518}},
     NOSKIP},
    {"nccl-scaling/xxrjun_h100_1node_x4gpus_five_tests.log", NULL, NULL, 5,
     {{AR, 4, 1, 4, 10, 0, 14}, {AG, 4, 1, 4, 10, 0, 45},
      {RS, 4, 1, 4, 10, 0, 76}, {A2A, 4, 1, 4, 10, 0, 107},
      {SR, 4, 1, 4, 10, 0, 138}},
     NOSKIP},
    {"nccl-scaling/xxrjun_h100_1node_x8gpus_five_tests.log", NULL, NULL, 5,
     {{AR, 8, 1, 8, 10, 0, 18}, {AG, 8, 1, 8, 10, 0, 53},
      {RS, 8, 1, 8, 10, 0, 88}, {A2A, 8, 1, 8, 10, 0, 123},
      {SR, 8, 1, 8, 10, 0, 158}},
     NOSKIP},
    {"nccl-scaling/aws_p5_h100_2nodes_16ranks_v2.20.3-1.log", NULL, NULL, 1,
     {{AR, 16, 2, 8, 32, 0, 2903}}, NOSKIP},
    {"nccl-scaling/aws_p5_h100_2nodes_16ranks_v2.22.3-1.log", NULL, NULL, 1,
     {{AR, 16, 2, 8, 32, 0, 2903}}, NOSKIP},
    {"nccl-scaling/aws_p5_h100_2nodes_16ranks_v2.22.3-1-with-tuner.log", NULL, NULL, 1,
     {{AR, 16, 2, 8, 32, 0, 2919}}, NOSKIP},
};

static void check_file(const real_file *F)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", DPAS_TEST_DATA, F->path);
    dpas_nccl_log *g = NULL;
    dpas_error e = {0};
    int rc = dpas_nccl_read_file(path, NULL, 0, &g, &e);
    if (F->refused) {
        if (!rc)
            fail_msg("%s: read, but should be refused", F->path);
        if (!strstr(e.message, F->refused) || strchr(e.message, '\n'))
            fail_msg("%s: refused with \"%s\", want \"%s\" on one line", F->path, e.message,
                     F->refused);
        if (!F->given)
            return;
        rc = dpas_nccl_read_file(path, F->given, 0, &g, &e);
    }
    if (rc)
        fail_msg("%s: %s", F->path, e.message);
    if (g->ntests != F->ntests)
        fail_msg("%s: %zu tests, want %zu", F->path, g->ntests, F->ntests);
    for (size_t i = 0; i < F->ntests; i++) {
        const dpas_nccl_test *t = &g->tests[i];
        const want_test *w = &F->t[i];
        if (t->collective != w->collective || t->ranks != w->ranks || t->nodes != w->nodes ||
            t->ranks_per_node != w->ranks_per_node || t->npoints != w->sizes ||
            t->zero_rows != w->zero_rows || t->header_line != w->header_line)
            fail_msg("%s test %zu: %s on %lld ranks, %lld nodes x %lld, %zu sizes, %zu of size 0, "
                     "header at line %d; want %s on %lld ranks, %lld nodes x %lld, %zu sizes, %zu "
                     "of size 0, line %d",
                     F->path, i, dpas_collective_name(t->collective), (long long)t->ranks,
                     (long long)t->nodes, (long long)t->ranks_per_node, t->npoints, t->zero_rows,
                     t->header_line, dpas_collective_name(w->collective), (long long)w->ranks,
                     (long long)w->nodes, (long long)w->ranks_per_node, w->sizes, w->zero_rows,
                     w->header_line);
        assert_int_equal(t->nodes_from, w->nodes ? DPAS_NCCL_RANK_LINES : DPAS_NCCL_UNKNOWN);
        if (w->nodes)
            assert_true(t->ranks_per_node_min == w->ranks_per_node &&
                        t->ranks_per_node_max == w->ranks_per_node);
        assert_int_equal(t->warnings, 0);
    }
    assert_int_equal(g->nskipped, F->nskipped);
    for (size_t i = 0; i < F->nskipped; i++) {
        assert_string_equal(g->skipped[i].name, F->skipped[i]);
        assert_int_equal(g->skipped[i].reason, DPAS_NCCL_SKIP_UNMODELLED);
        assert_int_equal(g->skipped[i].line, F->skipped_line[i]);
        assert_int_equal(g->skipped[i].rows, 10);
    }
    dpas_nccl_log_free(g);
}

static void test_every_real_file(void **state)
{
    (void)state;
    size_t n = sizeof files / sizeof files[0];
    assert_int_equal(n, 27); /* 7 in nccl-real, 20 in nccl-scaling */
    for (size_t i = 0; i < n; i++)
        check_file(&files[i]);
}

/* The AWS p5 rows, tags inside them, read as the files print them: line 2905 of v2.20.3-1 is
 * 8 B in 85.14 us (out of place); line 2936 16 GiB in 66108 us, busbw 487.27. */
static void test_aws_rows_with_tags(void **state)
{
    (void)state;
    dpas_nccl_log *g = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_nccl_read_file(DPAS_TEST_DATA
                                         "/nccl-scaling/aws_p5_h100_2nodes_16ranks_v2.20.3-1.log",
                                         NULL, 0, &g, &e),
                     0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->points[0].line, 2905);
    assert_int_equal(t->points[0].bytes, 8);
    /* the double nearest the printed decimal: divided by 10^6, exactly as strtod would read
     * "0.00008514" */
    assert_true(t->points[0].seconds == 85.14 / 1e6);
    assert_true(t->points[0].seconds_inplace == 62.82 / 1e6);
    assert_int_equal(t->points[31].line, 2936);
    assert_int_equal(t->points[31].bytes, 17179869184ull);
    assert_true(t->points[31].seconds == 66108 / 1e6);
    assert_true(t->points[31].seconds_inplace == 66143 / 1e6);
    assert_near(t->points[31].busbw, 487.27e9, 1e-12);
    assert_int_equal(g->inline_tags, 64); /* 2 in each of the 32 rows */
    assert_int_equal(g->joined_lines, 0);
    assert_int_equal(g->prefix, DPAS_NCCL_PREFIX_MPIRUN);
    dpas_nccl_log_free(g);
}

/* ---- small texts ---------------------------------------------------------------------------- */

#define HDR "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
/* all_reduce on 4 ranks (factor 1.5): algbw = size / time, busbw = 1.5 x algbw */
#define ROW1 "     1048576        262144     float     sum      -1    100.0   10.49   15.73      0    100.0   10.49   15.73      0\n"
#define ROW2 "     2097152        524288     float     sum      -1    150.0   13.98   20.97      0    150.0   13.98   20.97      0\n"
#define RANK(n, host) "#  Rank  " #n " Group  0 Pid   100 on " host " device  0 [0x01] GPU\n"
#define RANKS4 RANK(0, "a") RANK(1, "a") RANK(2, "b") RANK(3, "b")
#define END "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.0\n"

/* mpirun tags inside rows are removed and nothing else: a tag may even split a number (mpirun
 * tags each chunk a process writes), and the digits on both sides are kept; a bracket that is
 * not a tag ("[0x01]", "[1,0]" alone) stays. Errors point at the physical line and column. */
static void test_tags_inside_lines(void **state)
{
    (void)state;
    const char *text = "[1,0]<stdout>:" HDR
                       "[1,0]<stdout>:     1048576        262144     float     sum      "
                       "-1[1,0]<stdout>:    100.0   10.49   15.73      0[1,0]<stdout>:    100.0"
                       "   10.49   15.73      0\n"
                       "[1,0]<stdout>:     20971[1,0]<stdout>:52        524288     float     sum"
                       "      -1    15[1,0]<stdout>:0.0   13.98   20.97      0    150.0   13.98"
                       "   20.97      0\n";
    dpas_nccl_log *g = read_text(text, NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->npoints, 2);
    assert_int_equal(t->points[0].bytes, 1048576);
    assert_near(t->points[0].seconds, 100e-6, 1e-12);
    assert_int_equal(t->points[1].bytes, 2097152);
    assert_near(t->points[1].seconds, 150e-6, 1e-12);
    assert_int_equal(t->ranks, 4); /* 15.73/10.49 = 1.4995: 2/(2 - 1.5) */
    assert_int_equal(g->inline_tags, 4);
    assert_int_equal(g->prefix, DPAS_NCCL_PREFIX_MPIRUN);
    assert_int_equal(g->prefixed_lines, 3);
    dpas_nccl_log_free(g);

    /* a bad time after a tag: the physical column of the field */
    dpas_error e = read_error(HDR "[1,0]<stdout>:     1048576        262144     float     sum      "
                                  "-1[1,0]<stdout>:    fast   10.49   15.73      0\n",
                              NULL, 0);
    assert_int_equal(e.line, 2);
    assert_int_equal(e.column, 85); /* a tag (14 characters), 52, a tag, 4 blanks */
    assert_msg_contains(e, "t.txt:2:85: time must be a number > 0 (us), got \"fast\"");

    /* text that no process's tag starts (mpirun's own, without a newline) is a line of its own */
    g = read_text(HDR "mpirun: note[1,0]<stdout>:" ROW1, NULL, 0);
    assert_int_equal(g->tests[0].npoints, 1);
    assert_string_equal(g->first_foreign, "mpirun: note");
    assert_int_equal(g->inline_tags, 1);
    dpas_nccl_log_free(g);

    /* "[1,0]" without "<stdout>:" is not a tag: it stays, and the time is not a number */
    e = read_error(HDR "     1048576        262144     float     sum      -1    [1,0]100.0   "
                       "10.49   15.73      0\n",
                   NULL, 0);
    assert_msg_contains(e, "t.txt:2:57: time must be a number > 0 (us), got \"[1,0]100.0\"");
}

/* Another process's output between two chunks of a row: each process's chunks are joined, the
 * row keeps its first line, the other process's line is foreign. */
static void test_interleaved_processes(void **state)
{
    (void)state;
    const char *text =
        "[1,0]<stdout>:" HDR
        "[1,0]<stdout>:     1048576        262144     float     sum      -1[1,3]<stdout>:node:1:1 "
        "[3] NCCL INFO comm 0x1 rank 3 nranks 4 - Destroy COMPLETE\n"
        "[1,0]<stdout>:    100.0   10.49   15.73      0    100.0   10.49   15.73      0\n"
        "[1,0]<stdout>:" ROW2;
    dpas_nccl_log *g = read_text(text, NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->npoints, 2);
    assert_int_equal(t->points[0].line, 2);
    assert_near(t->points[0].seconds, 100e-6, 1e-12);
    assert_int_equal(t->points[1].line, 4);
    assert_int_equal(g->joined_lines, 1);
    assert_int_equal(g->foreign_lines, 1);
    assert_int_equal(g->first_foreign_line, 2);
    assert_string_equal(g->first_foreign,
                        "node:1:1 [3] NCCL INFO comm 0x1 rank 3 nranks 4 - Destroy COMPLETE");
    dpas_nccl_log_free(g);
}

/* mpiexec -l (MPICH, Intel MPI) prefixes "[N] ". */
static void test_mpiexec_prefix(void **state)
{
    (void)state;
    dpas_nccl_log *g = read_text("[0] " HDR "[0] " ROW1 "[0] " ROW2, NULL, 0);
    assert_int_equal(g->tests[0].npoints, 2);
    assert_int_equal(g->prefix, DPAS_NCCL_PREFIX_RANK);
    assert_int_equal(g->prefixed_lines, 3);
    dpas_nccl_log_free(g);
}

/* all_gather on 4 ranks (factor 0.75): rows of size 0 first (the count per rank rounds to 0) */
#define AGZ "           0             0     float    none      -1     8.77    0.00    0.00      0     8.77    0.00    0.00      0\n"
#define AG1 "     1048576         65536     float    none      -1    100.0   10.49    7.87      0    100.0   10.49    7.87      0\n"
#define AG2 "     2097152        131072     float    none      -1    150.0   13.98   10.49      0    150.0   13.98   10.49      0\n"

static void test_zero_rows(void **state)
{
    (void)state;
    dpas_nccl_log *g = read_text(RANKS4 HDR AGZ AGZ AG1 AG2 END, NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(t->npoints, 2);
    assert_int_equal(t->zero_rows, 2);
    assert_int_equal(t->zero_row_line, 6);
    assert_int_equal(t->points[0].line, 8);
    dpas_nccl_log_free(g);
    /* a table of rows of size 0 only, beside a real one: skipped; alone: refused */
    g = read_text(HDR AGZ END RANKS4 HDR AG1 AG2 END, NULL, 0);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->nskipped, 1);
    assert_int_equal(g->skipped[0].reason, DPAS_NCCL_SKIP_ZERO_ONLY);
    assert_int_equal(g->skipped[0].line, 1);
    dpas_nccl_log_free(g);
    dpas_error e = read_error(HDR AGZ AGZ, NULL, 0);
    assert_msg_contains(e, "t.txt: no table dpas can read: the table at line 1 has only rows of "
                           "size 0");
}

/* A table named by the *_perf command line or banner above it. */
static void test_command_line_names(void **state)
{
    (void)state;
    dpas_nccl_log *g =
        read_text("$ mpirun -np 4 -H a:2,b:2 /opt/nccl-tests/build/all_gather_perf -b 1M -e 2M\n"
                  RANKS4 HDR AG1 AG2 END
                  "+ ./build/all_reduce_perf -b 8 -e 8G -f 2 -g 1\n" RANKS4 HDR ROW1 ROW2 END,
                  NULL, 0);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_COMMAND);
    assert_string_equal(g->tests[0].name, "all_gather_perf");
    assert_int_equal(g->tests[1].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->tests[1].collective_from, DPAS_NCCL_COMMAND);
    dpas_nccl_log_free(g);

    /* a banner naming a test dpas does not model: skipped unread, even rows it could not read */
    g = read_text("===== hypercube_perf =====\n" HDR "     1048576   garbage\n" END
                  "===== all_reduce_perf =====\n" HDR ROW1 ROW2 END,
                  NULL, 0);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->nskipped, 1);
    assert_string_equal(g->skipped[0].name, "hypercube_perf");
    assert_int_equal(g->skipped[0].line, 2);
    assert_int_equal(g->skipped[0].rows, 1);
    dpas_nccl_log_free(g);

    /* a line naming two programs names no table; a command names only the next table */
    g = read_text("for t in all_gather_perf alltoall_perf; do ./build/$t; done\n" HDR ROW1 ROW2
                  END "./build/all_reduce_perf\n" HDR ROW1 END HDR ROW2 END,
                  NULL, 0);
    assert_int_equal(g->ntests, 3);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_BUS_RATIO);
    assert_int_equal(g->tests[1].collective_from, DPAS_NCCL_COMMAND);
    assert_int_equal(g->tests[2].collective_from, DPAS_NCCL_BUS_RATIO);
    dpas_nccl_log_free(g);

    /* nccl-tests' own name wins over the command line */
    g = read_text("./build/all_gather_perf\n# Collective test starting: all_reduce_perf\n" HDR
                  ROW1 ROW2,
                  NULL, 0);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_TEST_NAME);
    dpas_nccl_log_free(g);

    /* a command line the columns contradict: refused, never read as what it names */
    dpas_error e = read_error("./build/all_reduce_perf -b 1M\n" HDR AG1 AG2, NULL, 0);
    assert_msg_contains(e, "t.txt:3: line 1 names \"all_reduce_perf\", but this table's columns");
    assert_msg_contains(e, "fit all_gather");
    /* words that only look like it name nothing */
    g = read_text("my_all_reduce_perf_notes all_reduce_performance\n" HDR ROW1 ROW2, NULL, 0);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_BUS_RATIO);
    dpas_nccl_log_free(g);
}

/* busbw/algbw = 1 with redop sum and root -1: sendrecv's table, or an all_reduce on 2 ranks. */
#define SR1 "     1048576        262144     float     sum      -1    100.0   10.49   10.49      0    100.0   10.49   10.49      0\n"
#define SR2 "     2097152        524288     float     sum      -1    150.0   13.98   13.98      0    150.0   13.98   13.98      0\n"
#define SR1_NA "     1048576        262144     float     sum      -1    100.0   10.49   10.49      0    100.0   10.49   10.49    N/A\n"
#define RANKS2 RANK(0, "a") RANK(1, "b")

static void test_sendrecv_or_all_reduce(void **state)
{
    (void)state;
    /* 2 ranks (or none said): both fit; refused with the option that reads it */
    dpas_error e = read_error(RANKS2 HDR SR1 SR2, NULL, 0);
    assert_msg_contains(e, "t.txt:4: cannot tell which collective this is");
    assert_msg_contains(e, "fit all_reduce or sendrecv; give collective all_reduce or "
                           "collective sendrecv, or add the line \"# Collective test "
                           "starting: NAME_perf\" above its table");
    /* without Rank lines a reduce_scatter on some 1400 ranks prints 1 as well */
    e = read_error(HDR SR1 SR2, NULL, 0);
    assert_msg_contains(e, "fit all_reduce, reduce_scatter or sendrecv");
    dpas_nccl_log *g = read_text(RANKS2 HDR SR1 SR2, "all_reduce", 0);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_GIVEN);
    assert_int_equal(g->tests[0].ranks, 2);
    dpas_nccl_log_free(g);

    /* 4 ranks: an all_reduce would print 1.5, so it is a sendrecv: read as one, and
     * --collective cannot make it another collective */
    g = read_text(RANKS4 HDR SR1 SR2 END RANKS4 HDR ROW1 ROW2 END, NULL, 0);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_SENDRECV);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_BUS_RATIO);
    assert_int_equal(g->tests[0].ranks, 4);
    assert_int_equal(g->tests[1].header_line, 14);
    assert_int_equal(g->nskipped, 0);
    dpas_nccl_log_free(g);
    e = read_error(RANKS4 HDR SR1 SR2, "all_gather", 0);
    assert_int_equal(e.code, DPAS_EINVAL);

    /* on 2 ranks with the in-place run unchecked (nccl-tests' sendrecv before 2.18): sendrecv */
    g = read_text(RANKS2 HDR SR1_NA END RANKS4 HDR ROW1 END, NULL, 0);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_SENDRECV);
    assert_int_equal(g->tests[1].collective, DPAS_COLL_ALL_REDUCE);
    dpas_nccl_log_free(g);
}

/* (n-1)/n with redop none and root -1: all_gather, or alltoall; since 2022-09 alltoall prints
 * N/A as its in-place #wrong, all_gather a number. */
#define A2A1 "     1048576         65536     float    none      -1    100.0   10.49    7.87      0    100.0   10.49    7.87    N/A\n"
#define AGNA "     1048576         65536     float    none      -1    100.0   10.49    7.87    N/A    100.0   10.49    7.87    N/A\n"

static void test_all_gather_or_alltoall(void **state)
{
    (void)state;
    dpas_nccl_log *g = read_text(RANKS4 HDR A2A1 END RANKS4 HDR AG1 END, NULL, 0);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALLTOALL);
    assert_int_equal(g->tests[0].ranks, 4); /* 7.87 / 10.49 = 0.750: (n-1)/n at n = 4 */
    assert_int_equal(g->tests[1].collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(g->tests[1].header_line, 13);
    assert_int_equal(g->nskipped, 0);
    dpas_nccl_log_free(g);
    dpas_error e = read_error(RANKS4 HDR AGNA, NULL, 0);
    assert_msg_contains(e, "fit all_gather or alltoall; give collective all_gather or collective "
                           "alltoall, or add the line \"# Collective test starting: "
                           "NAME_perf\" above its table");
    assert_msg_contains(e, "#wrong N/A (the data check was off)");
}

/* A root >= 0: broadcast or reduce at busbw/algbw 1; (n-1)/n is gather or scatter (which needs
 * its name or --collective), never read as a broadcast. */
static void test_rooted(void **state)
{
    (void)state;
    const char *bc = RANKS4 HDR "     1048576        262144     float    none       0    100.0   "
                               "10.49   10.49      0    100.0   10.49   10.49      0\n";
    dpas_nccl_log *g = read_text(bc, NULL, 0);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_BROADCAST);
    assert_int_equal(g->tests[0].collective_from, DPAS_NCCL_BUS_RATIO);
    dpas_nccl_log_free(g);
    const char *ga = RANKS4 HDR "     1048576         65536     float    none       0    100.0   "
                               "10.49    7.87      0    100.0   10.49    7.87      0\n";
    dpas_error e = read_error(ga, NULL, 0);
    assert_msg_contains(e, "fit gather or scatter; give collective gather or collective scatter");
    e = read_error(ga, "broadcast", 0);
    assert_msg_contains(e, "no broadcast test");
    g = read_text(ga, "gather", 0);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_GATHER);
    assert_int_equal(g->tests[0].ranks, 4);
    dpas_nccl_log_free(g);
}

/* Before 2022-09 all_gather, broadcast, alltoall, gather and scatter printed an empty op (the row
 * has a field fewer); hypercube still does. */
static void test_empty_redop(void **state)
{
    (void)state;
    const char *ag = RANKS4 HDR "     1048576         65536     float              -1    100.0   "
                               "10.49    7.87      0    100.0   10.49    7.87      0\n";
    dpas_error e = read_error(ag, NULL, 0); /* alltoall then printed a number in place too */
    assert_msg_contains(e, "redop (empty), root -1, 4 Rank lines) fit all_gather or alltoall");
    dpas_nccl_log *g = read_text(ag, "all_gather", 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_near(t->points[0].seconds, 100e-6, 1e-12);
    assert_near(t->points[0].busbw, 7.87e9, 1e-12);
    assert_string_equal(t->redop, "");
    assert_int_equal(t->ranks, 4);
    dpas_nccl_log_free(g);
    /* hypercube on 4 ranks: algbw = 3 x size / time, busbw = algbw */
    const char *hc = RANKS4 HDR "     1048576        262144     float              -1    100.0   "
                               "31.46   31.46      0    100.0   31.46   31.46      0\n";
    e = read_error(hc, NULL, 0);
    assert_msg_contains(e, "fit only hypercube");
}

/* Nodes and ranks per node from the hosts of the Rank lines. */
static void test_nodes(void **state)
{
    (void)state;
    dpas_nccl_log *g = read_text(RANK(0, "a") RANK(1, "a") RANK(2, "a") RANK(3, "b") HDR ROW1,
                                 NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->rank_lines, 4);
    assert_int_equal(t->nodes, 2);
    assert_int_equal(t->ranks_per_node, 0); /* 3 and 1 */
    assert_int_equal(t->ranks_per_node_min, 1);
    assert_int_equal(t->ranks_per_node_max, 3);
    assert_int_equal(t->nodes_from, DPAS_NCCL_RANK_LINES);
    dpas_nccl_log_free(g);
    /* 2017's "Rank R on HOST device D", a rank listed twice */
    g = read_text("#   Rank  0 on n1 device  0 [0x01] GPU\n#   Rank  1 on n2 device  0 [0x01] GPU\n"
                  "#   Rank  1 on n2 device  0 [0x01] GPU\n" HDR SR1,
                  "all_reduce", 0);
    t = &g->tests[0];
    assert_int_equal(t->rank_lines, 2);
    assert_int_equal(t->nodes, 2);
    assert_int_equal(t->ranks_per_node, 1);
    dpas_nccl_log_free(g);
    /* no Rank lines: 0, unknown */
    g = read_text(HDR ROW1, NULL, 0);
    assert_int_equal(g->tests[0].nodes, 0);
    assert_int_equal(g->tests[0].ranks_per_node, 0);
    assert_int_equal(g->tests[0].nodes_from, DPAS_NCCL_UNKNOWN);
    dpas_nccl_log_free(g);
}

/* The in-place time: the second time column; NaN where the row or the layout has none; checked
 * like the out-of-place one. */
static void test_inplace_time(void **state)
{
    (void)state;
    dpas_nccl_log *g = read_text(HDR ROW1 "     2097152        524288     float     sum      -1    "
                                          "150.0   13.98   20.97      0\n",
                                 NULL, 0);
    assert_true(g->tests[0].points[0].seconds_inplace == 100.0 / 1e6);
    assert_true(isnan(g->tests[0].points[1].seconds_inplace)); /* the row stops there */
    dpas_nccl_log_free(g);
    g = read_text("name,gpus,size,time\nall_reduce,4,1048576,100.0\n", NULL, 0);
    assert_true(isnan(g->tests[0].points[0].seconds_inplace));
    dpas_nccl_log_free(g);
    /* v1: milliseconds, both times */
    g = read_text("#       bytes             N    type      op     time  algbw  busbw      res"
                  "     time  algbw  busbw      res\n"
                  "     1048576        262144   float     sum    0.100  10.49  15.73    0e+00"
                  "    0.125   8.39  12.58    0e+00\n",
                  NULL, 0);
    assert_true(g->tests[0].points[0].seconds == 0.100 / 1e3);
    assert_true(g->tests[0].points[0].seconds_inplace == 0.125 / 1e3);
    dpas_nccl_log_free(g);
    dpas_error e = read_error(HDR "     1048576        262144     float     sum      -1    100.0   "
                                  "10.49   15.73      0    x   10.49   15.73      0\n",
                              NULL, 0);
    /* 52 characters to the root, 9 + 8 + 8 + 7 for time, algbw, busbw, #wrong, 4 blanks */
    assert_msg_contains(e, "t.txt:2:89: in-place time must be a number > 0 (us), got \"x\"");
    e = read_error(HDR "     1048576        262144     float     sum      -1    100.0   10.49   "
                       "15.73      0   1e-300   10.49   15.73      0\n",
                   NULL, 0);
    assert_msg_contains(e, "in-place time 1e-300 us is below 1 ns");
}

/* Times and sizes no clock or network produces are refused with their line and column. */
static void test_bounds(void **state)
{
    (void)state;
    static const struct {
        const char *row, *msg;
    } bad[] = {
        {"     1048576        262144     float     sum      -1   1e-300    0.00    0.00      0\n",
         "t.txt:2:56: time 1e-300 us is below 1 ns"},
        {"           8             2     float     sum      -1   0.0009    0.00    0.00      0\n",
         "t.txt:2:56: time 0.0009 us is below 1 ns"},
        {"           8             2     float     sum      -1   1e+11     0.00    0.00      0\n",
         "t.txt:2:56: time 1e+11 us is above a day"},
        {"  2251799813685248  1  float  sum  -1  1e6  0.00  0.00  0\n",
         "t.txt:2:3: size 2251799813685248 B is above 2^50 B (1 PiB)"},
        {"  1073741824  268435456  float  sum  -1  0.5  2147483.65  3221225.47  0\n",
         "t.txt:2:42: 1073741824 B in 0.5 us is 2.15e+15 B/s, above 1 PB/s"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char text[512];
        snprintf(text, sizeof text, "%s%s", HDR, bad[i].row);
        dpas_error e = read_error(text, "all_reduce", 0);
        assert_msg_contains(e, bad[i].msg);
        assert_int_equal(e.line, 2);
    }
    /* within them: 2 ns is read */
    dpas_nccl_log *g = read_text(HDR "           8             2     float     sum      -1    "
                                     "0.002    0.00    0.00      0\n",
                                 "all_reduce", 4);
    assert_near(g->tests[0].points[0].seconds, 2e-9, 1e-12);
    dpas_nccl_log_free(g);
}

/* The JSON report carries the new fields. */
static void test_json_fields(void **state)
{
    (void)state;
    const char *text = RANKS4 HDR AGZ AG1 AG2 END "===== hypercube_perf =====\n" HDR SR1 END;
    dpas_netmodel *m = NULL;
    dpas_error e = {0};
    assert_int_equal(dpas_netmodel_from_text(text, strlen(text), "t.txt", NULL, 0, &m, &e), 0);
    char *js = dpas_render_netmodel(m, NULL, 0, DPAS_FORMAT_JSON, &e);
    assert_non_null(js);
    json_error_t je;
    json_t *root = json_loads(js, 0, &je);
    if (!root)
        fail_msg("invalid JSON: %s", je.text);
    json_t *t = json_array_get(json_object_get(root, "tests"), 0);
    assert_non_null(t);
    assert_int_equal(json_integer_value(json_object_get(t, "nodes")), 2);
    assert_int_equal(json_integer_value(json_object_get(t, "ranks_per_node")), 2);
    assert_string_equal(json_string_value(json_object_get(t, "ranks_per_node_from")),
                        "rank_lines");
    assert_int_equal(json_integer_value(json_object_get(t, "zero_rows")), 1);
    json_t *file = json_array_get(json_object_get(root, "files"), 0);
    json_t *s = json_array_get(json_object_get(file, "skipped_tables"), 0);
    assert_non_null(s);
    assert_string_equal(json_string_value(json_object_get(s, "name")), "hypercube_perf");
    assert_string_equal(json_string_value(json_object_get(s, "reason")), "unmodelled");
    assert_int_equal(json_integer_value(json_object_get(s, "line")), 12);
    bool noted = false;
    json_t *notes = json_object_get(root, "notes");
    for (size_t i = 0; i < json_array_size(notes); i++)
        noted |= strstr(json_string_value(json_array_get(notes, i)),
                        "t.txt:12: hypercube_perf skipped (1 row): dpas does not model it") != NULL;
    assert_true(noted);
    json_decref(root);
    dpas_free(js);
    dpas_netmodel_free(m);
}


/* Ranks from the numbers. ROW1 is an all_reduce: busbw/algbw = 15.73 / 10.49 = 1.4995, within
 * the printed rounding of 2(n-1)/n = 1.5 at n = 4 only (n = 3 gives 1.333, n = 5 1.6). */
static void test_ranks_from_numbers(void **state)
{
    (void)state;
    /* one Rank line (a 128-rank log that shows one): the numbers win, with a warning */
    dpas_nccl_log *g = read_text(RANK(0, "a") HDR ROW1, NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->ranks, 4);
    assert_int_equal(t->ranks_from, DPAS_NCCL_BUS_RATIO);
    assert_int_equal(t->rank_lines, 1);
    assert_true(t->warnings & DPAS_NCCL_WARN_RANKS_DISAGREE);
    dpas_nccl_log_free(g);
    /* elided: two lines, "#  ...", none after: partial, no node count */
    g = read_text(RANK(0, "a") RANK(1, "a") "#  ...\n" HDR ROW1, NULL, 0);
    t = &g->tests[0];
    assert_int_equal(t->ranks, 4);
    assert_int_equal(t->ranks_from, DPAS_NCCL_BUS_RATIO);
    assert_int_equal(t->rank_lines_partial, 1);
    assert_int_equal(t->elided_line, 3);
    assert_int_equal(t->nodes, 0);
    assert_int_equal(t->nodes_from, DPAS_NCCL_UNKNOWN);
    assert_true(t->warnings & DPAS_NCCL_WARN_RANK_LINES_PARTIAL);
    assert_false(t->warnings & DPAS_NCCL_WARN_RANKS_DISAGREE);
    dpas_nccl_log_free(g);
    /* ids 0 and 3 only: partial without a line of dots */
    g = read_text(RANK(0, "a") RANK(3, "b") HDR ROW1, NULL, 0);
    assert_int_equal(g->tests[0].ranks, 4);
    assert_int_equal(g->tests[0].rank_lines_partial, 1);
    assert_int_equal(g->tests[0].elided_line, 0);
    dpas_nccl_log_free(g);
    /* whole lines that agree are named as the source */
    g = read_text(RANKS4 HDR ROW1, NULL, 0);
    assert_int_equal(g->tests[0].ranks_from, DPAS_NCCL_RANK_LINES);
    assert_int_equal(g->tests[0].warnings & DPAS_NCCL_WARN_RANKS_DISAGREE, 0);
    dpas_nccl_log_free(g);
    /* one rank: nccl-tests prints busbw 0 (factor 2(1-1)/1 = 0), n = 1 from the numbers */
    g = read_text(RANK(0, "a") HDR "     1048576        262144     float     sum      -1    "
                                   "100.0   10.49    0.00      0    100.0   10.49    0.00      0\n",
                  "all_reduce", 0); /* at n = 1 reduce_scatter prints the same */
    assert_int_equal(g->tests[0].ranks, 1);
    assert_int_equal(g->tests[0].warnings & DPAS_NCCL_WARN_RANKS_DISAGREE, 0);
    dpas_nccl_log_free(g);
    /* broadcast: busbw/algbw is 1 at any n; elided lines cannot tell: refused naming ranks */
    const char *bc = "     1048576        262144     float    none       0    100.0   10.49   10.49"
                     "      0    100.0   10.49   10.49      0\n";
    char text[1024];
    snprintf(text, sizeof text, "%s%s#  ...\n%s%s", RANK(0, "a"), RANK(1, "a"), HDR, bc);
    dpas_error e = read_error(text, NULL, 0);
    assert_string_equal(e.field, "ranks");
    assert_msg_contains(e, "elided (line 3)");
    assert_msg_contains(e, "give ranks N");
    g = read_text(text, NULL, 72); /* given: used, the lines were partial */
    assert_int_equal(g->tests[0].ranks, 72);
    assert_int_equal(g->tests[0].ranks_from, DPAS_NCCL_GIVEN);
    dpas_nccl_log_free(g);
    /* broadcast with one Rank line: one GPU or a shortened list; refused, both fixes named */
    snprintf(text, sizeof text, "%s%s%s", RANK(0, "a"), HDR, bc);
    e = read_error(text, NULL, 0);
    assert_msg_contains(e, "one \"#  Rank\" line");
    assert_msg_contains(e, "ranks 1 if it ran on one GPU");
    g = read_text(text, NULL, 16);
    assert_int_equal(g->tests[0].ranks, 16);
    assert_true(g->tests[0].warnings & DPAS_NCCL_WARN_RANKS_GIVEN);
    dpas_nccl_log_free(g);
}

/* A log of several tests with one that cannot be told reads the others, and says why. */
static void test_unreadable_test_skipped(void **state)
{
    (void)state;
    const char *bc = "     1048576        262144     float    none       0    100.0   10.49   10.49"
                     "      0    100.0   10.49   10.49      0\n";
    char text[2048];
    snprintf(text, sizeof text,
             "# Collective test starting: all_reduce_perf\n%s%s%s"
             "# Collective test starting: broadcast_perf\n%s#  ...\n%s%s",
             RANK(0, "a"), HDR, ROW1, RANK(0, "a"), HDR, bc);
    dpas_nccl_log *g = read_text(text, NULL, 0);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->tests[0].ranks, 4);
    assert_int_equal(g->nskipped, 1);
    assert_int_equal(g->skipped[0].reason, DPAS_NCCL_SKIP_UNREADABLE);
    assert_string_equal(g->skipped[0].name, "broadcast_perf");
    assert_int_equal(g->skipped[0].line, 8);
    assert_non_null(strstr(g->skipped[0].why, "give ranks N"));
    dpas_nccl_log_free(g);
}

/* Real and modelled GB200/GB300 logs: read at the scale their numbers say.
 * - nccl-real/08 (coreweave/nccl-tests#43): one Rank line (rank 71); busbw/algbw = 586.06 /
 *   297.16 = 1.97221, and 2(n-1)/n is 1.97183 at 71, 1.97222 at 72, 1.97260 at 73: 72 ranks.
 * - nccl-synthetic GB300 (README): Rank lines 0-3 and 68-71 around "#  ...": all_reduce and
 *   all_gather on 72 ((72-1)/72 = 0.98611), the broadcast skipped for want of ranks.
 * - nccl-synthetic no Rank lines: busbw/algbw = 2 x 127/128 = 1.984375: 128 ranks. */
static void test_gb_style_logs(void **state)
{
    (void)state;
    dpas_nccl_log *g = NULL;
    dpas_error e = {0};
    if (dpas_nccl_read_file(DPAS_TEST_DATA "/nccl-real/08_coreweave_gb200_nvl72_all_reduce_one_"
                                           "rank_line.txt",
                            NULL, 0, &g, &e))
        fail_msg("%s", e.message);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->tests[0].ranks, 72);
    assert_int_equal(g->tests[0].ranks_from, DPAS_NCCL_BUS_RATIO);
    assert_int_equal(g->tests[0].rank_lines, 1);
    assert_int_equal(g->tests[0].rank_lines_partial, 1); /* its id is 71 */
    assert_int_equal(g->tests[0].npoints, 5);
    dpas_nccl_log_free(g);
    if (dpas_nccl_read_file(DPAS_TEST_DATA "/nccl-synthetic/gb300_nvl72_72ranks_elided_rank_"
                                           "lines.log",
                            NULL, 0, &g, &e))
        fail_msg("%s", e.message);
    assert_int_equal(g->ntests, 2);
    assert_int_equal(g->tests[0].collective, DPAS_COLL_ALL_REDUCE);
    assert_int_equal(g->tests[0].ranks, 72);
    assert_int_equal(g->tests[1].collective, DPAS_COLL_ALL_GATHER);
    assert_int_equal(g->tests[1].ranks, 72);
    assert_int_equal(g->tests[1].rank_lines, 8);
    assert_int_equal(g->nskipped, 1);
    assert_int_equal(g->skipped[0].reason, DPAS_NCCL_SKIP_UNREADABLE);
    dpas_nccl_log_free(g);
    if (dpas_nccl_read_file(DPAS_TEST_DATA "/nccl-synthetic/gb300_nvl72_72ranks_elided_rank_"
                                           "lines.log",
                            "broadcast", 72, &g, &e))
        fail_msg("%s", e.message);
    assert_int_equal(g->ntests, 1);
    assert_int_equal(g->tests[0].ranks, 72);
    dpas_nccl_log_free(g);
    if (dpas_nccl_read_file(DPAS_TEST_DATA "/nccl-synthetic/gb200_128ranks_all_reduce_no_rank_"
                                           "lines.log",
                            NULL, 0, &g, &e))
        fail_msg("%s", e.message);
    assert_int_equal(g->tests[0].ranks, 128);
    assert_int_equal(g->tests[0].ranks_from, DPAS_NCCL_BUS_RATIO);
    dpas_nccl_log_free(g);
}

/* Elided Rank lines of a real kind (the OCI GB300 doc, 32 nodes x 4: ranks 0, 1 on one host,
 * devices 0, 1; "..."; ranks 126, 127 on another, devices 2, 3) over two rows of its alltoall.
 * By hand: busbw/algbw 47.30 / 47.67 and 47.67 / 48.04 allow n from 127.85 to 129.58 at the
 * printed precision (127 < n: 128 or 129); the count column decides: 8589934592 B / (16777216 x
 * 4 B) = 128 and 17179869184 / (33554432 x 4) = 128. The nodes: rank r on device r mod G holds
 * for G = 4, 31, 62 and 124 (126 mod G = 2, 127 mod G = 3, 1 mod G = 1; hosts: 0 and 1 together,
 * 0 and 126 apart); of those only 4 divides 128 below it: 32 nodes x 4. */
#define RANKD(n, host, d)                                                                          \
    "#  Rank " #n " Group  0 Pid   100 on " host " device  " #d " [0x01] GPU\n"
#define A2A_ROWS                                                                                   \
    "  8589934592      16777216     float    none      -1   180191   47.67   47.30      0   "      \
    "179150   47.95   47.57    N/A\n"                                                              \
    " 17179869184      33554432     float    none      -1   357610   48.04   47.67      0   "      \
    "358715   47.89   47.52    N/A\n"
static void test_count_column_and_rank_pattern(void **state)
{
    (void)state;
    const char *name = "# Collective test starting: alltoall_perf\n";
    char text[2048];
    snprintf(text, sizeof text, "%s%s%s#  ...\n%s%s%s%s", name, RANKD(0, "A", 0), RANKD(1, "A", 1),
             RANKD(126, "B", 2), RANKD(127, "B", 3), HDR, A2A_ROWS);
    dpas_nccl_log *g = read_text(text, NULL, 0);
    const dpas_nccl_test *t = &g->tests[0];
    assert_int_equal(t->collective, DPAS_COLL_ALLTOALL);
    assert_int_equal(t->ranks, 128);
    assert_int_equal(t->ranks_from, DPAS_NCCL_COUNT_COLUMN);
    assert_int_equal(t->ratio_ranks, 0); /* 128 or 129: busbw/algbw alone cannot tell */
    assert_int_equal(t->nodes, 32);
    assert_int_equal(t->ranks_per_node, 4);
    assert_int_equal(t->nodes_from, DPAS_NCCL_RANK_LINES);
    assert_true(t->warnings & DPAS_NCCL_WARN_RANK_LINES_PARTIAL);
    dpas_nccl_log_free(g);
    /* a count that is no whole share of the size (a hand-edited row: 4294967296 B, 107374124
     * float) says nothing: busbw/algbw and the lines cannot tell, refused as before */
    snprintf(text, sizeof text, "%s%s%s#  ...\n%s%s%s%s", name, RANKD(0, "A", 0), RANKD(1, "A", 1),
             RANKD(126, "B", 2), RANKD(127, "B", 3), HDR,
             "  4294967296     107374124     float    none      -1    89190   48.16   47.78      0"
             "    89046   48.23   47.86    N/A\n");
    dpas_error e = read_error(text, NULL, 0);
    assert_string_equal(e.field, "ranks");
    /* rows whose counts give other rank counts (128, then 64) decide nothing either */
    snprintf(text, sizeof text, "%s%s%s#  ...\n%s%s%s%s%s", name, RANKD(0, "A", 0),
             RANKD(1, "A", 1), RANKD(126, "B", 2), RANKD(127, "B", 3), HDR, A2A_ROWS,
             "  4294967296      16777216     float    none      -1    89190   48.16   47.78      0"
             "    89046   48.23   47.86    N/A\n");
    e = read_error(text, NULL, 0);
    assert_string_equal(e.field, "ranks");
    /* devices all 0 (each rank sees only its GPU): no node count from the lines. Ranks 0 and 3
     * on hosts a and b would fit G = 1 (and 3) by device alone */
    g = read_text(RANK(0, "a") RANK(3, "b") HDR ROW1, NULL, 0);
    assert_int_equal(g->tests[0].ranks, 4);
    assert_int_equal(g->tests[0].nodes, 0);
    assert_int_equal(g->tests[0].nodes_from, DPAS_NCCL_UNKNOWN);
    dpas_nccl_log_free(g);
    /* all_reduce on 12 ranks (busbw/algbw 19.23 / 10.49 = 1.833 = 2 x 11 / 12), lines 0, 1 on A
     * (devices 0, 1) and 6, 7 on B (devices 2, 3): 6 mod G = 2 and 7 mod G = 3 leave G = 4 (G
     * divides 4, is above 3, and at most 7), which divides 12: 3 nodes x 4 */
    snprintf(text, sizeof text, "%s%s#  ...\n%s%s%s%s", RANKD(0, "A", 0), RANKD(1, "A", 1),
             RANKD(6, "B", 2), RANKD(7, "B", 3), HDR,
             "     1048576        262144     float     sum      -1    100.0   10.49   19.23      0"
             "    100.0   10.49   19.23      0\n");
    g = read_text(text, NULL, 0);
    assert_int_equal(g->tests[0].ranks, 12);
    assert_int_equal(g->tests[0].nodes, 3);
    assert_int_equal(g->tests[0].ranks_per_node, 4);
    dpas_nccl_log_free(g);
    /* nccl-synthetic's GB300 log (its README: 18 hosts x 4; lines 0-3 on one host, devices 0-3,
     * 68-71 on another, devices 0-3): 68 mod G = 0 and 71 mod G = 3 leave G = 4, 17, 34 and 68
     * (G divides 68, above 3); of those only 4 divides 72 below it: 18 hosts x 4 */
    dpas_error e2 = {0};
    if (dpas_nccl_read_file(DPAS_TEST_DATA "/nccl-synthetic/gb300_nvl72_72ranks_elided_rank_"
                                           "lines.log",
                            NULL, 0, &g, &e2))
        fail_msg("%s", e2.message);
    assert_int_equal(g->tests[0].nodes, 18);
    assert_int_equal(g->tests[0].ranks_per_node, 4);
    assert_int_equal(g->tests[1].nodes, 18);
    dpas_nccl_log_free(g);
}

/* The vendor series of nccl-scaling-public (its README), by hand from the files' lines: GB300
 * files of 16 rows (512 KiB to 16 GiB), the column header at line 12 (1 host: 4 whole Rank
 * lines on GPU-3882) or 13 (4 Rank lines around "...": ranks 0, 1 on one host, devices 0, 1, and
 * the last two on another, devices 2, 3); busbw/algbw at 16 GiB 685.19 / 456.79 = 1.5 (4),
 * 841.63 / 480.93 = 1.75 (8), 930.48 / 472.63 = 1.96875 (64), 738.39 / 372.10 = 1.984 (128);
 * alltoall 666.92 / 677.51 = 0.9844 (64), 685.06 / 782.92 = 0.875 (8); the 128-rank alltoall
 * from its count column, 17179869184 / (33554432 x 4) = 128. 4 ranks a host (the lines' devices
 * 0-3). MI355X files: 2 rows (8 and 16 GiB), no Rank lines, the header at line 3 (1-node
 * all_reduce) or 2; busbw/algbw 408.80 / 233.60 = 1.75 (8), 370.34 / 197.52 = 1.875 (16),
 * 370.51 / 191.23 = 1.9375 (32); alltoall 361.13 / 412.72 = 0.875, 86.73 / 92.51 = 0.9375,
 * 50.63 / 52.26 = 0.969. */
static void test_public_vendor_series(void **state)
{
    (void)state;
    static const struct {
        const char *file;
        int collective;
        int64_t ranks, nodes, per_node;
        dpas_nccl_source ranks_from;
        int header_line;
        size_t sizes;
    } want[] = {
        {"oci_gb300_1node_x4_all_reduce.log", AR, 4, 1, 4, DPAS_NCCL_RANK_LINES, 12, 16},
        {"oci_gb300_2nodes_x4_all_reduce.log", AR, 8, 2, 4, DPAS_NCCL_BUS_RATIO, 13, 16},
        {"oci_gb300_16nodes_x4_all_reduce.log", AR, 64, 16, 4, DPAS_NCCL_BUS_RATIO, 13, 16},
        {"oci_gb300_32nodes_x4_all_reduce.log", AR, 128, 32, 4, DPAS_NCCL_BUS_RATIO, 13, 16},
        {"oci_gb300_1node_x4_alltoall.log", A2A, 4, 1, 4, DPAS_NCCL_RANK_LINES, 12, 16},
        {"oci_gb300_2nodes_x4_alltoall.log", A2A, 8, 2, 4, DPAS_NCCL_BUS_RATIO, 13, 16},
        {"oci_gb300_16nodes_x4_alltoall.log", A2A, 64, 16, 4, DPAS_NCCL_BUS_RATIO, 13, 16},
        {"oci_gb300_32nodes_x4_alltoall.log", A2A, 128, 32, 4, DPAS_NCCL_COUNT_COLUMN, 13, 16},
        {"oci_mi355x_pollara_1node_x8_all_reduce_8G-16G.log", AR, 8, 0, 0, DPAS_NCCL_BUS_RATIO, 3,
         2},
        {"oci_mi355x_pollara_2nodes_x8_all_reduce_8G-16G.log", AR, 16, 0, 0, DPAS_NCCL_BUS_RATIO,
         2, 2},
        {"oci_mi355x_pollara_4nodes_x8_all_reduce_8G-16G.log", AR, 32, 0, 0, DPAS_NCCL_BUS_RATIO,
         2, 2},
        {"oci_mi355x_pollara_1node_x8_alltoall_8G-16G.log", A2A, 8, 0, 0, DPAS_NCCL_BUS_RATIO, 2,
         2},
        {"oci_mi355x_pollara_2nodes_x8_alltoall_8G-16G.log", A2A, 16, 0, 0, DPAS_NCCL_BUS_RATIO, 2,
         2},
        {"oci_mi355x_pollara_4nodes_x8_alltoall_8G-16G.log", A2A, 32, 0, 0, DPAS_NCCL_BUS_RATIO, 2,
         2},
    };
    for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
        char path[512];
        snprintf(path, sizeof path, "%s/nccl-scaling-public/%s", DPAS_TEST_DATA, want[i].file);
        dpas_nccl_log *g = NULL;
        dpas_error e = {0};
        if (dpas_nccl_read_file(path, NULL, 0, &g, &e))
            fail_msg("%s: %s", want[i].file, e.message);
        assert_int_equal(g->ntests, 1);
        const dpas_nccl_test *t = &g->tests[0];
        if (t->collective != want[i].collective || t->ranks != want[i].ranks ||
            t->nodes != want[i].nodes || t->ranks_per_node != want[i].per_node ||
            t->ranks_from != want[i].ranks_from || t->header_line != want[i].header_line ||
            t->npoints != want[i].sizes)
            fail_msg("%s: %s on %lld ranks (from %d), %lld nodes x %lld, header %d, %zu sizes",
                     want[i].file, dpas_collective_name(t->collective), (long long)t->ranks,
                     (int)t->ranks_from, (long long)t->nodes, (long long)t->ranks_per_node,
                     t->header_line, t->npoints);
        dpas_nccl_log_free(g);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_every_real_file),      cmocka_unit_test(test_aws_rows_with_tags),
        cmocka_unit_test(test_tags_inside_lines),    cmocka_unit_test(test_interleaved_processes),
        cmocka_unit_test(test_mpiexec_prefix),       cmocka_unit_test(test_zero_rows),
        cmocka_unit_test(test_command_line_names),   cmocka_unit_test(test_sendrecv_or_all_reduce),
        cmocka_unit_test(test_all_gather_or_alltoall), cmocka_unit_test(test_rooted),
        cmocka_unit_test(test_empty_redop),          cmocka_unit_test(test_nodes),
        cmocka_unit_test(test_bounds),               cmocka_unit_test(test_json_fields),
        cmocka_unit_test(test_inplace_time),
        cmocka_unit_test(test_ranks_from_numbers),
        cmocka_unit_test(test_unreadable_test_skipped),
        cmocka_unit_test(test_gb_style_logs),
        cmocka_unit_test(test_count_column_and_rank_pattern),
        cmocka_unit_test(test_public_vendor_series),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
