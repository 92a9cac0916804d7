/* SPDX-License-Identifier: Apache-2.0 */
/* The responses of the OpenAPI document (openapi.c): the schema of each success, made from the
 * tables the library's renderers write from (a listing's and the rule catalogue's columns: each
 * field, its JSON type, null where a cell may be empty), and the problem every error is (RFC 9457,
 * from the library's error table). A JSON answer of dpas is an object: its dpas_version and
 * schema_version, and a list's rows under "rows". */
#include "serve.h"

#include <jansson.h>
#include <stdio.h>
#include <string.h>

/* One field of a row, as the writer writes a column: numbers bare, a byte count exact (with
 * "<name>_exact" beside it when it does not terminate), every cell null when it has no value. */
static int column_schema(json_t *props, const dpas_column *c)
{
    const char *type = c->type == DPAS_COL_TEXT                              ? "string"
                       : c->type == DPAS_COL_BOOL                            ? "boolean"
                       : c->type == DPAS_COL_INT || c->type == DPAS_COL_UINT ? "integer"
                                                                             : "number";
    json_t *s = json_pack("{s:[s,s]}", "type", type, "null");
    if (s && c->type == DPAS_COL_UINT)
        json_object_set_new(s, "minimum", json_integer(0));
    if (s && c->type == DPAS_COL_BYTES) {
        json_object_set_new(s, "minimum", json_integer(0));
        json_object_set_new(s, "description",
                            json_string("bytes, exact (rounded to 18 decimals only when the "
                                        "decimal does not terminate: then <field>_exact is the "
                                        "fraction)"));
        char exact[128];
        snprintf(exact, sizeof exact, "%s_exact", c->name);
        if (json_object_set_new(
                props, exact,
                json_pack("{s:s, s:s}", "type", "string", "pattern", "^[0-9]+/[0-9]+$")))
            return -1;
    }
    return s ? json_object_set_new(props, c->name, s) : -1;
}

/* {"type": "object", "properties": {...}, "required": [...]} of a row of these columns. */
static json_t *row_schema(const dpas_column *cols, size_t n)
{
    json_t *props = json_object(), *req = json_array();
    int bad = !props || !req;
    for (size_t i = 0; !bad && i < n; i++)
        bad =
            column_schema(props, &cols[i]) || json_array_append_new(req, json_string(cols[i].name));
    if (bad) {
        json_decref(props);
        json_decref(req);
        return NULL;
    }
    return json_pack("{s:s, s:o, s:o, s:b}", "type", "object", "properties", props, "required", req,
                     "additionalProperties", 0);
}

/* Every JSON document: what wrote it and the schema of its fields. */
static json_t *document(json_t *rows, const char *what)
{
    json_t *props =
        json_pack("{s:{s:s, s:s}, s:{s:s, s:i, s:s}}", "dpas_version", "type", "string",
                  "description", "the version of dpas that wrote the document", "schema_version",
                  "type", "integer", "const", dpas_json_schema_version(), "description",
                  "raised when a field changes meaning or goes away");
    if (!props)
        return NULL;
    json_t *req = json_pack("[s,s]", "dpas_version", "schema_version");
    if (rows) {
        json_object_set_new(props, "rows", json_pack("{s:s, s:o}", "type", "array", "items", rows));
        json_array_append_new(req, json_string("rows"));
    }
    return json_pack("{s:s, s:s, s:o, s:o}", "type", "object", "description", what, "properties",
                     props, "required", req);
}

/* ---- the documents written from field tables (dpas_doc_fields) ---- */

static json_t *fields_schema(const dpas_field *f, size_t n, int nullable);

/* One value of a column type, null where the field may be (a BYTES value may be rounded: a
 * number; its exact fraction beside it as "<name>_exact" in props). */
static json_t *value_schema(json_t *props, const dpas_field *f)
{
    const char *type = f->type == DPAS_COL_TEXT                              ? "string"
                       : f->type == DPAS_COL_BOOL                            ? "boolean"
                       : f->type == DPAS_COL_INT || f->type == DPAS_COL_UINT ? "integer"
                                                                             : "number";
    json_t *s = f->flags & DPAS_FIELD_NULLABLE ? json_pack("{s:[s,s]}", "type", type, "null")
                                               : json_pack("{s:s}", "type", type);
    if (!s)
        return NULL;
    int signed_bytes = f->type == DPAS_COL_BYTES && (f->flags & DPAS_FIELD_SIGNED);
    if (f->type == DPAS_COL_UINT || (f->type == DPAS_COL_BYTES && !signed_bytes))
        json_object_set_new(s, "minimum", json_integer(0));
    if (f->unit)
        json_object_set_new(s, "x-dpas-unit", json_string(f->unit));
    if (f->type == DPAS_COL_BYTES && props) {
        json_object_set_new(s, "description",
                            json_string("exact (rounded to 18 decimals only when the decimal does "
                                        "not terminate: then <field>_exact is the fraction)"));
        char exact[128];
        snprintf(exact, sizeof exact, "%s_exact", f->name);
        json_object_set_new(props, exact,
                            json_pack("{s:s, s:s}", "type", "string", "pattern",
                                      signed_bytes ? "^-?[0-9]+/[0-9]+$" : "^[0-9]+/[0-9]+$"));
    }
    return s;
}

/* An object of the library's attributes, by name: each optional, of its kind, or of of's type. */
static json_t *attrs_schema(const dpas_field *of)
{
    json_t *props = json_object();
    for (int a = 0; props && a < DPAS_ATTR_COUNT; a++) {
        dpas_value_kind k = dpas_attr_kind((dpas_attr)a);
        dpas_field f = {dpas_attr_name((dpas_attr)a),
                        k == DPAS_VALUE_INT    ? DPAS_COL_INT
                        : k == DPAS_VALUE_REAL ? DPAS_COL_REAL
                                               : DPAS_COL_BYTES,
                        DPAS_FIELD_VALUE,
                        DPAS_FIELD_NULLABLE,
                        NULL,
                        NULL,
                        0};
        if (of) /* a sentence per attribute */
            f = (dpas_field){f.name, of->type, DPAS_FIELD_VALUE, of->flags, NULL, NULL, 0};
        json_t *v = value_schema(props, &f);
        if (!v || json_object_set_new(props, f.name, v)) {
            json_decref(props);
            return NULL;
        }
    }
    return props ? json_pack("{s:s, s:o, s:b}", "type", "object", "properties", props,
                             "additionalProperties", 0)
                 : NULL;
}

static json_t *field_schema(json_t *props, const dpas_field *f)
{
    switch (f->shape) {
    case DPAS_FIELD_VALUE: return value_schema(props, f);
    case DPAS_FIELD_OBJECT: return fields_schema(f->sub, f->nsub, f->flags & DPAS_FIELD_NULLABLE);
    case DPAS_FIELD_ROWS: {
        json_t *row = fields_schema(f->sub, f->nsub, 0);
        return row ? json_pack("{s:s, s:o}", "type", "array", "items", row) : NULL;
    }
    case DPAS_FIELD_TEXTS:
        return json_pack("{s:s, s:{s:s}}", "type", "array", "items", "type", "string");
    case DPAS_FIELD_ATTRS: return attrs_schema(f->nsub ? f->sub : NULL);
    }
    return NULL;
}

/* An object of these fields: each required but an OPTIONAL one, nothing else. */
static json_t *fields_schema(const dpas_field *f, size_t n, int nullable)
{
    json_t *props = json_object(), *req = json_array();
    int bad = !props || !req;
    for (size_t i = 0; !bad && i < n; i++) {
        json_t *s = field_schema(props, &f[i]);
        bad = !s || json_object_set_new(props, f[i].name, s);
        if (!bad && !(f[i].flags & DPAS_FIELD_OPTIONAL))
            bad = json_array_append_new(req, json_string(f[i].name));
    }
    if (bad) {
        json_decref(props);
        json_decref(req);
        return NULL;
    }
    json_t *type = nullable ? json_pack("[s,s]", "object", "null") : json_string("object");
    return json_pack("{s:o, s:o, s:o, s:b}", "type", type, "properties", props, "required", req,
                     "additionalProperties", 0);
}

/* A document of dpas_doc_fields: dpas_version and schema_version, then the table's fields. */
static json_t *doc_schema(dpas_doc d, const char *what)
{
    size_t n = 0;
    const dpas_field *f = dpas_doc_fields(d, &n);
    json_t *s = f ? fields_schema(f, n, 0) : NULL, *base = s ? document(NULL, what) : NULL;
    if (!base) {
        json_decref(s);
        return NULL;
    }
    json_object_update(json_object_get(s, "properties"), json_object_get(base, "properties"));
    json_array_extend(json_object_get(s, "required"), json_object_get(base, "required"));
    json_object_set(s, "description", json_object_get(base, "description"));
    json_decref(base);
    return s;
}

json_t *srv_openapi_success_schema(const srv_route_info *rt)
{
    size_t n = 0;
    static const struct {
        void (*fn)(srv_request *, srv_response *);
        dpas_doc doc;
        const char *what;
    } docs[] = {
        {srv_api_eval, DPAS_DOC_EVAL, "the scenario's inputs and the seed's attributes"},
        {srv_api_scenario, DPAS_DOC_EVAL, "the named scenario's inputs and attributes"},
        {srv_api_cost, DPAS_DOC_COST, "the cost of each rule under each schedule: one row each"},
        {srv_api_step, DPAS_DOC_STEP, "the training step around each rule x schedule's exchange"},
        {srv_api_memory, DPAS_DOC_MEMORY, "one replica's training state against its memory"},
        {srv_api_inventory, DPAS_DOC_INVENTORY, "what one step exposes and what lies at rest"},
    };
    for (size_t i = 0; i < sizeof docs / sizeof docs[0]; i++)
        if (rt->fn == docs[i].fn)
            return doc_schema(docs[i].doc, docs[i].what);
    if (rt->fn == srv_api_registry || rt->fn == srv_api_scenarios || rt->fn == srv_api_keys) {
        /* a registry kind's rows: the path's kind decides the columns, each kind one schema */
        json_t *one = json_array();
        int kinds[DPAS_KIND_COUNT + 1], nk = 0;
        if (rt->fn == srv_api_keys)
            kinds[nk++] = DPAS_LIST_KEYS;
        else if (rt->fn == srv_api_scenarios)
            kinds[nk++] = DPAS_KIND_SCENARIO;
        else
            for (int k = DPAS_LIST_PRECISIONS; k < DPAS_KIND_COUNT; k++)
                kinds[nk++] = k;
        for (int i = 0; one && i < nk; i++) {
            const dpas_column *cols = dpas_list_columns(kinds[i], &n);
            json_t *row = row_schema(cols, n);
            if (!row || json_array_append_new(one, row)) {
                json_decref(one);
                return NULL;
            }
        }
        json_t *rows =
            nk == 1 ? json_incref(json_array_get(one, 0)) : json_pack("{s:O}", "oneOf", one);
        json_decref(one);
        return rows ? document(rows, "a listing: one row per entry") : NULL;
    }
    if (rt->fn == srv_api_rules) { /* max_f with n, min_n with f: the columns with both */
        dpas_column cols[10];
        n = dpas_rules_columns(1, 1, cols);
        json_t *row = row_schema(cols, n);
        json_t *req = row ? json_object_get(row, "required") : NULL;
        for (size_t i = req ? json_array_size(req) : 0; i-- > 0;) {
            const char *name = json_string_value(json_array_get(req, i));
            if (!strcmp(name, "max_f") || !strcmp(name, "min_n"))
                json_array_remove(req, i); /* only when n, or f, is given */
        }
        return row ? document(row, "the rule catalogue: one row per rule and convention") : NULL;
    }
    if (rt->fn == srv_api_sweep) { /* the varied inputs, then the metrics asked for */
        json_t *row =
            json_pack("{s:s, s:{s:[s,s,s,s]}, s:s}", "type", "object", "additionalProperties",
                      "type", "number", "string", "boolean", "null", "description",
                      "one point: the varied inputs' columns, then one per metric of "
                      "attr (numbers; time_basis and time_model are words)");
        return row ? document(row, "one row per point kept") : NULL;
    }
    if (rt->fn == srv_api_index)
        return document(NULL, "the index: the endpoints and the CLI command each answers as");
    if (rt->fn == srv_api_openapi)
        return json_pack("{s:s, s:[s], s:s}", "type", "object", "required", "openapi",
                         "description", "an OpenAPI 3.1 document");
    return document(NULL, "the object `dpas COMMAND -o json` prints for the same inputs");
}

json_t *srv_openapi_problem_schema(void)
{
    json_t *codes = json_array(), *titles = json_array();
    char text[1024] = "";
    size_t o = 0;
    for (int code = -1; codes && titles && strcmp(dpas_err_name(code), "EUNKNOWN"); code--) {
        char type[64];
        snprintf(type, sizeof type, "urn:dpas:error:%s", dpas_err_name(code));
        json_array_append_new(codes, json_string(dpas_err_name(code)));
        const char *t = dpas_err_title(code);
        int seen = 0;
        for (size_t i = 0; i < json_array_size(titles); i++)
            seen |= !strcmp(json_string_value(json_array_get(titles, i)), t);
        if (!seen)
            json_array_append_new(titles, json_string(t));
        int w = snprintf(text + o, sizeof text - o, "%s%s (%s): HTTP %d", o ? "; " : "",
                         dpas_err_name(code), dpas_strerror(code), srv_status_of(code));
        if (w > 0 && (size_t)w < sizeof text - o)
            o += (size_t)w;
    }
    if (!codes || !titles) {
        json_decref(codes);
        json_decref(titles);
        return NULL;
    }
    return json_pack(
        "{s:s, s:s, s:[s,s,s,s,s], s:b, s:{"
        "s:{s:s, s:s, s:s}, s:{s:o}, s:{s:s, s:i, s:i, s:s}, s:{s:s, s:s}, s:{s:s, s:s},"
        "s:{s:s, s:o, s:s}, s:{s:s, s:s}, s:{s:s, s:s}}}",
        "type", "object", "description",
        "an RFC 9457 problem (application/problem+json): the library's error, with its code, field "
        "and hint as extension members",
        "required", "type", "title", "status", "detail", "code", "additionalProperties", 0,
        "properties", "type", "type", "string", "pattern", "^urn:dpas:error:E[A-Z]+$",
        "description", "urn:dpas:error:CODE: the kind of problem, by the library's error code",
        "title", "enum", titles, "status", "type", "integer", "minimum", 400, "maximum", 599,
        "description", "the HTTP status (the CLI's -o json: 400 where it exits 1, 422 where 2)",
        "detail", "type", "string", "description",
        "the whole sentence: the field, the value and the rule", "instance", "type", "string",
        "description", "the path asked for (HTTP only)", "code", "type", "string", "enum", codes,
        "description", text, "field", "type", "string", "description",
        "the input, query key or header at fault", "hint", "type", "string", "description",
        "how to give what is missing");
}

/* ---- what a GET can never do ------------------------------------------------------------------ */

/* The metrics only a calibration gives (its basis and band): a GET carries no calibration part. */
static int needs_calibration(const char *metric)
{
    return !strcmp(metric, "time_basis") || !strncmp(metric, "time_band_", 10);
}

int srv_openapi_param_kept(const char *key, int method)
{
    return method != SRV_GET || strcmp(key, "network_model"); /* it reads a calibration */
}

void srv_openapi_prune_param(struct json_t *p, int method)
{
    const char *name = json_string_value(json_object_get(p, "name"));
    if (!name)
        return;
    if (!strcmp(name, "y")) {
        /* one of the metrics attr shows: any other is refused, so no list of its own */
        json_t *sch = json_object_get(p, "schema");
        json_object_del(sch, "enum");
        json_object_set_new(p, "description",
                            json_string("the plotted metric: one of those of attr (refused "
                                        "otherwise), a number; default: the first of attr."));
        return;
    }
    json_t *values = json_object_get(p, "x-dpas-values");
    if (method != SRV_GET || strcmp(name, "attr") || !values)
        return;
    char text[1024];
    size_t o = (size_t)snprintf(text, sizeof text,
                                "the attributes to show (default: all; the "
                                "basis and band of a time need a calibration, "
                                "a POST): ");
    for (size_t i = json_array_size(values); i-- > 0;)
        if (needs_calibration(json_string_value(json_array_get(values, i))))
            json_array_remove(values, i);
    for (size_t i = 0; i < json_array_size(values) && o < sizeof text; i++)
        o += (size_t)snprintf(text + o, sizeof text - o, "%s%s", i ? ", " : "",
                              json_string_value(json_array_get(values, i)));
    if (o < sizeof text)
        json_object_set_new(p, "description", json_string(text));
}
