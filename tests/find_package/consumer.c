/* SPDX-License-Identifier: Apache-2.0 */
/* Evaluates the seed's reference scenario through an installed libdpas and prints two of its
 * attributes; run.cmake compares them with the seed (1024 accelerators, ratio 64). */
#include <dpas/dpas.h>

#include <stdio.h>

int main(void)
{
    dpas_registry *reg;
    dpas_error err;
    const void *e;
    if (dpas_registry_builtin(&reg, &err) ||
        dpas_registry_find(reg, DPAS_KIND_SCENARIO, "ReferenceJobAttackSurface", &e, &err)) {
        fprintf(stderr, "%s\n", err.message);
        return 1;
    }
    dpas_report r;
    int rc = dpas_evaluate(&((const dpas_named_scenario *)e)->scenario, &r, &err);
    if (!rc)
        printf("accelerators %lld gather_traffic_ratio %g version %s\n", (long long)r.accelerators,
               r.gather_traffic_ratio, dpas_version());
    dpas_registry_free(reg);
    return rc != 0;
}
