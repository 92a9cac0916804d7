/* SPDX-License-Identifier: Apache-2.0 */
/* dpas-measure's parts, by concept: options (options.c), where the ranks are (layout.c),
 * gradients and attacks (gradients.c), the wire format (wire.c), one step of a schedule
 * (step.c), the prediction (predict.c), the single-process check (verify.c), the calibration
 * sweep (sweep.c) and the report, typed rows rendered in one place (report.c). main is in
 * measure.c. Every function returns its status once, at its end. */
#ifndef DPAS_MEASURE_H
#define DPAS_MEASURE_H

#include "dpas/dpas.h"

#include <mpi.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Exit status: 0 ok, 1 bad input, 3 a check failed. */
enum { MEASURE_OK = 0, MEASURE_BAD = 1, MEASURE_CHECK = 3 };

typedef enum attack_kind {
    ATTACK_SIGNFLIP,
    ATTACK_SCALED,
    ATTACK_ALIE,
    ATTACK_INF, /* every coordinate +-Inf (the honest coordinate's sign) */
    ATTACK_NAN  /* the honest gradient with its last coordinate NaN */
} attack_kind;
typedef enum out_format { OUT_TEXT, OUT_JSON, OUT_CSV } out_format;

typedef struct opts {
    uint64_t params;
    int width; /* bytes per element on the wire: 4 fp32, 2 bf16 */
    const dpas_rule *rule;
    dpas_schedule_id schedule;
    int64_t f;
    int warmup, iters;
    int64_t byzantine;
    attack_kind attack;
    double attack_scale;
    uint64_t seed;
    int verify; /* 1, 0, or -1: when all gradients fit in 1 GiB */
    out_format format;
    double check_bytes; /* percent; < 0: no check */
    int64_t cc_iterations;
    uint64_t sweep_min, sweep_max; /* bytes; sweep_max 0: no sweep */
    const char *calibration, *intra_calibration;
    int network_model; /* dpas_netmodel_kind */
    int help;
} opts;

/* Where the ranks are: hosts found by MPI (ranks sharing memory share a host). The schedule
 * runs hierarchically when several hosts each hold the same number (> 1) of ranks. */
typedef struct layout {
    int rank, nranks;
    int hosts, per_host; /* per_host 0 when hosts hold different numbers of ranks */
    int host, local;     /* this rank's host and its index there */
    int hierarchical;
    MPI_Comm node, cross; /* the ranks of this host; the ranks with this local index */
    int *world_of;        /* hierarchical all-gather order -> world rank (nranks entries) */
} layout;

/* ---- options.c ---- */
void measure_say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int options_parse(int argc, char **argv, int nranks, opts *o);
const char *attack_name(const opts *o);

/* ---- layout.c ---- */
int layout_open(layout *L);
void layout_close(layout *L);

/* ---- gradients.c ---- */
void gradient_of(const opts *o, int nranks, int r, size_t j0, size_t j1, float *out);

/* ---- wire.c ---- */
typedef struct wire {
    int width;
    MPI_Datatype type;
    MPI_Op sum;
} wire;
void wire_open(wire *w, int width);
void wire_close(wire *w);
void wire_pack(const wire *w, const float *in, size_t n, void *out);
void wire_unpack(const wire *w, const void *in, size_t n, float *out);
float wire_round(const wire *w, float v); /* v as it arrives after the wire */

/* ---- step.c ---- */
typedef struct step_ctx step_ctx;
int step_open(const opts *o, const layout *L, step_ctx **out);
int step_run(step_ctx *c, double *compute_s);
const float *step_aggregate(const step_ctx *c);
/* Why the step failed: the same error on every rank (step.c agrees on it). */
const dpas_error *step_error(const step_ctx *c);
void step_close(step_ctx *c);

/* ---- the result, as typed rows ---- */
typedef struct rank_row {
    double predicted, measured; /* bytes per step; measured NAN when the transport hides them */
    double t_med, t_min, t_max, c_med; /* seconds */
    double checksum_hi, checksum_lo;
} rank_row;

typedef struct link_fit { /* one fit from a calibration file, as used */
    const char *file;
    char collective[32];
    int64_t ranks;
    double alpha, beta; /* s, bytes/s */
} link_fit;

typedef struct prediction {
    int have;           /* a time was predicted */
    const char *why;    /* when not: why (NULL: no --calibration) */
    char why_buf[4608]; /* a why written here (a path of up to PATH_MAX and a fit's reason) */
    dpas_topology topo;
    link_fit inter, intra;      /* the alpha-beta lines; intra.file NULL when flat */
    char model[64];             /* the network model that answered */
    int extrapolated, rescaled; /* outside the measured sizes; at another rank count */
    double network_s;           /* the model's time of the schedule's communication */
    int basis;                  /* its dpas_time_basis (NONE from alpha-beta lines) */
    double band_lo, band_hi;    /* where network_s can be, s (NaN when no band) */
} prediction;

typedef struct summary {
    int visible, consistent, verified; /* verified -1: not verified */
    double ratio_min, ratio_max;       /* measured / predicted bytes */
    double time_median_s;              /* the slowest rank's median step */
    double compute_median_s;           /* the slowest rank's median compute */
    double predicted_time_s;           /* network_s + compute_median_s, NAN without a prediction */
    double predicted_lo_s, predicted_hi_s;     /* the network's band + compute_median_s, or NAN */
    int inside_band;                           /* time_median_s within them; -1: no band */
    double algbw, busbw;                       /* GB/s, nccl-tests' terms */
    double max_abs_diff, dist_mean, dist_rule; /* NAN when not computed */
    int have_dist; /* the distances were computed (a NaN or an Inf gradient makes dist_mean NaN) */
    int bytes_ok;
    char checksum[20];
} summary;

typedef struct report {
    const opts *o;
    const layout *L;
    size_t d;
    double predicted_bytes;
    const rank_row *rows; /* nranks */
    prediction pred;
    summary sum;
} report;

/* ---- predict.c ---- */
int predict_bytes(const opts *o, int nranks, double *bytes);
int predict_time(const opts *o, const layout *L, prediction *p);

/* ---- verify.c ---- */
void verify_aggregate(const opts *o, int nranks, const float *agg, summary *s);

/* ---- report.c ---- */
int report_render(const report *r, FILE *out);

/* ---- sweep.c ---- */
int sweep_main(const opts *o, const layout *L);

#endif
