/* SPDX-License-Identifier: Apache-2.0 */
/* The NCCL-structured time model (dpas/calibrate.h, DPAS_NETMODEL_NCCL): internals shared by
 * fit.c (which builds curves and answers queries) and ncclmodel.c (which fits the model
 * and measures how far it is from what it did not see). Not installed. */
#ifndef DPAS_NCCLMODEL_H
#define DPAS_NCCLMODEL_H

#include "../internal.h"

/* The model's time of `bytes` of collective coll on `ranks` ranks, `per_node` per node (nodes =
 * ranks / per_node): the fastest of NCCL's algorithms (ring; tree for all_reduce) and protocols
 * (LL, LL128, Simple). 0 for one rank. */
double dpas__ncclm_time(const dpas_nccl_params *p, int coll, double bytes, double ranks,
                        double per_node);

/* Fit the model to the curves (all of one collective; each with ranks and per_node set), with
 * NCCL's own constants as a weak prior where the curves do not determine a parameter. Fills
 * sf->p, sf->determined and sf->defined / sf->reason. DPAS_ENOMEM, else 0. */
int dpas__ncclm_fit(const dpas_curve *const *cvs, size_t n, int coll, dpas_scale_fit *sf);

/* The default model's time at a scale no curve measured: the fitted model, times the curves'
 * own departures from it (ln measured / model, at the same size) averaged with weights that fade
 * with the distance between scales. cvs: the curves of the collective, in the canonical order
 * (dpas__curves_sort), so that the sum is the set's. */
double dpas__ncclm_anchored(const dpas_nccl_params *p, const dpas_curve *const *cvs, size_t n,
                            double bytes, double ranks, double per_node);

/* A total order of curves by what they hold (collective, scale, sizes, times): the fit, the
 * leave-one-scale-out and the queries take their curves in this order, so that what they answer
 * depends on the set of curves, never on the order the files were given in. 0 only for curves
 * that hold the same numbers. */
int dpas__curve_cmp(const dpas_curve *a, const dpas_curve *b);
/* Sorts v (n values) and returns their median (the mean of the middle two for an even n; NAN
 * for none): the one median of the network stage (fits' residuals, runs of one scale, LORO). */
double dpas__median_sort(double *v, size_t n);
/* Sorts cvs (n pointers) by dpas__curve_cmp. */
void dpas__curves_sort(const dpas_curve **cvs, size_t n);

/* The topology regime of a scale (dpas_net_regime): one node, exactly 2 nodes, more. */
dpas_net_regime dpas__ncclm_regime(double ranks, double per_node);

/* Distance between two scales: |ln nodes ratio| + |ln per-node ratio|. */
double dpas__scale_distance(double r1, double g1, double r2, double g2);

/* Leave each measured scale out, predict it from the others (fitting the model again), and
 * record the errors in sf (loro_*). Needs two scales or more; else leaves loro_points 0. */
int dpas__ncclm_loro(const dpas_curve *const *cvs, size_t n, int coll, dpas_scale_fit *sf);

/* The empirical curve at x inside its measured sizes (NaN outside). */
double dpas__curve_empirical(const dpas_curve *cv, double x);

/* The empirical curve at any x: outside its sizes, the outermost measurement continued with
 * the outermost piecewise regime's slope (extrapolated = 1); NaN when it cannot answer. */
double dpas__curve_empirical_ext(const dpas_curve *cv, double x, int *extrapolated);
/* An alpha_beta or piecewise line of the curve at x bytes with the ring steps and factor of
 * `ranks`; NaN when undefined. */
double dpas__curve_line(const dpas_curve *cv, int kind, double x, int64_t ranks);

#endif
