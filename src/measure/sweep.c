/* SPDX-License-Identifier: Apache-2.0 */
/* --sweep MIN..MAX: MPI_Allreduce (float sum) and MPI_Allgather over sizes MIN, 2 MIN, ... <= MAX
 * bytes, out of place and in place, printed in nccl-tests' table layout (its "# Collective test
 * starting:", "# nThread", "#  Rank" and header lines, its columns, its size and bandwidth
 * conventions: an all_gather's size is the whole gathered buffer and its count one rank's
 * elements; busbw = algbw x 2(n-1)/n for all_reduce and (n-1)/n for all_gather), so that
 * `dpas calibrate` (and any tool that reads nccl-tests) reads it. Each time is the median over
 * --iters of the slowest rank's time, after --warmup calls; results are checked (#wrong). */
#define _POSIX_C_SOURCE 200809L
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct sweep_row {
    int coll; /* 0 all_reduce, 1 all_gather */
    size_t size, count;
    double time_us[2], algbw[2], busbw[2]; /* out of place, in place */
    long long wrong[2];
} sweep_row;

typedef struct rank_info {
    int pid, host, local;
    char name[MPI_MAX_PROCESSOR_NAME];
} rank_info;

typedef struct sweep {
    const opts *o;
    const layout *L;
    float *send, *recv;
    double *times;
    sweep_row *rows;
    size_t nrows;
    rank_info *info; /* rank 0: every rank's */
} sweep;

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The inputs: every element of rank r is r + 1, so the sums and the gathered blocks are known
 * exactly. In place, the all-gather's own block sits at the rank's offset of the receive buffer. */
static void fill(const sweep *s, int coll, int in_place, size_t count)
{
    const int r = s->L->rank;
    float *buf = in_place ? s->recv + (coll ? (size_t)r * count : 0) : s->send;
    for (size_t j = 0; j < count; j++)
        buf[j] = (float)(r + 1);
}

static void call(const sweep *s, int coll, int in_place, size_t count)
{
    const void *src = in_place ? MPI_IN_PLACE : s->send;
    if (coll == 0)
        MPI_Allreduce(src, s->recv, (int)count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Allgather(src, (int)count, MPI_FLOAT, s->recv, (int)count, MPI_FLOAT, MPI_COMM_WORLD);
}

/* Elements that differ from what the collective must give, summed over the ranks. */
static long long wrong_of(const sweep *s, int coll, size_t count)
{
    const int N = s->L->nranks;
    long long bad = 0, total = 0;
    if (coll == 0) {
        for (size_t j = 0; j < count; j++)
            bad += s->recv[j] != (float)(N * (N + 1) / 2);
    } else {
        for (int i = 0; i < N; i++)
            for (size_t j = 0; j < count; j++)
                bad += s->recv[(size_t)i * count + j] != (float)(i + 1);
    }
    MPI_Allreduce(&bad, &total, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return total;
}

/* The median over the timed calls of the slowest rank's time, in seconds. */
static double time_one(const sweep *s, int coll, int in_place, size_t count)
{
    const opts *o = s->o;
    for (int it = 0; it < o->warmup; it++) {
        fill(s, coll, in_place, count);
        call(s, coll, in_place, count);
    }
    for (int it = 0; it < o->iters; it++) {
        fill(s, coll, in_place, count);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        call(s, coll, in_place, count);
        double dt = MPI_Wtime() - t0;
        MPI_Allreduce(&dt, &s->times[it], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    qsort(s->times, (size_t)o->iters, sizeof(double), cmpd);
    return s->times[o->iters / 2];
}

static void measure_row(const sweep *s, int coll, size_t bytes, sweep_row *row)
{
    const int N = s->L->nranks;
    const size_t count = coll ? bytes / 4 / (size_t)N : bytes / 4;
    const double factor = coll ? (double)(N - 1) / N : 2.0 * (N - 1) / N;
    *row = (sweep_row){.coll = coll, .count = count, .size = count * 4 * (coll ? (size_t)N : 1)};
    for (int ip = 0; ip < 2; ip++) {
        double t = time_one(s, coll, ip, count);
        row->wrong[ip] = wrong_of(s, coll, count);
        row->time_us[ip] = t * 1e6;
        row->algbw[ip] = (double)row->size / 1e9 / t;
        row->busbw[ip] = row->algbw[ip] * factor;
    }
}

/* nccl-tests' number cell: two decimals if they fit the width, then fewer, then exponent. */
static void cell(FILE *f, double v, int width)
{
    char b[64];
    if (snprintf(b, sizeof b, "%*.2f", width, v) > width &&
        snprintf(b, sizeof b, "%*.1f", width, v) > width &&
        snprintf(b, sizeof b, "%*.0f", width, v) > width)
        snprintf(b, sizeof b, width >= 7 ? "%*.1e" : "%*.0e", width, v);
    fprintf(f, "  %s", b);
}

static void text_block_head(const sweep *s, FILE *f, int coll)
{
    const opts *o = s->o;
    fprintf(f, "# Collective test starting: %s\n", dpas_collective_name((dpas_collective)coll));
    fprintf(f,
            "# nThread 1 nGpus 1 minBytes %llu maxBytes %llu step: 2(factor) warmup iters: %d "
            "iters: %d "
            "agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n",
            (unsigned long long)o->sweep_min, (unsigned long long)o->sweep_max, o->warmup,
            o->iters);
    for (int i = 0; i < s->L->nranks; i++)
        fprintf(f, "#  Rank %2d Group  0 Pid %6d on %10s device %2d [cpu] host %d\n", i,
                s->info[i].pid, s->info[i].name, s->info[i].local, s->info[i].host);
    fprintf(f,
            "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place  "
            "        \n",
            "", "", "", "", "");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
            "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw",
            "busbw", "#wrong");
    fprintf(f, "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
            "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)",
            "");
}

static void render_text(const sweep *s, FILE *f)
{
    fprintf(f,
            "# dpas-measure %s --sweep: MPI collectives over TCP; each time is the median of the "
            "slowest rank's\n",
            dpas_version());
    for (int coll = 0; coll < 2; coll++) {
        double bw = 0;
        long long wrong = 0;
        size_t n = 0;
        text_block_head(s, f, coll);
        for (size_t i = 0; i < s->nrows; i++) {
            const sweep_row *r = &s->rows[i];
            if (r->coll != coll)
                continue;
            fprintf(f, "%12zu  %12zu  %8s  %6s  %6s", r->size, r->count, "float",
                    coll ? "none" : "sum", "-1");
            for (int ip = 0; ip < 2; ip++) {
                cell(f, r->time_us[ip], 7);
                cell(f, r->algbw[ip], 6);
                cell(f, r->busbw[ip], 6);
                fprintf(f, "  %6lld", r->wrong[ip]);
            }
            fputc('\n', f);
            bw += r->busbw[0], wrong += r->wrong[0] + r->wrong[1], n++;
        }
        fprintf(f, "# %-20s : %lld %s\n# %-20s : %g \n#\n# Collective test concluded: %s\n",
                "Out of bounds values", wrong, wrong ? "FAILED" : "OK", "Avg bus bandwidth",
                n ? bw / (double)n : 0.0, dpas_collective_name((dpas_collective)coll));
    }
}

/* JSON and CSV: the rows through the library's table writer. (Text is nccl-tests' own layout,
 * which other tools parse by column position: written above, not by the writer.) */
static int sink_file(void *ctx, const char *data, size_t len)
{
    return fwrite(data, 1, len, (FILE *)ctx) == len ? 0 : DPAS_EIO;
}

static const dpas_column sweep_cols[] = {
    {"collective", DPAS_COL_TEXT, 0},
    {"ranks", DPAS_COL_INT, 0},
    {"size", DPAS_COL_UINT, 0},
    {"count", DPAS_COL_UINT, 0},
    {"type", DPAS_COL_TEXT, 0},
    {"redop", DPAS_COL_TEXT, 0},
    {"time_us", DPAS_COL_REAL, DPAS_COL_G6},
    {"algbw_GBps", DPAS_COL_REAL, DPAS_COL_G6},
    {"busbw_GBps", DPAS_COL_REAL, DPAS_COL_G6},
    {"wrong", DPAS_COL_INT, 0},
    {"in_place_time_us", DPAS_COL_REAL, DPAS_COL_G6},
    {"in_place_algbw_GBps", DPAS_COL_REAL, DPAS_COL_G6},
    {"in_place_busbw_GBps", DPAS_COL_REAL, DPAS_COL_G6},
    {"in_place_wrong", DPAS_COL_INT, 0},
};

static int render_rows(const sweep *s, FILE *f, dpas_format format)
{
    /* JSON: a document (dpas_version, schema_version, its rows under "rows") */
    dpas_writer_opts wo = {.format = format, .document = format == DPAS_FORMAT_JSON};
    dpas_writer *w = NULL;
    dpas_error e;
    int rc = dpas_writer_new(sweep_cols, sizeof sweep_cols / sizeof *sweep_cols, &wo, sink_file, f,
                             &w, &e);
    for (size_t i = 0; i < s->nrows && !rc; i++) {
        const sweep_row *r = &s->rows[i];
        dpas_cell c[] = {dpas_cell_text(dpas_collective_name((dpas_collective)r->coll)),
                         dpas_cell_int(s->L->nranks),
                         dpas_cell_uint(r->size),
                         dpas_cell_uint(r->count),
                         dpas_cell_text("float"),
                         dpas_cell_text(r->coll ? "none" : "sum"),
                         dpas_cell_real(r->time_us[0]),
                         dpas_cell_real(r->algbw[0]),
                         dpas_cell_real(r->busbw[0]),
                         dpas_cell_int(r->wrong[0]),
                         dpas_cell_real(r->time_us[1]),
                         dpas_cell_real(r->algbw[1]),
                         dpas_cell_real(r->busbw[1]),
                         dpas_cell_int(r->wrong[1])};
        rc = dpas_writer_row(w, c, &e);
    }
    if (!rc)
        rc = dpas_writer_end(w, &e);
    if (!rc && format == DPAS_FORMAT_JSON)
        fputc('\n', f);
    dpas_writer_free(w);
    if (rc)
        fprintf(stderr, "dpas-measure: error: %s\n", e.message);
    return rc ? 1 : 0;
}

/* Every rank's pid, host and name, for the "#  Rank" lines. */
static void gather_info(sweep *s)
{
    rank_info me = {.pid = (int)getpid(), .host = s->L->host, .local = s->L->local};
    int len = 0;
    MPI_Get_processor_name(me.name, &len);
    MPI_Gather(&me, (int)sizeof me, MPI_BYTE, s->info, (int)sizeof me, MPI_BYTE, 0, MPI_COMM_WORLD);
}

static int sweep_alloc(sweep *s)
{
    const opts *o = s->o;
    size_t sizes = 0;
    for (uint64_t b = o->sweep_min; b <= o->sweep_max; b *= 2)
        sizes++;
    s->send = malloc((size_t)o->sweep_max);
    s->recv = malloc((size_t)o->sweep_max);
    s->times = malloc((size_t)o->iters * sizeof(double));
    s->rows = calloc(2 * sizes, sizeof *s->rows);
    s->info = s->L->rank == 0 ? malloc((size_t)s->L->nranks * sizeof *s->info) : NULL;
    int ok = s->send && s->recv && s->times && s->rows && (s->L->rank != 0 || s->info), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok)
        measure_say("out of memory for a sweep up to %llu bytes", (unsigned long long)o->sweep_max);
    return all_ok ? 0 : 1;
}

/* Render into memory, print only what is complete. */
static int sweep_print(const sweep *s)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc = !m;
    if (m) {
        if (s->o->format == OUT_TEXT)
            render_text(s, m);
        else
            rc = render_rows(s, m, s->o->format == OUT_JSON ? DPAS_FORMAT_JSON : DPAS_FORMAT_CSV);
        rc |= fclose(m) != 0;
    }
    if (!rc)
        rc = fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0;
    if (rc)
        fprintf(stderr, "dpas-measure: error: cannot write the sweep\n");
    free(buf);
    return rc;
}

int sweep_main(const opts *o, const layout *L)
{
    sweep s = {.o = o, .L = L};
    long long wrong = 0;
    int rc = sweep_alloc(&s);
    if (!rc) {
        gather_info(&s);
        for (int coll = 0; coll < 2; coll++)
            for (uint64_t b = o->sweep_min; b <= o->sweep_max; b *= 2) {
                measure_row(&s, coll, (size_t)b, &s.rows[s.nrows]);
                wrong += s.rows[s.nrows].wrong[0] + s.rows[s.nrows].wrong[1];
                s.nrows++;
            }
        if (L->rank == 0)
            rc = sweep_print(&s);
        MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    free(s.send), free(s.recv), free(s.times), free(s.rows), free(s.info);
    return rc ? MEASURE_BAD : wrong ? MEASURE_CHECK : MEASURE_OK;
}
