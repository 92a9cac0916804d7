/* SPDX-License-Identifier: Apache-2.0 */
/* Internals of the nccl-tests reader (read.c), shared with the line splitter
 * (read_lines.c) and the collective inference (read_infer.c). Not installed. */
#ifndef DPAS_NETWORK_NCCL_H
#define DPAS_NETWORK_NCCL_H

#include "../internal.h"

#include <stddef.h>
#include <stdint.h>

/* ---- logical lines ---------------------------------------------------------------------------
 * A logical line is the text one process wrote between two newlines. Most are one physical line
 * (less a launcher prefix); under mpirun --tag-output the output of each process comes in chunks,
 * each tagged "[J,R]<stdout>:", and a chunk need not end a line: a row can be split by a tag of
 * its own process ("... -1[1,0]<stdout>:    85.14 ...") or continued on a later physical line
 * after another process's output. The splitter removes every tag and joins each process's
 * chunks, so the reader sees the rows as nccl-tests printed them. A tag is only ever the exact
 * pattern "[digits,digits]<letters>:" (no nccl-tests field holds '[' or '<'), and it is removed
 * alone: the text around it is kept byte for byte, so no digit of a row is ever dropped. */

/* Where the text at logical offset `at` (and after it, up to the next segment) came from. */
typedef struct dpas__seg {
    size_t at;
    int line, col; /* physical line and column, from 1 */
} dpas__seg;

typedef struct dpas__lline {
    const char *text; /* not NUL-terminated; valid during the callback */
    size_t len;
    const dpas__seg *segs; /* at least one; segs[0].at == 0 */
    size_t nsegs;
    int prefix; /* dpas_nccl_prefix of what the splitter removed (mpirun's tag, and any prefix
                   before it); 0 when the line is handed whole: the reader strips its prefixes */
} dpas__lline;

/* The physical line and column of text + off. */
void dpas__lline_pos(const dpas__lline *l, size_t off, int *line, int *col);

typedef int (*dpas__lline_fn)(void *ctx, const dpas__lline *l);

/* Split text into logical lines (trailing CRs dropped) and call fn on each, in the order they
 * end; a nonzero return stops and is returned. Counts tags found inside lines (not at their
 * start) and lines joined across physical lines. DPAS_ENOMEM and DPAS_ERANGE (more than INT_MAX
 * lines) through err. *lines is the number of physical lines. */
int dpas__nccl_lines(const char *text, size_t len, const char *origin, dpas__lline_fn fn, void *ctx,
                     int *lines, size_t *inline_tags, size_t *joined, dpas_error *err);

/* Launcher prefixes at the start of [*s, end), removed one after another (kubectl's around
 * srun's, say): *s is advanced past them; the kind of the first, or 0. */
int dpas__nccl_strip_prefixes(const char **s, const char *end);

/* ---- programs and their columns ------------------------------------------------------------
 * nccl-tests' programs, the nine that dpas reads first (their numbers are dpas_collective's),
 * and how each prints its table (src/<name>.cu: TimeTest's op name and root, GetBw's factor). */
enum {
#define DPAS__P_ENUM(id, name) DPAS__P_##id = DPAS_COLL_##id, /* DPAS__P_ALLTOALL: alltoallv too */
    DPAS_COLLECTIVE_MAP(DPAS__P_ENUM)
#undef DPAS__P_ENUM
        DPAS__P_HYPERCUBE = DPAS_COLL_COUNT,
    DPAS__P_COUNT
};
#define DPAS__P_MODELLED ((1u << DPAS_COLL_COUNT) - 1u)

/* The program a name stands for ("all_reduce_perf", "./build/alltoall_perf_mpi", "AllReduce"),
 * or -1 when it names none of nccl-tests' programs. */
int dpas__nccl_program_of(const char *text, size_t len);
/* The nccl-tests program named by a line that is not nccl-tests' own (a command line, a banner
 * "=== all_gather_perf ==="): a word ending in _perf or _perf_mpi whose stem is one of
 * nccl-tests' programs (a word is a run of letters, digits and '_', so a path or an option
 * "--x=./build/all_reduce_perf" counts). -1 when the line names none, -2 when it names two
 * different programs (a loop over tests: it names no table). *word, *wlen: the word, when one. */
int dpas__nccl_command_program(const char *s, const char *end, const char **word, size_t *wlen);

/* What a table's columns say. */
typedef struct dpas__nccl_obs {
    int redop; /* DPAS__REDOP_*: */
    int root;  /* DPAS__ROOT_* */
    int ratio; /* 1 when [rlo, rhi] holds busbw/algbw (within the printed rounding) */
    double rlo, rhi;
    int64_t n;         /* ranks from the Rank lines, 0 when unknown */
    int inplace_check; /* DPAS__IP_* */
} dpas__nccl_obs;
enum { DPAS__REDOP_UNKNOWN = 0, DPAS__REDOP_NONE, DPAS__REDOP_EMPTY, DPAS__REDOP_OP };
enum { DPAS__ROOT_UNKNOWN = 0, DPAS__ROOT_NONE, DPAS__ROOT_SET };
enum {
    DPAS__IP_UNKNOWN = 0, /* no #wrong columns, or rows disagree */
    DPAS__IP_CHECKED,     /* every row: in-place #wrong a number */
    DPAS__IP_UNCHECKED,   /* every row: out-of-place #wrong a number, in-place N/A */
    DPAS__IP_OFF,         /* every row: both N/A (the data check was off, -c 0) */
};

/* The programs (a bit set of DPAS__P_*) whose tables can look like this one. */
unsigned dpas__nccl_candidates(const dpas__nccl_obs *o);
/* " and "-joined names of a set, into buf: "all_reduce, sendrecv_perf" style. */
void dpas__nccl_describe_set(unsigned set, char *buf, size_t cap);

#endif
