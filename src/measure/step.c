/* SPDX-License-Identifier: Apache-2.0 */
/* One step of each schedule on real MPI collectives, with the library's kernels:
 *   allreduce         ring AllReduce of the sum (hierarchical: reduce-scatter inside the host,
 *                     AllReduce of the shard between hosts, all-gather inside the host)
 *   allgather         all-gather of every gradient, the rule on all of them (hierarchical:
 *                     all-gather between hosts, then inside the host)
 *   sharded           all-to-all of shards, the rule per shard, all-gather of the results
 *   sharded_distance  sharded, plus one AllReduce of partial squared distances (Krum family) or
 *                     of N partial norms per iteration (centered clipping)
 * The sharded schedules run flat everywhere: a robust rule cannot pre-reduce inside a host.
 * The compute time of a step is all its local work: the rule, and unpacking what arrived from the
 * wire format (and packing what leaves, where that is not the gradient itself).
 *
 * Non-finite gradients and failures are facts of the step, not of a rank. Every schedule applies
 * the kernels' policy to the whole gradients, as the single-process kernel does (dpas/kernels.h:
 * a gradient with a NaN or an Inf anywhere is Byzantine, excluded and counted against f; more
 * than f is an error), although a sharded rank sees only a shard of each and the AllReduce sees
 * only the sum. So the ranks agree before results move (agree(): one Allreduce of N + 1 ints):
 * which gradients are non-finite, as any rank sees them, and whether any rank failed; then every
 * rank goes on with the same gradients or fails in the same step with the same error (the first
 * failing rank's, sent to all). No rank leaves a collective the others are in. */
#include "measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct step_ctx {
    const opts *o;
    const layout *L;
    wire w;
    size_t d;
    int N;
    float *mine;        /* this rank's gradient, float */
    void *mine_w;       /* ... in the wire width */
    void *recv_w;       /* receive buffer, wire width */
    void *stage_w;      /* hierarchical all-gather: the gradients of this local index's peers */
    float *rows_f;      /* N rows (or N shards) as float */
    const float **rows; /* row pointers, in world rank order */
    float *agg;         /* the aggregate, d floats */
    void *agg_w;        /* ... wire width */
    float *shard_out;
    int *counts, *displs, *rcounts, *rdispls; /* shards over the N ranks */
    int *hcounts, *hdispls;                   /* shards over a host's ranks (hierarchical) */
    double *D, *tri;
    int64_t *sel;
    int *flags;           /* agree(): N marks and a status */
    unsigned char *bad;   /* the gradients agreed to be non-finite */
    const float **finite; /* the rows of the others */
    void *zero_w;         /* what a rank whose gradient is non-finite adds to the AllReduce */
    int mine_nonfinite;   /* this rank's own gradient holds a NaN or an Inf */
    double compute_s;
    dpas_error err; /* why the step failed: the same on every rank */
};

static double now(void) { return MPI_Wtime(); }

static int cmpd(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* d coordinates in n shards; the first d % n take one more. */
static void shard(size_t d, int n, int *counts, int *displs)
{
    for (int i = 0, off = 0; i < n; i++) {
        counts[i] = (int)(d / (size_t)n + ((size_t)i < d % (size_t)n));
        displs[i] = off;
        off += counts[i];
    }
}

static int kernel(step_ctx *c, const float *const *rows, size_t n, size_t d, int64_t f, float *out)
{
    dpas_agg_opts ao = {.f = f, .iterations = c->o->cc_iterations};
    double t0 = now();
    int rc = dpas_aggregate(c->o->rule, rows, n, d, &ao, out, NULL, NULL, &c->err);
    c->compute_s += now() - t0;
    return rc;
}

/* Does any of the n floats hold a NaN or an Inf? */
static int any_nonfinite(const float *x, size_t n)
{
    for (size_t j = 0; j < n; j++)
        if (!isfinite(x[j]))
            return 1;
    return 0;
}

/* The agreement of a step: every rank contributes what it saw (c->flags[0..N), gradient i marked
 * when it holds a NaN or an Inf in the part this rank has) and its status rc (c->err when not 0);
 * one Allreduce (MAX) of N + 1 ints gives all the same union and the lowest failing rank, whose
 * error is then broadcast. Returns 0 with c->bad set and *k the non-finite gradients, or the
 * error (in c->err) on every rank: the failing rank's, or the kernels' policy's when more than
 * f gradients are non-finite. */
static int agree(step_ctx *c, int rc, size_t *k)
{
    const int N = c->N, rank = c->L->rank;
    c->flags[N] = rc ? N - rank : 0;
    MPI_Allreduce(MPI_IN_PLACE, c->flags, N + 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (c->flags[N]) {
        int root = N - c->flags[N];
        MPI_Bcast(&c->err, (int)sizeof c->err, MPI_BYTE, root, MPI_COMM_WORLD);
        return c->err.code ? c->err.code : DPAS_EINVAL;
    }
    for (int i = 0; i < N; i++)
        c->bad[i] = (unsigned char)(c->flags[i] != 0);
    return dpas_nonfinite_check(c->o->rule, c->bad, (size_t)N, c->o->f, k, &c->err);
}

/* An agreement on the status alone (the marks are not asked for). */
static int agree_status(step_ctx *c, int rc)
{
    memset(c->flags, 0, (size_t)c->N * sizeof *c->flags);
    return agree(c, rc, NULL);
}

/* The rows of the finite gradients, in rank order, into c->finite; their number. */
static size_t finite_rows(step_ctx *c)
{
    size_t n = 0;
    for (int i = 0; i < c->N; i++)
        if (!c->bad[i])
            c->finite[n++] = c->rows[i];
    return n;
}

/* The sum that arrived over the n gradients summed, as the mean, or as a majority vote's sign of
 * the sum of signs. Every rank holds the same sum, so every rank decides alike whether it is
 * finite: a sum of finite gradients beyond the wire's range is an error (the kernel, summing in
 * double, would give a finite mean). */
static int finish_sum(step_ctx *c, size_t n)
{
    double t0 = now();
    int rc = 0;
    wire_unpack(&c->w, c->recv_w, c->d, c->agg);
    if (c->o->rule->id == DPAS_RULE_SIGN_MAJORITY)
        for (size_t j = 0; j < c->d; j++)
            c->agg[j] = (float)((c->agg[j] > 0) - (c->agg[j] < 0));
    else
        for (size_t j = 0; j < c->d; j++)
            c->agg[j] /= (float)n;
    if (any_nonfinite(c->agg, c->d))
        rc =
            dpas_error_set(&c->err, DPAS_ERANGE, "gradient",
                           "the sum of the %zu finite gradients leaves the range of the wire's "
                           "%s on the allreduce schedule (it sums on the wire); the single-process "
                           "kernel sums in double: use the allgather schedule",
                           n, c->w.width == 2 ? "bf16" : "float32");
    c->compute_s += now() - t0;
    return rc;
}

static int step_allreduce(step_ctx *c)
{
    const layout *L = c->L;
    /* a sum hides its terms: each rank says, before the data moves, whether its own gradient is
     * finite; the non-finite ones add zeros and the sum is over the others */
    size_t k = 0;
    memset(c->flags, 0, (size_t)c->N * sizeof *c->flags);
    c->flags[L->rank] = c->mine_nonfinite;
    int rc = agree(c, 0, &k);
    if (rc)
        return rc;
    const void *send = c->mine_nonfinite ? c->zero_w : c->mine_w;
    if (!L->hierarchical) {
        MPI_Allreduce(send, c->recv_w, (int)c->d, c->w.type, c->w.sum, MPI_COMM_WORLD);
    } else {
        char *mine_shard = (char *)c->recv_w + (size_t)c->hdispls[L->local] * (size_t)c->w.width;
        MPI_Reduce_scatter(send, mine_shard, c->hcounts, c->w.type, c->w.sum, L->node);
        MPI_Allreduce(MPI_IN_PLACE, mine_shard, c->hcounts[L->local], c->w.type, c->w.sum,
                      L->cross);
        MPI_Allgatherv(MPI_IN_PLACE, 0, c->w.type, c->recv_w, c->hcounts, c->hdispls, c->w.type,
                       L->node);
    }
    return finish_sum(c, (size_t)c->N - k);
}

static int step_allgather(step_ctx *c)
{
    const layout *L = c->L;
    const size_t d = c->d;
    if (!L->hierarchical) {
        MPI_Allgather(c->mine_w, (int)d, c->w.type, c->recv_w, (int)d, c->w.type, MPI_COMM_WORLD);
        for (int i = 0; i < c->N; i++)
            c->rows[i] = c->rows_f + (size_t)i * d;
    } else {
        MPI_Allgather(c->mine_w, (int)d, c->w.type, c->stage_w, (int)d, c->w.type, L->cross);
        MPI_Allgather(c->stage_w, (int)d * L->hosts, c->w.type, c->recv_w, (int)d * L->hosts,
                      c->w.type, L->node);
        for (int i = 0; i < c->N; i++)
            c->rows[L->world_of[i]] = c->rows_f + (size_t)i * d;
    }
    double t0 = now();
    wire_unpack(&c->w, c->recv_w, d * (size_t)c->N, c->rows_f);
    c->compute_s += now() - t0;
    /* every rank holds every gradient: the kernel applies the policy alike everywhere; the
     * agreement is for a failure of one rank alone (out of memory) */
    return agree_status(c, kernel(c, c->rows, (size_t)c->N, d, c->o->f, c->agg));
}

/* Centered clipping on a shard, over the n finite gradients agreed on (c->finite) with f' = f
 * minus the others: the shard's median, then each iteration one AllReduce of the n partial
 * squared norms of (x_i - v) and the clipped update. */
static int shard_centered_clipping(step_ctx *c, size_t my, size_t n, int64_t f)
{
    dpas_agg_opts ao = {.f = f};
    const dpas_rule *median;
    dpas_rule_find("median", NULL, &median, NULL);
    double t0 = now(), tau = 0;
    int rc = dpas_aggregate(median, c->finite, n, my, &ao, c->shard_out, NULL, NULL, &c->err);
    c->compute_s += now() - t0;
    if ((rc = agree_status(c, rc))) /* before the norms' AllReduces */
        return rc;
    int64_t iters = c->o->cc_iterations > 0 ? c->o->cc_iterations : 10;
    for (int64_t it = 0; it < iters; it++) {
        t0 = now();
        for (size_t i = 0; i < n; i++) {
            double s = 0;
            for (size_t j = 0; j < my; j++) {
                double e = (double)c->finite[i][j] - (double)c->shard_out[j];
                s += e * e;
            }
            c->tri[i] = s;
        }
        c->compute_s += now() - t0;
        MPI_Allreduce(MPI_IN_PLACE, c->tri, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t0 = now();
        for (size_t i = 0; i < n; i++)
            c->tri[i] = sqrt(c->tri[i]);
        if (it == 0) {
            memcpy(c->D, c->tri, n * sizeof(double));
            qsort(c->D, n, sizeof(double), cmpd);
            tau = n & 1 ? c->D[n / 2] : 0.5 * (c->D[n / 2 - 1] + c->D[n / 2]);
        }
        for (size_t j = 0; j < my; j++) {
            float s = 0.0f;
            for (size_t i = 0; i < n; i++) {
                float cw = c->tri[i] > tau ? (float)(tau / c->tri[i]) : 1.0f;
                s += cw * (c->finite[i][j] - c->shard_out[j]);
            }
            c->shard_out[j] += s / (float)n;
        }
        c->compute_s += now() - t0;
    }
    return 0;
}

/* Krum family on a shard: partial squared distances, one AllReduce of the upper triangle, the
 * same selection everywhere, then this shard of the selected rows. */
static int shard_krum(step_ctx *c, size_t my)
{
    const int N = c->N;
    double t0 = now();
    memset(c->D, 0, (size_t)N * (size_t)N * sizeof(double));
    dpas_pairwise_sqdist_add(c->rows, (size_t)N, my, c->D);
    size_t t = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++)
            c->tri[t++] = c->D[(size_t)i * (size_t)N + (size_t)j];
    c->compute_s += now() - t0;
    MPI_Allreduce(MPI_IN_PLACE, c->tri, (int)t, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    t0 = now();
    t = 0;
    for (int i = 0; i < N; i++)
        for (int j = i + 1; j < N; j++) {
            c->D[(size_t)i * (size_t)N + (size_t)j] = c->tri[t];
            c->D[(size_t)j * (size_t)N + (size_t)i] = c->tri[t++];
        }
    /* the whole distances are the same on every rank, non-finite ones included: dpas_select
     * applies the policy to them as the single-process kernel does */
    dpas_agg_opts ao = {.f = c->o->f};
    size_t nsel = 0;
    int rc = dpas_select(c->o->rule, c->D, (size_t)N, &ao, c->sel, &nsel, &c->err);
    if (!rc)
        rc = dpas_aggregate_selected(c->o->rule, c->rows, (size_t)N, my, &ao, c->sel, nsel,
                                     c->shard_out, &c->err);
    c->compute_s += now() - t0;
    return rc;
}

static int step_sharded(step_ctx *c)
{
    const int rank = c->L->rank;
    const size_t my = (size_t)c->counts[rank], w = (size_t)c->w.width;
    int rc = 0;
    MPI_Alltoallv(c->mine_w, c->counts, c->displs, c->w.type, c->recv_w, c->rcounts, c->rdispls,
                  c->w.type, MPI_COMM_WORLD);
    double t0 = now();
    wire_unpack(&c->w, c->recv_w, my * (size_t)c->N, c->rows_f);
    for (int i = 0; i < c->N; i++) {
        c->rows[i] = c->rows_f + (size_t)i * my;
        c->flags[i] = any_nonfinite(c->rows[i], my); /* this rank sees only this shard */
    }
    c->compute_s += now() - t0;
    if (c->o->schedule == DPAS_SCHED_SHARDED_DISTANCE &&
        c->o->rule->id != DPAS_RULE_CENTERED_CLIPPING) {
        /* the distances carry every shard's non-finite values to every rank; the agreement is
         * for a failure of one rank alone, before the results move */
        rc = agree_status(c, shard_krum(c, my));
    } else {
        /* which gradients are non-finite anywhere: the same rows are left out on every rank, or
         * every rank fails here with the kernels' error */
        size_t k = 0;
        if (!(rc = agree(c, 0, &k))) {
            size_t n = finite_rows(c);
            int64_t f = c->o->f - (int64_t)k;
            if (c->o->schedule == DPAS_SCHED_SHARDED) /* agreed on before the results move */
                rc = agree_status(c, kernel(c, c->finite, n, my, f, c->shard_out));
            else /* agrees on its median before its AllReduces; nothing fails after */
                rc = shard_centered_clipping(c, my, n, f);
        }
    }
    if (!rc) {
        t0 = now();
        wire_pack(&c->w, c->shard_out, my, (char *)c->agg_w + (size_t)c->displs[rank] * w);
        c->compute_s += now() - t0;
        MPI_Allgatherv(MPI_IN_PLACE, 0, c->w.type, c->agg_w, c->counts, c->displs, c->w.type,
                       MPI_COMM_WORLD);
        t0 = now();
        wire_unpack(&c->w, c->agg_w, c->d, c->agg);
        c->compute_s += now() - t0;
    }
    return rc;
}

int step_run(step_ctx *c, double *compute_s)
{
    int rc;
    c->compute_s = 0;
    if (c->o->schedule == DPAS_SCHED_ALLREDUCE)
        rc = step_allreduce(c);
    else if (c->o->schedule == DPAS_SCHED_ALLGATHER)
        rc = step_allgather(c);
    else
        rc = step_sharded(c);
    *compute_s = c->compute_s;
    return rc;
}

const float *step_aggregate(const step_ctx *c) { return c->agg; }

const dpas_error *step_error(const step_ctx *c) { return &c->err; }

/* Buffers for the schedule; every rank learns whether all could allocate. */
static int alloc_buffers(step_ctx *c)
{
    const size_t d = c->d, w = (size_t)c->w.width, N = (size_t)c->N;
    const dpas_schedule_id s = c->o->schedule;
    size_t rows = s == DPAS_SCHED_ALLGATHER   ? d * N
                  : s == DPAS_SCHED_ALLREDUCE ? d
                                              : (size_t)c->counts[0] * N;
    size_t stage = s == DPAS_SCHED_ALLGATHER && c->L->hierarchical ? d * (size_t)c->L->hosts : 1;
    c->mine = malloc(d * sizeof(float));
    c->mine_w = malloc(d * w);
    c->recv_w = malloc(rows * w);
    c->stage_w = malloc(stage * w);
    c->rows_f = malloc(rows * sizeof(float));
    c->rows = malloc(N * sizeof(float *));
    c->agg = malloc(d * sizeof(float));
    c->agg_w = malloc(d * w);
    c->shard_out = malloc((size_t)c->counts[0] * sizeof(float));
    c->D = malloc(N * N * sizeof(double));
    c->tri = malloc((N * N / 2 + N + 1) * sizeof(double));
    c->sel = malloc(N * sizeof(int64_t));
    c->flags = calloc(N + 1, sizeof(int));
    c->bad = calloc(N, 1);
    c->finite = malloc(N * sizeof(float *));
    c->zero_w = calloc(s == DPAS_SCHED_ALLREDUCE ? d * w : 1, 1); /* +0 in fp32 and bf16 */
    int ok = c->mine && c->mine_w && c->recv_w && c->stage_w && c->rows_f && c->rows && c->agg &&
             c->agg_w && c->shard_out && c->D && c->tri && c->sel && c->flags && c->bad &&
             c->finite && c->zero_w,
        all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    return all_ok ? 0 : 1;
}

int step_open(const opts *o, const layout *L, step_ctx **out)
{
    const int N = L->nranks, g = L->per_host > 0 ? L->per_host : 1;
    step_ctx *c = calloc(1, sizeof *c);
    int *ints = malloc((size_t)(4 * N + 2 * g) * sizeof(int));
    int rc = !c || !ints;
    if (!rc) {
        *c = (step_ctx){.o = o,
                        .L = L,
                        .d = (size_t)o->params,
                        .N = N,
                        .counts = ints,
                        .displs = ints + N,
                        .rcounts = ints + 2 * N,
                        .rdispls = ints + 3 * N,
                        .hcounts = ints + 4 * N,
                        .hdispls = ints + 4 * N + g};
        ints = NULL;
        wire_open(&c->w, o->width);
        shard(c->d, N, c->counts, c->displs);
        shard(c->d, g, c->hcounts, c->hdispls);
        for (int i = 0; i < N; i++) {
            c->rcounts[i] = c->counts[L->rank];
            c->rdispls[i] = i * c->counts[L->rank];
        }
    }
    int all_ok = !rc, ok = !rc;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    /* the hierarchical all-gather inside a host moves every host's gradient in one message */
    if (all_ok && L->hierarchical && o->schedule == DPAS_SCHED_ALLGATHER &&
        o->params * (uint64_t)L->hosts > (uint64_t)INT32_MAX) {
        measure_say("--params %llu x %d hosts exceeds what one MPI message holds here (2^31 - 1 "
                    "elements) in the hierarchical all-gather: scale the model down with --scale",
                    (unsigned long long)o->params, L->hosts);
        rc = 1;
    } else {
        rc = !all_ok || alloc_buffers(c);
        if (rc)
            measure_say("out of memory for %llu coordinates on %d ranks",
                        (unsigned long long)o->params, N);
    }
    if (!rc) {
        gradient_of(o, N, L->rank, 0, c->d, c->mine);
        c->mine_nonfinite = any_nonfinite(c->mine, c->d); /* before a sign vote hides it */
        if (o->schedule == DPAS_SCHED_ALLREDUCE && o->rule->id == DPAS_RULE_SIGN_MAJORITY)
            for (size_t j = 0; j < c->d; j++) /* a majority vote is the sign of a sum of signs */
                c->mine[j] = (float)((c->mine[j] > 0) - (c->mine[j] < 0));
        wire_pack(&c->w, c->mine, c->d, c->mine_w);
    }
    free(ints);
    *out = c;
    return rc;
}

void step_close(step_ctx *c)
{
    if (c) {
        if (c->counts)
            wire_close(&c->w);
        free(c->mine), free(c->mine_w), free(c->recv_w), free(c->stage_w), free(c->rows_f);
        free(c->rows), free(c->agg), free(c->agg_w), free(c->shard_out);
        free(c->D), free(c->tri), free(c->sel), free(c->counts);
        free(c->flags), free(c->bad), free(c->finite), free(c->zero_w);
        free(c);
    }
}
