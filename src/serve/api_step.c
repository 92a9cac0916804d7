/* SPDX-License-Identifier: Apache-2.0 */
/* GET/POST /api/v1/step: the request parser's step, rendered by the library (dpas step -o json). */
#include "serve.h"

#include <string.h>

void srv_api_step(srv_request *rq, srv_response *r)
{
    dpas_request *req = srv_request_of(rq, r, DPAS_ANALYSIS_STEP);
    if (!req)
        return;
    dpas_step_view view = {
        .format = rq->format, .units = DPAS_UNITS_SI, .label = dpas_request_label(req)};
    dpas_step *st = NULL;
    dpas_error err;
    memset(&err, 0, sizeof err);
    if (dpas_request_step(req, &st, &err))
        srv_error(r, srv_status_of(err.code), &err);
    else
        srv_json(r, dpas_render_step(st, &view, &err), &err);
    dpas_step_free(st);
    dpas_request_free(req);
}
