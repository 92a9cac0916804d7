/* SPDX-License-Identifier: Apache-2.0 */
/* Budgets a request is held to before its answer is made. The bytes of its inputs are capped
 * where they arrive (server.c: the URL, the body); the rows of its answer here, so that a
 * request over the budget costs what it costs to read, not the answer: one 255 KiB calibrate
 * body of 1,766 tests with 150 sizes to predict used to cost 4 s of CPU and answer 92 MB. Its
 * CPU time is capped by the heavy lane (lane.c), which runs every request that reads or fits a
 * calibration (srv_request_heavy). */
#include "serve.h"

int srv_budget_calibrate(const dpas_netmodel *m, size_t npredict, srv_response *r)
{
    /* every row the answer carries (dpas_render_netmodel): per test its own row, per fit of it
     * (DPAS_NETMODEL_KINDS) one row, its regimes and one residual per size; per test one
     * prediction per size asked for; per collective its nccl model. The sizes of a test are at
     * most DPAS_CALIBRATE_MAX_SIZES and the tests DPAS_CALIBRATE_MAX_CURVES: no overflow. */
    size_t tests = m->ncurves, fitrows = 0, residuals = 0, regimes = 0;
    for (size_t i = 0; i < tests; i++)
        for (int k = 0; k < DPAS_NETMODEL_KINDS; k++) {
            fitrows++;
            residuals += m->curves[i].n;
            regimes += m->curves[i].fits[k].nregimes;
        }
    size_t fixed = tests + fitrows + residuals + regimes + m->nscalefits;
    if (npredict > SRV_MAX_ROWS || fixed > SRV_MAX_ROWS ||
        (tests && npredict > (SRV_MAX_ROWS - fixed) / tests)) {
        srv_fail(r, 422, DPAS_ERANGE, "body",
                 "the answer would have %zu rows (%zu tests, %zu fits, %zu residuals, %zu "
                 "regimes, %zu nccl models and %zu tests x %zu predictions), over the server's "
                 "limit of %d rows per request (dpas calibrate on the command line has no such "
                 "limit)",
                 fixed + tests * npredict, tests, fitrows, residuals, regimes, m->nscalefits, tests,
                 npredict, SRV_MAX_ROWS);
        return -1;
    }
    return 0;
}
