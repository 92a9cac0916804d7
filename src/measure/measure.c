/* SPDX-License-Identifier: Apache-2.0 */
/* dpas-measure: runs a schedule of a robust aggregate on real MPI processes, with real gradient
 * buffers and the library's kernels, and reports the bytes each rank really sent (the kernel's
 * count of bytes handed to write/send, wchar in /proc/self/io) against dpas's prediction, time
 * per step against the time dpas predicts from a calibration, the rule's compute time, and how
 * far Byzantine ranks move the aggregate. With --sweep it times the collectives a calibration
 * needs instead.
 *
 * Exit status: 0 ok, 1 bad input, 3 a check failed (--check-bytes, ranks disagreeing on the
 * aggregate, or the distributed result differing from the single-process kernel). */
#define _POSIX_C_SOURCE 200809L
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static long long wchar(void)
{
    FILE *f = fopen("/proc/self/io", "r");
    char line[128];
    long long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "wchar:", 6))
            v = atoll(line + 6);
    if (f)
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

/* Warm-up, then the timed steps: this rank's row (bytes written per step, step and compute
 * times); *visible is 0 when /proc/self/io cannot be read. */
static int timed_steps(const opts *o, step_ctx *c, rank_row *row, int *visible)
{
    double *times = malloc((size_t)o->iters * sizeof(double)),
           *comp = malloc((size_t)o->iters * sizeof(double));
    double measured = 0, cs = 0;
    int failed = !times || !comp, any_failed = 0;
    *visible = 1;
    for (int it = 0; it < o->warmup && !failed; it++)
        failed |= step_run(c, &cs);
    for (int it = 0; it < o->iters && !failed; it++) {
        MPI_Barrier(MPI_COMM_WORLD);
        long long w0 = wchar();
        double t0 = MPI_Wtime();
        failed |= step_run(c, &comp[it]);
        times[it] = MPI_Wtime() - t0;
        long long w1 = wchar();
        *visible &= w0 >= 0 && w1 >= 0;
        measured += (double)(w1 - w0);
    }
    /* a rank that failed stops; the others must stop at the same collective: the kernels fail
     * on every rank alike (same rule, same n), so this is where they meet */
    MPI_Allreduce(&failed, &any_failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (any_failed && failed) /* every rank failed in the same step with the same error */
        measure_say("%s", step_error(c)->message);
    if (!any_failed) {
        qsort(times, (size_t)o->iters, sizeof(double), cmpd);
        qsort(comp, (size_t)o->iters, sizeof(double), cmpd);
        uint64_t h = fnv1a(step_aggregate(c), (size_t)o->params * sizeof(float));
        row->measured = measured / o->iters;
        row->t_med = times[o->iters / 2], row->t_min = times[0], row->t_max = times[o->iters - 1];
        row->c_med = comp[o->iters / 2];
        row->checksum_hi = (double)(h >> 32), row->checksum_lo = (double)(h & 0xffffffffu);
    }
    free(times), free(comp);
    return any_failed;
}

/* The summary over the ranks' rows (rank 0). */
static void summarise(report *r, int vis_all)
{
    const opts *o = r->o;
    const int N = r->L->nranks;
    summary *s = &r->sum;
    double rmin = 1e300, rmax = 0, tmed = 0, cmed = 0;
    s->consistent = 1;
    for (int i = 0; i < N; i++) {
        const rank_row *x = &r->rows[i];
        double q = x->predicted > 0 ? x->measured / x->predicted : 1.0;
        s->consistent &=
            x->checksum_hi == r->rows[0].checksum_hi && x->checksum_lo == r->rows[0].checksum_lo;
        rmin = fmin(rmin, q), rmax = fmax(rmax, q);
        tmed = fmax(tmed, x->t_med); /* the slowest rank sets the step */
        cmed = fmax(cmed, x->c_med);
    }
    /* the transport hides the bytes when far fewer than predicted were written */
    s->visible = vis_all && !(r->predicted_bytes > 0 && rmax < 0.5);
    s->ratio_min = rmin, s->ratio_max = rmax;
    s->time_median_s = tmed, s->compute_median_s = cmed;
    s->predicted_time_s = r->pred.have ? r->pred.network_s + cmed : NAN;
    s->predicted_lo_s = r->pred.have ? r->pred.band_lo + cmed : NAN; /* NaN stays NaN */
    s->predicted_hi_s = r->pred.have ? r->pred.band_hi + cmed : NAN;
    s->inside_band = !isfinite(s->predicted_lo_s) || !isfinite(s->predicted_hi_s)
                         ? -1
                         : tmed >= s->predicted_lo_s && tmed <= s->predicted_hi_s;
    s->bytes_ok = o->check_bytes < 0 || (s->visible && fabs(rmin - 1) * 100 <= o->check_bytes &&
                                         fabs(rmax - 1) * 100 <= o->check_bytes);
    /* nccl-tests' bandwidths: algbw = S / t; busbw = algbw x the schedule's factor */
    double S = (double)r->d * o->width, factor = 2.0 * (N - 1) / N;
    if (o->schedule == DPAS_SCHED_ALLGATHER)
        S *= N, factor = (double)(N - 1) / N;
    s->algbw = S / tmed / 1e9;
    s->busbw = s->algbw * factor;
    snprintf(s->checksum, sizeof s->checksum, "%08llx%08llx",
             (unsigned long long)r->rows[0].checksum_hi,
             (unsigned long long)r->rows[0].checksum_lo);
}

/* Render the report into memory and print it only when it is complete. */
static int print_report(const report *r)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    int rc = !m || report_render(r, m);
    if (m)
        rc |= fclose(m) != 0;
    if (!rc)
        rc = fwrite(buf, 1, len, stdout) != len || fflush(stdout) != 0;
    if (rc)
        fprintf(stderr, "dpas-measure: error: cannot write the report\n");
    free(buf);
    return rc;
}

/* Rank 0: the summary, the single-process check, the report; the exit status. */
static int conclude(report *r, int vis_all, const float *agg)
{
    int status = MEASURE_OK;
    summarise(r, vis_all);
    verify_aggregate(r->o, r->L->nranks, agg, &r->sum);
    if (!r->sum.consistent || r->sum.verified == 0 || !r->sum.bytes_ok)
        status = MEASURE_CHECK;
    if (print_report(r))
        status = MEASURE_BAD;
    return status;
}

static int run_schedule(const opts *o, const layout *L)
{
    report r = {.o = o, .L = L, .d = (size_t)o->params};
    rank_row mine = {0}, *all = NULL;
    step_ctx *c = NULL;
    int visible = 1, vis_all = 0, status = MEASURE_BAD;
    /* the bytes are the library's arithmetic, the same on every rank; the time reads files, which
     * a rank on another host may not see alike: rank 0 predicts (it alone reports) and tells
     * the others whether to go on, so that no rank waits in a collective the others left */
    int rc = predict_bytes(o, L->nranks, &r.predicted_bytes);
    if (!rc && L->rank == 0)
        rc = predict_time(o, L, &r.pred);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (rc || step_open(o, L, &c))
        ;
    else if (!timed_steps(o, c, &mine, &visible)) {
        mine.predicted = r.predicted_bytes;
        all = L->rank == 0 ? malloc((size_t)L->nranks * sizeof *all) : NULL;
        MPI_Gather(&mine, sizeof mine / sizeof(double), MPI_DOUBLE, all,
                   sizeof mine / sizeof(double), MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Allreduce(&visible, &vis_all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        r.rows = all;
        if (L->rank == 0)
            status = all ? conclude(&r, vis_all, step_aggregate(c)) : MEASURE_BAD;
        MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    free(all);
    step_close(c);
    return status;
}

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
    setenv("OMPI_MCA_coll_tuned_reduce_scatter_algorithm", "3", 0);
    MPI_Init(&argc, &argv);
    int nranks = 0, status = MEASURE_BAD;
    opts o;
    layout L = {.node = MPI_COMM_NULL, .cross = MPI_COMM_NULL};
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    if (options_parse(argc, argv, nranks, &o))
        ;
    else if (o.help)
        status = MEASURE_OK;
    else if (layout_open(&L))
        ;
    else if (o.sweep_max)
        status = sweep_main(&o, &L);
    else
        status = run_schedule(&o, &L);
    layout_close(&L);
    MPI_Finalize();
    return status;
}
