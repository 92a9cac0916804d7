/* SPDX-License-Identifier: Apache-2.0 */
/* Responses: the library's JSON payloads and its error object, with the HTTP status of each. */
#include "serve.h"

#include <stdarg.h>
#include <string.h>

static const char json_type[] = "application/json; charset=utf-8";
/* RFC 9457: an error is a problem document; JSON is UTF-8 by definition (RFC 8259) */
static const char problem_type[] = "application/problem+json";

int srv_status_of(int code)
{
    return dpas_err_status(code); /* 422 where the CLI exits 2, 400 where it exits 1, 500 */
}

void srv_error(srv_response *r, int status, const dpas_error *e)
{
    srv_error_hint(r, status, e, NULL);
}

void srv_error_hint(srv_response *r, int status, const dpas_error *e, const char *hint)
{
    /* the one object every front end prints: dpas_render_error_json */
    static char oom[] = "{\"type\": \"urn:dpas:error:ENOMEM\", \"title\": \"out of memory\", "
                        "\"status\": 500, \"detail\": \"out of memory\", \"code\": \"ENOMEM\"}\n";
    if (r->free_body && r->body)
        r->free_body(r->body);
    r->status = status;
    r->type = problem_type;
    r->body = dpas_render_error_json(e, status, r->instance, hint);
    r->free_body = dpas_free;
    if (!r->body) {
        r->status = 500;
        r->body = oom;
        r->free_body = NULL;
    }
    r->len = strlen(r->body);
}

void srv_fail(srv_response *r, int status, int code, const char *field, const char *fmt, ...)
{
    dpas_error e;
    va_list ap;
    char msg[2048];
    memset(&e, 0, sizeof e);
    va_start(ap, fmt);
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    /* through the library's one mechanism: a message or a field too long for the error object
     * ends in "..." on a whole character, never silently cut */
    dpas_error_set(&e, code, field ? field : "", "%s%s", msg,
                   n >= 0 && (size_t)n >= sizeof msg ? "..." : "");
    srv_error(r, status, &e);
}

void srv_json(srv_response *r, char *payload, const dpas_error *err)
{
    if (!payload) {
        srv_error(r, srv_status_of(err->code), err);
        return;
    }
    r->status = 200;
    r->type = json_type;
    r->body = payload;
    r->len = strlen(payload);
    r->free_body = dpas_free;
}
