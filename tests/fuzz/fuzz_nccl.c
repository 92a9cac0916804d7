/* nccl-tests output: never a crash; every fit has finite alpha >= 0 and beta > 0. */
#include "fuzz.h"

#include <math.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    dpas_calibration c[8];
    size_t n = 0;
    dpas_error e;
    if (dpas_calibrate_text((const char *)data, size, "fuzz", NULL, 0, c, 8, &n, &e) == 0) {
        for (size_t i = 0; i < n; i++)
            PROPERTY(isfinite(c[i].alpha) && c[i].alpha >= 0 && isfinite(c[i].beta) && c[i].beta > 0 &&
                         c[i].ranks >= 2 && c[i].points >= 2,
                     "fit %zu: alpha %g beta %g", i, c[i].alpha, c[i].beta);
        char *t = dpas_render_calibration(c, n, DPAS_FORMAT_JSON, &e);
        dpas_free(t);
    } else {
        PROPERTY(e.message[0], "an error without a message");
    }
    return 0;
}
