/* SPDX-License-Identifier: Apache-2.0 */
/* The registry: models, hardware, nodes, fabrics, fleets and named scenarios, read from JSON
 * (the built-in one is data/registry/registry.json, embedded at build time). Strings point into
 * the parsed JSON document, which the registry keeps alive. */
#include "../internal.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char dpas__registry_json[];
extern const size_t dpas__registry_json_len;

struct dpas_registry {
    json_t *root;
    dpas_model *models;
    dpas_hardware *hardware;
    dpas_node *nodes;
    dpas_fabric *fabrics;
    dpas_fleet *fleets;
    dpas_named_scenario *scenarios;
    size_t n[DPAS_KIND_COUNT];
};

static const char *kind_names[DPAS_KIND_COUNT] = {"model",  "hardware", "node",
                                                  "fabric", "fleet",    "scenario"};
static const char *kind_keys[DPAS_KIND_COUNT] = {"models",  "hardware", "nodes",
                                                 "fabrics", "fleets",   "scenarios"};

const char *dpas_kind_name(dpas_kind kind)
{
    return (unsigned)kind < DPAS_KIND_COUNT ? kind_names[kind] : NULL;
}

int dpas_kind_from_listing(const char *name, dpas_kind *kind, dpas_error *err)
{
    static const struct {
        const char *name;
        int kind;
    } names[] = {{"models", DPAS_KIND_MODEL},
                 {"model", DPAS_KIND_MODEL},
                 {"hardware", DPAS_KIND_HARDWARE},
                 {"nodes", DPAS_KIND_NODE},
                 {"node", DPAS_KIND_NODE},
                 {"fabrics", DPAS_KIND_FABRIC},
                 {"fabric", DPAS_KIND_FABRIC},
                 {"fleets", DPAS_KIND_FLEET},
                 {"fleet", DPAS_KIND_FLEET},
                 {"scenarios", DPAS_KIND_SCENARIO},
                 {"scenario", DPAS_KIND_SCENARIO},
                 {"precisions", DPAS_LIST_PRECISIONS},
                 {"precision", DPAS_LIST_PRECISIONS},
                 {"keys", DPAS_LIST_KEYS},
                 {"key", DPAS_LIST_KEYS}};
    char q[96];
    for (size_t i = 0; name && i < sizeof names / sizeof names[0]; i++)
        if (!dpas__strcasecmp(name, names[i].name)) { /* Models as models */
            *kind = names[i].kind;
            return 0;
        }
    return dpas__fail(err, DPAS_ENOENT, "kind",
                      "unknown registry kind %s; expected models, hardware, nodes, fabrics, "
                      "fleets, scenarios, precisions or keys",
                      dpas__quote(name ? name : "", q, sizeof q));
}

size_t dpas_registry_count(const dpas_registry *reg, dpas_kind kind)
{
    return reg && (unsigned)kind < DPAS_KIND_COUNT ? reg->n[kind] : 0;
}

const void *dpas_registry_at(const dpas_registry *reg, dpas_kind kind, size_t i)
{
    if (!reg || (unsigned)kind >= DPAS_KIND_COUNT || i >= reg->n[kind])
        return NULL;
    switch (kind) {
    case DPAS_KIND_MODEL: return &reg->models[i];
    case DPAS_KIND_HARDWARE: return &reg->hardware[i];
    case DPAS_KIND_NODE: return &reg->nodes[i];
    case DPAS_KIND_FABRIC: return &reg->fabrics[i];
    case DPAS_KIND_FLEET: return &reg->fleets[i];
    case DPAS_KIND_SCENARIO: return &reg->scenarios[i];
    default: return NULL;
    }
}

static void entry_names(const dpas_registry *reg, dpas_kind kind, size_t i, const char **path,
                        const char **name)
{
    switch (kind) {
    case DPAS_KIND_MODEL: *path = reg->models[i].path, *name = reg->models[i].name; break;
    case DPAS_KIND_HARDWARE: *path = reg->hardware[i].path, *name = reg->hardware[i].name; break;
    case DPAS_KIND_NODE: *path = reg->nodes[i].path, *name = reg->nodes[i].name; break;
    case DPAS_KIND_FABRIC: *path = reg->fabrics[i].path, *name = reg->fabrics[i].name; break;
    case DPAS_KIND_FLEET: *path = reg->fleets[i].path, *name = reg->fleets[i].name; break;
    default: *path = reg->scenarios[i].path, *name = reg->scenarios[i].name; break;
    }
}

/* Edit distance, case-insensitive, for "did you mean". */
static size_t distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63)
        return la > lb ? la : lb;
    size_t row[64];
    for (size_t j = 0; j <= lb; j++)
        row[j] = j;
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            char ca = a[i - 1], cb = b[j - 1];
            if (ca >= 'A' && ca <= 'Z')
                ca = (char)(ca - 'A' + 'a');
            if (cb >= 'A' && cb <= 'Z')
                cb = (char)(cb - 'A' + 'a');
            size_t best = diag + (ca != cb);
            if (row[j] + 1 < best)
                best = row[j] + 1;
            if (row[j - 1] + 1 < best)
                best = row[j - 1] + 1;
            diag = row[j];
            row[j] = best;
        }
    }
    return row[lb];
}

int dpas_registry_find(const dpas_registry *reg, dpas_kind kind, const char *name, const void **out,
                       dpas_error *err)
{
    char q[96];
    const char *kn = dpas_kind_name(kind);
    if (!reg || !kn)
        return dpas__fail(err, DPAS_EINVAL, "kind", "no registry or unknown kind");
    if (!name || !*name)
        return dpas__fail(err, DPAS_EINVAL, kn, "%s name is empty", kn);
    size_t n = reg->n[kind], hit = n, nci = 0;
    for (size_t i = 0; i < n && hit == n; i++) {
        const char *p, *s;
        entry_names(reg, kind, i, &p, &s);
        if (!strcmp(name, p) || !strcmp(name, s))
            hit = i;
    }
    for (size_t i = 0; i < n && hit == n; i++) {
        const char *p, *s;
        entry_names(reg, kind, i, &p, &s);
        if (!dpas__strcasecmp(name, p) || !dpas__strcasecmp(name, s)) {
            if (nci++ == 0)
                hit = i;
        }
    }
    if (hit < n && nci <= 1) {
        *out = dpas_registry_at(reg, kind, hit);
        return 0;
    }
    /* The three closest short names, compared with the last segment of what was asked. */
    const char *last = strrchr(name, '.');
    last = last ? last + 1 : name;
    size_t best[3] = {n, n, n}, bestd[3] = {(size_t)-1, (size_t)-1, (size_t)-1};
    for (size_t i = 0; i < n; i++) {
        const char *p, *s;
        entry_names(reg, kind, i, &p, &s);
        size_t d = distance(last, s);
        for (int k = 0; k < 3; k++) {
            if (d < bestd[k]) {
                for (int m = 2; m > k; m--)
                    best[m] = best[m - 1], bestd[m] = bestd[m - 1];
                best[k] = i, bestd[k] = d;
                break;
            }
        }
    }
    char list[256] = "";
    for (int k = 0; k < 3 && best[k] < n; k++) {
        const char *p, *s;
        entry_names(reg, kind, best[k], &p, &s);
        size_t used = strlen(list);
        snprintf(list + used, sizeof list - used, "%s%s", k ? ", " : "", s);
    }
    return dpas__fail(err, DPAS_ENOENT, kn,
                      "unknown %s %s; closest: %s (the registry's %s list has them all)", kn,
                      dpas__quote(name, q, sizeof q), list[0] ? list : "none",
                      kind == DPAS_KIND_HARDWARE ? "hardware" : kind_keys[kind]);
}

/* ---- loading ---- */

typedef struct loader {
    dpas_registry *reg;
    dpas_error *err;
    char where[96]; /* "models[3]" */
} loader;

static int lfail(loader *L, const char *key, const char *fmt, const char *detail)
{
    return dpas__fail(L->err, DPAS_EPARSE, key, "registry: %s.%s: %s%s", L->where, key, fmt,
                      detail ? detail : "");
}

static int get_str(loader *L, json_t *obj, const char *key, bool required, const char **out)
{
    json_t *v = json_object_get(obj, key);
    if (!v) {
        *out = NULL;
        return required ? lfail(L, key, "is required", NULL) : 0;
    }
    if (!json_is_string(v))
        return lfail(L, key, "must be a string", NULL);
    *out = json_string_value(v);
    return 0;
}

/* A positive number in the key's unit, converted as x * mul / div (dividing by 1e9 rather than
 * multiplying by 1e-9 keeps 500 ns exactly the double nearest 5e-7). */
static int get_num(loader *L, json_t *obj, const char *key, double mul, double div, double *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || !json_is_number(v))
        return lfail(L, key, "must be a number", NULL);
    double x = json_number_value(v);
    if (!(x > 0))
        return lfail(L, key, "must be > 0", NULL);
    /* in range after the unit too: 1e300 TFLOPS would be inf FLOP/s, and inf or a 0 that
     * underflowed would reach times and JSON (which has no inf) */
    double y = x * mul / div;
    if (!isfinite(y) || !(y > 0))
        return lfail(L, key, "is out of range", NULL);
    *out = y;
    return 0;
}

static int get_int(loader *L, json_t *obj, const char *key, int64_t *out)
{
    json_t *v = json_object_get(obj, key);
    if (!v || !json_is_integer(v) || json_integer_value(v) < 1)
        return lfail(L, key, "must be an integer >= 1", NULL);
    *out = (int64_t)json_integer_value(v);
    return 0;
}

static int get_count(loader *L, json_t *obj, const char *key, bool required, uint64_t *out)
{
    const char *s;
    int rc = get_str(L, obj, key, required, &s);
    *out = 0;
    if (rc || !s)
        return rc;
    dpas_error e;
    if (dpas_parse_count(key, s, out, &e))
        return lfail(L, key, e.message, NULL);
    return 0;
}

/* "80 GiB" and the like: a whole number and a binary or decimal byte unit. */
static int get_size(loader *L, json_t *obj, const char *key, dpas_bytes *out)
{
    static const struct {
        const char *u;
        uint64_t f;
    } units[] = {{"B", 1},
                 {"kB", 1000ull},
                 {"MB", 1000000ull},
                 {"GB", 1000000000ull},
                 {"TB", 1000000000000ull},
                 {"KiB", 1ull << 10},
                 {"MiB", 1ull << 20},
                 {"GiB", 1ull << 30},
                 {"TiB", 1ull << 40}};
    const char *s;
    int rc = get_str(L, obj, key, true, &s);
    if (rc)
        return rc;
    const char *sp = strchr(s, ' ');
    char num[32];
    if (!sp || (size_t)(sp - s) >= sizeof num)
        return lfail(L, key, "must be a count and a unit, such as \"80 GiB\"", NULL);
    memcpy(num, s, (size_t)(sp - s));
    num[sp - s] = '\0';
    uint64_t c;
    dpas_error e;
    if (dpas_parse_count(key, num, &c, &e))
        return lfail(L, key, e.message, NULL);
    for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
        if (!strcmp(sp + 1, units[i].u)) {
            if (__builtin_mul_overflow(c, units[i].f, &out->whole))
                return lfail(L, key, "overflows", NULL);
            out->frac_num = 0;
            out->frac_den = 1;
            return 0;
        }
    }
    return lfail(L, key, "has an unknown unit (B, kB, MB, GB, TB, KiB, MiB, GiB, TiB)", NULL);
}

/* The short name is the last dotted segment of the path: a suffix of the same string. */
static const char *short_name(const char *path)
{
    const char *dot = strrchr(path, '.');
    return dot ? dot + 1 : path;
}

static int find_ref(loader *L, dpas_kind kind, json_t *obj, const char *key, const void **out)
{
    const char *s;
    int rc = get_str(L, obj, key, true, &s);
    if (rc)
        return rc;
    dpas_error e;
    if (dpas_registry_find(L->reg, kind, s, out, &e))
        return lfail(L, key, e.message, NULL);
    return 0;
}

/* A model's optional "shape": layers, hidden, heads, kv_heads, ffn, sequence (integers >= 1)
 * and its source; heads divides hidden, kv_heads divides heads. */
static int get_shape(loader *L, json_t *o, dpas_model_shape *sh)
{
    json_t *v = json_object_get(o, "shape");
    int rc;
    memset(sh, 0, sizeof *sh);
    if (!v)
        return 0;
    if (!json_is_object(v))
        return lfail(L, "shape", "must be an object", NULL);
    if ((rc = get_int(L, v, "layers", &sh->layers)) ||
        (rc = get_int(L, v, "hidden", &sh->hidden)) || (rc = get_int(L, v, "heads", &sh->heads)) ||
        (rc = get_int(L, v, "kv_heads", &sh->kv_heads)) || (rc = get_int(L, v, "ffn", &sh->ffn)) ||
        (rc = get_int(L, v, "sequence", &sh->sequence)) ||
        (rc = get_str(L, v, "source", true, &sh->source)))
        return rc;
    if (sh->hidden % sh->heads || sh->heads % sh->kv_heads)
        return lfail(L, "shape", "heads must divide hidden and kv_heads divide heads", NULL);
    return 0;
}

static int load_entry(loader *L, dpas_kind kind, size_t i, json_t *o)
{
    dpas_registry *reg = L->reg;
    const char *path, *display, *source;
    int rc;
    if ((rc = get_str(L, o, "path", true, &path)) ||
        (rc = get_str(L, o, "display", false, &display)) ||
        (rc = get_str(L, o, "source", true, &source)))
        return rc;
    if (!display)
        display = short_name(path);
    switch (kind) {
    case DPAS_KIND_MODEL: {
        dpas_model *m = &reg->models[i];
        m->path = path, m->name = short_name(path), m->display = display, m->source = source;
        if ((rc = get_count(L, o, "parameters", false, &m->parameters)) ||
            (rc = get_count(L, o, "active_parameters", false, &m->active_parameters)) ||
            (rc = get_str(L, o, "missing", false, &m->missing)) ||
            (rc = get_str(L, o, "notes", false, &m->notes)))
            return rc;
        if (!m->parameters && !m->missing)
            return lfail(L, "parameters", "is required (or say why it is missing)", NULL);
        return get_shape(L, o, &m->shape);
    }
    case DPAS_KIND_HARDWARE: {
        dpas_hardware *h = &reg->hardware[i];
        h->path = path, h->name = short_name(path), h->display = display, h->source = source;
        if ((rc = get_size(L, o, "memory", &h->memory)) ||
            (rc = get_num(L, o, "peak_tflops", 1e12, 1, &h->peak_flops)) ||
            (rc = get_num(L, o, "hbm_GBps", 1e9, 1, &h->hbm_bandwidth)) ||
            (rc = get_num(L, o, "nvlink_GBps", 1e9, 1, &h->nvlink_bandwidth)) ||
            (rc = get_num(L, o, "tdp_w", 1, 1, &h->tdp_watts)))
            return rc;
        return 0;
    }
    case DPAS_KIND_NODE: {
        dpas_node *n = &reg->nodes[i];
        n->path = path, n->name = short_name(path), n->display = display, n->source = source;
        const void *hw;
        if ((rc = find_ref(L, DPAS_KIND_HARDWARE, o, "accelerator", &hw)) ||
            (rc = get_int(L, o, "accelerators_per_node", &n->accelerators_per_node)) ||
            (rc = get_num(L, o, "intra_GBps", 1e9, 1, &n->intra_bandwidth)) ||
            (rc = get_num(L, o, "intra_latency_ns", 1, 1e9, &n->intra_latency)))
            return rc;
        n->accelerator = hw;
        return 0;
    }
    case DPAS_KIND_FABRIC: {
        dpas_fabric *f = &reg->fabrics[i];
        f->path = path, f->name = short_name(path), f->display = display, f->source = source;
        if ((rc = get_num(L, o, "bandwidth_Gbps", 1e9, 8, &f->bandwidth)) ||
            (rc = get_num(L, o, "latency_us", 1, 1e6, &f->latency)))
            return rc;
        f->topology = "fat-tree";
        f->oversubscription = 1.0;
        return 0;
    }
    case DPAS_KIND_FLEET: {
        dpas_fleet *f = &reg->fleets[i];
        f->path = path, f->name = short_name(path), f->display = display, f->source = source;
        const void *node, *fab;
        if ((rc = find_ref(L, DPAS_KIND_NODE, o, "node", &node)) ||
            (rc = find_ref(L, DPAS_KIND_FABRIC, o, "fabric", &fab)) ||
            (rc = get_int(L, o, "count", &f->count)))
            return rc;
        f->node = node;
        f->fabric = fab;
        return 0;
    }
    default: {
        dpas_named_scenario *n = &reg->scenarios[i];
        n->path = path, n->name = short_name(path), n->display = display, n->source = source;
        const void *m, *fl;
        const char *g, *c, *w;
        if ((rc = find_ref(L, DPAS_KIND_MODEL, o, "workload", &m)) ||
            (rc = find_ref(L, DPAS_KIND_FLEET, o, "fleet", &fl)) ||
            (rc = get_int(L, o, "dp_degree", &n->scenario.dp_degree)) ||
            (rc = get_str(L, o, "gradient_bytes_per_param", true, &g)) ||
            (rc = get_str(L, o, "checkpoint_bytes_per_param", true, &c)) ||
            (rc = get_str(L, o, "weight_bytes_per_param", false, &w)) ||
            (rc = get_str(L, o, "notes", false, &n->notes)))
            return rc;
        const dpas_model *model = m;
        const dpas_fleet *fleet = fl;
        dpas_scenario *s = &n->scenario;
        n->workload_entry = model;
        s->workload = model->path;
        s->parameters = model->parameters;
        s->fleet = fleet->path;
        s->fleet_entry = fleet;
        s->node_entry = fleet->node;
        s->fabric_entry = fleet->fabric;
        s->nodes = fleet->count;
        s->accelerators_per_node = fleet->node->accelerators_per_node;
        dpas_error e;
        if (dpas_parse_width("gradient_bytes_per_param", g, &s->gradient_bytes_per_param, &e) ||
            dpas_parse_width("checkpoint_bytes_per_param", c, &s->checkpoint_bytes_per_param, &e) ||
            (w && dpas_parse_width("weight_bytes_per_param", w, &s->weight_bytes_per_param, &e)))
            return lfail(L, e.field, e.message, NULL);
        if (!w)
            s->weight_bytes_per_param = (dpas_rational){0, 0};
        return 0;
    }
    }
}

int dpas_registry_load_json(const char *text, size_t len, dpas_registry **out, dpas_error *err)
{
    *out = NULL;
    dpas_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory loading the registry");
    json_error_t je;
    reg->root = json_loadb(text, len, JSON_REJECT_DUPLICATES, &je);
    if (!reg->root) {
        dpas__fail_at(err, DPAS_EPARSE, "registry", je.line, je.column, "registry: %s", je.text);
        dpas_registry_free(reg);
        return DPAS_EPARSE;
    }
    loader L = {reg, err, ""};
    size_t sizes[DPAS_KIND_COUNT] = {sizeof(dpas_model), sizeof(dpas_hardware),
                                     sizeof(dpas_node),  sizeof(dpas_fabric),
                                     sizeof(dpas_fleet), sizeof(dpas_named_scenario)};
    void **arrays[DPAS_KIND_COUNT] = {(void **)&reg->models, (void **)&reg->hardware,
                                      (void **)&reg->nodes,  (void **)&reg->fabrics,
                                      (void **)&reg->fleets, (void **)&reg->scenarios};
    /* Kinds load in dependency order: a node names hardware, a fleet names a node and a fabric,
     * a scenario names a model and a fleet. */
    static const dpas_kind order[DPAS_KIND_COUNT] = {DPAS_KIND_MODEL, DPAS_KIND_HARDWARE,
                                                     DPAS_KIND_NODE,  DPAS_KIND_FABRIC,
                                                     DPAS_KIND_FLEET, DPAS_KIND_SCENARIO};
    int rc = 0;
    for (int k = 0; k < DPAS_KIND_COUNT && !rc; k++) {
        dpas_kind kind = order[k];
        json_t *arr = json_object_get(reg->root, kind_keys[kind]);
        if (!arr) /* a kind may be absent */
            continue;
        if (!json_is_array(arr)) {
            rc = dpas__fail(err, DPAS_EPARSE, kind_keys[kind], "registry: %s must be an array",
                            kind_keys[kind]);
            break;
        }
        size_t n = json_array_size(arr);
        *arrays[kind] = calloc(n ? n : 1, sizes[kind]);
        if (!*arrays[kind]) {
            rc = dpas__fail(err, DPAS_ENOMEM, "", "out of memory loading the registry");
            break;
        }
        for (size_t i = 0; i < n && !rc; i++) {
            snprintf(L.where, sizeof L.where, "%s[%zu]", kind_keys[kind], i);
            json_t *o = json_array_get(arr, i);
            if (!json_is_object(o)) {
                rc = dpas__fail(err, DPAS_EPARSE, kind_keys[kind], "registry: %s must be an object",
                                L.where);
                break;
            }
            rc = load_entry(&L, kind, i, o);
            for (size_t j = 0; j < i && !rc; j++) { /* names must be unique within a kind */
                const char *pi, *si, *pj, *sj;
                reg->n[kind] = i + 1;
                entry_names(reg, kind, i, &pi, &si);
                entry_names(reg, kind, j, &pj, &sj);
                if (!dpas__strcasecmp(si, sj))
                    rc = dpas__fail(err, DPAS_EPARSE, kind_keys[kind],
                                    "registry: %s: short name %s is also %s", L.where, si, pj);
            }
            reg->n[kind] = i + 1;
        }
    }
    if (rc) {
        dpas_registry_free(reg);
        return rc;
    }
    *out = reg;
    return 0;
}

int dpas_registry_builtin(dpas_registry **out, dpas_error *err)
{
    return dpas_registry_load_json(dpas__registry_json, dpas__registry_json_len, out, err);
}

void dpas_registry_free(dpas_registry *reg)
{
    if (!reg)
        return;
    json_decref(reg->root);
    free(reg->models);
    free(reg->hardware);
    free(reg->nodes);
    free(reg->fabrics);
    free(reg->fleets);
    free(reg->scenarios);
    free(reg);
}
