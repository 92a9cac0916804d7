/* Sweeps and their plot: placeholder while the library's sweep analysis lands. */
#include "serve.h"

void srv_api_sweep(srv_request *rq, srv_response *r)
{
    (void)rq;
    srv_fail(r, 404, DPAS_ENOENT, "path", "not yet");
}

void srv_api_plot(srv_request *rq, srv_response *r)
{
    (void)rq;
    srv_fail(r, 404, DPAS_ENOENT, "path", "not yet");
}
