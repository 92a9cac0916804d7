/* SPDX-License-Identifier: Apache-2.0 */
/*
 * dpas — data-parallel attack surface.
 *
 * The public API of libdpas: the DataParallelAttackSurfaceScenario of mlsysim, computed exactly,
 * over a registry of real models and fleets.
 *
 * Ownership, stated once for the whole API:
 *   - Result structs (dpas_report, dpas_error, dpas_scenario, dpas_value) are caller-allocated.
 *   - Every dpas_*_new / dpas_*_load has a dpas_*_free that accepts NULL.
 *   - A returned `const char *` is borrowed: it lives as long as the object it came from
 *     (the registry for registry strings, static storage for names and descriptions).
 *   - A returned `char *` (renderers) is owned by the caller and released with dpas_free().
 *   - The library never prints, never exits, and has no mutable global state; every function
 *     is safe to call from several threads on distinct objects.
 *
 * Errors: fallible functions return 0 or a negative DPAS_E* code. When the caller passes a
 * dpas_error, it is filled with the code, the field at fault and a message that names the field,
 * the value and the rule ("dp_degree must be >= 1, got 0"); for files also line and column.
 *
 * Exactness: parameter counts are integers; widths (bytes per parameter) are exact rationals read
 * from decimal text; byte counts are exact (whole part plus a reduced fraction) and every product
 * is overflow-checked. Doubles carry only dimensionless factors, ratios and times.
 */
#ifndef DPAS_DPAS_H
#define DPAS_DPAS_H

/* The topic headers, in the order of the flow: base, units, scenario (registry, spec, evaluate),
 * analysis (rules, schedules, inventory and memory, calibration), kernels, sweep, the request
 * (which types each analysis' options), render. */
#include "dpas/base.h"
#include "dpas/units.h"
#include "dpas/registry.h"
#include "dpas/spec.h"
#include "dpas/evaluate.h"
#include "dpas/rules.h"
#include "dpas/schedules.h"
#include "dpas/cost.h"
#include "dpas/step.h"
#include "dpas/inventory.h"
#include "dpas/nccl.h"
#include "dpas/calibrate.h"
#include "dpas/kernels.h"
#include "dpas/sweep.h"
#include "dpas/request.h"
#include "dpas/table.h"
#include "dpas/render.h"
#include "dpas/plot.h"

#endif
