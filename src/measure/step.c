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
 * wire format (and packing what leaves, where that is not the gradient itself). */
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
    double compute_s;
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

static int kernel(step_ctx *c, const float *const *rows, size_t n, size_t d, float *out)
{
    dpas_agg_opts ao = {.f = c->o->f, .iterations = c->o->cc_iterations};
    dpas_error e;
    double t0 = now();
    int rc = dpas_aggregate(c->o->rule, rows, n, d, &ao, out, NULL, NULL, &e);
    c->compute_s += now() - t0;
    if (rc)
        measure_say("%s", e.message);
    return rc;
}

/* The sum that arrived, as the mean, or as a majority vote's sign of the sum of signs. */
static void finish_sum(step_ctx *c)
{
    double t0 = now();
    wire_unpack(&c->w, c->recv_w, c->d, c->agg);
    if (c->o->rule->id == DPAS_RULE_SIGN_MAJORITY)
        for (size_t j = 0; j < c->d; j++)
            c->agg[j] = (float)((c->agg[j] > 0) - (c->agg[j] < 0));
    else
        for (size_t j = 0; j < c->d; j++)
            c->agg[j] /= (float)c->N;
    c->compute_s += now() - t0;
}

static int step_allreduce(step_ctx *c)
{
    const layout *L = c->L;
    if (!L->hierarchical) {
        MPI_Allreduce(c->mine_w, c->recv_w, (int)c->d, c->w.type, c->w.sum, MPI_COMM_WORLD);
    } else {
        char *mine_shard = (char *)c->recv_w + (size_t)c->hdispls[L->local] * (size_t)c->w.width;
        MPI_Reduce_scatter(c->mine_w, mine_shard, c->hcounts, c->w.type, c->w.sum, L->node);
        MPI_Allreduce(MPI_IN_PLACE, mine_shard, c->hcounts[L->local], c->w.type, c->w.sum,
                      L->cross);
        MPI_Allgatherv(MPI_IN_PLACE, 0, c->w.type, c->recv_w, c->hcounts, c->hdispls, c->w.type,
                       L->node);
    }
    finish_sum(c);
    return 0;
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
    return kernel(c, c->rows, (size_t)c->N, d, c->agg);
}

/* Centered clipping on a shard: the shard's median, then each iteration one AllReduce of the N
 * partial squared norms of (x_i - v) and the clipped update. */
static void shard_centered_clipping(step_ctx *c, size_t my)
{
    const int N = c->N;
    dpas_agg_opts ao = {.f = c->o->f};
    const dpas_rule *median;
    dpas_rule_find("median", NULL, &median, NULL);
    double t0 = now(), tau = 0;
    dpas_aggregate(median, c->rows, (size_t)N, my, &ao, c->shard_out, NULL, NULL, NULL);
    c->compute_s += now() - t0;
    int64_t iters = c->o->cc_iterations > 0 ? c->o->cc_iterations : 10;
    for (int64_t it = 0; it < iters; it++) {
        t0 = now();
        for (int i = 0; i < N; i++) {
            double s = 0;
            for (size_t j = 0; j < my; j++) {
                double e = (double)c->rows[i][j] - (double)c->shard_out[j];
                s += e * e;
            }
            c->tri[i] = s;
        }
        c->compute_s += now() - t0;
        MPI_Allreduce(MPI_IN_PLACE, c->tri, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        t0 = now();
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
        c->compute_s += now() - t0;
    }
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
    dpas_agg_opts ao = {.f = c->o->f};
    size_t nsel = 0;
    dpas_error e;
    int rc = dpas_select(c->o->rule, c->D, (size_t)N, &ao, c->sel, &nsel, &e) ||
             dpas_aggregate_selected(c->o->rule, c->rows, (size_t)N, my, &ao, c->sel, nsel,
                                     c->shard_out, &e);
    if (rc)
        measure_say("%s", e.message);
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
    for (int i = 0; i < c->N; i++)
        c->rows[i] = c->rows_f + (size_t)i * my;
    c->compute_s += now() - t0;
    if (c->o->schedule == DPAS_SCHED_SHARDED)
        rc = kernel(c, c->rows, (size_t)c->N, my, c->shard_out);
    else if (c->o->rule->id == DPAS_RULE_CENTERED_CLIPPING)
        shard_centered_clipping(c, my);
    else
        rc = shard_krum(c, my);
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
    int ok = c->mine && c->mine_w && c->recv_w && c->stage_w && c->rows_f && c->rows && c->agg &&
             c->agg_w && c->shard_out && c->D && c->tri && c->sel,
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
        free(c);
    }
}
