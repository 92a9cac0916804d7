/* SPDX-License-Identifier: Apache-2.0 */
/* dpas/step.h — the training step around the exchange: what a robust rule adds to a step.
 * Part of the public API; include "dpas/dpas.h".
 *
 * The step of one data-parallel job: the forward and backward compute (6 x P x tokens FLOPs at
 * the accelerators' peak times a model-FLOPs utilisation), the exchange of each rule x schedule
 * from the time model of `dpas cost` (the collectives each schedule runs), bucketed as PyTorch
 * DDP buckets gradients (the buckets exchanged while the backward still runs, the last one
 * after it), the robust rule's own compute after the last bucket (it needs the exchanged
 * values: it cannot overlap), and ZeRO's parameter all-gathers. Not modelled: tensor, pipeline
 * and expert parallelism, offload, stragglers, the optimizer step and data loading. */
#ifndef DPAS_STEP_H
#define DPAS_STEP_H

#include "dpas/cost.h"
#include "dpas/inventory.h"

#ifdef __cplusplus
extern "C" {
#endif

/* PyTorch DDP's default bucket_cap_mb = 25 (MiB: 25 x 2^20 bytes). */
#define DPAS_STEP_BUCKET_BYTES (25ull << 20)
/* The model-FLOPs utilisation assumed when none is given, and its band: the Llama 3 paper's
 * BF16 MFU of 38% to 43% on 8K to 16K H100s (Llama Team, "The Llama 3 Herd of Models", 2024,
 * Table 4). */
#define DPAS_STEP_MFU 0.40
#define DPAS_STEP_MFU_LO 0.38
#define DPAS_STEP_MFU_HI 0.43

typedef struct dpas_step_opts {
    dpas_cost_opts cost;   /* rules (NULL: every default rule), schedules, iterations, f, a
                              calibration; compute_rate: the peak FLOP/s per accelerator (0: the
                              fleet's accelerator's dense FP16/BF16 peak); memory_bandwidth: as
                              cost (0: its HBM) */
    uint64_t tokens;       /* per step, over every replica; 0: global_batch x sequence */
    uint64_t global_batch; /* sequences per step, over every replica (with sequence) */
    uint64_t sequence;     /* tokens per sequence */
    double mfu;            /* model-FLOPs utilisation in (0, 1]; 0: DPAS_STEP_MFU, assumed */
    uint64_t bucket_bytes; /* gradient bytes per bucket; 0: DPAS_STEP_BUCKET_BYTES */
    int zero;              /* the ZeRO stage, 0 to 3 */
    /* memory: the optimizer (NULL: adam), activation recomputation (full also runs the forward
     * twice: 8 x P x tokens FLOPs), sequences per replica per forward (0: the replica's share
     * of the batch, rounded up), the workload's shape (NULL: activations not counted, and
     * no_shape_why says why) */
    const dpas_optimizer *optimizer;
    dpas_recompute recompute;
    uint64_t micro_batch;
    const dpas_model_shape *shape;
    const char *no_shape_why;
} dpas_step_opts;

/* How a rule composes with ZeRO's sharded gradients (static text). */
DPAS_API const char *dpas_step_zero_composition(const dpas_rule *rule);

/* One rule under one schedule. Times are seconds per step; NAN when not known. */
typedef struct dpas_step_row {
    const dpas_rule *rule;
    dpas_schedule_id schedule;
    int realisable;
    const char *why;             /* why not realisable (static), or NULL */
    dpas_bytes bytes_per_worker; /* the schedule's bytes plus ZeRO's parameter gathers, exact */
    double exchange_s;           /* the schedule's collectives, bucket by bucket (time model) */
    const char *exchange_model;  /* as dpas_cost_row.time_model (static) */
    dpas_time_basis exchange_basis;
    double exchange_lo_s, exchange_hi_s; /* its band (NAN: the model gives none) */
    double zero_s;                       /* ZeRO's parameter all-gathers beyond the schedule */
    double exposed_s; /* the exchange the backward does not hide (the last bucket's at least) */
    double rule_s;    /* the rule's own compute, after the last bucket (roofline) */
    const char *rule_bound;      /* "compute" or "memory" (static), NULL without rule_s */
    double step_s;               /* compute + exposed + zero + rule */
    double step_lo_s, step_hi_s; /* with the MFU's band and the exchange's band */
    double added_s;              /* step_s - the baseline's (the mean under allreduce) */
    double share;                /* added_s / step_s: the share of the step robustness adds */
} dpas_step_row;

#define DPAS_STEP_MAX_NOTES 10

typedef struct dpas_step {
    dpas_step_row *rows; /* rule-major, schedules in dpas_schedule_id order */
    size_t nrows, unrealisable;
    int64_t dp_degree, accelerators, iterations;
    uint64_t parameters, tokens;
    double flops;                      /* 6 x parameters x tokens + attention_flops */
    double peak_flops;                 /* per accelerator */
    const char *peak_source;           /* "compute_rate" or the accelerator's registry path */
    double mfu, mfu_lo, mfu_hi;        /* mfu_lo/hi: the band (mfu itself when given) */
    const char *mfu_basis;             /* "given" or "assumed" (static) */
    const char *mfu_source;            /* where an assumed MFU comes from (static), or NULL */
    double compute_s;                  /* forward + backward: flops / (accelerators x peak x mfu) */
    double forward_s, backward_s;      /* 1/3 and 2/3 of it (2PT and 4PT FLOPs) */
    double compute_lo_s, compute_hi_s; /* at mfu_hi and mfu_lo */
    uint64_t bucket_bytes;
    uint64_t bucket_parameters; /* parameters per full bucket */
    uint64_t buckets;           /* ceil(parameters / bucket_parameters) */
    int zero;
    dpas_bytes gradient_bytes, weight_bytes; /* one replica's (weights: the gradient width when
                                               the scenario gives no weight width) */
    double baseline_s;                       /* the mean under allreduce, at this ZeRO stage */
    dpas_bytes baseline_bytes;               /* ... its bytes per worker */
    int have_times;                          /* exchange times are known (links or calibration) */
    size_t nnotes;
    char notes[DPAS_STEP_MAX_NOTES][400];
    /* one replica's memory at this ZeRO stage: the state, the activations of one micro-batch
     * and where it would fit (have_memory 0: the fleet has no known accelerator) */
    int have_memory;
    dpas_memory memory;
    dpas_recompute recompute;
    double flops_factor; /* 6, or 8 with full recomputation (the forward runs twice) */
    /* attention's score and value products where the workload has a shape (0 without one):
     * flops_factor x 2 x layers x sequence x hidden x tokens, as PaLM's MFU counts them */
    double attention_flops;
    uint64_t attention_sequence; /* the s it used: the sequence given, or the shape's */
} dpas_step;

/* The step of every rule x schedule for the scenario. *out is the caller's: dpas_step_free.
 * DPAS_EINVAL naming the option (tokens, mfu, bucket_bytes, zero, compute_rate) for a bad one,
 * or the scenario's field; tokens or global_batch x sequence is required ("tokens"). */
DPAS_API int dpas_step_compute(const dpas_scenario *s, const dpas_step_opts *o, dpas_step **out,
                               dpas_error *err);
DPAS_API void dpas_step_free(dpas_step *st);

/* How step rows are shown. */
typedef struct dpas_step_view {
    dpas_format format;
    dpas_units units;  /* text: human byte counts */
    int all;           /* text: the combinations that are not realisable too, with why */
    const char *label; /* the scenario's label, or NULL */
} dpas_step_view;

/* Text: the compute, the buckets, the baseline and the realisable rows; JSON: a document with
 * every field and row; CSV and markdown: every row and column. Caller owns the string
 * (dpas_free). */
DPAS_API char *dpas_render_step(const dpas_step *st, const dpas_step_view *v, dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
