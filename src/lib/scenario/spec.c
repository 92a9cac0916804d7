/* SPDX-License-Identifier: Apache-2.0 */
/* Scenario inputs as text: from CLI flags, YAML or JSON files. A file is walked into a flat list
 * of (key path, scalar text, position) and applied key by key, so both formats share one set of
 * rules; resolution against the registry happens once, at the end. */
#include "../internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

/* A file's inline workload or fleet (a mapping), which replaces a named one. */
enum { K_INLINE_WORKLOAD = -2, K_INLINE_FLEET = -3 };

/* The inputs, in the order of dpas_input (checked below). */
enum {
    K_NAME = DPAS_INPUT_NAME,
    K_SCENARIO = DPAS_INPUT_SCENARIO,
    K_MODEL = DPAS_INPUT_WORKLOAD,
    K_WORKLOAD_NAME = DPAS_INPUT_WORKLOAD_NAME,
    K_PARAMS = DPAS_INPUT_PARAMETERS,
    K_FLEET = DPAS_INPUT_FLEET,
    K_FLEET_NAME = DPAS_INPUT_FLEET_NAME,
    K_NODES = DPAS_INPUT_NODES,
    K_APN = DPAS_INPUT_ACCELERATORS_PER_NODE,
    K_NODE = DPAS_INPUT_NODE,
    K_FABRIC = DPAS_INPUT_FABRIC,
    K_DP = DPAS_INPUT_DP_DEGREE,
    K_GRAD = DPAS_INPUT_GRADIENT_WIDTH,
    K_CKPT = DPAS_INPUT_CHECKPOINT_WIDTH,
    K_WEIGHTS = DPAS_INPUT_WEIGHT_WIDTH,
    K_COUNT = DPAS_INPUT_COUNT
};

/* An input's name (its key, used in messages) and its key in a scenario file: the key table's
 * (src/lib/request/keys.c: inputs are numbered as their keys). This file only reads. */
static const char *field_of(int k) { return dpas_key_name((dpas_key)k); }
static const char *path_of(int k) { return dpas_key_file((dpas_key)k); }

/* The input a key's name, alias or file key names; -1 if none. */
static int input_of(const char *name)
{
    int k = dpas_key_from_name(name);
    if (k >= 0 && k < K_COUNT)
        return k;
    for (k = 0; name && k < K_COUNT; k++)
        if (!strcmp(name, path_of(k)))
            return k;
    return -1;
}

typedef struct val {
    bool set;
    char *text;     /* NULL with set: explicitly none */
    char field[64]; /* a flag or a file path of the input table: all fit */
    char *origin;   /* "file.yaml:3:5: ", "file.json: " (JSON values carry no position), or NULL */
    int line, col;
} val;

struct dpas_spec {
    val v[K_COUNT];
    /* "Training_1K (modified: 4 x 8)": built at resolution; every label built is kept until
     * dpas_spec_free, so a scenario resolved earlier keeps its (borrowed) fleet name */
    char **fleet_labels;
    size_t nfleet_labels;
    const char *scenario_path; /* the named scenario's path, once resolved (borrowed) */
    const dpas_model *model;   /* the registry workload behind the scenario, or NULL */
};

const dpas_model *dpas__spec_model(const dpas_spec *spec) { return spec ? spec->model : NULL; }

dpas_spec *dpas_spec_new(void) { return calloc(1, sizeof(dpas_spec)); }

static void val_clear(val *v)
{
    free(v->text);
    free(v->origin);
    memset(v, 0, sizeof *v);
}

void dpas_spec_free(dpas_spec *spec)
{
    if (!spec)
        return;
    for (int k = 0; k < K_COUNT; k++)
        val_clear(&spec->v[k]);
    for (size_t i = 0; i < spec->nfleet_labels; i++)
        free(spec->fleet_labels[i]);
    free(spec->fleet_labels);
    free(spec);
}

const char *dpas_spec_label(const dpas_spec *spec)
{
    if (!spec)
        return NULL;
    if (spec->v[K_NAME].text)
        return spec->v[K_NAME].text;
    return spec->scenario_path ? spec->scenario_path : spec->v[K_SCENARIO].text;
}

static int set_val(dpas_spec *spec, int k, const char *text, const char *field, const char *file,
                   int line, int col, dpas_error *err)
{
    val *v = &spec->v[k];
    char *copy = NULL, *origin = NULL;
    if (file) { /* the whole path, however long: a message points at the value */
        dpas__buf o = {0};
        if (line > 0)
            dpas__buf_printf(&o, "%s:%d:%d: ", file, line, col);
        else
            dpas__buf_printf(&o, "%s: ", file);
        origin = dpas__buf_finish(&o, NULL);
    }
    if ((text && !(copy = strdup(text))) || (file && !origin)) {
        free(copy);
        free(origin);
        return dpas__fail(err, DPAS_ENOMEM, field_of(k), "out of memory");
    }
    val_clear(v);
    v->set = true;
    v->text = copy;
    v->origin = origin;
    snprintf(v->field, sizeof v->field, "%s", field ? field : field_of(k));
    v->line = line;
    v->col = col;
    /* A workload is a registry model or inline parameters; a fleet a registry fleet or an
     * inline one. Setting one side drops the other, so a flag overrides a file. */
    if (k == K_MODEL) {
        val_clear(&spec->v[K_PARAMS]);
        val_clear(&spec->v[K_WORKLOAD_NAME]);
    } else if (k == K_PARAMS) {
        val_clear(&spec->v[K_MODEL]);
    } else if (k == K_FLEET) {
        /* a later --nodes or --accelerators-per-node overrides the named fleet again */
        for (int i = K_FLEET_NAME; i <= K_FABRIC; i++)
            val_clear(&spec->v[i]);
    }
    return 0;
}

int dpas_spec_set_input(dpas_spec *spec, dpas_input in, const char *value, const char *field,
                        dpas_error *err)
{
    if ((unsigned)in >= K_COUNT)
        return dpas__fail(err, DPAS_EINVAL, "input", "unknown scenario input %d", (int)in);
    return set_val(spec, (int)in, value, field, NULL, 0, 0, err);
}

int dpas_spec_set(dpas_spec *spec, const char *key, const char *value, const char *field,
                  dpas_error *err)
{
    char q[96];
    int k = input_of(key);
    if (k < 0)
        return dpas__fail(err, DPAS_EINVAL, "key", "unknown scenario input %s",
                          dpas__quote(key ? key : "(null)", q, sizeof q));
    return set_val(spec, k, value, field, NULL, 0, 0, err);
}

/* ---- files ---- */

typedef struct walker {
    dpas_spec *spec;
    const char *file;
    dpas_error *err;
    bool syntax; /* the text did not parse (as opposed to a key or value breaking a rule) */
} walker;

enum { T_NULL, T_SCALAR, T_MAP, T_SEQ, T_BOOL };

static int wfail(walker *W, int code, const char *field, int line, int col, const char *fmt,
                 const char *a, const char *b)
{
    /* fmt has two %s for a and b; the file and position come first, in one message */
    char *msg = NULL;
    int n = snprintf(NULL, 0, fmt, a ? a : "", b ? b : "");
    if (n >= 0 && (msg = malloc((size_t)n + 1)))
        snprintf(msg, (size_t)n + 1, fmt, a ? a : "", b ? b : "");
    int rc = line ? dpas__fail_at(W->err, code, field, line, col, "%s:%d:%d: %s", W->file, line,
                                  col, msg ? msg : "out of memory")
                  : dpas__fail(W->err, code, field, "%s: %s", W->file, msg ? msg : "out of memory");
    free(msg);
    return rc;
}

static const char *type_name(int t)
{
    switch (t) {
    case T_NULL: return "null";
    case T_MAP: return "a mapping";
    case T_SEQ: return "a list";
    case T_BOOL: return "a boolean";
    default: return "a scalar";
    }
}

/* Apply one (path, value) of a file. parent is "" for the top level. */
static int apply(walker *W, const char *parent, const char *key, int type, const char *text,
                 int kline, int kcol, int line, int col)
{
    char path[160], qk[96];
    snprintf(path, sizeof path, "%s%s%s", parent, *parent ? "." : "", key);
    dpas__quote(key, qk, sizeof qk); /* user text in a message: quoted, escaped, bounded */
    static const char *top[] = {"name",
                                "scenario",
                                "workload",
                                "fleet",
                                "dp_degree",
                                "gradient_bytes_per_param",
                                "checkpoint_bytes_per_param",
                                "weight_bytes_per_param"};
    int k = -1;
    if (!*parent) {
        bool known = false;
        for (size_t i = 0; i < sizeof top / sizeof top[0]; i++)
            known |= !strcmp(key, top[i]);
        if (!known)
            return wfail(W, DPAS_EPARSE, path, kline, kcol,
                         "unknown key %s; expected name, scenario, workload, fleet, dp_degree, "
                         "gradient_bytes_per_param, checkpoint_bytes_per_param or "
                         "weight_bytes_per_param%s",
                         qk, NULL);
        if (!strcmp(key, "workload"))
            k = type == T_MAP ? K_INLINE_WORKLOAD : K_MODEL;
        else if (!strcmp(key, "fleet"))
            k = type == T_MAP ? K_INLINE_FLEET : K_FLEET;
        else
            for (int i = 0; i < K_COUNT; i++)
                if (!strcmp(path_of(i), key))
                    k = i;
    } else if (!strcmp(parent, "workload")) {
        if (!strcmp(key, "name"))
            k = K_WORKLOAD_NAME;
        else if (!strcmp(key, "parameters"))
            k = K_PARAMS;
        else
            return wfail(W, DPAS_EPARSE, path, kline, kcol,
                         "unknown key %s in workload; expected name or parameters%s", qk, NULL);
    } else if (!strcmp(parent, "fleet")) {
        if (!strcmp(key, "name"))
            k = K_FLEET_NAME;
        else if (!strcmp(key, "nodes") || !strcmp(key, "count")) {
            /* two keys for one input: whichever came last would silently win */
            const val *v = &W->spec->v[K_NODES];
            if (v->set && v->origin && strcmp(v->field, path))
                return wfail(W, DPAS_EPARSE, path, kline, kcol,
                             "%s and %s are the same input (the fleet's node count); give one",
                             v->field, path);
            k = K_NODES;
        } else if (!strcmp(key, "accelerators_per_node"))
            k = K_APN;
        else if (!strcmp(key, "node"))
            k = K_NODE;
        else if (!strcmp(key, "fabric"))
            k = K_FABRIC;
        else
            return wfail(W, DPAS_EPARSE, path, kline, kcol,
                         "unknown key %s in fleet; expected name, nodes (or count), "
                         "accelerators_per_node, node or fabric%s",
                         qk, NULL);
    }
    if (k == K_INLINE_WORKLOAD || k == K_INLINE_FLEET) {
        dpas_spec *s = W->spec;
        if (k == K_INLINE_WORKLOAD) {
            val_clear(&s->v[K_MODEL]);
            val_clear(&s->v[K_PARAMS]);
            val_clear(&s->v[K_WORKLOAD_NAME]);
        } else {
            for (int i = K_FLEET; i <= K_FABRIC; i++)
                val_clear(&s->v[i]);
        }
        return 0;
    }
    if (type == T_MAP || type == T_SEQ || type == T_BOOL)
        return wfail(W, DPAS_EPARSE, path, line, col, "%s must be a scalar, got %s", path,
                     type_name(type));
    if (type == T_NULL && k != K_WEIGHTS)
        return wfail(W, DPAS_EPARSE, path, line, col, "%s must have a value, got null%s", path,
                     NULL);
    return set_val(W->spec, k, type == T_NULL ? NULL : text, path, W->file, line, col, W->err);
}

/* YAML through libyaml's document API: scalars keep their exact text. */
static int yaml_map(walker *W, yaml_document_t *doc, yaml_node_t *map, const char *parent);

static int yaml_type(yaml_node_t *n)
{
    if (n->type == YAML_MAPPING_NODE)
        return T_MAP;
    if (n->type == YAML_SEQUENCE_NODE)
        return T_SEQ;
    const char *t = (const char *)n->data.scalar.value;
    if (n->data.scalar.style == YAML_PLAIN_SCALAR_STYLE) {
        if (!*t || !strcmp(t, "~") || !strcmp(t, "null") || !strcmp(t, "Null") ||
            !strcmp(t, "NULL"))
            return T_NULL;
        if (!strcmp(t, "true") || !strcmp(t, "false") || !strcmp(t, "True") || !strcmp(t, "False"))
            return T_BOOL;
    }
    return T_SCALAR;
}

static int yaml_map(walker *W, yaml_document_t *doc, yaml_node_t *map, const char *parent)
{
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yaml_document_get_node(doc, p->key);
        yaml_node_t *v = yaml_document_get_node(doc, p->value);
        int kl = (int)k->start_mark.line + 1, kc = (int)k->start_mark.column + 1;
        if (k->type != YAML_SCALAR_NODE)
            return wfail(W, DPAS_EPARSE, parent, kl, kc, "keys must be scalars%s%s", NULL, NULL);
        const char *key = (const char *)k->data.scalar.value;
        /* a "\0" escape would cut the text where C reads it: refused, as in JSON files */
        if (strlen(key) != k->data.scalar.length)
            return wfail(W, DPAS_EPARSE, parent, kl, kc, "a key contains a NUL character%s%s", NULL,
                         NULL);
        if (v->type == YAML_SCALAR_NODE &&
            strlen((const char *)v->data.scalar.value) != v->data.scalar.length)
            return wfail(W, DPAS_EPARSE, key, (int)v->start_mark.line + 1,
                         (int)v->start_mark.column + 1, "%s contains a NUL character%s", key, NULL);
        for (yaml_node_pair_t *q = map->data.mapping.pairs.start; q < p; q++) {
            yaml_node_t *k2 = yaml_document_get_node(doc, q->key);
            if (k2->type == YAML_SCALAR_NODE && !strcmp((const char *)k2->data.scalar.value, key)) {
                char qk[96];
                return wfail(W, DPAS_EPARSE, key, kl, kc, "duplicate key %s%s",
                             dpas__quote(key, qk, sizeof qk), NULL);
            }
        }
        int t = yaml_type(v);
        int vl = (int)v->start_mark.line + 1, vc = (int)v->start_mark.column + 1;
        int rc = apply(W, parent, key, t,
                       t == T_SCALAR || t == T_BOOL ? (const char *)v->data.scalar.value : NULL, kl,
                       kc, vl, vc);
        if (rc)
            return rc;
        if (t == T_MAP) {
            if (*parent)
                return wfail(W, DPAS_EPARSE, key, vl, vc, "%s must be a scalar, got a mapping%s",
                             key, NULL);
            if ((rc = yaml_map(W, doc, v, key)))
                return rc;
        }
    }
    return 0;
}

static int load_yaml(walker *W, const char *text, size_t len)
{
    yaml_parser_t parser;
    yaml_document_t doc;
    if (!yaml_parser_initialize(&parser))
        return dpas__fail(W->err, DPAS_ENOMEM, "", "out of memory");
    yaml_parser_set_input_string(&parser, (const unsigned char *)text, len);
    int rc = 0;
    if (!yaml_parser_load(&parser, &doc)) {
        int line = (int)parser.problem_mark.line + 1, col = (int)parser.problem_mark.column + 1;
        char msg[300];
        snprintf(msg, sizeof msg, "%s%s%s", parser.problem ? parser.problem : "malformed YAML",
                 parser.context ? " " : "", parser.context ? parser.context : "");
        rc = wfail(W, DPAS_EPARSE, "file", line, col, "malformed YAML: %s%s", msg, NULL);
        W->syntax = true;
        yaml_parser_delete(&parser);
        return rc;
    }
    yaml_node_t *root = yaml_document_get_root_node(&doc);
    if (root) { /* one document: a second one, even empty or malformed, would be ignored */
        yaml_document_t next;
        if (!yaml_parser_load(&parser, &next)) {
            int line = (int)parser.problem_mark.line + 1, col = (int)parser.problem_mark.column + 1;
            rc = wfail(W, DPAS_EPARSE, "file", line, col,
                       "malformed YAML after the first document: %s%s",
                       parser.problem ? parser.problem : "malformed YAML", NULL);
            W->syntax = true;
        } else {
            yaml_node_t *r2 = yaml_document_get_root_node(&next);
            if (r2)
                rc = wfail(W, DPAS_EPARSE, "file", (int)next.start_mark.line + 1,
                           (int)next.start_mark.column + 1,
                           "a second YAML document; a scenario file holds one document "
                           "(remove the second '---' and what follows, or merge the two)%s%s",
                           NULL, NULL);
            yaml_document_delete(&next);
        }
        if (rc) {
            yaml_document_delete(&doc);
            yaml_parser_delete(&parser);
            return rc;
        }
    }
    if (!root)
        rc = wfail(W, DPAS_EPARSE, "file", 0, 0,
                   "the file is empty; expected a mapping of "
                   "scenario inputs%s%s",
                   NULL, NULL);
    else if (root->type != YAML_MAPPING_NODE)
        rc = wfail(W, DPAS_EPARSE, "file", (int)root->start_mark.line + 1,
                   (int)root->start_mark.column + 1,
                   "the top level must be a mapping of scenario inputs, got %s%s",
                   type_name(yaml_type(root)), NULL);
    else
        rc = yaml_map(W, &doc, root, "");
    yaml_document_delete(&doc);
    yaml_parser_delete(&parser);
    return rc;
}

/* JSON numbers reach us as integers or doubles. An integer is exact; a real is given back as
 * the shortest decimal that reads as the same double, which is the text the user wrote whenever
 * that had at most 15 significant digits. Longer ones could have been rounded: they are refused
 * rather than read wrong. */
static int json_scalar(walker *W, const char *path, json_t *v, char *buf, size_t cap)
{
    if (json_is_integer(v)) {
        snprintf(buf, cap, "%lld", (long long)json_integer_value(v));
        return 0;
    }
    double x = json_real_value(v);
    char t15[40], t17[40];
    snprintf(t15, sizeof t15, "%.15g", x);
    snprintf(t17, sizeof t17, "%.17g", x);
    if (strtod(t15, NULL) != x)
        return wfail(W, DPAS_EPARSE, path, 0, 0,
                     "%s: a JSON number with more than 15 significant digits may have been "
                     "rounded (read as %s); write it as a string to keep it exact",
                     path, t17);
    dpas__fmt_double(x, false, buf, cap);
    return 0;
}

static int json_kind(json_t *v)
{
    switch (json_typeof(v)) {
    case JSON_OBJECT: return T_MAP;
    case JSON_ARRAY: return T_SEQ;
    case JSON_NULL: return T_NULL;
    case JSON_TRUE:
    case JSON_FALSE: return T_BOOL;
    default: return T_SCALAR;
    }
}

static int json_map(walker *W, json_t *obj, const char *parent)
{
    const char *key;
    json_t *v;
    json_object_foreach(obj, key, v)
    {
        int t = json_kind(v);
        char text[64] = "";
        char path[160];
        snprintf(path, sizeof path, "%s%s%s", parent, *parent ? "." : "", key);
        int rc;
        if (json_is_number(v) && (rc = json_scalar(W, path, v, text, sizeof text)))
            return rc;
        rc = apply(W, parent, key, t, json_is_string(v) ? json_string_value(v) : text, 0, 0, 0, 0);
        if (rc)
            return rc;
        if (t == T_MAP) {
            if (*parent)
                return wfail(W, DPAS_EPARSE, path, 0, 0, "%s must be a scalar, got a mapping%s",
                             path, NULL);
            if ((rc = json_map(W, v, key)))
                return rc;
        }
    }
    return 0;
}

/* JSON; with yaml_too, text that is not JSON is read again as YAML (a YAML flow mapping such
 * as "{dp_degree: 8}" starts with '{' too), and the JSON error stands only when that fails to
 * parse as well. */
static int load_json(walker *W, const char *text, size_t len, bool yaml_too)
{
    json_error_t je;
    /* JSON_PRESERVE_ORDER is not needed: keys are applied independently. */
    json_t *root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!root && yaml_too) {
        dpas_error yerr = {0};
        walker Y = *W;
        Y.err = &yerr;
        Y.syntax = false;
        int rc = load_yaml(&Y, text, len);
        if (!Y.syntax) { /* it is YAML: its result, success or a rule broken */
            if (rc && W->err)
                *W->err = yerr;
            return rc;
        }
    }
    if (!root) /* jansson's line and column are 1-based, and real */
        return wfail(W, DPAS_EPARSE, "file", je.line > 0 ? je.line : 0,
                     je.line > 0 && je.column > 0 ? je.column : 0, "malformed JSON: %s%s", je.text,
                     NULL);
    int rc;
    if (!json_is_object(root))
        rc = wfail(W, DPAS_EPARSE, "file", 0, 0,
                   "the top level must be an object of scenario inputs, got %s%s",
                   type_name(json_kind(root)), NULL);
    else
        rc = json_map(W, root, "");
    json_decref(root);
    return rc;
}

int dpas_spec_load_text(dpas_spec *spec, const char *text, size_t len, int is_json,
                        const char *origin, dpas_error *err)
{
    walker W = {spec, origin ? origin : "<input>", err, false};
    if (memchr(text, '\0', len))
        return wfail(&W, DPAS_EPARSE, "file", 0, 0,
                     "the file contains a NUL byte; expected "
                     "YAML or JSON text%s%s",
                     NULL, NULL);
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\r' || text[i] == '\t'))
        i++;
    if (i == len)
        return wfail(&W, DPAS_EPARSE, "file", 0, 0,
                     "the file is empty; expected a mapping of "
                     "scenario inputs%s%s",
                     NULL, NULL);
    if (is_json < 0 && text[i] == '{')
        return load_json(&W, text, len, true);
    return is_json > 0 ? load_json(&W, text, len, false) : load_yaml(&W, text, len);
}

int dpas_spec_load_file(dpas_spec *spec, const char *path, dpas_error *err)
{
    char *text;
    size_t len;
    int rc = dpas__read_file(path, "scenario file ", 1u << 20, &text, &len, err);
    if (rc)
        return rc;
    size_t pl = strlen(path);
    int is_json = pl >= 5 && !strcmp(path + pl - 5, ".json") ? 1 : -1;
    if ((pl >= 5 && !strcmp(path + pl - 5, ".yaml")) || (pl >= 4 && !strcmp(path + pl - 4, ".yml")))
        is_json = 0; /* a YAML file may open with a flow mapping, "{dp_degree: 8, ...}" */
    rc = dpas_spec_load_text(spec, text, len, is_json, path, err);
    free(text);
    return rc;
}

/* ---- resolution ---- */

/* Prefix an error with the origin of the value at fault. */
static int at(const val *v, int rc, dpas_error *err)
{
    if (rc && err && v->origin && !err->line) {
        char m[sizeof err->message];
        snprintf(m, sizeof m, "%s", err->message);
        snprintf(err->message, sizeof err->message, "%s%s", v->origin, m);
        err->line = v->line;
        err->column = v->col;
    }
    return rc;
}

/* An input that must be given and was not: the message names it (and what may stand for it);
 * *missing tells a front end which input to hint at, in its own spelling. */
typedef struct resolving {
    dpas_spec *spec;
    const dpas_registry *reg;
    dpas_scenario *out;
    int *missing;
    dpas_error *err;
} resolving;

static int missing(resolving *R, int k, const char *why)
{
    *R->missing = k;
    return dpas__fail(R->err, DPAS_EINVAL, field_of(k), "%s is required%s%s", field_of(k),
                      why ? ": " : "", why ? why : "");
}

static int parse_pos_int(const val *v, int64_t *out, dpas_error *err)
{
    return at(v, dpas_parse_int(v->field, v->text, out, err), err);
}

static int find(resolving *R, int k, dpas_kind kind, const void **e)
{
    const val *v = &R->spec->v[k];
    return at(v, dpas_registry_find(R->reg, kind, v->text, e, R->err), R->err);
}

static int resolve_workload(resolving *R)
{
    val *V = R->spec->v;
    dpas_scenario *out = R->out;
    const void *e;
    int rc;
    if (V[K_MODEL].text) {
        if (V[K_WORKLOAD_NAME].set) /* it would label nothing: refused rather than ignored */
            return at(&V[K_WORKLOAD_NAME],
                      dpas__fail(R->err, DPAS_EINVAL, V[K_WORKLOAD_NAME].field,
                                 "%s labels a workload given by its parameters; a registry "
                                 "workload (%s) has its own name: give parameters, or drop %s",
                                 V[K_WORKLOAD_NAME].field, V[K_MODEL].text,
                                 V[K_WORKLOAD_NAME].field),
                      R->err);
        if ((rc = find(R, K_MODEL, DPAS_KIND_MODEL, &e)))
            return rc;
        const dpas_model *m = e;
        if (!m->parameters)
            return at(&V[K_MODEL],
                      dpas__fail(R->err, DPAS_EINVAL, "workload",
                                 "workload %s has no parameter count: %s; this scenario needs "
                                 "parameters (give them instead of the workload)",
                                 m->path, m->missing ? m->missing : "none in the registry"),
                      R->err);
        out->parameters = m->parameters;
        out->workload = m->path;
        R->spec->model = m;
    } else if (V[K_PARAMS].set) {
        if ((rc = at(&V[K_PARAMS],
                     dpas__parse_count_positive(V[K_PARAMS].field, V[K_PARAMS].text,
                                                &out->parameters, R->err),
                     R->err)))
            return rc;
        R->spec->model = NULL; /* parameters given: no registry shape */
        /* the name as given, not a copy cut to a buffer (borrowed from spec, as documented) */
        out->workload = V[K_WORKLOAD_NAME].text ? V[K_WORKLOAD_NAME].text : "custom";
    } else if (V[K_WORKLOAD_NAME].set) {
        return at(&V[K_WORKLOAD_NAME],
                  missing(R, K_PARAMS, "a workload named by workload_name needs its parameters"),
                  R->err);
    } else if (!out->workload) {
        return missing(R, K_MODEL, "a registry model, or parameters");
    }
    return 0;
}

/* "Training_1K (modified: 4 x 8)", the fleet's name, or "custom": kept until dpas_spec_free. */
static int fleet_label(resolving *R, const dpas_fleet *f)
{
    dpas_spec *spec = R->spec;
    const val *V = spec->v;
    dpas__buf l = {0};
    const dpas_node *n = R->out->node_entry;
    const bool other_count = n && R->out->accelerators_per_node != n->accelerators_per_node;
    if (V[K_FLEET_NAME].text)
        dpas__buf_puts(&l, V[K_FLEET_NAME].text);
    else if (f)
        dpas__buf_printf(&l, "%s (modified: %lld x %lld)", f->path, (long long)R->out->nodes,
                         (long long)R->out->accelerators_per_node);
    else
        dpas__buf_puts(&l, "custom");
    if (other_count && !V[K_FLEET_NAME].text)
        dpas__buf_printf(&l, " [node %s with %lld of its %lld accelerators]", n->name,
                         (long long)R->out->accelerators_per_node,
                         (long long)n->accelerators_per_node);
    char *label = dpas__buf_finish(&l, R->err);
    char **more =
        label ? realloc(spec->fleet_labels, (spec->nfleet_labels + 1) * sizeof *more) : NULL;
    if (!more) {
        free(label);
        return dpas__fail(R->err, DPAS_ENOMEM, "fleet", "out of memory");
    }
    spec->fleet_labels = more;
    spec->fleet_labels[spec->nfleet_labels++] = label;
    R->out->fleet = label;
    return 0;
}

/* A fleet given by its parts, or a registry fleet they modify. */
static int resolve_parts(resolving *R)
{
    val *V = R->spec->v;
    dpas_scenario *out = R->out;
    const void *e;
    int rc;
    if (V[K_NODE].text) {
        if ((rc = find(R, K_NODE, DPAS_KIND_NODE, &e)))
            return rc;
        out->node_entry = e;
        out->accelerators_per_node = out->node_entry->accelerators_per_node;
    }
    if (V[K_FABRIC].text) {
        if ((rc = find(R, K_FABRIC, DPAS_KIND_FABRIC, &e)))
            return rc;
        out->fabric_entry = e;
    }
    if (V[K_NODES].set && (rc = parse_pos_int(&V[K_NODES], &out->nodes, R->err)))
        return rc;
    if (V[K_APN].set) {
        if ((rc = parse_pos_int(&V[K_APN], &out->accelerators_per_node, R->err)))
            return rc;
        /* a count below the node's keeps the node (its accelerator and its link per
         * accelerator), as Polaris's 4 A100s per node are DGX A100's accelerator and NVLink;
         * the fleet's label says so (fleet_label), never dropped silently. More than the node
         * holds is not that node. */
        if (out->node_entry && out->accelerators_per_node > out->node_entry->accelerators_per_node)
            return at(&V[K_APN],
                      dpas__fail(R->err, DPAS_EINVAL, V[K_APN].field,
                                 "%s %lld is more than node %s holds (%lld): give a node of that "
                                 "many accelerators, or at most %lld",
                                 V[K_APN].field, (long long)out->accelerators_per_node,
                                 out->node_entry->name,
                                 (long long)out->node_entry->accelerators_per_node,
                                 (long long)out->node_entry->accelerators_per_node),
                      R->err);
    }
    if (!out->nodes && !V[K_NODES].set)
        return missing(R, K_NODES, "a fleet given by its parts needs its node count");
    if (!out->accelerators_per_node && !V[K_APN].set)
        return missing(R, K_APN, "a fleet given by its parts needs it, or a registry node");
    const dpas_fleet *f = out->fleet_entry;
    if (f && out->nodes == f->count &&
        out->accelerators_per_node == f->node->accelerators_per_node && !V[K_FLEET_NAME].set)
        return 0; /* the overrides restate the registry fleet */
    out->fleet_entry = NULL;
    return fleet_label(R, f);
}

static int resolve_fleet(resolving *R)
{
    val *V = R->spec->v;
    dpas_scenario *out = R->out;
    const void *e;
    int rc;
    if (V[K_FLEET].text) {
        if ((rc = find(R, K_FLEET, DPAS_KIND_FLEET, &e)))
            return rc;
        const dpas_fleet *f = e;
        out->fleet_entry = f;
        out->node_entry = f->node;
        out->fabric_entry = f->fabric;
        out->nodes = f->count;
        out->accelerators_per_node = f->node->accelerators_per_node;
        out->fleet = f->path;
    }
    if (V[K_NODES].set || V[K_APN].set || V[K_NODE].set || V[K_FABRIC].set || V[K_FLEET_NAME].set)
        return resolve_parts(R);
    if (!out->fleet)
        return missing(R, K_FLEET, "a registry fleet, or nodes and accelerators_per_node");
    return 0;
}

static int resolve_numbers(resolving *R)
{
    val *V = R->spec->v;
    dpas_scenario *out = R->out;
    int rc;
    if (V[K_DP].set) {
        if ((rc = parse_pos_int(&V[K_DP], &out->dp_degree, R->err)))
            return rc;
    } else if (!V[K_SCENARIO].text) {
        return missing(R, K_DP, NULL);
    }
    struct {
        int k;
        dpas_rational *w;
        bool required;
    } widths[] = {
        {K_GRAD, &out->gradient_bytes_per_param, true},
        {K_CKPT, &out->checkpoint_bytes_per_param, true},
        {K_WEIGHTS, &out->weight_bytes_per_param, false},
    };
    for (size_t i = 0; i < 3; i++) {
        val *v = &V[widths[i].k];
        if (v->set && v->text) {
            if ((rc = at(v, dpas_parse_width(v->field, v->text, widths[i].w, R->err), R->err)))
                return rc;
        } else if (v->set) {
            *widths[i].w = (dpas_rational){0, 0};
        } else if (widths[i].required && !V[K_SCENARIO].text) {
            return missing(R, widths[i].k, NULL);
        }
    }
    return 0;
}

int dpas__spec_resolve(dpas_spec *spec, const dpas_registry *reg, dpas_scenario *out, int *missed,
                       dpas_error *err)
{
    int dummy, rc;
    resolving R = {spec, reg, out, missed ? missed : &dummy, err};
    val *V = spec->v;
    memset(out, 0, sizeof *out);
    *R.missing = -1;
    spec->model = NULL;
    if (V[K_SCENARIO].text) {
        const void *e;
        if ((rc = find(&R, K_SCENARIO, DPAS_KIND_SCENARIO, &e)))
            return rc;
        *out = ((const dpas_named_scenario *)e)->scenario;
        spec->model = ((const dpas_named_scenario *)e)->workload_entry;
        spec->scenario_path = ((const dpas_named_scenario *)e)->path;
    }
    if ((rc = resolve_workload(&R)) || (rc = resolve_fleet(&R)) || (rc = resolve_numbers(&R)))
        return rc;
    rc = dpas_scenario_validate(out, err);
    if (rc && err) { /* point at the value that broke the rule */
        for (int k = 0; k < K_COUNT; k++)
            if (V[k].set && (!strcmp(err->field, field_of(k)) || !strcmp(err->field, V[k].field)))
                return at(&V[k], rc, err);
    }
    return rc;
}

int dpas_spec_resolve(dpas_spec *spec, const dpas_registry *reg, dpas_scenario *out,
                      dpas_error *err)
{
    return dpas__spec_resolve(spec, reg, out, NULL, err);
}
