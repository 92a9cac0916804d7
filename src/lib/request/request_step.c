/* SPDX-License-Identifier: Apache-2.0 */
/* A step request's own options: tokens (or global_batch and sequence), mfu, bucket_bytes,
 * precision and the ZeRO stage, checked once for every front end. */
#include "request_inputs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int count_key(dpas_request *rq, dpas_key k, uint64_t *out, dpas_error *err)
{
    const char *t = text_of(rq, k), *name = dpas_key_name(k);
    if (!t)
        return 0;
    return dpas__parse_count_positive(name, t, out, err);
}

/* "0.45" or "45%": a fraction in (0, 1]. */
static int mfu_key(dpas_request *rq, double *out, dpas_error *err)
{
    const char *t = text_of(rq, DPAS_KEY_MFU);
    char q[96], *end;
    if (!t)
        return 0;
    errno = 0;
    double v = strtod(t, &end);
    bool pct = end != t && *end == '%';
    if (pct)
        end++, v /= 100;
    if (end == t || *end || errno || t[0] == ' ' || !isfinite(v))
        return dpas__fail(err, DPAS_EPARSE, "mfu",
                          "mfu must be a fraction (0.45) or a percentage (45%%), got %s",
                          dpas__quote(t, q, sizeof q));
    if (!(v > 0 && v <= 1))
        return dpas__fail(err, DPAS_EINVAL, "mfu", "mfu must be in (0, 1] (0%% to 100%%), got %s",
                          dpas__quote(t, q, sizeof q));
    *out = v;
    return 0;
}

/* The registry carries each accelerator's dense FP16/BF16 peak, and nothing else. */
static int precision_key(dpas_request *rq, dpas_error *err)
{
    const char *t = text_of(rq, DPAS_KEY_PRECISION);
    char q[96];
    if (!t)
        return 0;
    if (text_of(rq, DPAS_KEY_COMPUTE_RATE))
        return dpas__fail(err, DPAS_EINVAL, "precision",
                          "give precision or compute_rate, not both (compute_rate is the peak "
                          "FLOP/s of the precision the step computes in)");
    if (!dpas__strcasecmp(t, "bf16") || !dpas__strcasecmp(t, "fp16")) /* FP16 as fp16 */
        return 0;
    return dpas__fail(err, DPAS_EINVAL, "precision",
                      "precision %s: the registry carries each accelerator's dense bf16/fp16 "
                      "peak only; for another precision give compute_rate (its peak FLOP/s per "
                      "accelerator)",
                      dpas__quote(t, q, sizeof q));
}

/* What dpas does not model, asked for by name: refused with why, never ignored. */
static const struct {
    const char *name, *why;
} not_modelled[] = {
    {"tensor", "tensor parallelism is not modelled: dpas times the exchange between data-parallel "
               "replicas; a replica's accelerators only divide its compute, and their all-reduces "
               "inside each layer are not timed"},
    {"pipeline", "pipeline parallelism is not modelled: its bubble and the sends between stages "
                 "are not timed (a replica's accelerators only divide its compute)"},
    {"expert", "expert parallelism is not modelled: the all-to-all of tokens between experts is "
               "not timed, and the compute counts every parameter (6 x P x tokens), not the "
               "active ones"},
    {"context", "context parallelism is not modelled: the exchange of keys and values between "
                "the ranks of a sequence is not timed"},
    {"cpu", "offload is not modelled: the host link and the optimizer's time on the CPU "
            "(ZeRO-Offload) are not timed"},
    {"nvme", "offload is not modelled: the NVMe and host links (ZeRO-Infinity) are not timed"},
};

/* Stragglers, asked for by any value but none: refused with why. */
static int refuse_stragglers(dpas_request *rq, dpas_error *err)
{
    const char *t = text_of(rq, DPAS_KEY_STRAGGLERS);
    char q[96];
    if (!t || !dpas__strcasecmp(t, "none"))
        return 0;
    return dpas__fail(err, DPAS_EINVAL, "stragglers",
                      "stragglers %s: stragglers are not modelled: every replica is taken to "
                      "finish its forward and backward together; a slow replica delays every "
                      "synchronous step and that delay is not timed (expected none)",
                      dpas__quote(t, q, sizeof q));
}

/* memory and step: the optimizer, activation recomputation, the micro-batch and (memory) the
 * sequence. */
static int memory_keys(dpas_request *rq, dpas_error *err)
{
    dpas_request_opts *o = &rq->opts;
    const char *opt = text_of(rq, DPAS_KEY_OPTIMIZER), *rc_ = text_of(rq, DPAS_KEY_RECOMPUTE);
    char q[96];
    int rc;
    if (rq->analysis != DPAS_ANALYSIS_MEMORY && rq->analysis != DPAS_ANALYSIS_STEP)
        return 0;
    if ((rc = dpas_optimizer_find(opt ? opt : "adam", &o->optimizer, err)))
        return rc;
    if (rc_ && (o->recompute = dpas_recompute_from_name(rc_)) < 0)
        return dpas__fail(err, DPAS_EINVAL, "recompute",
                          "recompute %s: unknown; expected none, selective or full",
                          dpas__quote(rc_, q, sizeof q));
    if ((rc = count_key(rq, DPAS_KEY_MICRO_BATCH, &o->micro_batch, err)))
        return rc;
    if (rq->analysis == DPAS_ANALYSIS_MEMORY &&
        (rc = count_key(rq, DPAS_KEY_SEQUENCE, &o->sequence, err)))
        return rc;
    rq->step.optimizer = o->optimizer;
    rq->step.recompute = o->recompute;
    rq->step.micro_batch = o->micro_batch;
    return 0;
}

static int refuse_not_modelled(dpas_request *rq, dpas_error *err)
{
    const char *par = text_of(rq, DPAS_KEY_PARALLELISM), *off = text_of(rq, DPAS_KEY_OFFLOAD);
    char **items = NULL, q[96];
    size_t n = 0;
    int rc = par ? dpas__request_split("parallelism", par, &items, &n, err) : 0;
    for (size_t i = 0; !rc && i < n; i++) {
        if (!dpas__strcasecmp(items[i], "data"))
            continue;
        rc = dpas__fail(err, DPAS_EINVAL, "parallelism",
                        "parallelism %s: unknown; expected data (tensor, pipeline, expert and "
                        "context are known and not modelled)",
                        dpas__quote(items[i], q, sizeof q));
        for (size_t k = 0; k < 4; k++)
            if (!dpas__strcasecmp(items[i], not_modelled[k].name))
                rc = dpas__fail(err, DPAS_EINVAL, "parallelism", "parallelism %s: %s", items[i],
                                not_modelled[k].why);
    }
    if (items)
        free(items[0]);
    free(items);
    if (rc || !off || !dpas__strcasecmp(off, "none"))
        return rc;
    for (size_t k = 4; k < sizeof not_modelled / sizeof not_modelled[0]; k++)
        if (!dpas__strcasecmp(off, not_modelled[k].name))
            return dpas__fail(err, DPAS_EINVAL, "offload", "offload %s: %s", off,
                              not_modelled[k].why);
    return dpas__fail(err, DPAS_EINVAL, "offload",
                      "offload %s: unknown; expected none (cpu and nvme are known and not "
                      "modelled)",
                      dpas__quote(off, q, sizeof q));
}

int dpas__step_opts(dpas_request *rq, dpas_error *err)
{
    dpas_step_opts *o = &rq->step;
    int rc;
    const char *bucket = text_of(rq, DPAS_KEY_BUCKET_BYTES), *zero = text_of(rq, DPAS_KEY_ZERO);
    if ((rc = refuse_not_modelled(rq, err)) || (rc = refuse_stragglers(rq, err)) ||
        (rc = memory_keys(rq, err)))
        return rc;
    if (rq->analysis == DPAS_ANALYSIS_COST && zero) { /* cost's rows add ZeRO's gathers */
        int64_t z;
        if ((rc = dpas_parse_int("zero", zero, &z, err)))
            return rc;
        if (z < 0 || z > 3)
            return dpas__fail(err, DPAS_EINVAL, "zero", "zero must be 0, 1, 2 or 3, got %lld",
                              (long long)z);
        rq->opts.cost.zero = (int)z;
    }
    if (rq->analysis != DPAS_ANALYSIS_STEP)
        return 0;
    if ((rc = count_key(rq, DPAS_KEY_TOKENS, &o->tokens, err)) ||
        (rc = count_key(rq, DPAS_KEY_GLOBAL_BATCH, &o->global_batch, err)) ||
        (rc = count_key(rq, DPAS_KEY_SEQUENCE, &o->sequence, err)) ||
        (rc = mfu_key(rq, &o->mfu, err)) ||
        (bucket && (rc = dpas_parse_size_bytes("bucket_bytes", bucket, &o->bucket_bytes, err))) ||
        (rc = precision_key(rq, err)))
        return rc;
    if (zero) {
        int64_t z;
        if ((rc = dpas_parse_int("zero", zero, &z, err)))
            return rc;
        if (z < 0 || z > 3)
            return dpas__fail(err, DPAS_EINVAL, "zero", "zero must be 0, 1, 2 or 3, got %lld",
                              (long long)z);
        o->zero = (int)z;
    }
    if (o->tokens && (o->global_batch || o->sequence))
        return dpas__fail(err, DPAS_EINVAL, "tokens",
                          "give tokens or global_batch and sequence, not both");
    if (!o->tokens && !o->global_batch && !o->sequence)
        return dpas__request_missing(rq, DPAS_KEY_TOKENS, err,
                                     "tokens is required (tokens per step over every replica), "
                                     "or global_batch and sequence");
    if (!o->tokens && !o->sequence)
        return dpas__request_missing(rq, DPAS_KEY_SEQUENCE, err,
                                     "global_batch needs sequence (tokens per sequence)");
    if (!o->tokens && !o->global_batch)
        return dpas__request_missing(rq, DPAS_KEY_GLOBAL_BATCH, err,
                                     "sequence needs global_batch (sequences per step)");
    return 0;
}
