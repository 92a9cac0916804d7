/* SPDX-License-Identifier: Apache-2.0 */
/* Budgets a request is held to before its answer is made. The bytes of its inputs are capped
 * where they arrive (server.c: the URL, the body); the rows of its answer here, counted before
 * they are computed, so that a request over the budget costs what it costs to read, not the
 * answer: one 255 KiB calibrate body of 1,766 tests with 150 sizes to predict used to cost 4 s
 * of CPU and answer 92 MB. Its CPU time is capped by the heavy lane (lane.c). */
#include "serve.h"

int srv_budget_calibrate(size_t tests, size_t npredict, srv_response *r)
{
    /* each test answers 3 fits and one prediction per size asked for */
    if (npredict > SRV_MAX_ROWS || tests > SRV_MAX_ROWS / (3 + npredict)) {
        srv_fail(
            r, 422, DPAS_ERANGE, "body",
            "the answer would have %zu rows (%zu tests x (3 fits + %zu predictions)), over the "
            "server's limit of %d rows per request (dpas calibrate on the command line has no "
            "such limit)",
            tests * (3 + npredict), tests, npredict, SRV_MAX_ROWS);
        return -1;
    }
    return 0;
}
