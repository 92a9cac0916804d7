/* SPDX-License-Identifier: Apache-2.0 */
/* What the parts of a resolution share, below them: a missing key (for the front end's hint),
 * a comma-separated list, and the scenario from the keys that are its inputs. */
#include "request_inputs.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int dpas__request_missing(dpas_request *rq, dpas_key k, dpas_error *err, const char *fmt, ...)
{
    char m[sizeof err->message];
    va_list ap;
    va_start(ap, fmt);
    dpas__mark_cut(m, sizeof m, vsnprintf(m, sizeof m, fmt, ap));
    va_end(ap);
    rq->missing = (int)k;
    return dpas__fail(err, DPAS_EINVAL, dpas_key_name(k), "%s", m);
}

int dpas__request_split(const char *field, const char *text, char ***items, size_t *n,
                        dpas_error *err)
{
    size_t cap = 1;
    for (const char *p = text; *p; p++)
        cap += *p == ',';
    char *copy = strdup(text), **v = calloc(cap + 1, sizeof *v), q[96];
    *items = NULL;
    *n = 0;
    if (!copy || !v) {
        free(copy), free(v);
        return dpas__fail(err, DPAS_ENOMEM, "", "out of memory");
    }
    v[0] = copy;
    size_t k = 1;
    for (char *p = copy; *p; p++)
        if (*p == ',') {
            *p = '\0';
            v[k++] = p + 1;
        }
    /* names (every ENUM list of the key table: rule, schedule, attr, parallelism) are read in
     * any case (data and DATA, median and Median are one item, as allgather,AllGather is one
     * schedule): one given twice in two cases is refused as one given twice is. File names and
     * quantities (1Mb and 1MB) keep their case; their values are compared where they are read. */
    int fk = dpas_key_from_name(field);
    bool exact = fk < 0 || dpas_key_type_of((dpas_key)fk) != DPAS_TYPE_ENUM;
    int rc = 0;
    for (size_t i = 0; !rc && i < k; i++) {
        if (!*v[i])
            rc = dpas__fail(err, DPAS_EINVAL, field, "%s: an empty item in the list %s", field,
                            dpas__quote(text, q, sizeof q));
        for (size_t j = 0; !rc && j < i; j++)
            if (!strcmp(v[i], v[j]))
                rc = dpas__fail(err, DPAS_EINVAL, field, "%s: %s is given twice", field,
                                dpas__quote(v[i], q, sizeof q));
            else if (!exact && !dpas__strcasecmp(v[i], v[j])) {
                char r[96];
                rc = dpas__fail(err, DPAS_EINVAL, field, "%s: %s is given twice (as %s)", field,
                                dpas__quote(v[i], q, sizeof q), dpas__quote(v[j], r, sizeof r));
            }
    }
    if (rc) {
        free(copy), free(v);
        return rc;
    }
    *items = v;
    *n = k;
    return 0;
}

int dpas__request_scenario(dpas_request *rq, char *const *override, dpas_error *err)
{
    int rc;
    /* in the order of the input table: a fleet before the nodes that modify it */
    for (int k = 0; k < DPAS_INPUT_COUNT; k++) {
        const char *v = override && override[k] ? override[k] : text_of(rq, (dpas_key)k);
        if (!v)
            continue;
        if (k == DPAS_KEY_WEIGHT_WIDTH && !strcmp(v, "none"))
            v = NULL; /* no weight width: the seed's None */
        if ((rc = dpas_spec_set_input(rq->spec, (dpas_input)k, v, dpas_key_name((dpas_key)k), err)))
            return rc;
    }
    if ((rc = dpas__spec_resolve(rq->spec, rq->reg, &rq->scenario, &rq->missing, err)))
        return rc;
    rq->label = dpas_spec_label(rq->spec);
    return 0;
}
