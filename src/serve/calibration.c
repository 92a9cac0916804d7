/* A calibration in a request: the "calibration" part of a multipart body (the nccl-tests output a
 * user pasted or uploaded) and the network_model key, read as `dpas cost --calibration FILE
 * --network-model M` reads them: the inter-node links from the log's AllReduce alpha-beta line,
 * and the network model whose measured curves give the flat times. The log is read from the
 * request and never kept: the server stores nothing between requests. */
#include "serve.h"

#include <stdio.h>
#include <string.h>

int srv_calibration_load(srv_request *rq, srv_response *r, srv_calibration *cal)
{
    memset(cal, 0, sizeof *cal);
    cal->kind = DPAS_NETMODEL_DEFAULT;
    dpas_error err;
    memset(&err, 0, sizeof err);
    size_t n = 0;
    const srv_part *p = srv_part_get(rq, "calibration", &n);
    const char *model = srv_query_get(rq->query, "network_model");
    if (model && !p) {
        srv_fail(r, 400, DPAS_EINVAL, "network_model",
                 "network_model needs a calibration: an nccl-tests log as the \"calibration\" part "
                 "of a multipart/form-data body");
        return -1;
    }
    if (!p)
        return 0;
    if (n > 1) {
        srv_fail(r, 400, DPAS_EINVAL, "calibration",
                 "%zu calibration parts: give one nccl-tests log (one file per calibration)", n);
        return -1;
    }
    if (model && dpas_netmodel_kind_parse(model, &cal->kind, &err)) {
        snprintf(err.field, sizeof err.field, "network_model"); /* the query's key, not a flag */
        srv_error(r, 400, &err);
        return -1;
    }
    cal->source = p->filename ? p->filename : "calibration";
    if (dpas_netmodel_from_text(p->data, p->len, cal->source, NULL, 0, &cal->net, &err)) {
        srv_error(r, srv_status_of(err.code), &err);
        return -1;
    }
    /* the ring schedules' collective first: an AllReduce curve, else the first */
    const dpas_curve *cv = &cal->net->curves[0];
    for (size_t i = 0; i < cal->net->ncurves; i++)
        if (cal->net->curves[i].collective == DPAS_COLL_ALL_REDUCE) {
            cv = &cal->net->curves[i];
            break;
        }
    const dpas_fit *f = &cv->fits[DPAS_NETMODEL_ALPHA_BETA - 1];
    if (!f->defined) {
        srv_fail(r, 400, DPAS_EINVAL, "calibration", "%s: %s", cal->source, f->reason);
        srv_calibration_free(cal);
        return -1;
    }
    cal->links.inter_bandwidth = f->beta;
    cal->links.inter_latency = f->alpha;
    return 0;
}

void srv_calibration_free(srv_calibration *cal)
{
    dpas_netmodel_free(cal->net);
    cal->net = NULL;
}
