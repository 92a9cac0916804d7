/* SPDX-License-Identifier: Apache-2.0 */
/* fuzz_multipart: multipart/form-data bodies with calibration parts, as `curl -F` or the page
 * sends nccl-tests logs to dpas serve. The input is a selector (one byte), the boundary parameter
 * of the Content-Type (up to the first newline) and the body (the rest). Each is taken:
 *   - by srv_parts_parse alone, under each of the four sets of names a route takes: an answer of
 *     0 splits the body into at most SRV_MAX_PARTS parts, each named "scenario" or "calibration"
 *     (a scenario at most once), each part's content a NUL-terminated run of the body's own
 *     bytes; a refusal is a 400 or 413 naming the body with a reason, never a 500;
 *   - by srv_request_heavy, which the server asks before it routes: whenever some route's split
 *     finds a calibration part the request is heavy (so no calibration is ever fitted on an I/O
 *     thread, outside --cpu-limit);
 *   - when the selector's top four bits are set (one selector in 16: routing fits a calibration,
 *     about a thousand times the split's cost, so most runs split only and the split is fuzzed
 *     by the millions; with the top bit alone half the runs routed and a loaded 2-core machine
 *     made 20 executions a second), by srv_route on
 *     calibrate, cost, sweep, plot.svg or memory (which takes no calibration; the selector's
 *     low bits choose):
 *     the parts read and fitted (dpas_netmodel_from_texts through the request), the row budget
 *     counted; the answer has a status the server documents, never a 500, and a JSON answer is
 *     strict JSON, an error one an error object with a reason.
 * Besides: no crash, no leak, no undefined behaviour (ASan, UBSan), no hang (libFuzzer's
 * timeout). */
#define _GNU_SOURCE /* memmem */
#include "fuzz.h"

#include <jansson.h>

#include "../../src/serve/serve.h"

static const dpas_registry *registry(void)
{
    static dpas_registry *reg;
    if (!reg) {
        dpas_error err;
        memset(&err, 0, sizeof err);
        if (dpas_registry_builtin(&reg, &err)) {
            fprintf(stderr, "fuzz_multipart: %s\n", err.message);
            abort();
        }
    }
    return reg;
}

static const char *const targets[] = {
    "/api/v1/calibrate",
    "/api/v1/calibrate?predict=1024,1048576",
    "/api/v1/cost?model=GPT3&fleet=Training_1K&dp_degree=8&gradient_bytes_per_param=bf16"
    "&checkpoint_bytes_per_param=14B",
    "/api/v1/sweep?model=GPT3&fleet=Training_1K&gradient_bytes_per_param=bf16"
    "&checkpoint_bytes_per_param=14B&dp_degree=8,16&rule=median&schedule=allgather&attr=time_s",
    "/api/v1/plot.svg?model=GPT3&fleet=Training_1K&gradient_bytes_per_param=bf16"
    "&checkpoint_bytes_per_param=14B&dp_degree=8,16&rule=median&schedule=allgather&attr=time_s",
    "/api/v1/memory?model=GPT3&fleet=Training_1K&dp_degree=8",
};

static void check_parts(const srv_request *rq, int st, const dpas_error *err, int ts, int tc)
{
    if (st) {
        PROPERTY((st == 400 || st == 413) && !strcmp(err->field, "body") && err->message[0],
                 "a refused body: status %d, field \"%s\", \"%s\"", st, err->field, err->message);
        return;
    }
    PROPERTY(rq->nparts <= SRV_MAX_PARTS, "%zu parts", rq->nparts);
    size_t scenarios = 0;
    for (size_t i = 0; i < rq->nparts; i++) {
        const srv_part *p = &rq->parts[i];
        int is_s = !strcmp(p->name, "scenario"), is_c = !strcmp(p->name, "calibration");
        PROPERTY((is_s && ts) || (is_c && tc), "part %zu is named \"%s\" (taken: %d %d)", i,
                 p->name, ts, tc);
        scenarios += (size_t)is_s;
        PROPERTY(p->len <= rq->body_len && p->data[p->len] == '\0',
                 "part %zu: %zu bytes of a %zu-byte body, not NUL-terminated", i, p->len,
                 rq->body_len);
        PROPERTY(!p->len || memmem(rq->body, rq->body_len, p->data, p->len),
                 "part %zu: its content is not a run of the body's bytes", i);
        PROPERTY(!p->filename || p->filename[0], "part %zu: an empty file name kept", i);
    }
    PROPERTY(scenarios <= 1, "%zu scenario parts", scenarios);
}

static void check_answer(const srv_response *r, int head)
{
    static const int known[] = {200, 400, 404, 413, 414, 422};
    int ok = 0;
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        ok |= r->status == known[i];
    PROPERTY(ok, "status %d is none the server documents here (or a 500): %.300s", r->status,
             r->body ? r->body : "");
    PROPERTY(r->type, "status %d without a type", r->status);
    PROPERTY(r->body || !r->len, "a length without a body");
    if (head || !r->len ||
        (strncmp(r->type, "application/json", 16) && strcmp(r->type, "application/problem+json")))
        return;
    json_error_t je;
    json_t *j = json_loadb(r->body, r->len, JSON_REJECT_DUPLICATES, &je);
    PROPERTY(j != NULL, "status %d: the body is not JSON (%s): %.300s", r->status, je.text,
             r->body);
    if (r->status >= 400)
        PROPERTY(json_is_string(json_object_get(j, "detail")) &&
                     json_string_length(json_object_get(j, "detail")) > 0 &&
                     json_integer_value(json_object_get(j, "status")) == r->status,
                 "status %d: a problem without its status or detail: %.300s", r->status, r->body);
    json_decref(j);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 2 || size > SRV_MAX_BODY)
        return 0; /* beyond the body limit: a 413 before it is read */
    const char *target = targets[(data[0] & 0x7f) % (sizeof targets / sizeof targets[0])];
    const char *p = (const char *)data + 1, *end = (const char *)data + size;
    const char *nl = memchr(p, '\n', (size_t)(end - p));
    if (!nl || memchr(p, '\0', (size_t)(nl - p)) || nl - p > 200)
        return 0; /* a header has no NUL, no newline, and fits libmicrohttpd's buffer */
    char ct[260];
    snprintf(ct, sizeof ct, "multipart/form-data; boundary=%.*s", (int)(nl - p), p);
    char *body = fuzz_text((const uint8_t *)nl + 1, (size_t)(end - nl - 1));
    srv_incoming in = {.method = "POST",
                       .target = target,
                       .host = "127.0.0.1",
                       .content_type = ct,
                       .body = body,
                       .body_len = (size_t)(end - nl - 1)};
    srv_request rq;
    if (srv_request_init(&rq, &in, registry()))
        abort();
    /* the split alone, under each set of names a route may take */
    int some_calibration = 0;
    for (int f = 0; f < 4; f++) {
        dpas_error err;
        memset(&err, 0, sizeof err);
        int st = srv_parts_parse(&rq, f & 1, f & 2, &err);
        check_parts(&rq, st, &err, f & 1, f & 2);
        for (size_t i = 0; !st && i < rq.nparts; i++)
            some_calibration |= !strcmp(rq.parts[i].name, "calibration");
        srv_parts_free(&rq);
        rq.multipart = 0;
    }
    int heavy = srv_request_heavy(&rq);
    PROPERTY(!some_calibration || heavy,
             "a body with a calibration part that srv_request_heavy does not count as heavy");
    PROPERTY(!rq.nparts && !rq.parts_store && !rq.multipart,
             "srv_request_heavy left the request split");
    if ((data[0] & 0xf0) == 0xf0) {
        srv_response r;
        memset(&r, 0, sizeof r);
        srv_route(&rq, &r);
        check_answer(&r, 0);
        if (r.free_body && r.body)
            r.free_body(r.body);
    }
    srv_request_fini(&rq);
    free(body);
    return 0;
}
