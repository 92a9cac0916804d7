/* SPDX-License-Identifier: Apache-2.0 */
/* A time model with the structure of NCCL's own (src/graph/tuning.cc in NVIDIA/nccl), fitted to
 * nccl-tests curves, so that a prediction at another scale changes what physically changes.
 *
 * NCCL predicts each collective's time for every algorithm and protocol and runs the fastest:
 *   time = latency + bytes / algorithm bandwidth
 *   ring latency  = base + (steps - inter) x intra hop + inter x inter hop, where a ring
 *                   AllReduce has 2(n-1) steps, 2(nodes-1) of them between nodes (n-1 and
 *                   nodes-1 for the others);
 *   tree latency  = base + 2 ((g-1) x intra hop + log2(nodes) x inter hop) (AllReduce only;
 *                   g ranks per node, log2 rounded down as NCCL's log2i);
 *   bandwidth     = the bus bandwidth of the node's links (inside one node: its NVLink or PCI;
 *                   across nodes: its network cards, which grow with the ranks per node; an
 *                   alltoall or a sendrecv moves only its own share across, see net_share),
 *                   times each protocol's share of it (LL and LL128 carry flags with the data),
 *                   times 0.92 for the tree; the ring moves nccl-tests' bus factor x bytes per
 *                   rank, the tree 2 x bytes.
 * Here the latencies (base and inter-node hop per protocol; an intra-node hop is NCCL's ratio of
 * the NVLink and network hop latencies times the inter-node one), the bandwidths (inside a node;
 * across nodes per rank, with an exponent on the ranks per node and one on the node count when
 * the curves measured several) and the protocols' shares are fitted to every curve of one
 * collective at once, in three topology regimes as NCCL's own tables have them (its per-channel
 * bandwidth caps and LL limits are indexed by 1 node, 2 nodes, more; at <= 2 nodes it takes the
 * graph's intra-node speed, beyond its inter-node speed): inside one node, on exactly 2 nodes
 * (its own bandwidth factor when more nodes were measured too) and on more (the node-count
 * exponent fitted there only, held inside the node counts measured), by least squares on ln(model / measured), with NCCL's constants as a weak
 * prior where the curves do not tell (one scale cannot separate a base from a hop latency). */
#include "ncclmodel.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The measured curve between its sizes (linear in bytes), NAN outside them: here, below the
 * fits of fit.c and the queries of query.c that both use it. */
double dpas__curve_empirical(const dpas_curve *cv, double x)
{
    if (!cv->n || x < (double)cv->bytes[0] || x > (double)cv->bytes[cv->n - 1])
        return NAN;
    size_t lo = 0, hi = cv->n - 1; /* the last size <= x */
    while (lo < hi) {
        size_t mid = (lo + hi + 1) / 2;
        if ((double)cv->bytes[mid] <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    double xa = (double)cv->bytes[lo], ta = cv->seconds[lo];
    if (x == xa || lo == cv->n - 1)
        return ta;
    double xb = (double)cv->bytes[lo + 1], tb = cv->seconds[lo + 1];
    return ta + (tb - ta) * ((x - xa) / (xb - xa));
}

static int cmp3(double x, double y) { return x < y ? -1 : x > y ? 1 : 0; }

int dpas__curve_cmp(const dpas_curve *a, const dpas_curve *b)
{
    int c;
    if ((c = cmp3(a->collective, b->collective)) ||
        (c = cmp3((double)a->ranks, (double)b->ranks)) ||
        (c = cmp3((double)a->per_node, (double)b->per_node)) ||
        (c = cmp3((double)a->n, (double)b->n)))
        return c;
    for (size_t i = 0; i < a->n; i++)
        if ((c = cmp3((double)a->bytes[i], (double)b->bytes[i])))
            return c;
    for (size_t i = 0; i < a->n; i++)
        if ((c = cmp3(a->seconds[i], b->seconds[i])))
            return c;
    for (size_t i = 0; i < a->n; i++) { /* NaN (no in-place time) before any number */
        double x = a->seconds_inplace ? a->seconds_inplace[i] : NAN;
        double y = b->seconds_inplace ? b->seconds_inplace[i] : NAN;
        if (isnan(x) || isnan(y)) {
            if ((c = cmp3(!isnan(x), !isnan(y))))
                return c;
        } else if ((c = cmp3(x, y))) {
            return c;
        }
    }
    return 0;
}

static int curve_ptr_cmp(const void *a, const void *b)
{
    return dpas__curve_cmp(*(const dpas_curve *const *)a, *(const dpas_curve *const *)b);
}

void dpas__curves_sort(const dpas_curve **cvs, size_t n)
{
    if (n > 1)
        qsort(cvs, n, sizeof *cvs, curve_ptr_cmp);
}

enum { LL, LL128, SIMPLE, NPROTO };
enum { RING, TREE, NALGO };

/* NCCL's NVLink hop latency over its network hop latency (tuning.cc's hwLat, NVLINK / NET rows),
 * per algorithm and protocol; the same from NCCL 2.18 to 2.29. */
static const double intra_ratio[NALGO][NPROTO] = {{0.6 / 2.7, 1.9 / 4.0, 3.4 / 14.0},
                                                  {0.6 / 5.0, 1.25 / 8.5, 4.0 / 14.0}};
/* NCCL's base latencies (baseLat, ring) and network hop latencies (hwLat NET, ring), seconds: the
 * prior where the curves cannot separate the two. */
static const double base_prior[NPROTO] = {6.6e-6, 14.0e-6, 8.4e-6};
static const double hop_prior[NPROTO] = {2.7e-6, 4.0e-6, 14.0e-6};
/* The protocols' share of the bus bandwidth in NCCL's model (ring LL x .5, LL128 x .92). */
static const double eff_prior[2] = {0.5, 0.92};
#define TREE_SHARE 0.92 /* NCCL: a tree AllReduce reaches .92 of the bus bandwidth */

/* ---- the model ------------------------------------------------------------------------------ */

/* What a scale means for one collective: hops and bus factor. */
typedef struct geom {
    double ranks, per_node, nodes;
    dpas_net_regime regime;
    double ring_intra, ring_inter; /* a ring's steps inside nodes and between them */
    double factor;                 /* nccl-tests' bus factor: bytes per rank / bytes */
    bool tree;                     /* AllReduce: a tree is a candidate */
    int net;                       /* what crosses the network: NET_RING, NET_A2A, NET_P2P */
    double tree_intra, tree_inter; /* a tree's hops (both directions) */
} geom;

/* What crosses the network between nodes, per collective (ranks placed on nodes in blocks, as
 * the Rank lines of every multi-node log show; nccl-tests' src/alltoall.cu, src/sendrecv.cu):
 *   NET_RING: a ring or tree through every node; its channels use every network card, so the
 *     bus bandwidth across nodes is the node's network: per-rank bandwidth x g^kappa;
 *   NET_A2A: alltoall: each rank sends (n - g) / n of its buffer off its node, over its own
 *     share of the node's network (per-rank bandwidth x g^(kappa - 1)); nccl-tests' bus
 *     bandwidth ((n - 1) / n x bytes / time) is then that share x (n - 1) / (n - g);
 *   NET_P2P: sendrecv: rank r sends to r + 1, so one rank per node sends across, over its own
 *     share: its bus bandwidth (= algbw) is per-rank bandwidth x g^(kappa - 1).
 * On the H100 series of xxrjun's example-cluster01 (not used to choose this), alltoall's bus
 * bandwidth at 16 GiB on 10 nodes at 1, 2, 4 and 8 GPUs each is 44.7, 47.8, 49.5 and 50.4 GB/s
 * (the share's (n - 1) / (n - g): 44.7, 47.1, 48.4, 49.0) and sendrecv's 24.9, 25.2, 26.2 and
 * 15.2, where a ring's all_reduce grows 48.9, 97.9, 196, 321. */
enum { NET_RING = 0, NET_A2A, NET_P2P };

static double net_share(const geom *g, double kappa)
{
    double gk = pow(g->per_node, kappa);
    switch (g->net) {
    case NET_A2A: return gk / g->per_node * (g->ranks - 1) / (g->ranks - g->per_node);
    case NET_P2P: return gk / g->per_node;
    default: return gk;
    }
}

static void geom_of(int coll, double ranks, double per_node, geom *g)
{
    double nodes = per_node > 0 ? ranks / per_node : 1;
    if (nodes < 1)
        nodes = 1;
    g->ranks = ranks, g->per_node = per_node > 0 ? per_node : ranks, g->nodes = nodes;
    g->regime = dpas__ncclm_regime(ranks, per_node);
    double steps, factor;
    dpas_collective_ring(coll, (int64_t)ranks, &steps, &factor, NULL);
    bool ar = coll == DPAS_COLL_ALL_REDUCE;
    double inter = nodes > 1 ? (ar ? 2 : 1) * (nodes - 1) : 0;
    if (inter > steps)
        inter = steps;
    g->ring_intra = steps - inter, g->ring_inter = inter, g->factor = factor;
    g->tree = ar;
    g->net = coll == DPAS_COLL_ALLTOALL ? NET_A2A : coll == DPAS_COLL_SENDRECV ? NET_P2P : NET_RING;
    g->tree_intra = 2 * (g->per_node - 1);
    g->tree_inter = nodes >= 2 ? 2 * floor(log2(nodes)) : 0;
}

dpas_net_regime dpas__ncclm_regime(double ranks, double per_node)
{
    double nodes = per_node > 0 ? ranks / per_node : 1;
    return nodes < 1.5   ? DPAS_REGIME_ONE_NODE
           : nodes < 2.5 ? DPAS_REGIME_TWO_NODES
                         : DPAS_REGIME_MORE_NODES;
}

static double bandwidth(const dpas_nccl_params *p, const geom *g)
{
    if (g->regime == DPAS_REGIME_ONE_NODE)
        return p->intra_bw;
    /* the node-count term is the more-nodes regime's, inside the node counts it measured (no
     * extrapolated trend); 2 nodes: the bandwidth at the lowest of them times two_node */
    double nodes = g->nodes;
    if (p->nodes_hi >= p->nodes_lo && p->nodes_lo >= 2)
        nodes = fmin(fmax(nodes, p->nodes_lo), p->nodes_hi);
    double bw = p->inter_bw * net_share(g, p->kappa) * pow(nodes / 2, -p->gamma);
    double two = isfinite(p->two_node) ? p->two_node : 1;
    if (g->regime == DPAS_REGIME_TWO_NODES)
        return bw * two;
    /* between 2 nodes and the fewest measured above 2, both measured: between the two
     * bandwidths (log-linear in the node count), no trend carried beyond either */
    if (isfinite(p->two_node) && g->nodes < p->nodes_lo && p->nodes_lo > 2) {
        double w = log(g->nodes / 2) / log(p->nodes_lo / 2);
        return bw * pow(two, 1 - w);
    }
    return bw;
}

/* A scale's candidates (algorithm x protocol) under given parameters: time = lat + coef x bytes;
 * the fastest runs. */
typedef struct cands {
    int n;
    double lat[NALGO * NPROTO], coef[NALGO * NPROTO];
} cands;

static void cands_of(const dpas_nccl_params *p, const geom *g, cands *c)
{
    double bw = bandwidth(p, g);
    c->n = 0;
    for (int k = 0; k < NPROTO; k++) {
        double b = bw * p->eff[k];
        c->lat[c->n] =
            p->base_s[k] + p->hop_s[k] * (g->ring_intra * intra_ratio[RING][k] + g->ring_inter);
        c->coef[c->n++] = g->factor / b;
        if (g->tree) {
            c->lat[c->n] =
                p->base_s[k] + p->hop_s[k] * (g->tree_intra * intra_ratio[TREE][k] + g->tree_inter);
            c->coef[c->n++] = 2 / (b * TREE_SHARE);
        }
    }
}

static double cands_time(const cands *c, double bytes)
{
    double best = INFINITY;
    for (int i = 0; i < c->n; i++) {
        double t = c->lat[i] + c->coef[i] * bytes;
        best = t < best ? t : best;
    }
    return best;
}

static double time_at(const dpas_nccl_params *p, const geom *g, double bytes)
{
    if (g->ranks <= 1)
        return 0;
    cands c;
    cands_of(p, g, &c);
    return cands_time(&c, bytes);
}

double dpas__ncclm_time(const dpas_nccl_params *p, int coll, double bytes, double ranks,
                        double per_node)
{
    geom g;
    geom_of(coll, ranks, per_node, &g);
    return time_at(p, &g, bytes);
}

double dpas__scale_distance(double r1, double g1, double r2, double g2)
{
    /* along the two axes that change what runs: the node count and the ranks per node */
    return fabs(log((r1 / g1) / (r2 / g2))) + fabs(log(g1 / g2));
}

/* ---- fitting -------------------------------------------------------------------------------- */

/* The parameters as a vector: logs of the latencies and bandwidths, kappa and gamma as they are. */
enum {
    T_BASE = 0,
    T_HOP = 3,
    T_INTER = 6,
    T_KAPPA = 7,
    T_INTRA = 8,
    T_EFF = 9,
    T_GAMMA = 11,
    T_TWO = 12,
    NT
};

static void unpack(const double *th, dpas_nccl_params *p)
{
    for (int k = 0; k < NPROTO; k++) {
        p->base_s[k] = exp(th[T_BASE + k]);
        p->hop_s[k] = exp(th[T_HOP + k]);
    }
    p->inter_bw = exp(th[T_INTER]);
    p->kappa = th[T_KAPPA];
    p->intra_bw = exp(th[T_INTRA]);
    p->eff[LL] = fmin(1.0, exp(th[T_EFF]));
    p->eff[LL128] = fmin(1.0, exp(th[T_EFF + 1]));
    p->eff[SIMPLE] = 1.0;
    p->gamma = fmax(0.0, th[T_GAMMA]);
    p->two_node = exp(th[T_TWO]);
    /* the more-nodes regime's node counts: set before the fit (fitctx.nodes_lo, _hi) */
}

#define FIT_SIZES 48   /* sizes of one curve in the fit's loss, at most */
#define LORO_SCALES 12 /* scales left out in turn, at most (evenly chosen among them) */

typedef struct fitctx {
    const dpas_curve *const *cvs;
    size_t n;
    geom *g;
    double full[NT]; /* every parameter; the active ones are overwritten from the search */
    int active[NT];  /* indices of the searched parameters */
    int nactive;
    double prior[NT]; /* the centre of each parameter's prior */
    double weight[NT];
    double nodes_lo, nodes_hi; /* the node counts of the more-nodes regime's curves */
} fitctx;

static double loss(fitctx *c, const double *x)
{
    for (int i = 0; i < c->nactive; i++)
        c->full[c->active[i]] = x[i];
    dpas_nccl_params p;
    unpack(c->full, &p);
    p.nodes_lo = c->nodes_lo, p.nodes_hi = c->nodes_hi;
    double total = 0;
    for (size_t j = 0; j < c->n; j++) {
        const dpas_curve *cv = c->cvs[j];
        cands k;
        cands_of(&p, &c->g[j], &k);
        /* at most FIT_SIZES sizes of a curve, evenly spread over its sizes: a curve's mean
         * squared error is all the fit needs, and the work stays bounded (nccl-tests' factor-2
         * sweeps have 30 to 40 sizes, which are all used) */
        size_t stride = (cv->n + FIT_SIZES - 1) / FIT_SIZES, used = 0;
        double s = 0;
        for (size_t i = 0; i < cv->n; i += stride, used++) {
            double r = log(cands_time(&k, (double)cv->bytes[i]) / cv->seconds[i]);
            s += r * r;
        }
        total += s / (double)used;
    }
    total /= (double)c->n;
    for (int i = 0; i < c->nactive; i++) {
        int k = c->active[i];
        double d = x[i] - c->prior[k];
        total += c->weight[k] * d * d;
    }
    return isfinite(total) ? total : INFINITY;
}

/* Nelder and Mead's simplex search (reflection 1, expansion 2, contraction and shrink 1/2),
 * deterministic: from x (dim values) with the given steps, until the simplex's values agree to
 * a relative 1e-10 or after maxit iterations. x gets the best point; returns its value. */
static double simplex(fitctx *c, double *x, const double *step, int dim, int maxit)
{
    double pts[NT + 1][NT], val[NT + 1], cen[NT], xr[NT], xe[NT], xc[NT];
    for (int i = 0; i <= dim; i++) {
        memcpy(pts[i], x, (size_t)dim * sizeof *x);
        if (i)
            pts[i][i - 1] += step[i - 1];
        val[i] = loss(c, pts[i]);
    }
    for (int it = 0; it < maxit; it++) {
        for (int i = 1; i <= dim; i++) /* insertion sort: best first */
            for (int j = i; j > 0 && val[j] < val[j - 1]; j--) {
                double t = val[j];
                val[j] = val[j - 1], val[j - 1] = t;
                for (int k = 0; k < dim; k++)
                    t = pts[j][k], pts[j][k] = pts[j - 1][k], pts[j - 1][k] = t;
            }
        if (fabs(val[dim] - val[0]) <= 1e-10 * (fabs(val[0]) + 1e-12))
            break;
        for (int k = 0; k < dim; k++) {
            cen[k] = 0;
            for (int i = 0; i < dim; i++)
                cen[k] += pts[i][k] / dim;
            xr[k] = 2 * cen[k] - pts[dim][k];
        }
        double fr = loss(c, xr);
        if (fr < val[0]) {
            for (int k = 0; k < dim; k++)
                xe[k] = 3 * cen[k] - 2 * pts[dim][k];
            double fe = loss(c, xe);
            memcpy(pts[dim], fe < fr ? xe : xr, (size_t)dim * sizeof *x);
            val[dim] = fe < fr ? fe : fr;
        } else if (fr < val[dim - 1]) {
            memcpy(pts[dim], xr, (size_t)dim * sizeof *x);
            val[dim] = fr;
        } else {
            for (int k = 0; k < dim; k++)
                xc[k] = cen[k] + 0.5 * (pts[dim][k] - cen[k]);
            double fc = loss(c, xc);
            if (fc < val[dim]) {
                memcpy(pts[dim], xc, (size_t)dim * sizeof *x);
                val[dim] = fc;
            } else {
                for (int i = 1; i <= dim; i++) {
                    for (int k = 0; k < dim; k++)
                        pts[i][k] = pts[0][k] + 0.5 * (pts[i][k] - pts[0][k]);
                    val[i] = loss(c, pts[i]);
                }
            }
        }
    }
    int b = 0;
    for (int i = 1; i <= dim; i++)
        if (val[i] < val[b])
            b = i;
    memcpy(x, pts[b], (size_t)dim * sizeof *x);
    return val[b];
}

/* The bus bandwidth a curve reached at its largest size (nccl-tests' busbw, from the time). */
static double reached_busbw(const dpas_curve *cv, const geom *g)
{
    double x = (double)cv->bytes[cv->n - 1], t = cv->seconds[cv->n - 1];
    return g->factor * x / t;
}

int dpas__ncclm_fit(const dpas_curve *const *given, size_t n, int coll, dpas_scale_fit *sf)
{
    memset(&sf->p, 0, sizeof sf->p);
    sf->collective = coll;
    sf->determined = 0;
    sf->defined = 0;
    size_t points = 0;
    /* the curves in their canonical order (dpas__curve_cmp): the fit is of the set */
    const dpas_curve **cvs = malloc((n ? n : 1) * sizeof *cvs);
    if (!cvs)
        return DPAS_ENOMEM;
    if (n)
        memcpy(cvs, given, n * sizeof *cvs);
    dpas__curves_sort(cvs, n);
    fitctx c = {.cvs = cvs, .n = n};
    if (!(c.g = calloc(n ? n : 1, sizeof *c.g))) {
        free(cvs);
        return DPAS_ENOMEM;
    }
    double *inter = malloc((n ? n : 1) * sizeof *inter),
           *intra = malloc((n ? n : 1) * sizeof *intra);
    if (!inter || !intra) {
        free(c.g), free(inter), free(intra), free(cvs);
        return DPAS_ENOMEM;
    }
    size_t ninter = 0, nintra = 0;
    double pn[2] = {0, 0}, nd[3] = {0, 0, 0};
    int npn = 0, nnd = 0;
    /* the widest node (most ranks per node) measured across nodes, and inside one */
    double pn_inter = 0, pn_intra = 0;
    /* the node counts measured in the more-nodes regime: its node-count term holds between
     * them only; a 2-node curve is its own regime and carries no trend */
    double nodes_lo = INFINITY, nodes_hi = 0;
    bool two = false, more = false;
    for (size_t j = 0; j < n; j++) {
        geom_of(coll, (double)cvs[j]->ranks, (double)cvs[j]->per_node, &c.g[j]);
        points += cvs[j]->n;
        double bw = reached_busbw(cvs[j], &c.g[j]);
        if (c.g[j].regime != DPAS_REGIME_ONE_NODE) {
            pn_inter = fmax(pn_inter, c.g[j].per_node);
            inter[ninter++] = bw / net_share(&c.g[j], 1);
            bool seen = false; /* distinct ranks per node (two suffice) */
            for (int i = 0; i < npn; i++)
                seen |= pn[i] == c.g[j].per_node;
            if (!seen && npn < 2)
                pn[npn++] = c.g[j].per_node;
            if (c.g[j].regime == DPAS_REGIME_TWO_NODES) {
                two = true;
                continue;
            }
            more = true;
            nodes_lo = fmin(nodes_lo, c.g[j].nodes), nodes_hi = fmax(nodes_hi, c.g[j].nodes);
            seen = false; /* distinct node counts above 2 (three) */
            for (int i = 0; i < nnd; i++)
                seen |= nd[i] == c.g[j].nodes;
            if (!seen && nnd < 3)
                nd[nnd++] = c.g[j].nodes;
        } else {
            pn_intra = fmax(pn_intra, c.g[j].per_node);
            intra[nintra++] = bw;
        }
    }
    /* no curve on more than 2 nodes: the regime's edge is 2 nodes (its bandwidth the 2-node
     * one's, an upper bound there, see query.c) */
    c.nodes_lo = more ? nodes_lo : 2, c.nodes_hi = more ? nodes_hi : 2;
    /* two sizes, as a line needs (a latency and a bandwidth); the protocols' shares and the
     * split of base and hop latencies come from NCCL's priors when the sizes cannot tell them.
     * Files that kept only their largest sizes (three per node count on the MI325X series) are
     * modelled; one size is not (its time is a latency or a bandwidth, never both) */
    if (points < 2) {
        dpas__mark_cut(sf->reason, sizeof sf->reason,
                       snprintf(sf->reason, sizeof sf->reason,
                                "%zu measured size%s of %s; the nccl model needs at least 2",
                                points, points == 1 ? "" : "s", dpas_collective_name(coll)));
        free(c.g), free(inter), free(intra), free(cvs);
        return 0;
    }
    /* the bandwidths start where the curves ended; an unmeasured one is assumed equal to the
     * measured one at the same ranks per node (set again after the fit) */
    double inter0 = ninter ? dpas__median_sort(inter, ninter) : NAN;
    double intra0 = nintra ? dpas__median_sort(intra, nintra) : NAN;
    free(inter), free(intra);
    if (!ninter)
        inter0 = intra0 / pn_intra;
    if (!nintra)
        intra0 = inter0 * pn_inter;
    for (int k = 0; k < NPROTO; k++) {
        c.prior[T_BASE + k] = log(base_prior[k]);
        c.prior[T_HOP + k] = log(hop_prior[k]);
        c.weight[T_BASE + k] = c.weight[T_HOP + k] = 0.01;
    }
    c.prior[T_INTER] = log(inter0), c.prior[T_INTRA] = log(intra0);
    c.prior[T_KAPPA] = 1, c.prior[T_GAMMA] = 0, c.prior[T_TWO] = 0;
    c.prior[T_EFF] = log(eff_prior[0]), c.prior[T_EFF + 1] = log(eff_prior[1]);
    for (int k = T_INTER; k < NT; k++)
        c.weight[k] = 1e-4;
    memcpy(c.full, c.prior, sizeof c.full);
    sf->determined |= ninter ? DPAS_SCALEFIT_INTER : 0;
    sf->determined |= nintra ? DPAS_SCALEFIT_INTRA : 0;
    sf->determined |= npn >= 2 ? DPAS_SCALEFIT_KAPPA : 0;
    sf->determined |= nnd >= 3 ? DPAS_SCALEFIT_GAMMA : 0;
    sf->determined |= two && more ? DPAS_SCALEFIT_TWO_NODE : 0;
    for (int k = 0; k < NT; k++) {
        bool on = k < T_INTER || k == T_EFF || k == T_EFF + 1 || (k == T_INTER && ninter) ||
                  (k == T_INTRA && nintra) || (k == T_KAPPA && npn >= 2) ||
                  (k == T_GAMMA && nnd >= 3) || (k == T_TWO && two && more);
        if (on)
            c.active[c.nactive++] = k;
    }
    /* three starts (the hops at NCCL's, e and e^2 times it), screened briefly; the best
     * refined to convergence */
    double best[NT], x[NT], step[NT], bestv = INFINITY;
    for (int s = 0; s < 3; s++) {
        for (int i = 0; i < c.nactive; i++) {
            int k = c.active[i];
            x[i] = c.prior[k] + (k >= T_HOP && k < T_HOP + NPROTO ? s : 0);
            step[i] = k == T_KAPPA || k == T_GAMMA || k == T_TWO ? 0.2 : 0.5;
        }
        double v = simplex(&c, x, step, c.nactive, 60 * c.nactive);
        if (v < bestv)
            bestv = v, memcpy(best, x, sizeof x);
    }
    for (int i = 0; i < c.nactive; i++)
        step[i] = 0.1;
    simplex(&c, best, step, c.nactive, 300 * c.nactive);
    loss(&c, best); /* leaves the best in c.full */
    unpack(c.full, &sf->p);
    /* no curve across nodes: the widest node measured (a set's property, not the first
     * file's), its network cards as fast as its links */
    if (!ninter)
        sf->p.inter_bw = sf->p.intra_bw / pn_intra;
    /* no curve inside one node: the node's links as fast as the widest node's network cards */
    if (!nintra)
        sf->p.intra_bw = sf->p.inter_bw * pow(pn_inter, sf->p.kappa);
    sf->p.nodes_lo = c.nodes_lo, sf->p.nodes_hi = c.nodes_hi;
    if (!(two && more)) /* not measured: 1 in the model, NaN in what it reports */
        sf->p.two_node = NAN;
    sf->determined |= DPAS_SCALEFIT_HOPS * (nnd + two + (nintra > 0) >= 2);
    free(c.g), free(cvs);
    sf->defined = isfinite(bestv);
    if (!sf->defined)
        snprintf(sf->reason, sizeof sf->reason, "the nccl model's fit did not converge");
    return 0;
}

/* ---- anchoring and leave one scale out ------------------------------------------------------ */

/* How fast a curve's departure from the model fades with the distance between scales: half at
 * ln 4 (4x the ranks, or 4x the ranks per node). */
#define ANCHOR_FADE 0.5

double dpas__ncclm_anchored(const dpas_nccl_params *p, const dpas_curve *const *cvs, size_t n,
                            double bytes, double ranks, double per_node)
{
    if (ranks <= 1)
        return 0;
    int coll = n ? cvs[0]->collective : DPAS_COLL_ALL_REDUCE;
    double t = dpas__ncclm_time(p, coll, bytes, ranks, per_node);
    double wsum = 0, acc = 0;
    for (size_t j = 0; j < n; j++) {
        const dpas_curve *cv = cvs[j];
        if (cv->ranks < 2 || !cv->n)
            continue;
        double x = bytes;
        if (x < (double)cv->bytes[0])
            x = (double)cv->bytes[0];
        if (x > (double)cv->bytes[cv->n - 1])
            x = (double)cv->bytes[cv->n - 1];
        double te = dpas__curve_empirical(cv, x);
        double tm = dpas__ncclm_time(p, coll, x, (double)cv->ranks, (double)cv->per_node);
        if (!(te > 0) || !(tm > 0))
            continue;
        double w = exp(-ANCHOR_FADE * dpas__scale_distance(ranks, per_node, (double)cv->ranks,
                                                           (double)cv->per_node));
        acc += w * log(te / tm);
        wsum += w;
    }
    if (wsum > 1)
        acc /= wsum;
    return t * exp(acc);
}

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

double dpas__median_sort(double *v, size_t n)
{
    if (!n)
        return NAN;
    qsort(v, n, sizeof *v, cmp_dbl);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static double quantile_of(double *v, size_t n, double q) /* v sorted */
{
    if (!n)
        return NAN;
    double pos = q * (double)(n - 1);
    size_t i = (size_t)pos;
    return i + 1 < n ? v[i] + (v[i + 1] - v[i]) * (pos - (double)i) : v[n - 1];
}

int dpas__ncclm_loro(const dpas_curve *const *given, size_t n, int coll, dpas_scale_fit *sf)
{
    sf->loro_points = 0;
    sf->loro_median = sf->loro_max = sf->loro_q90 = sf->loro_distance = NAN;
    size_t total = 0;
    for (size_t j = 0; j < n; j++)
        total += given[j]->n;
    const dpas_curve **rest = malloc((n ? n : 1) * sizeof *rest);
    const dpas_curve **cvs = malloc((n ? n : 1) * sizeof *cvs);
    double *rel = malloc((total ? total : 1) * sizeof *rel);
    double *lg = malloc((total ? total : 1) * sizeof *lg);
    double *dist = malloc((total ? total : 1) * sizeof *dist);
    if (!rest || !cvs || !rel || !lg || !dist) {
        free(rest), free(cvs), free(rel), free(lg), free(dist);
        return DPAS_ENOMEM;
    }
    if (n) /* in the canonical order: which scales are left out, and the sums, are the set's */
        memcpy(cvs, given, n * sizeof *cvs);
    dpas__curves_sort(cvs, n);
    size_t m = 0, scales = 0, seen = 0;
    int rc = 0;
    for (size_t s = 0; s < n; s++) {
        bool first = true;
        for (size_t j = 0; j < s; j++)
            first &= !(cvs[j]->ranks == cvs[s]->ranks && cvs[j]->per_node == cvs[s]->per_node);
        scales += first;
    }
    /* each scale left out once (at its first curve); beyond LORO_SCALES, every k-th of them, so
     * that the refits stay bounded whatever the files hold */
    size_t every = (scales + LORO_SCALES - 1) / LORO_SCALES;
    for (size_t s = 0; s < n && !rc; s++) {
        bool first = true;
        for (size_t j = 0; j < s; j++)
            first &= !(cvs[j]->ranks == cvs[s]->ranks && cvs[j]->per_node == cvs[s]->per_node);
        if (!first || seen++ % every)
            continue;
        size_t nr = 0;
        for (size_t j = 0; j < n; j++)
            if (!(cvs[j]->ranks == cvs[s]->ranks && cvs[j]->per_node == cvs[s]->per_node))
                rest[nr++] = cvs[j];
        if (!nr)
            continue;
        dpas_scale_fit q = {0};
        if ((rc = dpas__ncclm_fit(rest, nr, coll, &q)) || !q.defined)
            continue;
        /* a scale whose bandwidth kind (inside one node, across nodes) the others never
         * measured is a guess, flagged and widened where it is asked; it says nothing of how
         * well the model transfers */
        bool one = cvs[s]->per_node >= cvs[s]->ranks;
        if (!(q.determined & (one ? DPAS_SCALEFIT_INTRA : DPAS_SCALEFIT_INTER)))
            continue;
        /* likewise a scale in a regime (one node, 2 nodes, more) none of the others measured:
         * such a transfer is banded apart (query.c), not by these errors */
        dpas_net_regime rg = dpas__ncclm_regime((double)cvs[s]->ranks, (double)cvs[s]->per_node);
        bool measured = false;
        for (size_t j = 0; j < nr; j++)
            measured |= dpas__ncclm_regime((double)rest[j]->ranks, (double)rest[j]->per_node) == rg;
        if (!measured)
            continue;
        double d = INFINITY;
        for (size_t j = 0; j < nr; j++)
            d = fmin(d, dpas__scale_distance((double)cvs[s]->ranks, (double)cvs[s]->per_node,
                                             (double)rest[j]->ranks, (double)rest[j]->per_node));
        for (size_t j = 0; j < n; j++) {
            const dpas_curve *cv = cvs[j];
            if (!(cv->ranks == cvs[s]->ranks && cv->per_node == cvs[s]->per_node))
                continue;
            for (size_t i = 0; i < cv->n; i++) {
                double t = dpas__ncclm_anchored(&q.p, rest, nr, (double)cv->bytes[i],
                                                (double)cv->ranks, (double)cv->per_node);
                if (!(t > 0))
                    continue;
                rel[m] = fabs(t / cv->seconds[i] - 1);
                lg[m] = fabs(log(t / cv->seconds[i]));
                dist[m++] = d;
            }
        }
    }
    if (!rc && m) {
        sf->loro_points = m;
        sf->loro_median = dpas__median_sort(rel, m);
        sf->loro_max = rel[m - 1];
        qsort(lg, m, sizeof *lg, cmp_dbl);
        sf->loro_q90 = quantile_of(lg, m, 0.9);
        sf->loro_distance = dpas__median_sort(dist, m);
    }
    free(rest), free(cvs), free(rel), free(lg), free(dist);
    return rc;
}
