/* SPDX-License-Identifier: Apache-2.0 */
/* Sweep axes (issue 12: a value past 127 characters was cut, a list past 4 KiB lost its tail, a
 * range of 10^8 values was materialised): random axis text for random inputs, then points of a
 * sweep over the reference scenario. Properties:
 *   - an axis has 1 to 10^8 values; a list has one value per comma-separated item, each the value
 *     its item reads as on its own (nothing cut, nothing dropped);
 *   - a range starts at A, rises strictly, ends at or below B, and its next value would pass B
 *     (checked without overflow), so its count is right without walking it;
 *   - a dp_degree value fits int64;
 *   - a sweep of two axes past 10^9 points is refused before any work;
 *   - the first, a middle and the last point evaluate or fail with a message, and a point's row
 *     written as JSON parses.
 * Input: two bytes choose the inputs, one the metrics, then the axis texts, cut at a 0xff byte. */
#include "fuzz.h"

#include <jansson.h>
#include <stdbool.h>

static dpas_registry *reg;
static dpas_scenario base;

static void check_axis(const dpas_sweep_axis *a, const char *text)
{
    PROPERTY(a->n >= 1 && a->n <= DPAS_SWEEP_MAX_VALUES, "%zu values", a->n);
    bool ints = a->input == DPAS_SWEEP_DP_DEGREE || a->input == DPAS_SWEEP_F;
    bool numeric = ints || a->input == DPAS_SWEEP_PARAMETERS;
    if (a->range) {
        PROPERTY(numeric, "a range of a non-numeric input");
        PROPERTY(dpas_sweep_axis_u(a, 0) == a->lo, "a range that does not start at A");
        uint64_t prev = 0, last = 0;
        size_t probe[4] = {0, 1, a->n / 2, a->n - 1}, at = 0; /* rising indices, some equal */
        for (int k = 0; k < 4; k++) {
            if (probe[k] >= a->n || (k && probe[k] <= at))
                continue;
            uint64_t v = dpas_sweep_axis_u(a, probe[k]);
            PROPERTY(k == 0 || v > prev, "a range that does not rise");
            PROPERTY(v <= a->hi, "a value %llu past B %llu", (unsigned long long)v,
                     (unsigned long long)a->hi);
            prev = last = v;
            at = probe[k];
        }
        if (a->op == '+')
            PROPERTY(a->hi - last < a->step, "a range that stops %llu short of B",
                     (unsigned long long)(a->hi - last));
        else
            PROPERTY(last > a->hi / a->step, "a geometric range that stops early at %llu",
                     (unsigned long long)last);
        if (ints)
            PROPERTY(a->hi <= (uint64_t)INT64_MAX, "a dp_degree or f range past int64");
        if (a->input != DPAS_SWEEP_F || a->op != '+')
            PROPERTY(a->lo >= 1, "a range from 0 that is not f's by a step");
        return;
    }
    /* a list: the items as the text has them, each read on its own */
    size_t items = 1;
    for (const char *p = text; *p; p++)
        items += *p == ',';
    PROPERTY(a->n == items, "%zu values for %zu items", a->n, items);
    if (!numeric)
        return;
    const char *p = text;
    for (size_t k = 0; k < a->n; k++) {
        const char *e = strchr(p, ',');
        size_t l = e ? (size_t)(e - p) : strlen(p);
        char *item = fuzz_text((const uint8_t *)p, l);
        dpas_error err;
        if (ints) {
            int64_t v;
            PROPERTY(dpas_parse_int("dp", item, &v, &err) == 0 && v == a->i[k],
                     "item %zu \"%s\" is not value %lld", k, item, (long long)a->i[k]);
        } else {
            uint64_t v;
            PROPERTY(dpas_parse_count("params", item, &v, &err) == 0 && v == a->u[k],
                     "item %zu \"%s\" is not value %llu", k, item, (unsigned long long)a->u[k]);
        }
        free(item);
        p = e ? e + 1 : p + l;
    }
}

typedef struct outbuf {
    char *data;
    size_t len;
} outbuf;

static int sink(void *ctx, const char *data, size_t len)
{
    outbuf *t = ctx;
    char *p = realloc(t->data, t->len + len + 1);
    if (!p)
        abort();
    memcpy(p + t->len, data, len);
    t->len += len;
    p[t->len] = '\0';
    t->data = p;
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3 || size > 16384)
        return 0;
    if (!reg) {
        const void *e;
        if (dpas_registry_builtin(&reg, NULL) ||
            dpas_registry_find(reg, DPAS_KIND_SCENARIO, "ReferenceJobAttackSurface", &e, NULL))
            abort();
        base = ((const dpas_named_scenario *)e)->scenario;
    }
    dpas_sweep sw = {.base = base, .schedule = -1};
    dpas_sweep_input in0 = (dpas_sweep_input)(data[0] % DPAS_SWEEP_INPUT_COUNT);
    int two = data[1] & 0x80;
    dpas_sweep_input in1 = (dpas_sweep_input)(data[1] % DPAS_SWEEP_INPUT_COUNT);
    const uint8_t *cut = memchr(data + 3, 0xff, size - 3);
    char *t0 = fuzz_text(data + 3, cut ? (size_t)(cut - data - 3) : size - 3);
    char *t1 = cut ? fuzz_text(cut + 1, size - (size_t)(cut + 1 - data)) : NULL;
    dpas_error e = {0};
    int rc = dpas_sweep_axis_parse(in0, t0, NULL, reg, NULL, &sw.axes[0], &e);
    if (rc) {
        PROPERTY(e.message[0], "an axis error without a message");
        goto done;
    }
    check_axis(&sw.axes[0], t0);
    sw.naxes = 1;
    if (two && t1 && in1 != in0) {
        if (dpas_sweep_axis_parse(in1, t1, NULL, reg, NULL, &sw.axes[1], &e)) {
            PROPERTY(e.message[0], "an axis error without a message");
            goto done;
        }
        check_axis(&sw.axes[1], t1);
        sw.naxes = 2;
    }
    /* metrics: the seed's attributes, or the schedule's bytes with a fixed rule and schedule */
    if (data[2] & 1) {
        sw.schedule = (data[2] >> 1) % DPAS_SCHED_COUNT;
        dpas_rule_select((data[2] & 0x10) ? "krum" : "mean", NULL, &sw.rule, NULL);
        sw.metrics[sw.nmetrics++] = DPAS_METRIC_BYTES_PER_WORKER;
        sw.metrics[sw.nmetrics++] = DPAS_METRIC_SCALAR_BYTES;
        sw.metrics[sw.nmetrics++] = DPAS_METRIC_RATIO_TO_ALLREDUCE;
        sw.metrics[sw.nmetrics++] = DPAS_METRIC_MAX_F;
    }
    sw.metrics[sw.nmetrics++] = DPAS_ATTR_GRADIENT_BYTES;
    sw.metrics[sw.nmetrics++] = DPAS_ATTR_ACCELERATORS_PER_REPLICA;
    rc = dpas_sweep_check(&sw, &e);
    uint64_t points = (uint64_t)sw.axes[0].n * (sw.naxes > 1 ? sw.axes[1].n : 1);
    if (rc) {
        PROPERTY(e.message[0], "a check error without a message");
        goto done;
    }
    PROPERTY(points <= DPAS_SWEEP_MAX_POINTS, "%llu points passed the check",
             (unsigned long long)points);
    size_t n0 = sw.axes[0].n, n1 = sw.naxes > 1 ? sw.axes[1].n : 1;
    size_t idx[3][2] = {{0, 0}, {n0 / 2, n1 / 2}, {n0 - 1, n1 - 1}};
    dpas_column cols[DPAS_SWEEP_MAX_AXES + DPAS_METRIC_COUNT];
    dpas_cell cells[DPAS_SWEEP_MAX_AXES + DPAS_METRIC_COUNT];
    dpas_sweep_columns(&sw, cols);
    for (int k = 0; k < 3; k++) {
        if (dpas_sweep_point(&sw, idx[k][0], idx[k][1], cells, -1, NULL, &e)) {
            PROPERTY(e.message[0], "a point left out without a message");
            continue;
        }
        outbuf out = {0};
        dpas_writer_opts wo = {.format = DPAS_FORMAT_JSON, .stream = 1};
        dpas_writer *w;
        PROPERTY(dpas_writer_new(cols, (size_t)(sw.naxes + sw.nmetrics), &wo, sink, &out, &w, &e) == 0 &&
                     dpas_writer_row(w, cells, &e) == 0 && dpas_writer_end(w, &e) == 0,
                 "writer: %s", e.message);
        dpas_writer_free(w);
        json_error_t je;
        json_t *j = json_loads(out.data, JSON_DECODE_INT_AS_REAL, &je);
        PROPERTY(j && json_array_size(j) == 1, "a point's row is not JSON: %s\n%s", je.text,
                 out.data);
        json_decref(j);
        free(out.data);
    }
done:
    dpas_sweep_axis_free(&sw.axes[0]);
    dpas_sweep_axis_free(&sw.axes[1]);
    free(t0);
    free(t1);
    return 0;
}
