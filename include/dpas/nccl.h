/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/nccl.h — nccl-tests output read into typed tests, and the collectives it measures
 * Part of the public API; include "dpas/dpas.h".
 *
 * The first stage of a calibration (dpas/calibrate.h fits what this reads): nccl-tests text as
 * people paste it (launcher prefixes, foreign lines, old and new layouts) -> dpas_nccl_log, the
 * tests of typed points. dpas_nccl_log is allocated by the library and released with
 * dpas_nccl_log_free (which accepts NULL); every pointer inside it is owned by it. Nothing here
 * prints, exits, or keeps global state.
 *
 * Sizes follow nccl-tests' size column: all_reduce, broadcast and reduce of M bytes are the
 * buffer of M bytes on every rank; all_gather of M bytes is the gathered output, M in total
 * (M/n from each rank); reduce_scatter of M bytes is the M-byte input on every rank; alltoall
 * of M bytes is the M-byte send buffer of every rank (M/n to each rank); gather of M bytes is
 * the root's M-byte output (M/n from each rank), scatter of M bytes the root's M-byte input;
 * sendrecv of M bytes is the M-byte buffer every rank sends. */
#ifndef DPAS_NCCL_H
#define DPAS_NCCL_H

#include "dpas/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- collectives ----------------------------------------------------------------------------- */

/* The collectives, by name: the one name table (X-macro, as DPAS_FORMAT_MAP) that the reader,
 * the calibration's messages, the key table (the CLI's help, OpenAPI's enum) and dpas-measure
 * read. X(id, name): name as nccl-tests spells its program ("all_reduce" for all_reduce_perf). */
#define DPAS_COLLECTIVE_MAP(X)                                                                     \
    X(ALL_REDUCE, "all_reduce")                                                                    \
    X(ALL_GATHER, "all_gather")                                                                    \
    X(REDUCE_SCATTER, "reduce_scatter")                                                            \
    X(BROADCAST, "broadcast")                                                                      \
    X(REDUCE, "reduce")                                                                            \
    X(ALLTOALL, "alltoall") /* every rank a block to every rank (alltoall_perf) */                 \
    X(GATHER, "gather")     /* every rank's block to one root */                                   \
    X(SCATTER, "scatter")   /* one root's blocks, one to every rank */                             \
    X(SENDRECV, "sendrecv") /* every rank sends to the next, receives from the previous */

typedef enum dpas_collective {
    DPAS_COLL_UNKNOWN = -1, /* not decided yet (a test being read); "any" where a query says so */
#define DPAS__COLLECTIVE_ENUM(id, name) DPAS_COLL_##id,
    DPAS_COLLECTIVE_MAP(DPAS__COLLECTIVE_ENUM)
#undef DPAS__COLLECTIVE_ENUM
        DPAS_COLL_COUNT
} dpas_collective;

/* "all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "gather",
 * "scatter", "sendrecv"; NULL when coll is out of range. */
DPAS_API const char *dpas_collective_name(dpas_collective coll);
/* A collective from its name as users and nccl-tests write it: all_reduce, allreduce, AllReduce,
 * all_reduce_perf, ./build/all_reduce_perf_mpi. DPAS_EINVAL naming the accepted names. */
DPAS_API int dpas_collective_parse(const char *text, dpas_collective *coll, dpas_error *err);
/* The ring model of a collective on n ranks, with nccl-tests' bus factor (busbw / algbw, as
 * the GetBw function of each of nccl-tests' src/<collective>.cu computes it):
 * time = steps x alpha + factor x bytes / beta.
 *   all_reduce      steps 2(n-1)  factor 2(n-1)/n
 *   all_gather      steps n-1     factor (n-1)/n   (bytes: the gathered total)
 *   reduce_scatter  steps n-1     factor (n-1)/n
 *   broadcast       steps n-1     factor 1
 *   reduce          steps n-1     factor 1
 *   alltoall        steps n-1     factor (n-1)/n   (bytes: each rank's whole buffer, M/n to
 *                                                   each rank)
 *   gather          steps n-1     factor (n-1)/n   (bytes: the root's gathered total)
 *   scatter         steps n-1     factor (n-1)/n   (bytes: the root's whole buffer)
 *   sendrecv        steps 1       factor 1         (bytes: the buffer each rank sends)
 * n = 1 gives 0 and 0 (nothing crosses a link). DPAS_EINVAL for n < 1 or an unknown coll. */
DPAS_API int dpas_collective_ring(dpas_collective coll, int64_t n, double *steps, double *factor,
                                  dpas_error *err);

/* ---- reading nccl-tests output --------------------------------------------------------------- */

/* Where a test's collective or rank count came from. */
typedef enum dpas_nccl_source {
    DPAS_NCCL_UNKNOWN = 0,
    DPAS_NCCL_GIVEN,        /* the caller's collective / ranks (--collective, --ranks) */
    DPAS_NCCL_TEST_NAME,    /* "# Collective test starting: all_gather_perf" */
    DPAS_NCCL_RANK_LINES,   /* the "#  Rank  0 Group  0 Pid ..." lines, counted */
    DPAS_NCCL_BUS_RATIO,    /* busbw / algbw, with the redop and root columns */
    DPAS_NCCL_CSV_COLUMN,   /* a CSV column (name, gpus) */
    DPAS_NCCL_COMMAND,      /* a "*_perf" command line or banner above the table, e.g.
                             "mpirun ... ./build/all_gather_perf -b 8 -e 8G" */
    DPAS_NCCL_COUNT_COLUMN, /* size / (count x type bytes): the count column of all_gather,
                               reduce_scatter, alltoall, gather and scatter, which is per rank */
} dpas_nccl_source;

/* Warnings of a test: bits of dpas_nccl_test.warnings. */
enum {
    DPAS_NCCL_WARN_RANKS_DISAGREE = 1u << 0, /* Rank lines and busbw/algbw give other counts */
    DPAS_NCCL_WARN_NAME_DISAGREE = 1u << 1,  /* the test's name and busbw/algbw disagree */
    DPAS_NCCL_WARN_WRONG = 1u << 2,          /* rows with #wrong > 0: nccl-tests' check failed */
    DPAS_NCCL_WARN_REPEATED = 1u << 3,       /* a size measured more than once (merged) */
    /* the Rank lines do not count the ranks: elided ("...") or their ids skip some (0, 1, 5);
     * the count is from busbw/algbw, or given (ranks) */
    DPAS_NCCL_WARN_RANK_LINES_PARTIAL = 1u << 4,
    /* the ranks given (ranks) replaced a count the file's Rank lines or CSV column gave, which
     * busbw/algbw could not confirm (the lines were partial, or one line) */
    DPAS_NCCL_WARN_RANKS_GIVEN = 1u << 5,
};

/* Bounds on what a row may hold: a time or a size outside them is refused with its line (no
 * clock measures, no network moves, no GPU holds such a row; docs/calibration.md says why). */
#define DPAS_NCCL_MIN_SECONDS 1e-9       /* 1 ns: one cycle of a 1 GHz clock */
#define DPAS_NCCL_MAX_SECONDS 86400.0    /* a day for one collective */
#define DPAS_NCCL_MAX_BYTES (1ull << 50) /* 1 PiB: no GPU holds such a buffer */
#define DPAS_NCCL_MAX_BYTES_PER_S 1e15   /* size / time: 1 PB/s, 500x NVLink 5 */
/* Tests in one table (nccl-tests -d all -o all prints at most 12 types x 6 operations). */
#define DPAS_NCCL_MAX_TESTS_PER_TABLE 4096

typedef struct dpas_nccl_point {
    uint64_t bytes;         /* the size column */
    double seconds;         /* the out-of-place time */
    double algbw;           /* bytes/s as printed (GB/s x 1e9); NaN when the layout has none */
    double busbw;           /* bytes/s as printed; NaN when the layout has none */
    double seconds_inplace; /* the in-place time; NaN when the layout has none */
    int line;               /* physical line, from 1 */
    int wrong;              /* 1 when #wrong > 0 */
} dpas_nccl_point;

typedef struct dpas_nccl_test {
    dpas_collective collective;
    int64_t ranks;
    dpas_nccl_source collective_from, ranks_from;
    char *name;       /* the test's own name ("all_reduce_perf"), or NULL */
    char *type;       /* the type column ("float"), or NULL */
    char *redop;      /* the redop column ("sum", "none"), or NULL */
    double bus_ratio; /* busbw/algbw of the row read for inference (largest algbw); NaN if none */
    int ratio_line;   /* that row's line, 0 when none */
    int64_t ratio_ranks; /* the rank count busbw/algbw gives, 0 when it gives none */
    int64_t rank_lines;  /* distinct ranks in the "#  Rank" lines, 0 when none */
    int64_t csv_ranks;   /* the ranks column of a CSV table, 0 when none */
    /* 1 when those lines are partial: a line of dots among them ("#  ...", elided), or their
     * ids skip some (the largest id + 1 > rank_lines); their count is then not the ranks' */
    int rank_lines_partial;
    int elided_line; /* the first line of dots among them, 0 when none */
    /* Nodes: the distinct HOSTs of "#  Rank R ... on HOST device D" (nodes_from
     * DPAS_NCCL_RANK_LINES), or 0 and DPAS_NCCL_UNKNOWN when the file does not say.
     * ranks_per_node: rank_lines / nodes when every host holds the same number of ranks, else 0
     * with ranks_per_node_min < ranks_per_node_max (the fewest and most on one host). */
    int64_t nodes, ranks_per_node;
    int64_t ranks_per_node_min, ranks_per_node_max;
    dpas_nccl_source nodes_from;
    /* rows of size 0, skipped (all_gather and alltoall print them when the count per rank
     * rounds to 0) */
    size_t zero_rows;
    int zero_row_line; /* the first of them, 0 when none */
    int header_line;   /* the column header of its table */
    unsigned warnings; /* DPAS_NCCL_WARN_* */
    size_t wrong_rows;
    size_t npoints;
    dpas_nccl_point *points; /* in file order */
} dpas_nccl_test;

/* A launcher prefix stripped from lines. */
typedef enum dpas_nccl_prefix {
    DPAS_NCCL_PREFIX_NONE = 0,
    DPAS_NCCL_PREFIX_SRUN,      /* "0: " (srun --label) */
    DPAS_NCCL_PREFIX_MPIRUN,    /* "[1,0]<stdout>:" (mpirun --tag-output) */
    DPAS_NCCL_PREFIX_KUBECTL,   /* "[pod/NAME/CONTAINER] " (kubectl logs --prefix) */
    DPAS_NCCL_PREFIX_HOST,      /* "host: " (pdsh, clush) */
    DPAS_NCCL_PREFIX_TIMESTAMP, /* "2024-05-01T12:00:00.123Z " (kubectl/docker --timestamps) */
    DPAS_NCCL_PREFIX_RANK,      /* "[0] " (MPICH/Intel MPI mpiexec -l, -prepend-rank) */
} dpas_nccl_prefix;

/* A table the reader did not read, and why. */
typedef enum dpas_nccl_skip {
    /* named (by nccl-tests, a command line or a banner) as a test dpas does not model:
     * alltoall, sendrecv, gather, scatter, hypercube, ... */
    DPAS_NCCL_SKIP_UNMODELLED = 1,
    /* nameless, and its columns fit only tests dpas does not model (name says which) */
    DPAS_NCCL_SKIP_LOOKS_UNMODELLED,
    DPAS_NCCL_SKIP_ZERO_ONLY, /* every row has size 0 */
    /* a test whose collective or rank count cannot be told, in a file with other tests that
     * can: why holds the whole reason (the error it gives alone), which names the key that
     * fixes it; a file of such tests only is refused with the first reason */
    DPAS_NCCL_SKIP_UNREADABLE,
} dpas_nccl_skip;

typedef struct dpas_nccl_skipped {
    /* the name it was given ("alltoall_perf"); for LOOKS_UNMODELLED the programs its columns
     * fit ("sendrecv", "alltoall or sendrecv"); for ZERO_ONLY the test's name or NULL */
    char *name;
    dpas_nccl_skip reason;
    int line;    /* the column header of the table */
    size_t rows; /* its data rows */
    /* for LOOKS_UNMODELLED, the columns that told ("busbw/algbw = 1 (line 40), redop sum,
     * root -1, 10 Rank lines"); else "" (owned, never NULL) */
    char *why;
} dpas_nccl_skipped;

typedef struct dpas_nccl_log {
    char *origin; /* the file name given, for messages */
    size_t ntests;
    dpas_nccl_test *tests;   /* the tests selected, in file order */
    size_t unselected;       /* tests left out because they do not match collective / ranks */
    int lines;               /* physical lines */
    size_t foreign_lines;    /* lines skipped: not nccl-tests' (launcher text, NCCL INFO, ...) */
    int first_foreign_line;  /* 0 when none */
    char *first_foreign;     /* that line as it is in the file (any bytes but NUL), or NULL */
    size_t prefixed_lines;   /* lines that had a launcher prefix stripped */
    dpas_nccl_prefix prefix; /* of the first one */
    size_t inline_tags;      /* mpirun "[J,R]<stdout>:" tags removed from inside lines (mpirun
                               tags each chunk of output, not each line) */
    size_t joined_lines;     /* lines continued on a later physical line (another process's
                               output came between the two chunks of one line) */
    size_t nskipped;
    dpas_nccl_skipped *skipped; /* tables not read, in file order */
} dpas_nccl_log;

/* Read nccl-tests output: its default table (any layout since 2017: with or without '#',
 * redop, root, #wrong or error, N/A, per-iteration and timestamp columns) or a CSV whose header
 * names size and time columns. Launcher prefixes are stripped, mpirun's tags removed wherever
 * they are in a line, foreign lines skipped and counted, CRLF accepted. Each table (and each
 * type/redop within one) is a test, named by "# Collective test starting: NAME" or else by a
 * command line or banner above it that names one *_perf program. Rows of size 0 are skipped
 * and counted (zero_rows); a table named as, or whose columns fit only, a program dpas does not
 * model (alltoall, sendrecv, gather, scatter, hypercube, ...) is skipped and listed (skipped).
 * The collective is never guessed: a nameless table whose columns fit two programs (busbw/algbw
 * = 1 with redop sum: an all_reduce on 2 ranks or a sendrecv) is refused unless `collective`
 * says. collective (NULL: from the file) and ranks (0: from the file) choose among the tests and
 * fill in what a test does not say; a test that says otherwise is left out. Errors name the
 * physical line: a row that starts like a data row but is malformed, a time or size outside the
 * DPAS_NCCL_MIN/MAX bounds, a test whose collective or rank count cannot be told, no table dpas
 * can read (the message quotes the first foreign line, or names the skipped tables). len bytes
 * of text, any content. */
DPAS_API int dpas_nccl_read(const char *text, size_t len, const char *origin,
                            const char *collective, int64_t ranks, dpas_nccl_log **out,
                            dpas_error *err);
/* The same from a regular file of at most 16 MiB. */
DPAS_API int dpas_nccl_read_file(const char *path, const char *collective, int64_t ranks,
                                 dpas_nccl_log **out, dpas_error *err);
DPAS_API void dpas_nccl_log_free(dpas_nccl_log *log);

#ifdef __cplusplus
}
#endif
#endif
