/* Budgets a request is held to before its work begins. The bytes of its inputs are capped where
 * they arrive (server.c: the URL, the body); the rows of its answer here, counted from the
 * inputs before anything is computed, so that a request over the budget costs a count, not the
 * work: one 255 KiB calibrate body of 1,766 tests with 150 sizes to predict used to cost 4 s of
 * CPU and answer 92 MB. Its CPU time is capped by the heavy lane (lane.c). */
#include "serve.h"

#include <string.h>

int srv_budget_calibrate(const srv_request *rq, const char *collective, int64_t ranks,
                         size_t npredict, srv_response *r)
{
    dpas_nccl_log *log = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    /* reading is linear in the body (at most SRV_MAX_BODY); fitting is what the rows bound */
    if (dpas_nccl_read(rq->body, rq->body_len, "request body", collective, ranks, &log, &err)) {
        srv_error(r, srv_status_of(err.code), &err);
        return -1;
    }
    size_t tests = log->ntests;
    dpas_nccl_log_free(log);
    /* each test answers 3 fits and one prediction per size asked for */
    if (npredict > SRV_MAX_ROWS || tests > SRV_MAX_ROWS / (3 + npredict)) {
        srv_fail(r, 422, DPAS_ERANGE, "body",
                 "the answer would have %zu rows (%zu tests x (3 fits + %zu predictions)), over the "
                 "server's limit of %d rows per request (dpas calibrate on the command line has no "
                 "such limit)",
                 tests * (3 + npredict), tests, npredict, SRV_MAX_ROWS);
        return -1;
    }
    return 0;
}
