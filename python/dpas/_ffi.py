# SPDX-License-Identifier: Apache-2.0
"""ctypes mirror of the public headers (include/dpas/*.h): finds libdpas, declares the structs and
functions the binding uses, and checks every mirrored struct's size against the library's own
(dpas_sizeof), so that a binding and a library that do not match fail at import, not later.

Nothing here validates arguments: ctypes wraps integers silently (2**64 + 64 passed as an
int64_t is 64), so every caller goes through dpas._check first."""
from __future__ import annotations

import ctypes
import ctypes.util
import os
import sys
from typing import Iterator

c_u64, c_i64, c_char_p, c_void_p = ctypes.c_uint64, ctypes.c_int64, ctypes.c_char_p, ctypes.c_void_p
c_int, c_uint, c_size_t, c_double = ctypes.c_int, ctypes.c_uint, ctypes.c_size_t, ctypes.c_double


# ---- dpas/base.h, dpas/units.h ------------------------------------------------------------------

class Error(ctypes.Structure):
    _fields_ = [("code", c_int), ("line", c_int), ("column", c_int),
                ("field", ctypes.c_char * 64), ("message", ctypes.c_char * 512)]


class Rational(ctypes.Structure):
    _fields_ = [("num", c_u64), ("den", c_u64)]


class Bytes(ctypes.Structure):
    _fields_ = [("whole", c_u64), ("frac_num", c_u64), ("frac_den", c_u64)]


# ---- dpas/registry.h ------------------------------------------------------------------------------

class Scenario(ctypes.Structure):
    _fields_ = [("workload", c_char_p), ("parameters", c_u64), ("fleet", c_char_p),
                ("nodes", c_i64), ("accelerators_per_node", c_i64), ("dp_degree", c_i64),
                ("gradient_bytes_per_param", Rational), ("checkpoint_bytes_per_param", Rational),
                ("weight_bytes_per_param", Rational), ("fleet_entry", c_void_p),
                ("node_entry", c_void_p), ("fabric_entry", c_void_p)]


class ModelShape(ctypes.Structure):
    _fields_ = [("layers", c_i64), ("hidden", c_i64), ("heads", c_i64), ("kv_heads", c_i64),
                ("ffn", c_i64), ("sequence", c_i64), ("source", c_char_p)]


class Model(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p), ("parameters", c_u64),
                ("active_parameters", c_u64), ("missing", c_char_p), ("notes", c_char_p),
                ("source", c_char_p), ("shape", ModelShape)]


class Hardware(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p), ("memory", Bytes),
                ("peak_flops", c_double), ("hbm_bandwidth", c_double),
                ("nvlink_bandwidth", c_double), ("tdp_watts", c_double), ("source", c_char_p)]


class Node(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p),
                ("accelerator", ctypes.POINTER(Hardware)), ("accelerators_per_node", c_i64),
                ("intra_bandwidth", c_double), ("intra_latency", c_double), ("source", c_char_p)]


class Fabric(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p),
                ("bandwidth", c_double), ("latency", c_double), ("topology", c_char_p),
                ("oversubscription", c_double), ("source", c_char_p)]


class Fleet(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p),
                ("node", ctypes.POINTER(Node)), ("count", c_i64), ("fabric", ctypes.POINTER(Fabric)),
                ("source", c_char_p)]


class NamedScenario(ctypes.Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("display", c_char_p), ("scenario", Scenario),
                ("workload_entry", ctypes.POINTER(Model)), ("notes", c_char_p), ("source", c_char_p)]


# registry kinds (enum dpas_kind) and the struct each entry is
KINDS = {"model": (0, Model), "hardware": (1, Hardware), "node": (2, Node), "fabric": (3, Fabric),
         "fleet": (4, Fleet), "scenario": (5, NamedScenario)}


# ---- dpas/evaluate.h --------------------------------------------------------------------------------

class Report(ctypes.Structure):
    _fields_ = [("accelerators", c_i64), ("nodes", c_i64), ("accelerators_per_node", c_i64),
                ("accelerators_per_replica", c_double), ("gradient_bytes", Bytes),
                ("checkpoint_bytes", Bytes), ("weight_bytes", Bytes),
                ("allreduce_factor", c_double), ("gather_factor", c_i64),
                ("gather_traffic_ratio", c_double), ("undefined", c_uint), ("warnings", c_uint)]


class Value(ctypes.Structure):
    _fields_ = [("kind", c_int), ("i", c_i64), ("r", c_double), ("bytes", Bytes)]


VALUE_INT, VALUE_REAL, VALUE_BYTES = 0, 1, 2  # enum dpas_value_kind


# ---- dpas/rules.h, dpas/schedules.h, dpas/cost.h ----------------------------------------------------

class Rule(ctypes.Structure):
    _fields_ = [("id", c_int), ("name", c_char_p), ("display", c_char_p), ("convention", c_char_p),
                ("is_default", c_int), ("a", c_int), ("b", c_int), ("condition", c_char_p),
                ("compute", c_char_p), ("caps", c_uint), ("neighbour_drop", c_int),
                ("neighbours", c_char_p), ("source", c_char_p), ("notes", c_char_p)]


# DPAS_RULE_CAP_*
CAP_SUMS, CAP_COORDINATEWISE, CAP_DISTANCES, CAP_ITERATIVE, CAP_SELECTS, CAP_PREAGGREGATION = (
    1, 2, 4, 8, 16, 32)


class RuleRow(ctypes.Structure):
    _fields_ = [("rule", ctypes.POINTER(Rule)), ("max_f", c_i64), ("min_n", c_i64)]


class Links(ctypes.Structure):
    _fields_ = [("inter_bandwidth", c_double), ("inter_latency", c_double),
                ("intra_bandwidth", c_double), ("intra_latency", c_double)]


class CostOpts(ctypes.Structure):
    _fields_ = [("rules", ctypes.POINTER(ctypes.POINTER(Rule))), ("nrules", c_size_t),
                ("schedules", c_uint), ("iterations", c_i64), ("steps", c_i64), ("f", c_i64),
                ("compute_rate", c_double), ("links", ctypes.POINTER(Links)),
                ("links_source", c_char_p), ("net", ctypes.c_void_p), ("net_kind", c_int),
                ("memory_bandwidth", c_double), ("zero", c_int)]


class CostRow(ctypes.Structure):
    _fields_ = [("rule", ctypes.POINTER(Rule)), ("schedule", c_int), ("realisable", c_int),
                ("why", c_char_p), ("max_f", c_i64), ("tolerates", c_int),
                ("bytes_per_worker", Bytes), ("bytes_received", Bytes), ("scalar_bytes", Bytes),
                ("ratio_to_allreduce", c_double), ("time_flat_s", c_double),
                ("time_hierarchical_s", c_double), ("compute_s", c_double),
                ("time_model", c_char_p), ("time_extrapolated", c_int), ("time_rescaled", c_int),
                ("time_basis", c_int), ("time_band_lo_s", c_double), ("time_band_hi_s", c_double),
                ("compute_flops", c_double), ("compute_bytes", c_double),
                ("compute_bound", c_char_p), ("time_s", c_double), ("total_s", c_double)]


COST_MAX_NOTES = 8  # DPAS_COST_MAX_NOTES


class Cost(ctypes.Structure):
    _fields_ = [("rows", ctypes.POINTER(CostRow)), ("nrows", c_size_t), ("unrealisable", c_size_t),
                ("dp_degree", c_i64), ("steps", c_i64), ("iterations", c_i64), ("f", c_i64),
                ("compute_rate", c_double), ("gradient_bytes", Bytes), ("have_links", c_int),
                ("have_intra", c_int), ("calibrated", c_int), ("net_kind", c_int), ("links", Links),
                ("fabric", c_char_p), ("node", c_char_p), ("links_source", c_char_p),
                ("fabric_name", c_char_p), ("node_name", c_char_p),
                ("accelerators_per_node", c_i64), ("nnotes", c_size_t),
                ("notes", (ctypes.c_char * 400) * COST_MAX_NOTES), ("peak_flops", c_double),
                ("memory_bandwidth", c_double)]


# ---- dpas/inventory.h -----------------------------------------------------------------------------

class Convention(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("width", Rational), ("what", c_char_p), ("source", c_char_p),
                ("is_training_state", c_int)]


class Memory(ctypes.Structure):
    _fields_ = [("state", Bytes), ("capacity", Bytes), ("headroom", Bytes),
                ("utilisation", c_double), ("fits", c_int), ("accelerators_per_replica", c_double),
                ("smallest_zero_stage", c_int), ("largest_dp_degree", c_i64),
                ("activations_counted", c_int), ("activations_per_layer", Bytes),
                ("activations", Bytes), ("total", Bytes), ("optimizer", c_char_p),
                ("optimizer_bytes", c_u64), ("recompute", c_char_p), ("layers", c_i64),
                ("micro_batch", c_u64), ("sequence", c_u64), ("smallest_dp_degree", c_i64),
                ("smallest_recompute", c_int), ("activations_note", ctypes.c_char * 240),
                ("smallest_nodes", c_i64)]


class InventoryRow(ctypes.Structure):
    _fields_ = [("item", ctypes.c_char * 48), ("where", c_char_p), ("basis", ctypes.c_char * 64),
                ("bytes", Bytes), ("source", c_char_p)]


# ---- dpas/request.h, dpas/sweep.h ------------------------------------------------------------------

class RequestOpts(ctypes.Structure):
    _fields_ = [("cost", CostOpts), ("n", c_i64), ("f", c_i64), ("convention", c_char_p),
                ("state", ctypes.POINTER(Convention)), ("zero", c_int), ("attrs", c_uint),
                ("explain", c_int), ("y", c_int), ("title", c_char_p),
                ("calibration", ctypes.POINTER(c_char_p)), ("ncalibration", c_size_t),
                ("optimizer", ctypes.c_void_p), ("recompute", c_int), ("micro_batch", c_u64),
                ("sequence", c_u64)]


class Cell(ctypes.Structure):
    _fields_ = [("null", c_int), ("text", c_char_p), ("i", c_i64), ("u", c_u64), ("real", c_double),
                ("bytes", Bytes), ("boolean", c_int)]


class Column(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("type", c_int), ("flags", c_uint)]


class SweepTally(ctypes.Structure):
    _fields_ = [("shown", c_u64), ("skipped", c_u64), ("first", ctypes.c_char * 512)]


# enum dpas_col_type
COL_TEXT, COL_INT, COL_REAL, COL_BYTES, COL_BOOL, COL_UINT = 0, 1, 2, 3, 4, 5
# dpas_key_flags bits
KEY_LIST, KEY_AXIS, KEY_REPEAT, KEY_SWITCH, KEY_LOCAL, KEY_INPUT, KEY_RANGE = \
    1, 2, 4, 8, 16, 32, 64
SWEEP_FN = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(Cell))
SINK_FN = ctypes.CFUNCTYPE(c_int, c_void_p, ctypes.POINTER(ctypes.c_char), c_size_t)


class WriterOpts(ctypes.Structure):
    _fields_ = [("format", c_int), ("units", c_int), ("stream", c_int), ("width", c_int),
                ("null_text", c_char_p), ("no_header", c_int), ("document", c_int)]


# ---- dpas/plot.h and a sweep's figure ------------------------------------------------------------

class Series(ctypes.Structure):
    _fields_ = [("name", c_char_p), ("x", ctypes.POINTER(c_double)),
                ("y", ctypes.POINTER(c_double)), ("n", c_size_t)]


class PlotSpec(ctypes.Structure):
    _fields_ = [("title", c_char_p), ("xlabel", c_char_p), ("ylabel", c_char_p), ("xlog", c_int),
                ("ylog", c_int), ("xunit", c_int), ("yunit", c_int), ("width", c_int),
                ("height", c_int), ("font", c_char_p), ("font_size", c_double),
                ("legend_title", c_char_p)]


class SweepFigure(ctypes.Structure):
    _fields_ = [("ymetric", c_int), ("npoints", c_size_t), ("nseries", c_size_t),
                ("nfacets", c_size_t), ("x", ctypes.POINTER(c_double)),
                ("y", ctypes.POINTER(c_double)), ("series", ctypes.POINTER(Series)),
                ("series_names", ctypes.POINTER(c_char_p)), ("facet_names", ctypes.POINTER(c_char_p)),
                ("xname", c_char_p), ("yname", c_char_p), ("series_input", c_char_p),
                ("facet_input", c_char_p), ("xlog", c_int), ("ylog", c_int), ("xunit", c_int),
                ("yunit", c_int), ("kept", c_u64), ("skipped", c_u64), ("first", ctypes.c_char * 512)]


PLOT_SVG, PLOT_PNG, PLOT_PDF = 0, 1, 2  # enum dpas_plot_format


# ---- dpas/render.h --------------------------------------------------------------------------------

class RenderOpts(ctypes.Structure):
    _fields_ = [("format", c_int), ("units", c_int), ("explain", c_int), ("attrs", c_uint),
                ("label", c_char_p)]


FORMAT_JSON = 1                                  # enum dpas_format
UNITS_SI, UNITS_IEC = 0, 1                       # enum dpas_units

# Every mirrored struct, by its C name: checked against dpas_sizeof at load.
MIRRORS = {"dpas_error": Error, "dpas_rational": Rational, "dpas_bytes": Bytes,
           "dpas_scenario": Scenario, "dpas_report": Report, "dpas_value": Value,
           "dpas_model": Model, "dpas_hardware": Hardware, "dpas_node": Node,
           "dpas_fabric": Fabric, "dpas_fleet": Fleet, "dpas_named_scenario": NamedScenario,
           "dpas_render_opts": RenderOpts, "dpas_rule": Rule, "dpas_rule_row": RuleRow,
           "dpas_links": Links, "dpas_cost_opts": CostOpts, "dpas_cost_row": CostRow,
           "dpas_cost": Cost, "dpas_convention": Convention, "dpas_memory": Memory,
           "dpas_inventory_row": InventoryRow, "dpas_request_opts": RequestOpts,
           "dpas_cell": Cell, "dpas_column": Column, "dpas_sweep_tally": SweepTally,
           "dpas_series": Series, "dpas_plot_spec": PlotSpec, "dpas_sweep_figure": SweepFigure,
           "dpas_writer_opts": WriterOpts}


# ---- finding and loading the library ------------------------------------------------------------

def _candidates() -> Iterator[str]:
    """Where libdpas may be, in order: DPAS_LIBRARY (a file; nothing else is tried),
    DPAS_LIBRARY_DIR, the record cmake --install writes beside the package it installs, the
    build trees of the source tree this package sits in, the dynamic linker's search (its
    soname: LD_LIBRARY_PATH, the ld.so cache), ctypes.util.find_library, and the lib folders of
    /usr/local (cmake --install's default prefix, which the ld.so cache may not have seen yet)
    and of this Python's prefix."""
    env = os.environ.get("DPAS_LIBRARY")
    if env:
        yield env
        return
    d = os.environ.get("DPAS_LIBRARY_DIR")
    if d:
        yield os.path.join(d, "libdpas.so")
    try:
        from . import _config  # type: ignore[attr-defined]  # written by cmake --install
        yield os.path.join(_config.LIBDIR, "libdpas.so")
    except ImportError:
        pass
    here = os.path.dirname(os.path.abspath(__file__))
    root = os.path.dirname(os.path.dirname(here))
    if os.path.exists(os.path.join(root, "CMakeLists.txt")):  # python/dpas inside the source tree
        for b in ("build", "build-asan"):
            yield os.path.join(root, b, "libdpas.so")
    yield SONAME
    found = ctypes.util.find_library("dpas")
    if found:
        yield found
    yield "/usr/local/lib/libdpas.so"
    yield os.path.join(sys.prefix, "lib", "libdpas.so")


SONAME = "libdpas.so.0"  # the library's ABI version (CMakeLists.txt: SOVERSION)


def load() -> ctypes.CDLL:
    tried = []
    for path in _candidates():
        if os.path.exists(path) or "/" not in path:
            try:
                lib = ctypes.CDLL(path)
                break
            except OSError as e:
                tried.append(f"{path}: {e}")
        else:
            tried.append(f"{path}: no such file")
    else:
        raise ImportError("dpas: cannot find libdpas.so (build it with 'make' and set DPAS_LIBRARY "
                          "to its path, or install it with 'cmake --install'); tried: "
                          + "; ".join(tried))
    _declare(lib)
    _check_layout(lib)
    return lib


def _declare(lib: ctypes.CDLL) -> None:
    E = ctypes.POINTER(Error)
    P = ctypes.POINTER
    sig = {
        "dpas_sizeof": (c_size_t, [c_char_p]),
        "dpas_version": (c_char_p, []),
        "dpas_strerror": (c_char_p, [c_int]),
        "dpas_err_name": (c_char_p, [c_int]),
        "dpas_err_title": (c_char_p, [c_int]),
        "dpas_free": (None, [c_void_p]),
        "dpas_write_output": (c_int, [c_char_p, c_char_p, c_char_p, c_size_t, E]),
        "dpas_registry_builtin": (c_int, [P(c_void_p), E]),
        "dpas_registry_free": (None, [c_void_p]),
        "dpas_registry_count": (c_size_t, [c_void_p, c_int]),
        "dpas_registry_at": (c_void_p, [c_void_p, c_int, c_size_t]),
        "dpas_key_name": (c_char_p, [c_int]),
        "dpas_key_from_name": (c_int, [c_char_p]),
        "dpas_key_keyword": (c_char_p, [c_int]),
        "dpas_key_metavar": (c_char_p, [c_int]),
        "dpas_key_flags": (c_uint, [c_int]),
        "dpas_key_help": (c_char_p, [c_int]),
        "dpas_format_name": (c_char_p, [c_int]),
        "dpas_units_name": (c_char_p, [c_int]),
        "dpas_key_type_of": (c_int, [c_int]),
        "dpas_key_type_name": (c_char_p, [c_int]),
        "dpas_key_bounds": (c_int, [c_int, P(ctypes.c_int64), P(ctypes.c_int64)]),
        "dpas_key_unit": (c_char_p, [c_int]),
        "dpas_key_default": (c_char_p, [c_int]),
        "dpas_key_see": (c_char_p, [c_int]),
        "dpas_key_value": (c_char_p, [c_int, c_int, c_size_t]),
        "dpas_analysis_takes": (c_int, [c_int, c_int]),
        "dpas_analysis_from_name": (c_int, [c_char_p]),
        "dpas_request_new": (c_int, [c_int, P(c_void_p), E]),
        "dpas_request_free": (None, [c_void_p]),
        "dpas_request_set": (c_int, [c_void_p, c_char_p, c_char_p, E]),
        "dpas_request_add": (c_int, [c_void_p, c_char_p, c_char_p, E]),
        "dpas_request_base": (c_int, [c_void_p, c_char_p, c_char_p, E]),
        "dpas_request_resolve": (c_int, [c_void_p, c_void_p, E]),
        "dpas_request_missing": (c_int, [c_void_p]),
        "dpas_request_scenario": (P(Scenario), [c_void_p]),
        "dpas_request_report": (P(Report), [c_void_p]),
        "dpas_request_label": (c_char_p, [c_void_p]),
        "dpas_request_opts_of": (P(RequestOpts), [c_void_p]),
        "dpas_request_sweep": (c_void_p, [c_void_p]),
        "dpas_request_cost": (c_int, [c_void_p, P(P(Cost)), E]),
        "dpas_request_rules": (c_int, [c_void_p, P(RuleRow), P(c_size_t), E]),
        "dpas_request_inventory": (c_int, [c_void_p, P(P(InventoryRow)), P(c_size_t), E]),
        "dpas_request_memory": (c_int, [c_void_p, P(Memory), E]),
        "dpas_sweep_ncolumns": (c_size_t, [c_void_p]),
        "dpas_sweep_columns": (None, [c_void_p, P(Column)]),
        "dpas_sweep_rows": (c_int, [c_void_p, SWEEP_FN, c_void_p, P(SweepTally), E]),
        "dpas_sweep_figure_new": (c_int, [c_void_p, c_int, P(P(SweepFigure)), E]),
        "dpas_sweep_figure_free": (None, [P(SweepFigure)]),
        "dpas_plot_figure": (c_int, [P(PlotSpec), c_int, P(Series), c_size_t, c_size_t,
                                     P(c_char_p), P(P(ctypes.c_ubyte)), P(c_size_t), E]),
        "dpas_writer_new": (c_int, [P(Column), c_size_t, P(WriterOpts), SINK_FN, c_void_p,
                                    P(c_void_p), E]),
        "dpas_writer_row": (c_int, [c_void_p, P(Cell), E]),
        "dpas_writer_end": (c_int, [c_void_p, E]),
        "dpas_writer_free": (None, [c_void_p]),
        "dpas_report_explain": (c_size_t, [P(Scenario), P(Report), c_int, c_char_p, c_size_t]),
        "dpas_warning_message": (c_size_t, [P(Report), c_uint, c_char_p, c_size_t]),
        "dpas_report_undefined_reason": (c_char_p, [P(Report), c_int]),
        "dpas_attr_name": (c_char_p, [c_int]),
        "dpas_evaluate": (c_int, [P(Scenario), P(Report), E]),
        "dpas_report_get": (c_int, [P(Report), c_int, P(Value), E]),
        "dpas_format_bytes_human": (c_size_t, [Bytes, c_int, c_char_p, c_size_t]),
        "dpas_rule_count": (c_size_t, []),
        "dpas_rule_at": (P(Rule), [c_size_t]),
        "dpas_rule_select": (c_int, [c_char_p, c_char_p, P(P(Rule)), E]),
        "dpas_schedule_name": (c_char_p, [c_int]),
        "dpas_time_basis_name": (c_char_p, [c_int]),
        "dpas_schedule_from_name": (c_int, [c_char_p]),
        "dpas_cost_free": (None, [P(Cost)]),
        "dpas_memory_message": (c_size_t, [P(Scenario), P(Convention), c_int, P(Memory),
                                           c_char_p, c_size_t]),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def _check_layout(lib: ctypes.CDLL) -> None:
    for name, cls in MIRRORS.items():
        want = lib.dpas_sizeof(name.encode())
        if want != ctypes.sizeof(cls):
            raise ImportError(f"dpas: the Python mirror of {name} has {ctypes.sizeof(cls)} bytes, "
                              f"the library's {want}: binding and library do not match")


def text(p: bytes | None) -> str | None:
    """A C string the library owns, as str (None for NULL); bytes that are not UTF-8 as U+FFFD."""
    return None if p is None else p.decode("utf-8", "replace")


def take_string(lib: ctypes.CDLL, ptr: int | None) -> str | None:
    """A char * the caller owns (renderers): copy it to str and free it."""
    if not ptr:
        return None
    try:
        return ctypes.string_at(ptr).decode("utf-8", "replace")
    finally:
        lib.dpas_free(ptr)


# ---- the aggregation kernels and attacks (include/dpas/kernels.h) ----------------------------

class AggOpts(ctypes.Structure):
    _fields_ = [("f", c_i64), ("m", c_i64), ("iterations", c_i64), ("tau", ctypes.c_double),
                ("generic", ctypes.c_int), ("threads", ctypes.c_int), ("nnm", ctypes.c_int),
                ("isa", ctypes.c_int), ("tolerance", ctypes.c_double), ("smoothing", ctypes.c_double),
                ("workspace", c_void_p), ("start", c_void_p), ("idx", c_i64), ("pre", c_void_p),
                ("npre", c_size_t), ("weights", c_void_p)]


class PreAgg(ctypes.Structure):
    _fields_ = [("rule", c_void_p), ("c", ctypes.c_double), ("s", c_i64), ("seed", c_u64),
                ("f", c_i64), ("own_f", ctypes.c_int)]


ATTACK_MAX_PARAMETERS = 4  # DPAS_ATTACK_MAX_PARAMETERS


class AttackOpts(ctypes.Structure):
    _fields_ = [("value", ctypes.c_double * ATTACK_MAX_PARAMETERS), ("given", c_uint),
                ("seed", c_u64), ("rule", c_void_p), ("agg", c_void_p)]


class Attack(ctypes.Structure):
    _fields_ = [("id", ctypes.c_int), ("name", c_char_p), ("parameter", c_char_p),
                ("source", c_char_p), ("notes", c_char_p),
                ("parameters", c_char_p * (ATTACK_MAX_PARAMETERS + 1))]


def declare_kernels(lib):
    """Declare the kernel functions and check the kernel structs' mirrors (once per library)."""
    if getattr(lib, "_dpas_kernels_declared", False):
        return
    E = ctypes.POINTER(Error)
    rows = ctypes.POINTER(c_void_p)
    sig = {
        "dpas_aggregate": (ctypes.c_int, [c_void_p, rows, ctypes.c_size_t, ctypes.c_size_t,
                                          ctypes.POINTER(AggOpts), c_void_p, ctypes.POINTER(c_i64),
                                          ctypes.POINTER(ctypes.c_size_t), E]),
        "dpas_aggregate_typed": (ctypes.c_int, [c_void_p, rows, ctypes.c_int, ctypes.c_size_t,
                                                ctypes.c_size_t, ctypes.POINTER(AggOpts), c_void_p,
                                                ctypes.POINTER(c_i64),
                                                ctypes.POINTER(ctypes.c_size_t), E]),
        "dpas_agg_option_applies": (ctypes.c_int, [c_void_p, c_char_p]),
        "dpas_workspace_new": (c_void_p, []),
        "dpas_workspace_free": (None, [c_void_p]),
        "dpas_workspace_size": (ctypes.c_size_t, [c_void_p]),
        "dpas_attack_find": (ctypes.c_int, [c_char_p, ctypes.POINTER(c_void_p), E]),
        "dpas_attack_rows": (ctypes.c_int, [c_void_p, rows, ctypes.c_size_t, ctypes.c_size_t,
                                            ctypes.c_size_t, ctypes.POINTER(AttackOpts), rows, E]),
        "dpas_attack_rows_typed": (ctypes.c_int, [c_void_p, rows, ctypes.c_int, ctypes.c_size_t,
                                                  ctypes.c_size_t, ctypes.c_size_t,
                                                  ctypes.POINTER(AttackOpts), rows,
                                                  ctypes.POINTER(ctypes.c_double), E]),
        "dpas_preaggregate_typed": (ctypes.c_int, [rows, ctypes.c_int, ctypes.c_size_t,
                                                   ctypes.c_size_t, ctypes.POINTER(AggOpts), rows,
                                                   ctypes.POINTER(ctypes.c_size_t), E]),
        "dpas_kernels_sizeof": (ctypes.c_size_t, [c_char_p]),
        "dpas_kernel_isa": (c_char_p, []),
    }
    for name, (res, args) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args
    for name, cls, size_of in (("dpas_agg_opts", AggOpts, lib.dpas_kernels_sizeof),
                               ("dpas_attack_opts", AttackOpts, lib.dpas_kernels_sizeof),
                               ("dpas_attack", Attack, lib.dpas_kernels_sizeof),
                               ("dpas_preagg", PreAgg, lib.dpas_kernels_sizeof),
                               ("dpas_rule", Rule, lib.dpas_sizeof)):
        want = size_of(name.encode())
        if want != ctypes.sizeof(cls):
            raise ImportError(f"dpas: the Python mirror of {name} has {ctypes.sizeof(cls)} bytes, "
                              f"the library's {want}: binding and library do not match")
    lib._dpas_kernels_declared = True

lib = load()
