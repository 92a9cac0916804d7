/* dpas/calibrate.h — alpha and beta fitted from nccl-tests output
 * Part of the public API; include "dpas/dpas.h". */
#ifndef DPAS_CALIBRATE_H
#define DPAS_CALIBRATE_H

#include "dpas/base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- calibration from nccl-tests ---------------------------------------------------------------- */

typedef struct dpas_calibration {
    char collective[32];  /* "all_reduce" or "all_gather" */
    int64_t ranks;
    size_t points;
    double alpha;         /* seconds per latency step */
    double beta;          /* bytes/s per link */
    double r2;            /* of the fit of time against size */
    double max_rel_residual;
} dpas_calibration;

/* Fit alpha and beta from nccl-tests output (its default table, or CSV with a header naming at
 * least size and time columns): time = steps x alpha + factor x size / beta, with nccl-tests'
 * factors (all_reduce: 2(n-1) steps, 2(n-1)/n; all_gather: n-1 steps, (n-1)/n of the total
 * size), by least squares on the relative error. One result per collective found (up to cap).
 * collective and ranks (0) override what the file says. Errors name the line. */
DPAS_API int dpas_calibrate_text(const char *text, size_t len, const char *origin,
                                 const char *collective, int64_t ranks, dpas_calibration *out,
                                 size_t cap, size_t *n, dpas_error *err);
DPAS_API int dpas_calibrate_file(const char *path, const char *collective, int64_t ranks,
                                 dpas_calibration *out, size_t cap, size_t *n, dpas_error *err);
/* The fits as a table: collective, ranks, points, alpha_s, beta_bytes_per_s, r2,
 * max_rel_residual. */
DPAS_API char *dpas_render_calibration(const dpas_calibration *c, size_t n, int format,
                                       dpas_error *err);

#ifdef __cplusplus
}
#endif
#endif
